import Foundation
import HTTPTypes

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

extension ApiClient {
  /// Downloads the body of `route` to `destination`, streamed to disk as it arrives (no limit on
  /// its size), through the whole pipeline: adapters, authentication (a 401 refreshes and the
  /// next try resumes), retriers, redirects and the stall timeout (`requestSeconds`: no byte
  /// for that long). Neither the whole-exchange timeout nor the call's deadline ends a download
  /// that keeps receiving.
  ///
  /// The body goes to a partial file beside `destination` (`.NAME.partial`) and is moved into
  /// place only when complete and of the length announced. A partial file is kept when a try
  /// or the process ends early; the next try, or the next download of the same route to the
  /// same place, asks only for the rest (`Range`, with `If-Range` naming the `ETag` or
  /// `Last-Modified` it started with) and starts over when the server answers 200 instead of
  /// 206. `progress` is told the bytes done at most every `BodyFile.progressInterval`, and at
  /// the end.
  ///
  /// The answer is the destination with the status and header fields of the last try.
  public func download(
    _ route: Route, to destination: URL,
    progress: (@Sendable (TransferProgress) -> Void)? = nil
  ) async throws -> Response<URL> {
    let partial = PartialDownload(destination: destination, progress: progress)
    var response: ApiResponse
    do {
      response = try await tries(for: route, receiving: .file(partial))
    } catch ApiError.status(let failure) where failure.status == 416 {
      // The range asked for is past the end: the file changed under a validator that did not.
      partial.discard()
      response = try await tries(for: route, receiving: .file(partial))
    } catch let error as ApiError {
      if case .download = error { partial.discard() }
      throw error
    }
    try partial.complete(response, route: route)
    return Response(
      value: destination, status: response.status, headerFields: response.headerFields)
  }
}

extension ApiClient {
  /// The answer to `route` as it arrives: its status and header fields once its head is in,
  /// then its body in chunks (`ResponseStream`: back-pressure, cancellable; `lines` and
  /// server-sent `events` over it), through the whole pipeline (adapters, authentication,
  /// retriers and redirects, up to the head of a 2xx) with no limit on the body's size. Only
  /// the stall timeout (`requestSeconds`: no byte for that long) ends a stream that keeps
  /// arriving; neither the whole-exchange timeout nor the call's deadline does.
  public func stream(_ route: Route) async throws -> StreamedResponse {
    let response = try await tries(for: route, receiving: .stream)
    return StreamedResponse(
      head: response.head, body: response.stream ?? ResponseStream(whole: response.body))
  }
}

/// A download's partial file beside its destination, and the validator it resumes with
/// (`.NAME.partial.validator`): what lets a later try, or a later run, ask for the rest only.
struct PartialDownload: Sendable {
  let destination: URL
  let progress: (@Sendable (TransferProgress) -> Void)?

  var partial: URL {
    destination.deletingLastPathComponent()
      .appendingPathComponent(".\(destination.lastPathComponent).partial")
  }

  var validatorFile: URL {
    destination.deletingLastPathComponent()
      .appendingPathComponent(".\(destination.lastPathComponent).partial.validator")
  }

  /// The bytes the partial file holds, 0 without one.
  var offset: Int64 {
    var info = stat()
    return stat(partial.path, &info) == 0 ? Int64(info.st_size) : 0
  }

  /// The file this try writes, and `request` asking only for what the partial file lacks when
  /// it holds something and its validator is known.
  func file(for request: inout HTTPRequest) -> BodyFile {
    let held = offset
    let validator = (try? String(contentsOf: validatorFile, encoding: .utf8)) ?? ""
    var start: Int64 = 0
    if held > 0, !validator.isEmpty {
      request.headerFields[.range] = "bytes=\(held)-"
      request.headerFields[.ifRange] = validator
      start = held
    } else {
      request.headerFields[.range] = nil
      request.headerFields[.ifRange] = nil
    }
    return BodyFile(
      url: partial, offset: start,
      starting: { [validatorFile] head in
        // A 200 starts over with the validator it brings; a 206 continues under the same one.
        guard head.status.code == 200 else { return }
        let validator = Self.validator(of: head.headerFields)
        do {
          if let validator {
            try Data(validator.utf8).write(to: validatorFile, options: .atomic)
          } else if FileManager.default.fileExists(atPath: validatorFile.path) {
            try FileManager.default.removeItem(at: validatorFile)
          }
        } catch {
          throw BodyFile.Failure(
            description: "its resume record \(validatorFile.path) cannot be written (\(error))")
        }
      }, progress: progress)
  }

  /// What `If-Range` may name: a strong `ETag`, else `Last-Modified`; nil with neither.
  static func validator(of fields: HTTPFields) -> String? {
    if let etag = fields[.eTag], !etag.hasPrefix("W/") { return etag }
    return fields[.lastModified]
  }

  /// Moves the partial file into place when it holds the length announced; otherwise removes
  /// it and fails, leaving `destination` as it was.
  func complete(_ response: ApiResponse, route: Route) throws {
    let expected: Int64?
    if response.status == 206 {
      expected = response.headerFields[.contentRange].flatMap(BodyFile.contentRange)?.total
    } else {
      expected = response.headerFields[.contentLength].flatMap { Int64($0) }
    }
    let held = offset
    if let expected, held != expected {
      discard()
      throw ApiError.download(
        route: route, file: destination.path,
        reason: "the server announced \(expected) bytes and sent \(held)")
    }
    guard rename(partial.path, destination.path) == 0 else {
      let reason = String(cString: strerror(errno))
      throw ApiError.download(
        route: route, file: destination.path, reason: "it cannot be put in place (\(reason))")
    }
    try? FileManager.default.removeItem(at: validatorFile)
  }

  /// Removes the partial file and its validator: the next try starts over.
  func discard() {
    try? FileManager.default.removeItem(at: partial)
    try? FileManager.default.removeItem(at: validatorFile)
  }
}
