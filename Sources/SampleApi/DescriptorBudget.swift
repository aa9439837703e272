import Foundation

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// How many connections a server may hold open at once without taking the process's last
/// descriptors: the soft `RLIMIT_NOFILE` less those already open and a reserve. The reserve is
/// for what the process itself opens while it serves (files, timers; libdispatch's thread-pool
/// monitor reads `/proc` files and traps when it cannot open one), so a server at its limit
/// queues further connections instead of running the process out of descriptors.
enum DescriptorBudget {
  /// Descriptors kept free for the process's own use.
  static let reserve = 16

  /// Connections the server may hold at once; throws when the limit leaves room for none.
  static func connections() throws -> Int {
    var limit = rlimit()
    // RLIM_INFINITY is all ones; a limit past a million is as good as none here.
    guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur < 1 << 20
    else { return Int.max }
    let soft = Int(limit.rlim_cur)
    let open = openDescriptors(below: soft)
    guard soft - open - reserve >= 1 else {
      throw FixtureServerError.tooFewDescriptors(limit: soft, needed: open + reserve + 1)
    }
    return soft - open - reserve
  }

  /// The descriptors open now: `/proc/self/fd` where there is one, else by asking each number.
  private static func openDescriptors(below soft: Int) -> Int {
    if let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd") {
      return entries.count
    }
    return (0..<min(soft, 65_536)).count { fcntl(Int32($0), F_GETFD) != -1 }
  }
}
