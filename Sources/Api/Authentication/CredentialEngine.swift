import Domain
import Foundation
import HTTPTypes
import Synchronization

/// An authenticator's work on credentials as the context keeps them, its type erased.
protocol CredentialEngine: Sendable {
  func standing(for environment: ApiEnvironment) -> StoredCredential?
  var unattended: Bool { get }
  func timing(of stored: StoredCredential) -> (issuedAt: Date?, expiresAt: Date?)
  func apply(_ stored: StoredCredential, to request: inout HTTPRequest)
  func refresh(_ stored: StoredCredential?, in context: AuthenticationContext) async throws
    -> StoredCredential
  func login(_ login: Login, in context: AuthenticationContext) async throws -> StoredCredential
  func isFailure(_ response: ApiResponse, to request: HTTPRequest) -> Bool
  func isReadable(_ stored: StoredCredential) -> Bool
  func isRequest(_ request: HTTPRequest, authenticatedWith stored: StoredCredential) -> Bool
}

final class Engine<A: Authenticator>: CredentialEngine {
  let authenticator: A
  let name: String
  /// The last credential decoded: every request decodes the same one until it changes.
  private let decoded = Mutex<(StoredCredential, A.Credential)?>(nil)

  init(authenticator: A, name: String) {
    self.authenticator = authenticator
    self.name = name
  }

  var unattended: Bool { authenticator.obtainsCredentialUnattended }

  /// `stored` as the authenticator's credential; nil when it cannot be read as one (a file of
  /// another version: the credential is then as good as none).
  private func credential(_ stored: StoredCredential) -> A.Credential? {
    if let (last, credential) = decoded.withLock({ $0 }), last == stored { return credential }
    guard let credential = try? stored.decode(A.Credential.self) else { return nil }
    decoded.withLock { $0 = (stored, credential) }
    return credential
  }

  func standing(for environment: ApiEnvironment) -> StoredCredential? {
    authenticator.standingCredential(for: environment).flatMap { try? StoredCredential(name, $0) }
  }

  func timing(of stored: StoredCredential) -> (issuedAt: Date?, expiresAt: Date?) {
    let credential = credential(stored)
    return (credential?.issuedAt, credential?.expiresAt)
  }

  func apply(_ stored: StoredCredential, to request: inout HTTPRequest) {
    guard let credential = credential(stored) else { return }
    authenticator.apply(credential, to: &request)
  }

  func refresh(_ stored: StoredCredential?, in context: AuthenticationContext) async throws
    -> StoredCredential
  {
    let fresh = try await authenticator.refresh(stored.flatMap(credential), in: context)
    return try StoredCredential(name, fresh)
  }

  func login(_ login: Login, in context: AuthenticationContext) async throws -> StoredCredential {
    try StoredCredential(name, try await authenticator.login(login, in: context))
  }

  func isFailure(_ response: ApiResponse, to request: HTTPRequest) -> Bool {
    authenticator.isAuthenticationFailure(response, to: request)
  }

  func isReadable(_ stored: StoredCredential) -> Bool { credential(stored) != nil }

  func isRequest(_ request: HTTPRequest, authenticatedWith stored: StoredCredential) -> Bool {
    guard let credential = credential(stored) else { return false }
    return authenticator.isRequest(request, authenticatedWith: credential)
  }
}
