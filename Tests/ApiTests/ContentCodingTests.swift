import Api
import CCompression
import Domain
import Foundation
import KernelTesting
import SampleApi
import Testing

/// Bodies coded as servers code them, over real loopback HTTP: the transport asks for the
/// codings it decodes, hands the body over decoded, and counts its limit after decoding.
@Suite(.timeLimit(.minutes(1))) struct ContentCodingTests {
  struct Shelf: Decodable, Equatable {
    let books: [String]
  }

  static let shelf = Data(
    #"{"books": [\#((1...200).map { "\"Book \($0)\"" }.joined(separator: ","))]}"#.utf8)

  @Test(arguments: ["gzip", "deflate", "br"])
  func aCodedBodyArrivesDecoded(coding: String) async throws {
    try await withLoopbackApi(routes: .sampleMovies()) { harness in
      let asked = Recorder<String>()
      harness.server.handle("GET", "/api/shelf") { request in
        let accepted = request.headers["accept-encoding"] ?? ""
        asked.append(accepted)
        guard accepted.contains(coding) else { return .staticFile(Self.shelf) }
        var response = SampleResponse.staticFile(
          (try? Coded.encode(Self.shelf, as: coding)) ?? Data())
        response.headers["Content-Encoding"] = coding
        return response
      }
      let response = try await harness.client.response(ApiRequest<Shelf>(.get("shelf")))
      #expect(response.value.books.count == 200)
      #expect(response.headerFields[.contentEncoding] == nil)
      let accepted = asked.all.first ?? ""
      // gzip and deflate at least; brotli where this libcurl was built with it.
      #expect(accepted.contains("gzip") && accepted.contains("deflate"), "\(accepted)")
      if coding == "br" && !accepted.contains("br") {
        Issue.record("this libcurl does not decode brotli; Accept-Encoding: \(accepted)")
      }
    }
  }

  @Test func aGzipBombIsRefusedByItsDecodedSizeInOneSentence() async throws {
    var limit = PlatformTransport.Configuration()
    limit.maximumBodyBytes = 64 << 20
    try await withLoopbackApi(routes: .sampleMovies(), transport: limit) { harness in
      // 200 MB of zeros, about 200 KB on the wire.
      let bomb = try Coded.gzipZeros(200 << 20)
      #expect(bomb.count < 1 << 20)
      harness.server.handle("GET", "/api/shelf") { _ in
        SampleResponse(
          status: 200, headers: ["Content-Type": "application/json", "Content-Encoding": "gzip"],
          body: bomb)
      }
      let error = await apiError {
        try await harness.client.send(ApiRequest<Shelf>(.get("shelf")))
      }
      guard case .tooLarge(let route, _, let bytes) = error else {
        Issue.record("expected the body refused as too large, got \(String(describing: error))")
        return
      }
      #expect(route == .get("shelf") && bytes == 64 << 20)
      #expect(
        error?.description
          == "GET shelf from 127.0.0.1 answered a body of more than 67108864 bytes once decoded,"
          + " more than this client takes.")
    }
  }
}

extension ContentCodingTests {
  /// A download asks for no coding and decodes none: a gzip bomb sent anyway (200 MB of zeros,
  /// about 200 KB on the wire) is kept as the bytes that came, never expanded on disk.
  @Test func aDownloadAsksForNoCodingAndKeepsACodedBodyAsSent() async throws {
    let bomb = try Coded.gzipZeros(200 << 20)
    let folder = try TemporaryDirectory("coded-download")
    defer { folder.remove() }
    try await withLoopbackApi(routes: .sampleMovies()) { harness in
      let asked = Recorder<String>()
      harness.server.handle("GET", "/api/poster") { request in
        asked.append(request.headers["accept-encoding"] ?? "")
        return SampleResponse(
          status: 200, headers: ["Content-Type": "image/png", "Content-Encoding": "gzip"],
          body: bomb)
      }
      let file = folder.appending("poster.png")
      _ = try await harness.client.download(.get("poster"), to: file)
      #expect(asked.all == [""], "\(asked.all)")
      let size = try FileManager.default.attributesOfItem(atPath: file.path)[.size] as? Int
      #expect(size == bomb.count)
    }
  }

  /// A body its `Content-Encoding` does not describe is bad data from the api (exit 65), sent
  /// once and not retried: never "could not reach".
  @Test(arguments: ["gzip", "bogus"])
  func aBodyItsCodingDoesNotDescribeIsBadDataNotRetried(coding: String) async throws {
    try await withLoopbackApi(
      routes: .sampleMovies(), retriers: [.backoff], clock: TestClock(immediate: true)
    ) {
      harness in
      let served = Counter()
      harness.server.handle("GET", "/api/shelf") { _ in
        _ = served.increment()
        return SampleResponse(
          status: 200, headers: ["Content-Type": "application/json", "Content-Encoding": coding],
          body: Self.shelf)
      }
      let error = await apiError { try await harness.client.send(ApiRequest<Shelf>(.get("shelf"))) }
      guard case .decoding? = error else {
        Issue.record("expected bad data, got \(String(describing: error))")
        return
      }
      #expect(error?.failure == .badData)
      #expect(error?.description.contains("could not reach") == false)
      #expect(served.value == 1)
    }
  }
}

/// Encoders of the codings, by zlib and brotli, as a server would use them.
enum Coded {
  struct Failure: Error {}

  static func encode(_ data: Data, as coding: String) throws -> Data {
    switch coding {
    case "gzip": try deflate([data], windowBits: 31)
    case "deflate": try deflate([data], windowBits: 15)
    case "br": try brotli(data)
    default: data
    }
  }

  /// `count` zeros, gzip-coded a megabyte at a time.
  static func gzipZeros(_ count: Int) throws -> Data {
    let megabyte = Data(count: 1 << 20)
    return try deflate(Array(repeating: megabyte, count: count >> 20), windowBits: 31)
  }

  /// `chunks` in order through zlib's deflate: windowBits 15 is the zlib format (HTTP's
  /// `deflate`), 31 gzip.
  static func deflate(_ chunks: [Data], windowBits: Int32) throws -> Data {
    var stream = z_stream()
    guard
      deflateInit2_(
        &stream, 1, Z_DEFLATED, windowBits, 8, Z_DEFAULT_STRATEGY, ZLIB_VERSION,
        Int32(MemoryLayout<z_stream>.size)) == Z_OK
    else { throw Failure() }
    defer { deflateEnd(&stream) }
    var output = Data()
    var buffer = [UInt8](repeating: 0, count: 64 << 10)
    for (index, chunk) in chunks.enumerated() {
      let flush = index == chunks.count - 1 ? Z_FINISH : Z_NO_FLUSH
      var input = [UInt8](chunk)
      try input.withUnsafeMutableBufferPointer { input in
        stream.next_in = input.baseAddress
        stream.avail_in = uInt(input.count)
        repeat {
          let result = buffer.withUnsafeMutableBufferPointer { out -> Int32 in
            stream.next_out = out.baseAddress
            stream.avail_out = uInt(out.count)
            return CCompression.deflate(&stream, flush)
          }
          guard result != Z_STREAM_ERROR else { throw Failure() }
          output.append(contentsOf: buffer[..<(buffer.count - Int(stream.avail_out))])
        } while stream.avail_out == 0
      }
    }
    return output
  }

  static func brotli(_ data: Data) throws -> Data {
    var size = BrotliEncoderMaxCompressedSize(data.count)
    var output = [UInt8](repeating: 0, count: size)
    let input = [UInt8](data)
    guard
      BrotliEncoderCompress(
        BROTLI_DEFAULT_QUALITY, BROTLI_DEFAULT_WINDOW, BROTLI_MODE_GENERIC, input.count, input,
        &size, &output) == BROTLI_TRUE
    else { throw Failure() }
    return Data(output[..<size])
  }
}
