import Dispatch
import Domain
import Foundation
import Layers
import Store

/// `sync.changes_10k`: one page of a changes feed — 6,000 updated, 2,000 created and 2,000
/// deleted movies — applied to a store of 10,000 movies held by 100 stored lists (the lists
/// adjusted), against the same statements in one transaction through SQLite's C API, on files
/// filled alike. Budget: at most 1.5x the C API.
enum SyncBench {
  static let partition = EntityBench.partition

  static func run(in folder: URL) async throws -> Bool {
    let movies = (0..<10_000).map {
      EntityBench.entity($0, year: 1900 + $0 % 120, rating: $0 % 100)
    }
    let lists = (0..<100).map { list in
      CacheEntry(
        key: partition + " movies/list/\(list)", payload: Data(), storedAt: Date(),
        references: (0..<100).map { movies[list * 100 + $0].key })
    }
    let updated = (0..<6_000).map { EntityBench.entity($0, year: 2016, rating: 99) }
    let created = (10_000..<12_000).map { EntityBench.entity($0, year: 2016, rating: 50) }
    let gone = (6_000..<8_000).map { partition + " Movie/\($0)" }
    let token = CacheEntry(
      key: partition + " movies/changes", payload: Data("12345".utf8), storedAt: Date())
    var kernel: [Double] = []
    var c: [Double] = []
    for round in 0..<(Runs.quick ? 3 : 7) {
      let ours = folder.appendingPathComponent("sync-ours-\(round).sqlite")
      let theirs = folder.appendingPathComponent("sync-theirs-\(round).sqlite")
      let store = try SQLiteCacheStore.open(at: ours, budget: .init(maxBytes: 1 << 40))
      _ = try SQLiteCacheStore.open(at: theirs, budget: .init(maxBytes: 1 << 40))
      try await store.store(movies + lists)
      let connection = try SQLiteC(theirs.path)
      try connection.fill(movies + lists)
      var start = DispatchTime.now().uptimeNanoseconds
      try await store.apply(
        StoredChanges(entities: updated + created, gone: gone, goneAt: Date(), token: token))
      kernel.append(Double(DispatchTime.now().uptimeNanoseconds - start))
      start = DispatchTime.now().uptimeNanoseconds
      try connection.apply(entities: updated + created, gone: gone, token: token)
      c.append(Double(DispatchTime.now().uptimeNanoseconds - start))
      // The list of movies 6,000 to 6,099 lost them all.
      let emptied = try await store.entry(for: lists[60].key)?.references?.isEmpty
      guard emptied == true else {
        print("kernel-bench: store: the list of deleted movies was not emptied")
        return false
      }
    }
    let (ours, theirs) = (median(kernel), median(c))
    print("sync.changes_10k kernel_ns=\(Int(ours)) sqlite_c_ns=\(Int(theirs))")
    let met = ours <= 1.5 * theirs
    print(
      met
        ? "# budget: met (a page of 10,000 changes at most 1.5x the C API: \(ContainerBench.format(ours / max(theirs, 1)))x)"
        : "# budget missed: a page of 10,000 changes over 1.5x the C API (\(ContainerBench.format(ours / max(theirs, 1)))x)"
    )
    return met
  }
}
