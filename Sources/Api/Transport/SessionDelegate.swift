import Foundation
import Synchronization

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// The session-level delegate of `URLSessionTransport` (on Linux the per-call delegate of
/// `data(for:delegate:)` is never called). It decides redirects and challenges, and notes per
/// task what it did, for the transport to report when the task ends.
final class SessionDelegate: NSObject, URLSessionTaskDelegate, Sendable {
  /// What happened to one task on its way.
  struct Notes: Sendable {
    var refusedRedirect: TransportError?
    /// The 401 of a Basic or Digest challenge that was cancelled.
    var challengeResponse: HTTPURLResponse?
    var redirects = 0
  }

  private let credentialHeaders: Set<String>
  private let maximumRedirects: Int
  private let notes = Mutex<[Int: Notes]>([:])

  init(credentialHeaders: Set<String>, maximumRedirects: Int) {
    self.credentialHeaders = credentialHeaders
    self.maximumRedirects = maximumRedirects
  }

  /// The notes of a finished task, forgotten from now on.
  func finish(_ identifier: Int) -> Notes {
    notes.withLock { $0.removeValue(forKey: identifier) } ?? Notes()
  }

  func urlSession(
    _ session: URLSession, task: URLSessionTask,
    willPerformHTTPRedirection response: HTTPURLResponse,
    newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
  ) {
    let original = task.originalRequest
    let from = original?.url?.absoluteString ?? "?"
    let to = request.url?.absoluteString ?? "?"
    let count = notes.withLock { notes -> Int in
      notes[task.taskIdentifier, default: Notes()].redirects += 1
      return notes[task.taskIdentifier]?.redirects ?? 0
    }
    if count > maximumRedirects {
      refuse(
        task,
        TransportError.redirectRefused(
          from: from, to: to, reason: "more than \(maximumRedirects) redirects"))
      return completionHandler(nil)
    }
    // FoundationNetworking on Linux resends a 307 without the body while the new request still
    // shows it (measured), so a request with a body is never redirected: it is refused.
    let hadBody = original?.httpBody.map { !$0.isEmpty } ?? (original?.httpBodyStream != nil)
    if hadBody {
      let reason =
        "following it would resend the \(original?.httpMethod ?? "request") without its body"
      refuse(task, TransportError.redirectRefused(from: from, to: to, reason: reason))
      return completionHandler(nil)
    }
    var next = request
    if let before = original?.url, let after = request.url, Origin(before) != Origin(after) {
      for (name, _) in next.allHTTPHeaderFields ?? [:]
      where credentialHeaders.contains(name.lowercased()) {
        next.setValue(nil, forHTTPHeaderField: name)
      }
    }
    completionHandler(next)
  }

  func urlSession(
    _ session: URLSession, task: URLSessionTask, didReceive challenge: URLAuthenticationChallenge,
    completionHandler:
      @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
  ) {
    let method = challenge.protectionSpace.authenticationMethod
    guard
      method == NSURLAuthenticationMethodHTTPBasic || method == NSURLAuthenticationMethodHTTPDigest
        || method == NSURLAuthenticationMethodDefault
    else { return completionHandler(.performDefaultHandling, nil) }
    let failure = challenge.failureResponse as? HTTPURLResponse
    notes.withLock { notes in
      notes[task.taskIdentifier, default: Notes()].challengeResponse =
        failure
        ?? HTTPURLResponse(
          url: task.originalRequest?.url ?? URL(fileURLWithPath: "/"), statusCode: 401,
          httpVersion: nil, headerFields: nil)
    }
    completionHandler(.cancelAuthenticationChallenge, nil)
  }

  private func refuse(_ task: URLSessionTask, _ error: TransportError) {
    notes.withLock { $0[task.taskIdentifier, default: Notes()].refusedRedirect = error }
  }
}
