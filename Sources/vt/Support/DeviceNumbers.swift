import ArgumentParser
import VirtualTourist

/// `--device DEVICE` for the commands that take sequence numbers (docs/CLI.md): the numbers
/// given are that device's own (`a90e1b2c#12` in `vt log`), found at their positions in the
/// merged order, where the command then works.
struct DeviceNumbers: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "Count the sequence numbers given in this device's log (its id, a unique prefix of it, or its name: vt device lists them), not in the merged order.",
            valueName: "DEVICE"))
    var device: String?

    /// `sequences` as positions of the merged order (as given without `--device`).
    func positions(_ sequences: [UInt64], reader: StoreReader, store: String) throws -> [UInt64] {
        guard let device else { return sequences }
        let named = try DeviceArgument.resolve(device, store: store)
        let this = try StoreSync.devices(of: store).this.device
        return try sequences.map { try reader.position(ofEvent: $0, device: named, this: this) }
    }

    func position(_ sequence: UInt64, reader: StoreReader, store: String) throws -> UInt64 {
        try positions([sequence], reader: reader, store: store)[0]
    }
}
