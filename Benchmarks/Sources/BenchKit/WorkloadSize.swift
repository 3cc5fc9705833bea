/// The workload sizes the harness knows: 10 k, 100 k, 1 M and 10 M events.
public enum WorkloadSize {
    /// Parses `10k`, `100k`, `1m`, `10m` or a plain number of events.
    public static func parse(_ text: String) -> Int? {
        let lower = text.lowercased().replacingOccurrences(of: "_", with: "").replacingOccurrences(of: ",", with: "")
        if lower.hasSuffix("k"), let value = Int(lower.dropLast()), value > 0 { return value * 1_000 }
        if lower.hasSuffix("m"), let value = Int(lower.dropLast()), value > 0 { return value * 1_000_000 }
        if let value = Int(lower), value > 0 { return value }
        return nil
    }

    public static func name(_ events: Int) -> String {
        if events % 1_000_000 == 0 { return "\(events / 1_000_000) M" }
        if events % 1_000 == 0 { return "\(events / 1_000) k" }
        return "\(events)"
    }
}
