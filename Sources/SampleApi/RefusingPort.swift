import Domain
import FlyingSocks
import Foundation

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

  private static let held: Result<UInt16, any Error> = Result {
    try bindSocket(to: .ip4("127.0.0.1"), port: 0, reuse: false).port
  }
}
