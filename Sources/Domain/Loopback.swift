import Foundation

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Loopback addresses: the only ones a fixture server listens on, and the only hosts an
/// environment may reach over plain http without saying it is insecure.
package enum Loopback {
  /// The address `host` names when it is a loopback one: an IPv4 literal in 127.0.0.0/8, the
  /// IPv6 loopback `::1` (with or without brackets), or `localhost` in any case (as 127.0.0.1).
  /// Names other than `localhost` are never looked up.
  public static func address(_ host: String) -> Address? {
    if host.lowercased() == "localhost" { return .ip4("127.0.0.1") }
    var ip4 = in_addr()
    if inet_pton(AF_INET, host, &ip4) == 1 {
      // s_addr is in network order: its first byte in memory is the first octet.
      let first = withUnsafeBytes(of: ip4) { $0[0] }
      return first == 127 ? .ip4(host) : nil
    }
    let bare =
      host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
    var ip6 = in6_addr()
    guard inet_pton(AF_INET6, bare, &ip6) == 1 else { return nil }
    let bytes = withUnsafeBytes(of: ip6) { Array($0) }
    return bytes == Array(repeating: 0, count: 15) + [1] ? .ip6("::1") : nil
  }

  /// Whether `host` is a loopback address (see `address`).
  public static func isLoopback(_ host: String) -> Bool { address(host) != nil }

  /// A loopback address, as a URL's host spells it.
  package enum Address: Sendable, Equatable {
    /// An IPv4 address of 127.0.0.0/8, as written.
    case ip4(String)
    /// `::1`, as written.
    case ip6(String)

    /// `127.0.0.1`, or `[::1]`.
    public var urlHost: String {
      switch self {
      case .ip4(let host): host
      case .ip6(let host): "[\(host)]"
      }
    }
  }
}
