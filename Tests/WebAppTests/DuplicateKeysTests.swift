import RequestReading
import Testing

/// A body that names a key twice in one object is refused (docs/SECURITY.md); the same key in
/// different objects, or as a value, is not a duplicate.
@Suite struct DuplicateKeysTests {
    @Test(arguments: [
        (#"{"a": 1, "a": 2}"#, "a"),
        (#"{"a": 1, "\u0061": 2}"#, "a"),
        (#"{"x": {"b": [1, {"c": 1, "c": 2}]}}"#, "c"),
        (#"{"é": 1, "\u00e9": 2}"#, "é"),
        (#"{"😀": 1, "\ud83d\ude00": 2}"#, "😀"),
        (#"{"a\"b": 1, "a\u0022b": 2}"#, "a\"b"),
    ])
    func aKeyNamedTwiceIsFound(body: String, key: String) {
        #expect(DuplicateKeys.first(in: Array(body.utf8)) == key)
    }

    @Test(arguments: [
        #"{"latitude": 1, "longitude": 2}"#,
        #"{"a": {"a": 1}, "b": {"a": 2}}"#,
        #"{"a": "a", "b": ["a", "a"]}"#,
        #"[{"a": 1}, {"a": 2}]"#,
        #"{"a": "x\"y", "b": "\"a\""}"#,
        #"{"a": 1, "b": "unclosed"#,
        "",
    ])
    func distinctKeysAndNonJSONAreLeftToTheDecoder(body: String) {
        #expect(DuplicateKeys.first(in: Array(body.utf8)) == nil)
    }
}
