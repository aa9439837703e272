// An app's commands are ArgumentParser's (`AsyncParsableCommand`, `@Option`, `@OptionGroup var
// global: GlobalOptions`), as every public signature here is: an app that imports
// KernelCommands (or KernelServe) writes its commands without naming the package itself.
@_exported import ArgumentParser
