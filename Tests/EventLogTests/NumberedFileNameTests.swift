import FileIO
import Testing

/// `NumberedFileName`: the names of the log's files and the store's snapshots, read back from a
/// listing by bytes. Only exactly 20 ASCII digits and the extension asked for are a number.
@Suite struct NumberedFileNameTests {
    @Test(arguments: [UInt64(0), 1, 4_097, 10_000_364, 99_999_999_999_999_999, UInt64.max])
    func aNameMadeReadsBackAsItsNumber(_ number: UInt64) {
        for fileExtension in [".blk", ".seg", ".keys", ".snapshot", ""] {
            let name = NumberedFileName.make(number, extension: fileExtension)
            #expect(name.utf8.count == 20 + fileExtension.utf8.count)
            #expect(NumberedFileName.number(in: name, extension: fileExtension) == number, "\(name)")
            #expect(NumberedFileName.number(in: name, extension: fileExtension == ".blk" ? ".seg" : ".blk") == nil)
        }
    }

    @Test(arguments: [
        "0000000000000004097.blk",  // 19 digits
        "000000000000000004097.blk",  // 21 digits
        "0000000000000000409a.blk",
        "0000000000000000409 .blk",
        "00000000000000004097.blk.tmp",
        "00000000000000004097.bl",
        "00000000000000004097.BLK",
        "00000000000000004097blk.",
        "0000000000000000٤٠٩٧.blk",  // Arabic-Indic digits: numbers to Unicode, not to a listing
        "0000000000000000４０９７.blk",  // fullwidth digits
        "18446744073709551616.blk",  // UInt64.max + 1
        "99999999999999999999.blk",
        "00000000000000004097.blk\u{301}",  // a combining accent on the extension's last letter
        "",
    ])
    func anythingElseIsNoNumber(_ name: String) {
        #expect(NumberedFileName.number(in: name, extension: ".blk") == nil, "\(name)")
    }
}
