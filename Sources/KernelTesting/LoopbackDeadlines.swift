import Api

extension PlatformTransport.Configuration {
  /// The deadlines of a test's client of a loopback server: ten minutes without a byte, or in
  /// all, so they only ever end a hang. A suite's hundreds of tests at once, with every core kept
  /// busy (`scripts/soak`), can leave a server's task unscheduled for longer than the 30 s a
  /// real network is given: a loopback GET failed `timedOut` after 36 s with nothing wrong. A
  /// test of a deadline sets its own, on a clock it advances (`TestClock`).
  public static var loopbackTests: Self {
    var configuration = Self()
    #if canImport(Darwin)
      configuration.requestTimeout = .seconds(600)
    #else
      configuration.connectTimeout = .seconds(600)
      configuration.stallTimeout = .seconds(600)
    #endif
    configuration.resourceTimeout = .seconds(600)
    return configuration
  }
}
