import Api
import Foundation
import OpenAPIRuntime

/// Dates in a generated client as Kernel's own mapping reads and writes them
/// (`JSONMapping.DateStrategy.iso8601`): read in ISO 8601 with or without fractional seconds,
/// `Z` or an offset (`2016-12-16T10:00:00.123+01:00`), or as a calendar day; written in UTC with
/// milliseconds. The runtime's own `.iso8601` refuses fractional seconds and its
/// `.iso8601WithFractionalSeconds` requires them, so an app whose server sends both wrote a
/// transcoder of its own; `Configuration.kernel` is this one.
struct KernelDateTranscoder: DateTranscoder {
  /// The transcoder.
  public init() {}

  /// `date` in ISO 8601, UTC, with milliseconds.
  public func encode(_ date: Date) throws -> String { JSONMapping.iso8601String(date) }

  /// The date `text` is; a string that is none is a decoding error saying what it found.
  public func decode(_ text: String) throws -> Date {
    guard let date = JSONMapping.iso8601Date(text) else {
      throw DecodingError.dataCorrupted(
        .init(codingPath: [], debugDescription: JSONMapping.iso8601Mismatch(text)))
    }
    return date
  }
}

extension Configuration {
  /// A generated client's configuration with Kernel's dates (`KernelDateTranscoder`), the
  /// runtime's defaults otherwise: `Client(serverURL:configuration: .kernel, transport:)`.
  public static var kernel: Configuration { Configuration(dateTranscoder: KernelDateTranscoder()) }
}
