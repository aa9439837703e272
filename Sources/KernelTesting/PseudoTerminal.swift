import Foundation

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// A pseudo-terminal for a child's stderr, so it behaves as on a user's terminal (progress);
/// everything the child writes there is collected. Made `asInput`, it is the child's stdin too,
/// and a test types at it (`type`) once the child asks (`waitUntilShown`).
public final class PseudoTerminal: @unchecked Sendable {
  // `data` and `ended` are guarded by `condition`; `child` is only used before `started()`.
  /// The child's side: given as its stderr (and stdin when `isInput`).
  public let child: FileHandle
  /// Whether the child reads its standard input from this terminal.
  public let isInput: Bool
  private let primary: Int32
  private let condition = NSCondition()
  private var data = Data()
  private var ended = false

  /// A new pseudo-terminal; `asInput` when the child reads its stdin from it too.
  public init(asInput: Bool = false) throws {
    isInput = asInput
    // Glibc's Swift module leaves out the XSI pseudo-terminal calls: look them up in libc.
    typealias OpenCall = @convention(c) (Int32) -> Int32
    typealias NameCall = @convention(c) (Int32) -> UnsafeMutablePointer<CChar>?
    func call<T>(_ name: String, as type: T.Type) throws -> T {
      // Safe: the default symbol namespace, then a C function whose signature is `type`.
      guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), name) else {
        throw TestFailure("libc has no \(name)")
      }
      return unsafeBitCast(symbol, to: type)  // safe: the C symbol's signature is `type`
    }
    primary = try call("posix_openpt", as: OpenCall.self)(O_RDWR | O_NOCTTY)
    guard primary >= 0, try call("grantpt", as: OpenCall.self)(primary) == 0,
      try call("unlockpt", as: OpenCall.self)(primary) == 0,
      let name = try call("ptsname", as: NameCall.self)(primary)
    else { throw TestFailure("no pseudo-terminal: errno \(errno)") }
    let secondary = open(String(cString: name), O_RDWR | O_NOCTTY)
    guard secondary >= 0 else { throw TestFailure("could not open \(String(cString: name))") }
    child = FileHandle(fileDescriptor: secondary, closeOnDealloc: true)
  }

  /// Closes this process's copy of the child's side, so reading ends when the child exits.
  public func started() {
    try? child.close()
    Thread.detachNewThread { [self] in
      var buffer = [UInt8](repeating: 0, count: 4096)
      while true {
        let count = read(primary, &buffer, buffer.count)
        condition.lock()
        if count > 0 { data.append(contentsOf: buffer[..<count]) } else { ended = true }
        condition.broadcast()
        condition.unlock()
        if count <= 0 { break }
      }
    }
  }

  /// Whether the terminal echoes what is typed: what a program that turned echo off must put
  /// back before it ends, however it ends.
  public func echoes() -> Bool {
    var settings = termios()
    guard tcgetattr(primary, &settings) == 0 else { return false }
    return settings.c_lflag & tcflag_t(ECHO) != 0
  }

  deinit { close(primary) }

  /// Types `text` at the terminal, as a user at the keyboard would.
  public func type(_ text: String) {
    let bytes = Array(text.utf8)
    _ = bytes.withUnsafeBytes { write(primary, $0.baseAddress, $0.count) }
  }

  /// Waits until the child has written `marker`, or has exited.
  public func waitUntilShown(_ marker: String) {
    condition.lock()
    defer { condition.unlock() }
    while !ended && !String(decoding: data, as: UTF8.self).contains(marker) { condition.wait() }
  }

  /// Everything the child wrote, once it has exited.
  public func text() -> String {
    condition.lock()
    defer { condition.unlock() }
    while !ended { condition.wait() }
    return String(decoding: data, as: UTF8.self)
  }
}
