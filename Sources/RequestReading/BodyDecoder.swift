import Foundation

/// Reads a request's JSON body into a value, or says in one sentence what is wrong with it:
/// a key named twice (``DuplicateKeys``), a missing field, a field of the wrong type, or
/// bytes that are not JSON.
///
/// ```swift
/// let place = try BodyDecoder.decode(PlaceBody.self, from: Array(#"{"latitude": 1, "longitude": 2}"#.utf8))
/// ```
public enum BodyDecoder {
    /// What is wrong with a body, in words for the person who sent it.
    public struct Problem: Error, Sendable, Equatable {
        public let message: String
    }

    public static func decode<T: Decodable>(_ type: T.Type, from bytes: some Collection<UInt8>) throws(Problem) -> T {
        if let key = DuplicateKeys.first(in: bytes) {
            throw Problem(message: "the body names \"\(key.prefix(40))\" twice; name each field once")
        }
        do { return try JSONDecoder().decode(T.self, from: Data(bytes)) } catch {
            throw Problem(message: "the body is not the JSON expected: \(describe(error))")
        }
    }

    private static func describe(_ error: any Error) -> String {
        switch error {
        case DecodingError.keyNotFound(let key, _): "\(key.stringValue) is missing"
        case DecodingError.typeMismatch(_, let context), DecodingError.valueNotFound(_, let context):
            "\(context.codingPath.map(\.stringValue).joined(separator: ".")) has the wrong type"
        case DecodingError.dataCorrupted(let context):
            context.codingPath.isEmpty ? "it is not JSON" : "\(context.codingPath.map(\.stringValue).joined(separator: ".")) is not valid"
        default: "\(error)"
        }
    }
}
