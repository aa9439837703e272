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
  /// or the process ends early; the next try, or the next download of the same URL to the
  /// same place, asks only for the rest (`Range`, with `If-Range` naming the `ETag` or
  /// `Last-Modified` it started with) and starts over when the server answers 200 instead of
  /// 206, or when the partial file was left by a download of another URL. `progress` is told
  /// the bytes done at most every `BodyFile.progressInterval`, and at the end.
  ///
  /// Files are the user's: the partial file and its resume record are never opened through a
  /// link, must be regular files of this user, and the partial file is locked while it is
  /// written, so a second download of the same destination fails at once with
  /// `ApiError.output`. A destination that is a device or a pipe (`/dev/null`, a FIFO,
  /// `/dev/stdout`) is written as the body comes, with no partial file and no resume, and
  /// `/dev/stdout` is the process's standard output whatever it is, a file the shell opened for
  /// `>` too; one that is a folder, a link to a file, or in a folder that does not exist is
  /// refused before anything is sent.
  ///
  /// The body is asked for as it is (no `Accept-Encoding`) and written as it comes, never
  /// decoded: a resumed range continues the same bytes, and a body coded anyway is kept as sent,
  /// so the file is never larger than what came over the wire.
  ///
  /// The answer is the destination with the status and header fields of the last try.
  public func download(
    _ route: Route, to destination: URL,
    progress: (@Sendable (TransferProgress) -> Void)? = nil
  ) async throws -> Response<URL> {
    let partial = try PartialDownload.open(destination, for: route, progress: progress)
    defer { partial.close() }
    var response: ApiResponse
    do {
      do {
        response = try await tries(for: route, receiving: .file(partial))
      } catch ApiError.status(let failure) where failure.status == 416 {
        // The range asked for is past the end: the file changed under a validator that did not.
        partial.discard()
        response = try await tries(for: route, receiving: .file(partial))
      }
    } catch let error as ApiError {
      if let failure = partial.diskFailure {
        throw ApiError.output(
          route: route, file: destination.path, reason: failure.reason, underlying: failure.error)
      }
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
