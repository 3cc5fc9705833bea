import FileIO

/// Random access to a format-2 log's chain and end: the head after any event, from the nearest
/// checkpoint before it (FORMAT.md, "The event chain": checkpoints), and the last sequence.
enum ChainHeads {
    /// The chain's head after `sequence`, or nil when the log does not reach it. Costs at most
    /// one block's or one segment's events hashed.
    static func head(
        at sequence: UInt64, directory: String, fileSystem: any FileSystem, payloadCodec: (any BlockPayloadCodec)?,
        headers: BlockHeaderCache? = nil
    ) throws -> LogHead? {
        try headAndPosition(at: sequence, directory: directory, fileSystem: fileSystem, payloadCodec: payloadCodec, headers: headers)?.head
    }

    /// The same, with the position after the event when it lies in a hot-tail segment and ends
    /// a record there (``TailPosition``).
    static func headAndPosition(
        at sequence: UInt64, directory: String, fileSystem: any FileSystem, payloadCodec: (any BlockPayloadCodec)?,
        headers: BlockHeaderCache? = nil
    ) throws -> (head: LogHead, position: TailPosition?)? {
        var files = LogDirectory(directory: directory, fileSystem: fileSystem, headers: headers)
        try files.refresh()
        guard let anchor = files.anchor else { return nil }
        if sequence == 0 { return (LogHead(sequence: 0, hash: anchor), nil) }
        guard let position = files.position(holding: sequence) else { return nil }
        let file = files.files[position]
        let decompressor = ZstdDecompressor()
        switch file.kind {
        case .blocks(let header):
            guard sequence <= header.lastSequence else { return nil }
            let scanner = try BlockFileScanner(path: file.path, header: header, fileSystem: fileSystem)
            try scanner.skipBlocks(expectChain: nil, expectTime: nil, cache: headers) { $0.lastSequence < sequence }
            while let block = try scanner.next(expectChain: nil, expectTime: nil) {
                guard block.header.lastSequence >= sequence else { continue }
                if block.header.lastSequence == sequence { return (LogHead(sequence: sequence, hash: block.header.chainAfter), nil) }
                switch SealedBlock.decode(block.header, stored: block.stored, decompressor: decompressor, payloadCodec: payloadCodec) {
                case .failure(let reason):
                    throw LogError.corrupt(reason.description, file: file.path, offset: block.offset, sequence: block.header.firstSequence)
                case .success(let decoded):
                    if let headers, let identity = scanner.identity {
                        headers.handOver(decoded, at: block.offset, of: file.path, identity: identity)
                    }
                    var chain = EventChain(head: block.header.chainBefore, after: block.header.firstSequence - 1)
                    var events = decoded.run.makeIterator(firstSequence: block.header.firstSequence)
                    while chain.sequence < sequence, let event = events.next() {
                        if events.isErased {
                            event.payload.prefix(LogFormat.digestSize).withUnsafeBytes { chain.append(time: event.timestamp, digest: $0) }
                        } else {
                            chain.append(time: event.timestamp, payload: event.payload)
                        }
                    }
                    return (LogHead(sequence: sequence, hash: chain.head), nil)
                }
            }
            return nil
        case .segment:
            let scanner = try TailScanner.open(path: file.path, fileSystem: fileSystem, decompressor: decompressor)
            defer { scanner.close() }
            var chain = EventChain(head: scanner.header.chainBefore, after: scanner.header.firstSequence - 1)
            var standing: TailPosition? = nil
            while chain.sequence < sequence {
                switch try scanner.next() {
                case .record(let record, _):
                    var events = record.run.makeIterator(firstSequence: chain.sequence + 1)
                    while chain.sequence < sequence, let event = events.next() {
                        chain.append(time: event.timestamp, payload: event.payload)
                    }
                    if chain.sequence == sequence, scanner.nextSequence == sequence + 1 { standing = scanner.standing(chain: chain.head) }
                case .end:
                    return nil
                case .damaged(let offset, let reason, let definite):
                    let isLast = position == files.files.count - 1
                    if try scanner.isTornTail(at: offset, definite: definite, isLastSegment: isLast) { return nil }
                    throw LogError.corrupt(reason, file: file.path, offset: offset, sequence: scanner.nextSequence)
                }
            }
            return (LogHead(sequence: sequence, hash: chain.head), standing)
        }
    }

    /// The last complete event's sequence (0 for an empty log); a torn tail ends it.
    static func lastSequence(directory: String, fileSystem: any FileSystem, headers: BlockHeaderCache? = nil) throws -> UInt64 {
        var files = LogDirectory(directory: directory, fileSystem: fileSystem, headers: headers)
        try files.refresh()
        guard let last = files.files.last else { return 0 }
        switch last.kind {
        case .blocks(let header):
            return header.lastSequence
        case .segment:
            let scanner = try TailScanner.open(path: last.path, fileSystem: fileSystem, decompressor: ZstdDecompressor())
            defer { scanner.close() }
            var rereads = 0
            while true {
                switch try scanner.next() {
                case .record: continue
                case .end: return scanner.nextSequence - 1
                case .damaged(let offset, let reason, let definite):
                    if try scanner.isTornTail(at: offset, definite: definite, isLastSegment: true) { return scanner.nextSequence - 1 }
                    // An append landing while the tail was read: read the place once more.
                    scanner.window.invalidate()
                    rereads += 1
                    if rereads > 1 || definite {
                        throw LogError.corrupt(reason, file: last.path, offset: offset, sequence: scanner.nextSequence)
                    }
                }
            }
        }
    }
}
