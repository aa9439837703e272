#if canImport(Darwin)
  import Foundation
  import HTTPTypes
  import Synchronization

  /// The transport on Apple platforms: `URLSession`, converted at this edge from and to
  /// swift-http-types. It follows no redirect (the client does, by one rule on every platform)
  /// and answers no authentication challenge (the 401 comes back); nothing is cached, and
  /// cookies are neither stored nor sent.
  ///
  /// Timeouts: `requestTimeout` bounds the wait for each piece of the response; `resourceTimeout`
  /// bounds the whole exchange, kept on `clock` so a test can pass it by advancing a test clock.
  public final class URLSessionTransport: Transport {
    /// Timeouts and connections.
    public struct Configuration: Sendable {
      public var requestTimeout: Duration = .seconds(30)
      public var resourceTimeout: Duration = .seconds(60)
      /// Connections open to one host at once (URLSession's default of 6 would cap any higher
      /// concurrency of the callers).
      public var maximumConnectionsPerHost = 64

      public init() {}
    }

    private let session: URLSession
    public let configuration: Configuration
    public let clock: any Clock<Duration>

    public init(
      configuration: Configuration = Configuration(),
      clock: any Clock<Duration> = ContinuousClock()
    ) {
      self.configuration = configuration
      self.clock = clock
      let settings = URLSessionConfiguration.ephemeral
      settings.urlCache = nil
      settings.requestCachePolicy = .reloadIgnoringLocalCacheData
      settings.httpCookieStorage = nil
      settings.httpShouldSetCookies = false
      // With no stored credentials a challenge is not answered: the 401 comes back.
      settings.urlCredentialStorage = nil
      settings.timeoutIntervalForRequest = configuration.requestTimeout.seconds
      settings.timeoutIntervalForResource = configuration.resourceTimeout.seconds + 1
      settings.httpMaximumConnectionsPerHost = configuration.maximumConnectionsPerHost
      session = URLSession(configuration: settings, delegate: Delegate(), delegateQueue: nil)
    }

    deinit { session.finishTasksAndInvalidate() }

    public func send(_ request: HTTPRequest, body: RequestBody?) async throws -> ApiResponse {
      try Task.checkCancellation()
      guard let url = request.targetURL else {
        throw TransportError.cannotConnect(host: "?", reason: "the request has no address")
      }
      let host = url.host ?? "the server"
      var urlRequest = URLRequest(url: url)
      urlRequest.httpMethod = request.method.rawValue
      for field in request.headerFields {
        urlRequest.addValue(field.value, forHTTPHeaderField: field.name.rawName)
      }
      // A body of bytes alone goes as it is; one with files is copied a chunk at a time to a
      // file of its own and uploaded from there, so no file is ever read whole.
      let upload: URL?
      if let body, body.parts.contains(where: { if case .file = $0 { true } else { false } }) {
        upload = try Self.spooled(body)
      } else {
        upload = nil
        do { urlRequest.httpBody = try body?.data() } catch {
          throw TransportError.bodyUnreadable(reason: "\(error)")
        }
      }
      defer { if let upload { try? FileManager.default.removeItem(at: upload) } }
      let sent = urlRequest
      let watchdog = Task { [clock, configuration] in
        try await clock.sleep(for: configuration.resourceTimeout)
      }
      defer { watchdog.cancel() }
      return try await withThrowingTaskGroup(of: ApiResponse?.self) { group in
        group.addTask { [session, sent, upload] in
          do {
            let (data, response) =
              if let upload {
                try await session.upload(for: sent, fromFile: upload)
              } else {
                try await session.data(for: sent)
              }
            guard let http = response as? HTTPURLResponse else {
              throw TransportError.cannotConnect(host: host, reason: "the answer was not HTTP")
            }
            var fields = HTTPFields()
            for (name, value) in http.allHeaderFields {
              guard let name = HTTPField.Name(String(describing: name)) else { continue }
              fields.append(HTTPField(name: name, value: String(describing: value)))
            }
            return ApiResponse(
              HTTPResponse(status: .init(code: http.statusCode), headerFields: fields), body: data)
          } catch let error as URLError {
            throw Self.transportError(error, host: host)
          }
        }
        group.addTask {
          _ = await watchdog.result
          return nil
        }
        defer { group.cancelAll() }
        guard let first = try await group.next() else { throw CancellationError() }
        try Task.checkCancellation()
        guard let response = first else { throw TransportError.timedOut(host: host) }
        return response
      }
    }

    /// `body` written to a temporary file a chunk at a time.
    private static func spooled(_ body: RequestBody) throws -> URL {
      let file = FileManager.default.temporaryDirectory
        .appendingPathComponent("kernel-upload-\(UUID().uuidString)")
      do {
        guard FileManager.default.createFile(atPath: file.path, contents: nil) else {
          throw BodyUnreadable(file: file.path, reason: "a temporary copy could not be made")
        }
        let handle = try FileHandle(forWritingTo: file)
        defer { try? handle.close() }
        let reader = BodyReader(body)
        var chunk = [UInt8](repeating: 0, count: 256 << 10)
        while true {
          let count = try chunk.withUnsafeMutableBytes { try reader.read(into: $0) }
          if count == 0 { return file }
          try handle.write(contentsOf: chunk[..<count])
        }
      } catch {
        try? FileManager.default.removeItem(at: file)
        throw TransportError.bodyUnreadable(reason: "\(error)")
      }
    }

    private static func transportError(_ error: URLError, host: String) -> any Error {
      switch error.code {
      case .timedOut: TransportError.timedOut(host: host)
      case .cancelled: CancellationError()
      case .cannotConnectToHost:
        TransportError.cannotConnect(host: host, reason: "connection refused")
      case .cannotFindHost, .dnsLookupFailed:
        TransportError.cannotConnect(host: host, reason: "unknown host")
      case .networkConnectionLost:
        TransportError.cannotConnect(host: host, reason: "connection lost")
      case .notConnectedToInternet: TransportError.cannotConnect(host: host, reason: "no network")
      case .cannotDecodeContentData, .cannotDecodeRawData:
        TransportError.undecodable(host: host, reason: error.localizedDescription)
      default: TransportError.cannotConnect(host: host, reason: error.localizedDescription)
      }
    }

    /// Refuses every redirect: the 3xx comes back to the client.
    private final class Delegate: NSObject, URLSessionTaskDelegate, Sendable {
      func urlSession(
        _ session: URLSession, task: URLSessionTask,
        willPerformHTTPRedirection response: HTTPURLResponse, newRequest request: URLRequest
      ) async -> URLRequest? { nil }
    }
  }
#endif
