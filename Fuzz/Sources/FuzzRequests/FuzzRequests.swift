// Fuzzes what the web app reads from a request itself (RequestReading): the JSON bodies of
// dropping and dragging a pin and of the map's region, the duplicate-key check before them,
// the path a token link is sent on to, and a pin id. Any bytes a client may send either read
// into sane values or end in a one-sentence problem, never a crash; a key named twice is never
// read; the token link's path never leaves the server (docs/SECURITY.md).
//
// Input: the bytes, read as a body, as a path and as a pin id at once.

import Foundation
import FuzzSupport
import RequestReading
import VirtualTourist

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let duplicate = DuplicateKeys.first(in: bytes)
    checkBody(PlaceBody.self, bytes, duplicate: duplicate) { place in
        _ = place.coordinate.problem
        return [place.latitude, place.longitude]
    }
    checkBody(RegionBody.self, bytes, duplicate: duplicate) { region in
        _ = region.region.problem
        return [region.latitude, region.longitude, region.latitude_span, region.longitude_span]
    }
    let text = String(decoding: bytes, as: UTF8.self)
    checkHomePath(text)
    if let pin = PinID(parsing: text) {
        require(pin.description.count == 16 && PinID(parsing: pin.description) == pin, "pin \(text) reads back as \(pin)")
    }
    return 0
}

/// A body decodes, or gives a short problem; a body with a key named twice never decodes; what
/// decodes survives a round trip through JSON.
func checkBody<T: Decodable & Sendable>(_ type: T.Type, _ bytes: [UInt8], duplicate: String?, values: (T) -> [Double]) {
    do {
        let value = try BodyDecoder.decode(type, from: bytes)
        require(duplicate == nil, "a body naming \(duplicate ?? "") twice was read")
        let numbers = values(value)
        require(numbers.allSatisfy(\.isFinite), "a body read into numbers that are not finite: \(numbers)")
        let names = type == PlaceBody.self ? ["latitude", "longitude"] : ["latitude", "longitude", "latitude_span", "longitude_span"]
        let again = "{" + zip(names, numbers).map { "\"\($0)\": \($1)" }.joined(separator: ", ") + "}"
        let reread = try BodyDecoder.decode(type, from: Array(again.utf8))
        require(values(reread) == numbers, "\(numbers) reads back as \(values(reread))")
    } catch {
        require(!error.message.isEmpty && error.message.count < 400, "a problem without a short message: \(error.message.prefix(500))")
        if let duplicate { require(error.message.contains("twice"), "a key named twice (\(duplicate)) was not the problem: \(error.message)") }
    }
}

/// The path a token link goes on to is the one asked for or the map, and a browser can read
/// it only as a path of this server.
func checkHomePath(_ path: String) {
    let location = HomePath.location(path)
    require(location == "/" || location == path, "\(path) was sent to \(location)")
    require(location.hasPrefix("/") && !location.hasPrefix("//"), "\(path) was sent to \(location), another host")
    let forbidden = location.unicodeScalars.contains { $0 == "\\" || $0.value < 0x21 || $0.value > 0x7E }
    require(!forbidden, "\(path) was sent to \(location), with a character a browser may rewrite")
}
