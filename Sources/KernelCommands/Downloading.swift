import Api
import Composition
import Domain
import Foundation
import HTTPTypes
import Layers
import Synchronization

extension Invocation {
  /// Downloads `call` (a call the app declares beside its others, carrying its request:
  /// `ServiceCall<Data>.cover(id:)`) to `file` on the profile's stack for `service`
  /// (`ServiceStack.download`: streamed to disk, resumed from a partial file, through
  /// authentication, retriers and redirects), with a progress bar on standard error when it is a
  /// terminal and nothing there otherwise; the call's summary names it there and in errors. A
  /// stack that does not ask the api (`offline`) refuses it with exit 69, sending nothing. The
  /// answer: its status, header fields and the bytes the file holds (or, for a device or a pipe,
  /// the bytes written to it).
  public func download<Value: Sendable>(
    _ call: ServiceCall<Value>, from service: String, to file: URL
  ) async throws -> (status: Int, headerFields: HTTPFields, bytes: Int64) {
    let composed = try services()
    let stack = try composed.stack(service)
    let what = call.summary
    Phases.mark("service")
    let shows = Terminal.showsProgress
    // The last progress told is the bytes written: it is always told at the end.
    let last = Mutex(Int64(0))
    defer { if shows { Terminal.endProgress() } }
    let answer: Response<URL>?
    do {
      answer = try await composed.makeCurrent {
        try await stack.download(call, to: file) { done in
          last.withLock { $0 = done.completed }
          if shows { Terminal.progress("\(what): \(Invocation.bar(done)) \(done)") }
        }
      }
    } catch let error as ApiError
      where file.path == "/dev/stdout" && (error.underlyingError as? POSIXError)?.code == .EPIPE
    {
      // Standard output's reader has gone (`| head`): a quiet 141, as for any other output.
      throw OutputFailure(code: 141, reason: nil)
    }
    guard let response = answer else {
      throw OfflineDownload(what: what, profile: composed.profile)
    }
    Phases.mark("answer")
    return (response.status, response.headerFields, last.withLock { $0 })
  }

  /// The file a download's `--output` names: `-` (or `/dev/stdout`) is standard output, written
  /// as the body comes whatever the shell made it, and refused as a usage error (64) when it is
  /// a terminal, which binary bytes would garble; any other path is that file, from the working
  /// directory.
  public static func downloadFile(_ output: String, option: String = "--output") throws -> URL {
    guard output == "-" || output == "/dev/stdout" else { return URL(fileURLWithPath: output) }
    guard isatty(STDOUT_FILENO) == 0 else {
      throw UsageError(
        "\(option) - writes the download's bytes to standard output, which is a terminal;"
          + " redirect it (> file) or name a file.")
    }
    return URL(fileURLWithPath: "/dev/stdout")
  }

  /// `[#########           ]`, 20 wide, or `[ … ]` while the total is unknown.
  static func bar(_ progress: TransferProgress) -> String {
    guard let fraction = progress.fraction else { return "[ … ]" }
    let filled = Int((fraction * 20).rounded(.down))
    return "[" + String(repeating: "#", count: filled) + String(repeating: " ", count: 20 - filled)
      + "]"
  }
}

/// A download asked of a profile that does not ask the api (exit 69).
struct OfflineDownload: Error, ClassifiedError, CustomStringConvertible {
  let what: String
  let profile: String

  var failure: ServiceFailure { .unreachable }

  var description: String {
    "Nothing is downloaded for \(what), and the \(profile) profile does not ask the api; run it"
      + " with a network profile."
  }
}
