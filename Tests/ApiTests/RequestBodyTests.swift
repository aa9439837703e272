import Api
import Domain
import Foundation
import KernelTesting
import SampleApi
import Testing

/// Request bodies from the encoders, over real loopback HTTP, read back the way servers parse
/// them: forms by the HTML rules, multipart by RFC 7578, JSON with the app's strategies.
@Suite(.timeLimit(.minutes(2))) struct RequestBodyTests {
  private func client(_ base: URL) throws -> ApiClient {
    ApiClient(
      context: InMemoryApiContext(environment: try ApiEnvironment(name: "local", baseURL: base)),
      transport: PlatformTransport(configuration: .loopbackTests), retriers: [])
  }

  /// `application/x-www-form-urlencoded` as a server's form parser reads it: pairs split on
  /// `&` and `=`, `+` as a space, then percent-decoded.
  static func parseForm(_ body: Data) -> [String: String] {
    let decode = { (text: Substring) in
      text.replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? "?"
    }
    var fields: [String: String] = [:]
    for pair in String(decoding: body, as: UTF8.self).split(separator: "&") {
      let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
      fields[decode(parts[0])] = parts.count > 1 ? decode(parts[1]) : ""
    }
    return fields
  }

  @Test func aFormArrivesAsAServerParsesIt() async throws {
    let server = try await FixtureServer.start(routes: .sampleMovies())
    defer { Task { await server.stop() } }
    let seen = Recorder<SampleRequest>()
    server.handle("POST", "/api/search") { request in
      seen.append(request)
      return .json(Self.parseForm(request.body))
    }
    let fields = ["q": "a+b&c=d é #%", "name": "Émile Zola", "empty": ""]
    let echoed = try await client(server.baseURL).send(
      ApiRequest<[String: String]>(
        .post(
          "search",
          body: .form(fields.sorted { $0.key < $1.key }.map { URLQueryItem(name: $0, value: $1) })
        )))
    #expect(echoed == fields)
    #expect(seen.all.first?.headers["content-type"] == "application/x-www-form-urlencoded")
  }

  struct NewTicket: Codable, Equatable {
    let title: String
    let dueAt: Date
  }

  @Test func jsonIsWrittenWithTheAppsStrategiesAndARoutesContentTypeWins() async throws {
    let server = try await FixtureServer.start(routes: .sampleMovies())
    defer { Task { await server.stop() } }
    let seen = Recorder<SampleRequest>()
    server.handle("POST", "/api/tickets") { request in
      seen.append(request)
      return .staticFile(request.body, status: 201)
    }
    let mapping = JSONMapping(keys: .snakeCase)
    let ticket = NewTicket(title: "Crash", dueAt: Date(timeIntervalSince1970: 1_764_064_807.123))
    let client = try client(server.baseURL)
    let created = try await client.send(
      ApiRequest<NewTicket>(
        .post("tickets", body: try .json(ticket, encoder: mapping.encoder())), mapping: mapping))
    // Written and read back to the millisecond.
    #expect(created.title == ticket.title)
    #expect(abs(created.dueAt.timeIntervalSince(ticket.dueAt)) < 0.000_5)
    #expect(
      String(decoding: seen.all.first?.body ?? Data(), as: UTF8.self)
        == #"{"due_at":"2025-11-25T10:00:07.123Z","title":"Crash"}"#)
    #expect(seen.all.first?.headers["content-type"] == "application/json")

    var route = Route.post("tickets", body: try .json(ticket, encoder: mapping.encoder()))
    route.headerFields[.contentType] = "application/vnd.api+json"
    _ = try await client.response(for: route)
    #expect(seen.all.last?.headers["content-type"] == "application/vnd.api+json")
  }

  /// The parts of a `multipart/form-data` body as RFC 7578 reads it: by the boundary its
  /// `Content-Type` names, each part's headers, then its content.
  static func parseMultipart(_ body: Data, contentType: String) -> [(
    disposition: String, type: String?, content: Data
  )] {
    guard let boundary = contentType.split(separator: "boundary=").last else { return [] }
    let delimiter = Data("\r\n--\(boundary)".utf8)
    var text = Data("\r\n".utf8) + body
    var parts: [(String, String?, Data)] = []
    while let start = text.range(of: delimiter) {
      text = text[start.upperBound...]
      if text.starts(with: Data("--".utf8)) { break }
      guard let headEnd = text.range(of: Data("\r\n\r\n".utf8)),
        let next = text.range(of: delimiter, in: headEnd.upperBound..<text.endIndex)
      else { break }
      let head = String(decoding: text[..<headEnd.lowerBound], as: UTF8.self)
        .split(separator: "\r\n").map(String.init)
      let disposition = head.first { $0.hasPrefix("Content-Disposition: ") } ?? ""
      let type = head.first { $0.hasPrefix("Content-Type: ") }.map { String($0.dropFirst(14)) }
      parts.append((disposition, type, Data(text[headEnd.upperBound..<next.lowerBound])))
      text = text[next.lowerBound...]
    }
    return parts
  }

  @Test func multipartFieldsAndFilesArriveAsAServerParsesThem() async throws {
    let folder = try TemporaryDirectory("multipart")
    defer { folder.remove() }
    try FileManager.default.createDirectory(at: folder.url, withIntermediateDirectories: true)
    let file = folder.appending("cover.png")
    let image = Data((0..<3000).map { UInt8($0 % 251) })
    try image.write(to: file)
    let server = try await FixtureServer.start(routes: .sampleMovies())
    defer { Task { await server.stop() } }
    let seen = Recorder<SampleRequest>()
    server.handle("POST", "/api/books") { request in
      seen.append(request)
      return .json(["ok": true])
    }
    _ = try await client(server.baseURL).response(
      for: .post(
        "books",
        body: .multipart([
          .field("title", "Dune \"1965\"\r\nFirst edition"),
          .file("cover", at: file, contentType: "image/png"),
          .data("notes", Data("é".utf8), filename: "notes.txt", contentType: "text/plain"),
        ])))
    let request = try #require(seen.all.first)
    let type = try #require(request.headers["content-type"])
    #expect(type.hasPrefix("multipart/form-data; boundary="))
    let parts = Self.parseMultipart(request.body, contentType: type)
    #expect(parts.count == 3)
    #expect(
      parts.map(\.disposition) == [
        #"Content-Disposition: form-data; name="title""#,
        #"Content-Disposition: form-data; name="cover"; filename="cover.png""#,
        #"Content-Disposition: form-data; name="notes"; filename="notes.txt""#,
      ])
    #expect(parts.map(\.type) == [nil, "image/png", "text/plain"])
    #expect(parts.first?.content == Data("Dune \"1965\"\r\nFirst edition".utf8))
    #expect(parts.dropFirst().first?.content == image)
    #expect(parts.last?.content == Data("é".utf8))
  }

  @Test func aFiftyMegabyteFileIsSentFromDiskAsItIsRead() async throws {
    let folder = try TemporaryDirectory("upload")
    defer { folder.remove() }
    try FileManager.default.createDirectory(at: folder.url, withIntermediateDirectories: true)
    let file = folder.appending("big.bin")
    // 50 MB, a megabyte at a time, every megabyte different.
    #expect(FileManager.default.createFile(atPath: file.path, contents: nil))
    let handle = try FileHandle(forWritingTo: file)
    // RFC 7578's shape, written out: the boundary line, the part's headers, the file, the end.
    let head = Data(
      ("--b0undary\r\nContent-Disposition: form-data; name=\"file\"; filename=\"big.bin\"\r\n"
        + "Content-Type: application/octet-stream\r\n\r\n").utf8)
    let tail = Data("\r\n--b0undary--\r\n".utf8)
    let length = head.count + 50 << 20 + tail.count
    var digest = UploadSink.digest(head)
    var chunk = Data((0..<(1 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31) })
    for megabyte in 0..<50 {
      chunk[0] = UInt8(megabyte)
      try handle.write(contentsOf: chunk)
      digest = UploadSink.digest(chunk, from: digest)
    }
    try handle.close()
    digest = UploadSink.digest(tail, from: digest)

    let sink = try UploadSink()
    defer { sink.stop() }
    let answer = try await client(sink.baseURL).send(
      ApiRequest<[String: Int]>(
        .post("uploads", body: .multipart([.file("file", at: file)], boundary: "b0undary"))))
    let received = try #require(sink.requests.first)
    #expect(answer == ["bytes": length])
    #expect(received.bytes == length && received.digest == digest)
    #expect(received.head.contains("Content-Length: \(length)"))
    #expect(!received.head.lowercased().contains("expect:"))
  }

  @Test func aBodyWhoseFileIsGoneIsRefusedInOneSentenceAndNotRetried() async throws {
    let sink = try UploadSink()
    defer { sink.stop() }
    let gone = URL(filePath: "/nonexistent/kernel-upload.bin")
    let error = await apiError {
      try await client(sink.baseURL).response(
        for: .post("uploads", body: .multipart([.file("file", at: gone)])))
    }
    #expect(
      error?.description
        == "POST uploads cannot be sent: the body's file /nonexistent/kernel-upload.bin could not"
        + " be read: it cannot be read.")
    #expect(sink.requests.isEmpty)
  }
}
