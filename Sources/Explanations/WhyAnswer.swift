import VirtualTourist

/// `vt why`'s answer (docs/WHY.md): the fact at a point of the history, and the events behind
/// it, fewest first: the event that gave the fact the value it has, then what that rests on.
public struct WhyAnswer: Sendable {
    public struct Reason: Sendable {
        public var event: RecordedEvent
        /// The device that wrote it, by name or short id (nil in a store of one device).
        public var device: String?
        /// What the event did to the fact, and by which rule.
        public var says: String
    }

    public var question: WhyQuestion
    /// The point of the history the answer is for.
    public var at: UInt64
    /// The fact, in words.
    public var fact: String
    public var because: [Reason]
}
