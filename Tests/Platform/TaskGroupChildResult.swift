// A regression check for the toolchain, built with `swiftc -O` by scripts/platform-checks (CI).
//
// Swift 6.3.1 on Linux miscompiles a task group whose child result is a tuple holding a
// `Result<_, any Error>` made in a do/catch: under -O the parent reads garbage back and traps
// (swiftlang/swift#81771). Kernel's task groups return a small struct instead (`movies get`'s
// `OneMovie`). Run with `struct`, this program takes Kernel's shape and must print `ok`; run with
// `tuple`, it takes the miscompiled shape: when that prints `ok` under -O too, a toolchain
// upgrade has fixed the compiler and the workaround can go.

import Foundation

struct Item: Sendable { let id: Int }
struct Failed: Error {}

/// What a child hands back in Kernel's shape.
struct Outcome: Sendable {
  let index: Int
  let item: Item?
  let error: (any Error)?
}

func load(_ id: Int) async throws -> Item {
  await Task.yield()
  if id < 0 { throw Failed() }
  return Item(id: id)
}

/// Loads every id in a task group whose children return `Outcome`.
func loadAsStructs(_ ids: [Int]) async -> [Item?] {
  var found = [Item?](repeating: nil, count: ids.count)
  await withTaskGroup(of: Outcome.self) { group in
    for index in ids.indices {
      group.addTask {
        do { return Outcome(index: index, item: try await load(ids[index]), error: nil) } catch {
          return Outcome(index: index, item: nil, error: error)
        }
      }
    }
    for await outcome in group where outcome.index < found.count {
      found[outcome.index] = outcome.item
    }
  }
  return found
}

/// The same with children returning `(Int, Result<Item, any Error>)`: the miscompiled shape.
func loadAsTuples(_ ids: [Int]) async -> [Item?] {
  var found = [Item?](repeating: nil, count: ids.count)
  await withTaskGroup(of: (Int, Result<Item, any Error>).self) { group in
    for index in ids.indices {
      group.addTask {
        do { return (index, .success(try await load(ids[index]))) } catch {
          return (index, .failure(error))
        }
      }
    }
    for await (index, result) in group {
      guard index >= 0 && index < found.count else {
        print("garbage: the child's index read back as \(index)")
        exit(3)
      }
      if case .success(let item) = result { found[index] = item }
    }
  }
  return found
}

@main struct TaskGroupChildResult {
  static func main() async {
    let shape = CommandLine.arguments.dropFirst().first ?? "struct"
    for _ in 0..<200 {
      let found =
        shape == "tuple" ? await loadAsTuples([1, 2, 3]) : await loadAsStructs([1, 2, 3])
      guard found.map({ $0?.id }) == [1, 2, 3] else {
        print("wrong: \(found)")
        exit(2)
      }
    }
    print("ok")
  }
}
