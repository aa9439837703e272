import Foundation
import KernelCommands
import Testing

@Suite struct ReplyTests {
  /// The same text JSONEncoder writes (slashes unescaped), for every ASCII character alone, in
  /// words, and beside characters from other planes and the bidirectional overrides.
  @Test func quotedWritesWhatJSONEncoderWrites() throws {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.withoutEscapingSlashes]
    var samples = (0..<0x80).map { String(UnicodeScalar(UInt8($0))) }
    samples += [
      "", "Finding Dory", "He said \"no\" \\ then /left/", "line\nbreak\r\ttab\u{8}\u{C}",
      "Amélie — 天気の子 🎬", "\u{202E}evil\u{7F}\u{85}\u{2028}\u{2029}", "\u{0}\u{1F}end",
    ]
    var generator = SystemRandomNumberGenerator()
    for _ in 0..<200 {
      let scalars = (0..<Int.random(in: 0...12, using: &generator)).compactMap { _ in
        UnicodeScalar(
          [UInt32.random(in: 0...0x7F, using: &generator), UInt32.random(in: 0...0xFFFF)][
            Int.random(in: 0...1, using: &generator)])
      }
      samples.append(String(String.UnicodeScalarView(scalars)))
    }
    for text in samples {
      let expected = String(decoding: try encoder.encode(text), as: UTF8.self)
      #expect(Reply.quoted(text) == expected, "for \(Array(text.unicodeScalars))")
    }
  }
}
