/// Where a prepared append lands (``EventLog/append(preparing:settler:)``): the sequence number
/// its first event gets and the time all its events get. The log's writer decides both, once,
/// when it is the request's turn: the time is the clock's, or the log's last event's time when
/// the clock reads earlier (a clock stepped back by NTP), so the log's time never goes back.
public struct CommitSlot: Sendable, Hashable {
    public let firstSequence: UInt64
    public let time: LogTimestamp

    public init(firstSequence: UInt64, time: LogTimestamp) {
        self.firstSequence = firstSequence
        self.time = time
    }
}
