import Foundation
import KernelTesting

extension TemporaryDirectory {
  /// The cache database's file inside it.
  var cache: URL { appending("cache.sqlite") }
}
