import Foundation

// kernel-bench [--quick] SUITE...: runs the named suites (all when none is named) and prints one
// line per case, `suite.case name_ns=<n> ...`, medians of interleaved rounds measured in this
// process; --quick makes one run where a suite repeats whole runs (`Runs`).
let suites: [String: @Sendable () async throws -> Void] = [
  "cli": { try CliBench.run() },
  "container": { try ContainerBench.run() },
  "http": { try await HttpBench.run() },
  "memory": { try await MemoryBench.run() },
  "observe": { try await ObserveBench.run() },
  "outbox": { try await OutboxBench.run() },
  "store": { try await StoreBench.run() },
]
let requested = Array(CommandLine.arguments.dropFirst()).filter { $0 != "--quick" }
// The http suite's download, run as a process of its own.
if requested.first == "download-once", requested.count == 3 {
  do { try await DownloadBench.once(requested[1], requested[2]) } catch {
    print("kernel-bench: download-once failed: \(error)")
    exit(1)
  }
  exit(0)
}
// The memory suite's upload, run as a process of its own.
if requested.first == "upload-once", requested.count == 3 {
  do { try await MemoryBench.uploadOnce(requested[1], requested[2]) } catch {
    print("kernel-bench: upload-once failed: \(error)")
    exit(1)
  }
  exit(0)
}
let unknown = requested.filter { suites[$0] == nil }
if !unknown.isEmpty {
  print(
    "kernel-bench: unknown suite \(unknown.joined(separator: ", ")); known: \(suites.keys.sorted().joined(separator: ", "))"
  )
} else {
  for name in requested.isEmpty ? suites.keys.sorted() : requested {
    do { try await suites[name]?() } catch { print("kernel-bench: \(name) failed: \(error)") }
  }
}
