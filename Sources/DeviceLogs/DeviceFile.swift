import FileIO

/// `device.json`: which map a device belongs to, its id and its name (docs/DEVICES.md,
/// "`device.json`"). The store's root holds this device's; `devices/<id>/` holds what each
/// other device said of itself when its log was last copied.
///
/// ```swift
/// let file = DeviceFile(map: map, device: id, name: "laptop")
/// try file.save(in: storeFolder, fileSystem: fileSystem)
/// try DeviceFile.load(from: storeFolder, fileSystem: fileSystem)   // the same, or nil when absent
/// ```
public struct DeviceFile: Hashable, Sendable {
    /// The file's name in a store folder or a copy's folder.
    public static let name = "device.json"
    /// The only format this version reads and writes.
    public static let format: UInt64 = 1
    /// The longest name, in characters.
    public static let maxNameLength = 64

    public var map: DeviceID
    public var device: DeviceID
    /// What a person calls the device; nil for a device never named.
    public var name: String?

    public init(map: DeviceID, device: DeviceID, name: String?) {
        self.map = map
        self.device = device
        self.name = name
    }

    /// Why `name` cannot name a device, or nil when it can.
    public static func problem(withName name: String) -> String? {
        if name.isEmpty { return "a device's name cannot be empty" }
        if name.count > maxNameLength { return "a device's name holds at most \(maxNameLength) characters, not \(name.count)" }
        if name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) {
            return "a device's name cannot hold control characters"
        }
        if name.unicodeScalars.first!.properties.isWhitespace || name.unicodeScalars.last!.properties.isWhitespace {
            return "a device's name cannot start or end with spaces"
        }
        return nil
    }

    /// The file's bytes: one line of JSON, keys in a fixed order.
    public var bytes: [UInt8] {
        var text = "{\"format\": \(Self.format), \"map\": \"\(map)\", \"device\": \"\(device)\""
        if let name { text += ", \"name\": " + Self.quoted(name) }
        return Array((text + "}\n").utf8)
    }

    /// Reads a file's bytes; `path` names it in the errors.
    public static func decode(_ bytes: [UInt8], path: String) throws -> DeviceFile {
        func refuse(_ why: String) -> DeviceError { DeviceError(.notAStore, "\(path) cannot be read: \(why)") }
        let members: [String: FlatJSON.Value]
        switch FlatJSON.parse(bytes) {
        case .object(let parsed): members = parsed
        case .problem(let problem): throw refuse(problem)
        }
        if let unknown = members.keys.filter({ !["format", "map", "device", "name"].contains($0) }).sorted().first {
            throw refuse("it holds the unknown key \"\(unknown)\"")
        }
        guard case .number(let format)? = members["format"] else { throw refuse("\"format\" must be a whole number") }
        guard format == Self.format else {
            throw refuse(
                "it is in format \(format)" + (format > Self.format ? ", written by a newer version" : ", which no version writes")
                    + "; this version reads format \(Self.format)")
        }
        func id(_ key: String) throws -> DeviceID {
            guard case .text(let text)? = members[key], let id = DeviceID(parsing: text) else {
                throw refuse("\"\(key)\" must be 32 hexadecimal digits")
            }
            return id
        }
        var name: String? = nil
        switch members["name"] {
        case nil: break
        case .text(let text)?:
            if let problem = problem(withName: text) { throw refuse(problem) }
            name = text
        case .number?: throw refuse("\"name\" must be a text")
        }
        return DeviceFile(map: try id("map"), device: try id("device"), name: name)
    }

    /// The `device.json` in `folder`, nil when there is none.
    public static func load(from folder: String, fileSystem: any FileSystem = PosixFileSystem()) throws -> DeviceFile? {
        let path = Path.join(folder, name)
        do {
            guard try fileSystem.exists(path) else { return nil }
            let file = try fileSystem.openFile(path, .readOnly)
            defer { try? file.close() }
            return try decode(try file.readAll(), path: path)
        } catch let error as DeviceError {
            throw error
        } catch {
            throw DeviceError(.storage, "\(path) cannot be read: \(error)", cause: error)
        }
    }

    /// Writes the file into `folder` atomically and durably.
    public func save(in folder: String, fileSystem: any FileSystem = PosixFileSystem()) throws {
        let path = Path.join(folder, Self.name)
        do { try fileSystem.writeAtomically(bytes, to: path) } catch {
            throw DeviceError(.storage, "cannot write \(path): \(error)", cause: error)
        }
    }

    /// JSON's quoted form of `text`.
    static func quoted(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}
