import Composition
import Foundation
import FuzzDriver
import MoviesKit

/// libFuzzer's entry: any file must either compose every profile it names or throw an error
/// that describes itself in one line (what `kernel` prints, exit 78).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzConfig(_ bytes: UnsafePointer<UInt8>, _ count: Int) -> Int32 {
  let text = String(decoding: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self)
  let runtime = Runtime(dataDirectory: URL(fileURLWithPath: "/nonexistent/kernel-fuzz"))
  do {
    let document = try ConfigDocument(text: text, file: "fuzz.yaml", app: .kernel)
    for profile in [nil] + document.profileNames.map(Optional.some) {
      do {
        let config = try document.resolve(profile: profile)
        _ = try KernelApp.kernel.compose(config: config, profile: profile, runtime: runtime)
      } catch {
        expectOneLine(error)
      }
    }
  } catch {
    expectOneLine(error)
  }
  return 0
}

/// An error kernel would print must be one non-empty line.
private func expectOneLine(_ error: any Error) {
  let text = "\(error)"
  if text.isEmpty || text.contains("\n") {
    fatalError("a config error is not one line: \(type(of: error)): \(text)")
  }
}

/// The process entry (SwiftPM's name for this target's `main`).
@_cdecl("fuzz_config_main")
public func fuzzMain(
  _ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?
) -> Int32 {
  runFuzzer(argc, argv, fuzzConfig)
}
