import Api
import Domain
import Foundation
import FuzzDriver

/// libFuzzer's entry: decoding any body must either give movies or throw an `ApiError`, and
/// when both Kernel's decoder and Foundation's decode movies from it, they are the same movies.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzMapping(_ bytes: UnsafePointer<UInt8>, _ count: Int) -> Int32 {
  let body = Data(UnsafeBufferPointer(start: bytes, count: count))
  if let ours = try? JSONMapping.body.decode([ApiMovie].self, from: body, route: .auth),
    let theirs = try? foundationDecoder.decode([ApiMovie].self, from: body), ours != theirs
  {
    fatalError("Kernel's decoder and Foundation's differ: \(ours) against \(theirs)")
  }
  let mappings = [
    JSONMapping.body, JSONMapping(keyPath: "data"), JSONMapping(envelope: true),
    JSONMapping(keyPath: "info.items", envelope: true),
  ]
  for mapping in mappings {
    expectApiError {
      _ = try mapping.decode([ApiMovie].self, from: body, route: .topGrossingMovies(year: 2016))
        .map { $0.convert() }
    }
    expectApiError {
      _ = try mapping.decode(ApiMovie.self, from: body, route: .movie(id: 1)).convert()
    }
    expectApiError { _ = try mapping.decode(String.self, from: body, route: .auth) }
  }
  return 0
}

/// Foundation's decoder with the days `JSONMapping` reads.
private let foundationDecoder: JSONDecoder = {
  let decoder = JSONDecoder()
  decoder.dateDecodingStrategy = .custom { decoder in
    let container = try decoder.singleValueContainer()
    let text = try container.decode(String.self)
    guard let day = CalendarDay.date(from: text) else {
      throw DecodingError.dataCorruptedError(in: container, debugDescription: "not a day")
    }
    return day
  }
  return decoder
}()

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
