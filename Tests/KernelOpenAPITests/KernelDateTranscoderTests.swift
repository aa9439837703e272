import Foundation
import KernelOpenAPI
import OpenAPIRuntime
import Testing

/// A generated client's dates as servers send them: with or without fractional seconds, `Z` or
/// an offset, or a calendar day, through `Configuration.kernel`, with no transcoder of the app's.
struct KernelDateTranscoderTests {
  let transcoder = Configuration.kernel.dateTranscoder

  @Test(arguments: [
    ("2016-12-16T10:00:00.123+01:00", 1_481_878_800.123),
    ("2016-12-16T09:00:00.5Z", 1_481_878_800.5),
    ("2016-12-16T09:00:00Z", 1_481_878_800),
    ("2016-12-16T04:00:00-05:00", 1_481_878_800),
    ("2016-12-16", 1_481_846_400),
  ])
  func aDateAsServersSendItIsRead(text: String, seconds: Double) throws {
    let date = try transcoder.decode(text)
    #expect(abs(date.timeIntervalSince1970 - seconds) < 0.000_5, "\(text)")
  }

  /// The reason it exists: each of the runtime's own refuses one of the forms servers send.
  @Test func theRuntimesOwnTranscodersEachRefuseOneForm() {
    #expect(throws: (any Error).self) {
      try ISO8601DateTranscoder.iso8601.decode("2016-12-16T10:00:00.123+01:00")
    }
    #expect(throws: (any Error).self) {
      try ISO8601DateTranscoder.iso8601WithFractionalSeconds.decode("2016-12-16T09:00:00Z")
    }
  }

  @Test(arguments: ["2016-02-30T10:00:00Z", "2016-12-16T25:00:00Z", "yesterday", ""])
  func whatIsNoDateIsADecodingErrorSayingWhatItFound(text: String) {
    #expect {
      try transcoder.decode(text)
    } throws: { error in
      guard case DecodingError.dataCorrupted(let context) = error else { return false }
      return context.debugDescription.contains("expected an ISO 8601 date, found \"\(text)\"")
    }
  }

  @Test func aDateIsWrittenInUTCWithMillisecondsAndReadBackTheSame() throws {
    let date = Date(timeIntervalSince1970: 1_481_878_800.123)
    let text = try transcoder.encode(date)
    #expect(text == "2016-12-16T09:00:00.123Z")
    #expect(abs(try transcoder.decode(text).timeIntervalSince(date)) < 0.000_5)
  }
}
