// kernel-bench SUITE...: runs the named suites (all when none is named) and prints one line per
// case, `suite.case name_ns=<n> ...`, medians of interleaved rounds measured in this process.
let suites: [String: @Sendable () async throws -> Void] = [
  "cli": { try CliBench.run() },
  "container": { try ContainerBench.run() },
  "http": { try await HttpBench.run() },
  "memory": { try await MemoryBench.run() },
  "store": { try await StoreBench.run() },
]
let requested = Array(CommandLine.arguments.dropFirst())
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
