import Testing
@testable import VirtualTourist

/// Which photo a listing's entry is (docs/DEVICES.md): the service's id and the host of its image.
@Suite struct PhotoIdentityTests {
    @Test(arguments: [
        ("https://live.staticflickr.com/65535/1_a_q.jpg", "live.staticflickr.com"),
        ("HTTPS://Upload.Wikimedia.ORG/wikipedia/commons/a.jpg", "upload.wikimedia.org"),
        ("http://127.0.0.1:8080/photos/1.png", "127.0.0.1"),
        ("http://user:secret@photos.example:81/p?x=1", "photos.example"),
        ("http://[::1]:8080/p.jpg", "[::1]"),
        ("https://photos.example?size=2", "photos.example"),
        ("no scheme here", ""),
    ])
    func theServiceIsTheImagesHostLowercased(url: String, host: String) {
        #expect(PhotoIdentity.host(of: url) == host)
        let photo = ListedPhoto(remoteID: "53012345678", url: url, title: "")
        #expect(photo.identity == PhotoIdentity(remoteID: "53012345678", service: host))
        #expect(photo.identityKey == photo.identity.key, "the key from the bytes is the key of the identity")
    }

    @Test func theSamePhotoOfTheSameServiceIsOnePhotoAndOthersAreNot() {
        let flickr = ListedPhoto(remoteID: "1", url: "https://live.staticflickr.com/a/1_s.jpg", title: "one")
        let again = ListedPhoto(remoteID: "1", url: "https://LIVE.staticflickr.com/b/1_q.jpg", title: "same, listed again")
        let commons = ListedPhoto(remoteID: "1", url: "https://upload.wikimedia.org/1.jpg", title: "another service's 1")
        #expect(flickr.identity == again.identity && flickr.identityKey == again.identityKey)
        #expect(flickr.identity != commons.identity && flickr.identityKey != commons.identityKey)
        // The key is part of the snapshot format (FORMAT.md): FNV-1a 64 of "host\0id", computed apart.
        #expect(PhotoIdentity(remoteID: "53012345678", service: "live.staticflickr.com").key == 0x8fdd_abd5_0d23_c2d9)
    }
}
