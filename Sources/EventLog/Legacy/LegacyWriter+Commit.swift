import FileIO

extension LegacyWriter: CommitWriter {
    var headHash: ChainHash { previousHash }
    var lastEventTime: LogTimestamp? { lastTimestamp }
}
