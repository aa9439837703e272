import Domain
import Foundation
import KernelTesting
import Layers
import Testing

@testable import Store

@Suite struct LookupConnectionTests {
  private func entry(_ key: String, _ text: String, at seconds: TimeInterval) -> CacheEntry {
    CacheEntry(
      key: key, payload: Data(text.utf8), storedAt: Date(timeIntervalSince1970: seconds),
      validators: CacheValidators(etag: "\"\(text)\"", lastModified: "Wed, 01 Jun 2016"))
  }

  /// A file already at this build's schema is read without the writing connection; the first
  /// write opens it, later lookups see what it wrote, and closing leaves only the file.
  @Test func aCurrentFileIsReadWithoutTheWriterUntilSomethingIsWritten() async throws {
    let folder = try TemporaryDirectory("store")
    defer { folder.remove() }
    do {
      let store = try SQLiteCacheStore.open(at: folder.cache)
      #expect(store.writerIsOpen)  // a new file: created and migrated at once
      try await store.store(entry("a", "first", at: 100))
      try await store.store(entry("empty", "", at: 50))
    }

    do {
      let store = try SQLiteCacheStore.open(at: folder.cache)
      #expect(try await store.entry(for: "a") == entry("a", "first", at: 100))
      #expect(try await store.entry(for: "empty") == entry("empty", "", at: 50))
      #expect(try await store.entry(for: "missing") == nil)
      #expect(!store.writerIsOpen)

      try await store.store(entry("a", "second", at: 200))
      #expect(store.writerIsOpen)
      #expect(try await store.entry(for: "a") == entry("a", "second", at: 200))
      #expect(try await store.statistics().entries == 2)
    }
    let files = try FileManager.default.contentsOfDirectory(atPath: folder.url.path)
    #expect(files == ["cache.sqlite"])
  }

  /// Lookups from many tasks at once through the one connection all get their own answers.
  @Test func concurrentLookupsGetTheirOwnEntries() async throws {
    let folder = try TemporaryDirectory("store")
    defer { folder.remove() }
    do {
      let store = try SQLiteCacheStore.open(at: folder.cache)
      for index in 0..<50 { try await store.store(entry("k\(index)", "v\(index)", at: 1)) }
    }
    let store = try SQLiteCacheStore.open(at: folder.cache)
    #expect(!store.writerIsOpen)
    let wrong = try await withThrowingTaskGroup(of: Bool.self) { group in
      for round in 0..<400 {
        group.addTask {
          let index = round % 50
          return try await store.entry(for: "k\(index)")?.payload != Data("v\(index)".utf8)
        }
      }
      return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
    }
    #expect(wrong == 0)
  }
}
