import Dispatch

/// Keeps a value opaque to the optimiser: compiled without optimisation, it may escape for all
/// the caller knows, so a measured allocation or resolve cannot be removed.
@_optimize(none)
func blackHole<T>(_ value: T) {}

/// How many whole runs a suite that repeats them makes (memory, outbox, the download): `--quick`
/// (CI's run, whose figures are printed, not judged) makes one where a full run makes three or
/// five, samples a quarter of what a full run samples where a suite counts samples (observe),
/// and leaves out the figures that have no budget (a read among a million answers); budgets are
/// judged from the full run's medians on a quiet machine.
enum Runs {
  static let quick = CommandLine.arguments.contains("--quick")

  /// `full`, or one when quick.
  static func of(_ full: Int) -> Int { quick ? 1 : full }

  /// `full`, or a quarter of it (at least one) when quick.
  static func sampled(_ full: Int) -> Int { quick ? max(1, full / 4) : full }
}

/// Side-by-side timing: every contender is sampled in the same round, rounds repeat, and the
/// median per-operation time of each is reported. Interleaving keeps a noisy neighbour from
/// favouring whoever ran during a quiet moment.
struct Measurement {
  var rounds = 15
  var targetSampleNanoseconds: UInt64 = 20_000_000

  /// Median nanoseconds per operation for each contender, in the order given.
  func run(_ contenders: [(String, (Int) -> Void)]) -> [String: Double] {
    let iterations = contenders.map { calibrate($0.1) }
    var samples = Array(repeating: [Double](), count: contenders.count)
    for _ in 0..<rounds {
      for (index, contender) in contenders.enumerated() {
        let start = DispatchTime.now().uptimeNanoseconds
        contender.1(iterations[index])
        let elapsed = DispatchTime.now().uptimeNanoseconds - start
        samples[index].append(Double(elapsed) / Double(iterations[index]))
      }
    }
    var medians: [String: Double] = [:]
    for (index, contender) in contenders.enumerated() {
      medians[contender.0] = median(samples[index])
    }
    return medians
  }

  /// How many operations fill one sample of about `targetSampleNanoseconds`.
  private func calibrate(_ body: (Int) -> Void) -> Int {
    var count = 1_000
    while true {
      let start = DispatchTime.now().uptimeNanoseconds
      body(count)
      let elapsed = DispatchTime.now().uptimeNanoseconds - start
      if elapsed >= targetSampleNanoseconds / 4 || count >= 1 << 28 {
        return max(
          1_000, Int(Double(count) * Double(targetSampleNanoseconds) / Double(max(elapsed, 1))))
      }
      count *= 4
    }
  }
}

func median(_ values: [Double]) -> Double {
  let sorted = values.sorted()
  guard !sorted.isEmpty else { return 0 }
  let middle = sorted.count / 2
  return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
}

/// Runs `body(iterations)` on `threads` threads at once and returns when all have finished.
func onThreads(_ threads: Int, iterations: Int, _ body: @escaping @Sendable (Int) -> Void) {
  DispatchQueue.concurrentPerform(iterations: threads) { _ in body(iterations) }
}
