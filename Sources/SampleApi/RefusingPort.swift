import Domain
import FlyingSocks
import Foundation
import Synchronization

/// A loopback port that is bound but never listens, so every connection to it is refused: the
/// address of a server that is not there, for tests of what a client does then.
///
/// A stopped server's port would not do: the system may give it to the next server that asks for
/// a free port (another test running beside this one), which would then answer. This port stays
/// bound until the process ends, by one socket that allows no address reuse, so no server can
/// take it and no client connection is given it as its own port.
public enum RefusingPort {
  /// `http://127.0.0.1:<port>`, the same for the whole process; throws the system's reason when
  /// no socket could be bound.
  public static func url() throws -> URL {
    let port = try held.get()
    guard let url = URL(string: "http://127.0.0.1:\(port)") else {
      throw SocketError.unsupportedAddress
    }
    return url
  }

  /// A port of its own, refused like `url()`'s until a server takes it over
  /// (`FixtureServer.start(on:)`): for a test whose server goes down and comes back at the same
  /// origin. Until then no other server, and no client connection, can be given it.
  public static func hold() throws -> Held {
    let bound = try bindSocket(to: .ip4("127.0.0.1"), port: 0, reuse: false)
    return Held(port: bound.port, socket: bound.socket)
  }

  /// A held port: refused, and no one else's, until a server takes it; closed with the last
  /// reference to it otherwise.
  public final class Held: Sendable {
    /// The port held.
    public let port: UInt16
    private let socket: Mutex<Socket?>

    init(port: UInt16, socket: Socket) {
      self.port = port
      self.socket = Mutex(socket)
    }

    /// `http://127.0.0.1:<port>/api/`.
    public var baseURL: String { "http://127.0.0.1:\(port)/api/" }

    /// The bound socket, once, for the server that listens on it.
    func take() -> Socket? {
      socket.withLock { held in
        defer { held = nil }
        return held
      }
    }

    deinit { try? take()?.close() }
  }

  private static let held: Result<UInt16, any Error> = Result {
    try bindSocket(to: .ip4("127.0.0.1"), port: 0, reuse: false).port
  }
}
