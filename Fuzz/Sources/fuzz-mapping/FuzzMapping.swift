import Api
import Domain
import Foundation
import FuzzDriver
import MoviesKit

/// libFuzzer's entry: decoding any body, at any mapping, must either give movies or throw an
/// `ApiError`.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzMapping(_ bytes: UnsafePointer<UInt8>, _ count: Int) -> Int32 {
  let body = Data(UnsafeBufferPointer(start: bytes, count: count))
  let mappings = [
    JSONMapping.body, JSONMapping(keyPath: "data"), JSONMapping.successEnvelope,
    JSONMapping.successEnvelope.at("data.info.items"),
    JSONMapping(keyPath: "data", keys: .snakeCase),
    JSONMapping(dates: .day), JSONMapping(dates: .millisecondsSince1970),
    JSONMapping(dates: .pattern("dd/MM/yyyy HH:mm")),
  ]
  for mapping in mappings {
    expectApiError {
      _ = try mapping.decode([Movie].self, from: body, route: .get("movies/topGrossing/2016"))
    }
    expectApiError {
      _ = try mapping.decode(Movie.self, from: body, route: .get("movies/1"))
    }
    expectApiError { _ = try mapping.decode(String.self, from: body, route: .auth) }
  }
  return 0
}

/// Anything but an `ApiError` escaping the decoders is a bug: crash so libFuzzer keeps the input.
private func expectApiError(_ body: () throws -> Void) {
  do { try body() } catch is ApiError {} catch {
    fatalError("the decoders threw \(type(of: error)), not an ApiError: \(error)")
  }
}

/// The process entry (SwiftPM's name for this target's `main`).
@_cdecl("fuzz_mapping_main")
public func fuzzMain(
  _ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?
) -> Int32 {
  runFuzzer(argc, argv, fuzzMapping)
}
