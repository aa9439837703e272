import Domain
import Foundation

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// A listening TCP socket on `host` (an IPv4 loopback address), on a port the system picks: for
/// a test's own server on plain sockets, one that misbehaves on purpose or reads bodies of any
/// size as they arrive. The caller accepts on it and closes it.
public func loopbackListener(host: String = "127.0.0.1") throws -> (
  descriptor: Int32, port: UInt16
) {
  guard Loopback.address(host) != nil else { throw TestFailure("\(host) is not loopback") }
  #if canImport(Darwin)
    let socket = Darwin.socket(AF_INET, SOCK_STREAM, 0)
  #else
    let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
  #endif
  guard socket >= 0 else { throw TestFailure("socket() failed: errno \(errno)") }
  var address = sockaddr_in()
  address.sin_family = sa_family_t(AF_INET)
  address.sin_port = 0
  guard inet_pton(AF_INET, host, &address.sin_addr) == 1 else {
    close(socket)
    throw TestFailure("\(host) is not an IPv4 address")
  }
  let bound = withUnsafePointer(to: &address) {
    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
      bind(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
    }
  }
  guard bound == 0, listen(socket, 64) == 0 else {
    close(socket)
    throw TestFailure("could not listen on \(host): errno \(errno)")
  }
  var length = socklen_t(MemoryLayout<sockaddr_in>.size)
  _ = withUnsafeMutablePointer(to: &address) {
    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(socket, $0, &length) }
  }
  return (socket, UInt16(bigEndian: address.sin_port))
}

/// Accepts connections on `listener` on a thread of its own until it is shut down (then closes
/// it), serving each on a thread of its own with `serve`, then closing the connection.
func acceptingConnections(on listener: Int32, _ serve: @escaping @Sendable (Int32) -> Void) {
  Thread.detachNewThread {
    while true {
      let connection = accept(listener, nil, nil)
      if connection < 0 { break }
      Thread.detachNewThread {
        serve(connection)
        close(connection)
      }
    }
    close(listener)
  }
}
