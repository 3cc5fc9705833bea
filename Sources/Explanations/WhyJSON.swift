import VirtualTourist

/// The JSON form of an answer (docs/WHY.md), the same for `vt why --json` and `GET /api/why`.
public struct WhyJSON: Encodable, Sendable {
    public struct Because: Encodable, Sendable {
        public var seq: UInt64
        public var time: String
        public var type: String
        /// The device that wrote it (its name or short id), and its number in that device's log,
        /// in a store of several devices.
        public var device: String?
        public var device_seq: UInt64?
        public var says: String
    }

    public var question: String
    public var pin: String?
    public var slot: UInt32?
    public var at: UInt64
    public var fact: String
    public var because: [Because]

    public init(_ answer: WhyAnswer) {
        question = answer.question.kind
        pin = answer.question.pin?.description
        slot = if case .photo(_, let slot) = answer.question { slot } else { nil }
        at = answer.at
        fact = answer.fact
        because = answer.because.map {
            Because(
                seq: $0.event.sequence, time: $0.event.timestamp.description, type: $0.event.event.typeName, device: $0.device,
                device_seq: $0.event.origin?.sequence, says: $0.says)
        }
    }
}
