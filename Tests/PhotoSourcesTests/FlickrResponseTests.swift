import Foundation
import Testing
import DemoPhotoServer
@testable import PhotoAnswers
@testable import PhotoSources

@Suite struct FlickrResponseTests {
    static func body(_ text: String) -> [UInt8] { Array(text.utf8) }

    @Test func stringsAndNumbersAreBothReadAndPhotosWithoutTheWantedURLAreSkipped() throws {
        let json = """
            {"photos":{"page":2,"pages":"15","perpage":3,"total":"44","photo":[
              {"id":"53001","owner":"1@N00","secret":"ab","server":"65535","farm":66,"title":"Tower",
               "url_m":"https://live.staticflickr.com/65535/53001_ab_m.jpg","height_m":"375","width_m":500},
              {"id":53002,"title":"Square only","url_q":"https://live.staticflickr.com/65535/53002_cd_q.jpg",
               "height_q":150,"width_q":"150"},
              {"id":"53003","title":"No image URL at all"},
              {"id":"53004","title":"Not a web URL","url_m":"javascript:alert(1)"}
            ]},"stat":"ok"}
            """
        let page = try FlickrResponse.parse(Self.body(json), wantedSizes: ["url_m", "url_q"])
        #expect(page == PhotoSearchPage(page: 2, pages: 15, perPage: 3, total: 44, photos: [
            FoundPhoto(
                id: "53001", title: "Tower", url: "https://live.staticflickr.com/65535/53001_ab_m.jpg", width: 500, height: 375,
                credit: PhotoCredit(pageURL: "https://www.flickr.com/photos/1@N00/53001")),
            FoundPhoto(id: "53002", title: "Square only", url: "https://live.staticflickr.com/65535/53002_cd_q.jpg", width: 150, height: 150),
        ]))
    }

    @Test func creditsComeFromTheOwnerNameTheLicenceAndTheDateTaken() throws {
        let json = """
            {"photos":{"page":1,"pages":1,"perpage":3,"total":3,"photo":[
              {"id":"7","owner":"12@N01","ownername":"Ann &amp; Bo","license":"4","datetaken":"2019-05-01 10:00:00",
               "url_m":"https://live.staticflickr.com/7_m.jpg"},
              {"id":"8","owner":"../../evil","license":99,"url_m":"https://live.staticflickr.com/8_m.jpg"},
              {"id":"9","url_m":"https://live.staticflickr.com/9_m.jpg"}
            ]},"stat":"ok"}
            """
        let licences = ["4": FlickrLicence(name: "CC BY 2.0", url: "https://creativecommons.org/licenses/by/2.0/")]
        let photos = try FlickrResponse.parse(Self.body(json), wantedSizes: ["url_m"], licences: licences).photos
        #expect(photos[0].credit == PhotoCredit(
            creator: "Ann & Bo", licenceName: "CC BY 2.0", licenceURL: "https://creativecommons.org/licenses/by/2.0/",
            pageURL: "https://www.flickr.com/photos/12@N01/7", dateTaken: "2019-05-01 10:00:00"))
        // An unknown licence id still says which; an owner that is not an id makes no link.
        #expect(photos[1].credit == PhotoCredit(licenceName: "Flickr licence 99"))
        #expect(photos[2].credit == PhotoCredit())
    }

    @Test func theLicenceListIsReadAndItsFailuresAreErrors() throws {
        let json = """
            {"licenses":{"license":[{"id":0,"name":"All Rights Reserved","url":""},
             {"id":"4","name":"CC BY 2.0","url":"https://creativecommons.org/licenses/by/2.0/"},
             {"id":"5","name":"Bad URL","url":"javascript:x"}]},"stat":"ok"}
            """
        let licences = try FlickrResponse.licences(Self.body(json))
        #expect(licences == [
            "0": FlickrLicence(name: "All Rights Reserved", url: ""),
            "4": FlickrLicence(name: "CC BY 2.0", url: "https://creativecommons.org/licenses/by/2.0/"),
            "5": FlickrLicence(name: "Bad URL", url: ""),
        ])
        #expect(throws: PhotoSourceError.self) { try FlickrResponse.licences(Self.body(#"{"stat":"fail","code":100,"message":"Invalid API Key"}"#)) }
        #expect(throws: PhotoSourceError.self) { try FlickrResponse.licences(Self.body("<html>")) }
    }

    @Test func theFirstWantedSizeThatIsPresentWins() throws {
        let json = #"{"photos":{"page":1,"pages":1,"perpage":1,"total":1,"photo":[{"id":"1","title":"t","url_q":"http://a.example/q.jpg","url_m":"http://a.example/m.jpg"}]},"stat":"ok"}"#
        #expect(try FlickrResponse.parse(Self.body(json), wantedSizes: ["url_m", "url_q"]).photos[0].url == "http://a.example/m.jpg")
        #expect(try FlickrResponse.parse(Self.body(json), wantedSizes: ["url_q"]).photos[0].url == "http://a.example/q.jpg")
    }

    @Test func anEmptyResultIsNoPhotosNotAnError() throws {
        let json = #"{"photos":{"page":1,"pages":0,"perpage":21,"total":0,"photo":[]},"stat":"ok"}"#
        let page = try FlickrResponse.parse(Self.body(json), wantedSizes: ["url_m"])
        #expect(page.photos.isEmpty && page.pages == 0 && page.total == 0)
    }

    @Test(arguments: [
        (100, "Invalid API Key (Key has invalid format)", PhotoSourceError.Code.invalidKey),
        (105, "Service currently unavailable", .serviceUnavailable),
        (3, "Parameterless searches have been disabled", .refused),
    ])
    func failureAnswersBecomeErrorsWithFlickrsCodeAndMessage(code: Int, message: String, expected: PhotoSourceError.Code) {
        let json = #"{"stat":"fail","code":\#(code),"message":"\#(message)"}"#
        do {
            _ = try FlickrResponse.parse(Self.body(json), wantedSizes: ["url_m"])
            Issue.record("a fail answer was accepted")
        } catch {
            #expect(error.code == expected)
            #expect(error.message.contains(message) && error.message.contains("code \(code)"))
        }
    }

    @Test(arguments: [
        ("<!DOCTYPE html><html><body>Sign in</body></html>", "not JSON"),
        (#"{"photos":{"page":1,"photo":[{"id":"1"#, "not JSON"),
        ("", "not JSON"),
        (#"[1, 2, 3]"#, "not an object"),
        (#"{"photos":{}}"#, "no \"stat\""),
        (#"{"stat":"ok"}"#, "no \"photos\""),
        (#"{"stat":"ok","photos":{"photo":"many"}}"#, "not a list"),
        (#"{"stat":"ok","photos":{"page":-1,"photo":[]}}"#, "negative"),
    ])
    func malformedAnswersAreClearErrors(text: String, says: String) {
        do {
            _ = try FlickrResponse.parse(Self.body(text), wantedSizes: ["url_m"])
            Issue.record("accepted: \(text)")
        } catch {
            #expect(error.code == .badResponse)
            #expect(error.message.contains(says), "\(error.message)")
        }
    }

    @Test func whateverTheServiceEchoesIsRedactedBeforeItBecomesAMessage() throws {
        let key = try FlickrAPIKey("0123456789abcdef0123456789abcdef")
        let fail = #"{"stat":"fail","code":100,"message":"Invalid API Key 0123456789abcdef0123456789abcdef"}"#
        let notJSON = "error for api_key=0123456789abcdef0123456789abcdef"
        for text in [fail, notJSON] {
            do {
                _ = try FlickrResponse.parse(Self.body(text), wantedSizes: ["url_m"], redact: key.redact)
                Issue.record("accepted")
            } catch {
                #expect(!error.message.contains("0123456789abcdef0123456789abcdef"))
                #expect(error.message.contains("•••"))
            }
        }
    }

    /// Found by fuzzing (Fuzz/Regressions/FuzzFlickr): a message cut before it was redacted
    /// showed the part of the key before the cut, and a combining mark after the key made it
    /// a different Character, so the key was not recognised at all.
    @Test(arguments: [
        String(repeating: "x", count: 50) + "0123456789abcdef0123456789abcdef",
        #"{"stat":"fail","code":3,"message":""# + String(repeating: "x", count: 290) + #"0123456789abcdef0123456789abcdef"}"#,
        "0123456789abcdef0123456789abcdef\u{301}",
    ])
    func noPieceOfTheKeyReachesAMessage(answer: String) throws {
        let key = try FlickrAPIKey("0123456789abcdef0123456789abcdef")
        do {
            _ = try FlickrResponse.parse(Self.body(answer), wantedSizes: ["url_m"], redact: key.redact)
            Issue.record("accepted")
        } catch {
            // Any 8 characters of the key in a row would give part of it away.
            let pieces = (0...24).map { String(key.secret.dropFirst($0).prefix(8)) }
            #expect(!pieces.contains { error.message.contains($0) }, "\(error.message)")
        }
    }

    /// Found by fuzzing: the page count rounded up as `total + perPage - 1` overflowed for a
    /// total given as the largest 64-bit number.
    @Test func theLargestTotalGivesAPageCountWithoutOverflow() throws {
        let answer = #"{"stat":"ok","photos":{"total":"9223372036854775807","perpage":2,"photo":[]}}"#
        let page = try FlickrResponse.parse(Self.body(answer), wantedSizes: ["url_m"])
        #expect(page.pages == Int.max / 2 + 1)
        #expect(page.total == Int.max)
    }
}

@Suite struct ImageIntegrityTests {
    @Test func completeImagesPassAndCutOnesAreNamed() {
        let png = PNGFixture.tiny
        #expect(ImageIntegrity.problem(with: png) == nil)
        #expect(ImageIntegrity.problem(with: Array(png.prefix(png.count - 1)))?.contains("IEND") == true)
        let jpeg: [UInt8] = [0xFF, 0xD8, 0xFF, 0xE0, 1, 2, 3, 0xFF, 0xD9]
        #expect(ImageIntegrity.problem(with: jpeg) == nil)
        #expect(ImageIntegrity.problem(with: Array(jpeg.prefix(7))) != nil)
        #expect(ImageIntegrity.problem(with: Array("GIF89a".utf8) + [1, 2, 0x3B]) == nil)
        #expect(ImageIntegrity.problem(with: Array("GIF89a".utf8) + [1, 2]) != nil)
        let webp = Array("RIFF".utf8) + [8, 0, 0, 0] + Array("WEBPVP8 ".utf8)
        #expect(ImageIntegrity.problem(with: webp) == nil)
        #expect(ImageIntegrity.problem(with: Array(webp.prefix(15))) != nil)
    }
}

/// A real 1 × 1 PNG, from the demo server's encoder.
enum PNGFixture {
    static let tiny = DemoCatalogue().image(photoID: "1", width: 1, height: 1)
}
