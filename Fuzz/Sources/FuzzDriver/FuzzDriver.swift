/// What a fuzz target's `main` does: hands the process to libFuzzer's driver with `entry`, the
/// function it calls with each input. (SwiftPM renames an executable's `main` to
/// `<module>_main`, so libFuzzer's own `main` is not the one that runs.)
public func runFuzzer(
  _ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?,
  _ entry: @convention(c) (UnsafePointer<UInt8>, Int) -> Int32
) -> Int32 {
  var count = argc
  var arguments = argv
  return fuzzerDriver(&count, &arguments, entry)
}

@_silgen_name("LLVMFuzzerRunDriver")
private func fuzzerDriver(
  _ argc: UnsafeMutablePointer<Int32>,
  _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
  _ entry: @convention(c) (UnsafePointer<UInt8>, Int) -> Int32
) -> Int32
