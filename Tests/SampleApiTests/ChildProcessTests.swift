import Foundation
import KernelTesting
import Testing

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The children tests start: through swift-subprocess, with their own descriptors 0, 1 and 2
/// and nothing else of the test process, their end collected once however many wait.
@Suite struct ChildProcessTests {
  private let shell = URL(fileURLWithPath: "/bin/sh")

  @Test func pipesDirectoryEnvironmentAndStatusAreTheChilds() async throws {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
      "child-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    let child = try await ChildProcess(
      shell, arguments: ["-c", "pwd; echo \"$GREETING\"; cat; echo oops >&2; exit 3"],
      environment: ["GREETING": "hello"], directory: folder, stdin: .pipe)
    let out = Reader(child.standardOutput)
    let err = Reader(child.standardError)
    let input = try #require(child.standardInput)
    try input.write(contentsOf: Data("typed\n".utf8))
    try input.close()
    await child.exited()
    #expect(child.terminationReason == .exit)
    #expect(child.terminationStatus == 3)
    #expect(!child.isRunning)
    let lines = out.text().split(separator: "\n").map(String.init)
    #expect(lines.count == 3, "\(lines)")
    #expect(
      lines.first.map { URL(fileURLWithPath: $0).lastPathComponent } == folder.lastPathComponent)
    #expect(lines.dropFirst() == ["hello", "typed"])
    #expect(err.text() == "oops\n")
  }

  /// However many descriptors the test process holds open (Foundation's `Process` crashes past
  /// about 1,300), the child has 0, 1 and 2 only.
  @Test func theChildInheritsNoOtherDescriptor() async throws {
    var limit = rlimit()
    getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
    let extra = Int(min(limit.rlim_cur, 2_000)) / 2
    let opened = (0..<extra).map { _ in open("/dev/null", O_RDONLY) }.filter { $0 >= 0 }
    defer { for descriptor in opened { close(descriptor) } }
    #expect(opened.count == extra)
    // `ls`, forked (not exec'd: a command follows), lists the shell's descriptors.
    let child = try await ChildProcess(
      shell, arguments: ["-c", "ls /proc/$$/fd; true"], stderr: .null)
    let out = Reader(child.standardOutput)
    await child.exited()
    #expect(child.terminationStatus == 0)
    #expect(out.text().split(separator: "\n") == ["0", "1", "2"])
  }

  @Test func aSignalEndsItAndNothingIsSentAfterTheEnd() async throws {
    let child = try await ChildProcess(shell, arguments: ["-c", "exec cat"], stdin: .pipe)
    #expect(child.isRunning)
    child.terminate()
    await child.exited()
    #expect(child.terminationReason == .uncaughtSignal)
    #expect(child.terminationStatus == SIGTERM)
    child.send(SIGKILL)
    #expect(child.terminationStatus == SIGTERM)
  }

  @Test func pastItsLimitItIsKilled() async throws {
    let child = try await ChildProcess(shell, arguments: ["-c", "exec cat"], stdin: .pipe)
    #expect(await child.exit(within: .zero) == false)
    #expect(child.terminationReason == .uncaughtSignal)
    #expect(child.terminationStatus == SIGKILL)
  }

  @Test func aMissingExecutableIsNamed() async throws {
    let missing = URL(fileURLWithPath: "/nonexistent/\(UUID().uuidString)")
    await #expect {
      _ = try await ChildProcess(missing)
    } throws: { error in
      "\(error)".contains("could not start \(missing.path)")
    }
  }
}
