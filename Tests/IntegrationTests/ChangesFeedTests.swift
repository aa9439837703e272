import Api
import Domain
import Foundation
import KernelTesting
import Layers
import SampleApi
import Store
import Synchronization
import Testing

/// A chore of an app, as its api sends it.
private struct Chore: Codable, Sendable, Equatable, Identifiable {
  let id: Int
  var title: String
}

/// A server's tasks with WatermelonDB's pull: each change stamped with the time it was made,
/// `GET tasks/changes?since=T&per_page=N` answering those after `T`, oldest first; it notes each
/// `since` it is asked with.
private final class TaskServer: Sendable {
  struct Record: Sendable {
    var task: Chore?
    var created: Int
    var changed: Int
  }
  let state = Mutex<
    (time: Int, records: [Int: Record], asked: [String], failAfter: Int?, deleteAsked: [Int: Int])
  >((0, [:], [], nil, [:]))

  func put(_ task: Chore) {
    state.withLock { state in
      state.time += 1
      let created = state.records[task.id]?.created ?? state.time
      state.records[task.id] = Record(task: task, created: created, changed: state.time)
    }
  }

  func delete(_ id: Int) {
    state.withLock { state in
      state.time += 1
      state.records[id]?.task = nil
      state.records[id]?.changed = state.time
    }
  }

  var asked: [String] { state.withLock { $0.asked } }

  /// When set, the next page is made as the server stands, then held back until released: a
  /// sync slow to hear its answer.
  let hold = Mutex<Hold?>(nil)

  final class Hold: Sendable {
    let (made, madeSignal) = AsyncStream<Void>.makeStream()
    let (released, release) = AsyncStream<Void>.makeStream()
  }

  /// `page(since:perPage:)`, held back when `hold` asks it.
  func answer(since: Int, perPage: Int) async -> SampleResponse {
    let page = page(since: since, perPage: perPage)
    if let hold = hold.withLock({ held in
      defer { held = nil }
      return held
    }) {
      hold.madeSignal.yield()
      for await _ in hold.released { break }
    }
    return page
  }

  func page(since: Int, perPage: Int) -> SampleResponse {
    // A task deleted as the page after `since` is asked (`deleteAsked`): mid-sync.
    if let id = state.withLock({ $0.deleteAsked.removeValue(forKey: since) }) { delete(id) }
    return state.withLock { state -> SampleResponse in
      state.asked.append("\(since)")
      if let left = state.failAfter {
        guard left > 0 else { return SampleResponse(status: 503) }
        state.failAfter = left - 1
      }
      let changes = state.records.values.filter { $0.changed > since }.sorted {
        $0.changed < $1.changed
      }
      let page = changes.prefix(perPage)
      var created: [Chore] = []
      var updated: [Chore] = []
      var deleted: [Int] = []
      for record in page {
        let id = state.records.first { $0.value.changed == record.changed }?.key ?? 0
        guard let task = record.task else {
          deleted.append(id)
          continue
        }
        if record.created > since { created.append(task) } else { updated.append(task) }
      }
      let body: [String: Any] = [
        "changes": [
          "tasks": [
            "created": created.map { ["id": $0.id, "title": $0.title] },
            "updated": updated.map { ["id": $0.id, "title": $0.title] }, "deleted": deleted,
          ]
        ],
        "timestamp": page.last?.changed ?? max(since, state.time),
        "hasMore": changes.count > perPage,
      ]
      return SampleResponse(
        status: 200, body: (try? JSONSerialization.data(withJSONObject: body)) ?? Data())
    }
  }
}

extension ChangesFeed {
  fileprivate static let tasks = ChangesFeed.watermelon(
    Chore.self, table: "tasks", path: "tasks/changes")
}

extension ServiceCall where Value == Chore {
  fileprivate static func task(id: Int) -> Self {
    ServiceCall(.init(.get("tasks/\(id)")), entities: .item(Chore.self, id: id))
  }
}

extension ServiceCall where Value == [Chore] {
  fileprivate static let stored = ServiceCall(
    name: "storedTasks", key: "tasks/stored", summary: "the stored tasks",
    entities: .list(Chore.self), local: LocalQuery(order: [.init("id")], summary: "stored tasks"))
}

/// A changes feed over real loopback HTTP into a real SQLite file: created, updated and
/// deleted tasks applied a page at a time with the page's token, the next sync asking only
/// for what is new, a sync stopped half-way going on from its last page, and a pending edit
/// staying on top of the server's change.
@Suite struct ChangesFeedTests {
  private static func withTasks(
    perPage: Int = 2,
    _ body: (TaskServer, ServiceStack, ServiceStack, SQLiteCacheStore) async throws -> Void
  ) async throws {
    let folder = try TemporaryDirectory("feed")
    defer { folder.remove() }
    let tasks = TaskServer()
    let server = try await FixtureServer.start(routes: FixtureRoutes())
    server.handle("GET", "/api/tasks/changes") { request in
      await tasks.answer(since: Int(request.query["since"] ?? "") ?? 0, perPage: perPage)
    }
    let store = try SQLiteCacheStore.open(at: folder.url.appendingPathComponent("cache.sqlite"))
    let client = try ApiClient.loopback(server)
    let layered = ServiceStack(
      client: client, layers: [CachingLayer(store: store, policy: .networkFirst, partition: "p")])
    let offline = ServiceStack(
      client: nil, layers: [CachingLayer(store: store, policy: .cacheOnly, partition: "p")])
    do {
      try await body(tasks, layered, offline, store)
    } catch {
      await server.stop()
      throw error
    }
    await server.stop()
  }

  @Test func aFeedAppliesCreatedUpdatedAndDeletedAndAsksOnlyForWhatIsNew() async throws {
    try await Self.withTasks { server, layered, offline, store in
      for id in 1...5 { server.put(Chore(id: id, title: "task \(id)")) }
      let heard = Mutex<[Int]>([])
      let first = try await layered.sync(.tasks) { summary in
        heard.withLock { $0.append(summary.pages) }
      }
      #expect(first.description == "+5 ~0 -0 tasks")
      #expect(first.pages == 3 && heard.withLock { $0 } == [1, 2, 3])
      #expect(server.asked == ["0", "2", "4"])
      let all = try await offline.answer(.stored)
      #expect(all.value.map(\.id) == [1, 2, 3, 4, 5])
      // A feed's last page applied, the store holds every task there is, and says so.
      #expect(all.isComplete)

      server.put(Chore(id: 2, title: "task 2, changed"))
      server.delete(3)
      server.put(Chore(id: 6, title: "task 6"))
      let second = try await layered.sync(.tasks)
      #expect(second.description == "+1 ~1 -1 tasks")
      #expect(server.asked.dropFirst(3) == ["5", "7"])
      #expect(try await offline.answer(.stored).value.map(\.id) == [1, 2, 4, 5, 6])
      #expect(try await offline.answer(.task(id: 2)).value.title == "task 2, changed")
      let gone = await #expect(throws: LayerError.self) { try await offline.answer(.task(id: 3)) }
      #expect(gone.map { if case .gone(what: "chore 3", _) = $0 { true } else { false } } == true)

      let marker = try #require(try await store.entry(for: "p Chore?complete"))
      let third = try await layered.sync(.tasks)
      #expect(third.description == "+0 ~0 -0 tasks" && third.pages == 1)
      #expect(server.asked.last == "8")
      #expect(try await offline.answer(.stored).isComplete)
      // A sync that changed nothing renews when the store was last complete, keys as they were.
      let renewed = try #require(try await store.entry(for: "p Chore?complete"))
      #expect(renewed.storedAt > marker.storedAt && renewed.references == marker.references)
      // A task the store lost (evicted to keep its budget) makes it incomplete: a sync since the
      // token does not send it again.
      try await store.remove("p Chore/6")
      #expect(try await !offline.answer(.stored).isComplete)
      server.put(Chore(id: 7, title: "task 7"))
      _ = try await layered.sync(.tasks)
      #expect(try await !offline.answer(.stored).isComplete)
      // Nor does losing what says so too make a later sync claim it.
      try await store.remove("p Chore?complete")
      server.put(Chore(id: 8, title: "task 8"))
      _ = try await layered.sync(.tasks)
      #expect(try await !offline.answer(.stored).isComplete)
    }
  }

  /// A task the feed delivers and then, in a later page of the same sync, deletes is not
  /// counted among those stored: the store still says it holds every task, rightly.
  /// A sync, into a store of its own, from a feed that answers every page with `body`: what it
  /// threw, how many pages it asked for, and what the store then answers offline (nil:
  /// nothing).
  private static func syncing(_ body: String) async throws -> (
    error: ApiError?, asked: Int, stored: Answer<[Chore]>?
  ) {
    let folder = try TemporaryDirectory("feed")
    defer { folder.remove() }
    let server = try await FixtureServer.start(routes: FixtureRoutes())
    let asked = Counter()
    server.handle("GET", "/api/tasks/changes") { _ in
      _ = asked.increment()
      return SampleResponse(status: 200, body: Data(body.utf8))
    }
    let store = try SQLiteCacheStore.open(at: folder.url.appendingPathComponent("cache.sqlite"))
    let layered = ServiceStack(
      client: try ApiClient.loopback(server),
      layers: [CachingLayer(store: store, policy: .networkFirst, partition: "p")])
    let offline = ServiceStack(
      client: nil, layers: [CachingLayer(store: store, policy: .cacheOnly, partition: "p")])
    let error = await #expect(throws: ApiError.self) { try await layered.sync(.tasks) }
    await server.stop()
    return (error, asked.value, try? await offline.answer(.stored))
  }

  /// A feed that says it has more but answers the token it was asked with would be asked the
  /// same page for ever: bad data, what it gave kept, the tasks not said to be complete.
  @Test func aFeedThatSaysItHasMoreButGivesNoNewTokenIsBadData() async throws {
    let (error, asked, stored) = try await Self.syncing(
      #"{"changes": {"tasks": {"created": [{"id": 1, "title": "a"}], "updated": [], "#
        + #""deleted": []}}, "timestamp": 5, "hasMore": true}"#)
    #expect(error?.failure == .badData)
    #expect(
      error.map { "\($0)" }
        == "GET tasks/changes answered data that does not fit: it says there is more, but gives"
        + " the token it was asked with (5) to ask for it; what it gave until then is kept.")
    #expect(asked == 2)
    #expect(stored?.value.map(\.id) == [1])
    #expect(stored?.isComplete == false)
  }

  /// A deleted id, or a token, that is neither a string nor a number is bad data naming the
  /// field: never a deletion silently missed, and nothing of the page applied.
  @Test func aDeletedIdThatIsNotAnIdIsBadDataNamingTheField() async throws {
    let (error, asked, stored) = try await Self.syncing(
      #"{"changes": {"tasks": {"created": [{"id": 1, "title": "a"}], "updated": [], "#
        + #""deleted": [2, {"id": 3}]}}, "timestamp": 5, "hasMore": false}"#)
    #expect(
      error.map { "\($0)" }
        == "GET tasks/changes answered data that does not fit at changes.tasks.deleted[1]:"
        + " expected a string or a number, found an object.")
    #expect(asked == 1)
    #expect(stored == nil)
    let (token, _, _) = try await Self.syncing(
      #"{"changes": {"tasks": {"created": [], "updated": [], "deleted": []}}, "#
        + #""timestamp": [5], "hasMore": false}"#)
    #expect(
      token.map { "\($0)" }
        == "GET tasks/changes answered data that does not fit at timestamp: expected a string or"
        + " a number, found a list.")
  }

  @Test func aTaskCreatedAndDeletedInOneSyncLeavesTheStoreComplete() async throws {
    try await Self.withTasks { server, layered, offline, store in
      for id in 1...4 { server.put(Chore(id: id, title: "task \(id)")) }
      server.state.withLock { $0.deleteAsked = [2: 1] }
      let synced = try await layered.sync(.tasks)
      #expect(synced.description == "+4 ~0 -1 tasks")
      let all = try await offline.answer(.stored)
      #expect(all.value.map(\.id) == [2, 3, 4] && all.isComplete)
      // What says so holds the three: a deleted task's tombstone, once dropped, would make it
      // say the store lacks one.
      let held = try await store.entry(for: "p Chore?complete")?.references
      #expect(held.map(Set.init) == ["p Chore/2", "p Chore/3", "p Chore/4"])
    }
  }

  /// Two syncs at once (two runs): the slow one's page, made before a deletion the quick one
  /// applied, is not applied over it, and the slow one goes on from the quick one's token.
  @Test func twoSyncsAtOnceNeverApplyAnOlderPageOverANewerOne() async throws {
    try await Self.withTasks { server, layered, offline, store in
      server.put(Chore(id: 1, title: "task 1"))
      server.put(Chore(id: 2, title: "task 2"))
      let hold = TaskServer.Hold()
      server.hold.withLock { $0 = hold }
      let slow = Task { try await layered.sync(.tasks) }
      for await _ in hold.made { break }
      server.delete(1)
      let quick = try await layered.sync(.tasks)
      #expect(quick.description == "+1 ~0 -1 tasks")
      hold.release.yield()
      let late = try await slow.value
      #expect(late.description == "+0 ~0 -0 tasks" && late.pages == 1, "\(late)")
      #expect(server.asked == ["0", "0", "3"])
      let all = try await offline.answer(.stored)
      #expect(all.value.map(\.id) == [2] && all.isComplete)
      #expect(
        try await store.entry(for: "p tasks/changes").map {
          String(decoding: $0.payload, as: UTF8.self)
        } == "3")
    }
  }

  /// A sync stopped by a failure half-way keeps the pages it applied and their token: the next
  /// one goes on from there, every change applied once.
  @Test func aSyncStoppedHalfWayGoesOnFromItsLastPage() async throws {
    try await Self.withTasks { server, layered, offline, _ in
      for id in 1...6 { server.put(Chore(id: id, title: "task \(id)")) }
      server.state.withLock { $0.failAfter = 2 }
      await #expect(throws: (any Error).self) { try await layered.sync(.tasks) }
      let half = try await offline.answer(.stored)
      #expect(half.value.map(\.id) == [1, 2, 3, 4] && !half.isComplete)
      server.state.withLock { $0.failAfter = nil }
      let resumed = try await layered.sync(.tasks)
      #expect(resumed.description == "+2 ~0 -0 tasks")
      #expect(server.asked == ["0", "2", "4", "4"])
      let all = try await offline.answer(.stored)
      #expect(all.value.map(\.id) == [1, 2, 3, 4, 5, 6] && all.isComplete)
    }
  }

  /// An entity whose edit is pending keeps showing the edit through the server's change of it;
  /// the server's copy is what undoing the edit puts back.
  @Test func aPendingEditStaysOnTopOfTheServersChange() async throws {
    try await Self.withTasks { server, layered, offline, store in
      server.put(Chore(id: 1, title: "milk"))
      _ = try await layered.sync(.tasks)
      var edited = try #require(try await store.entry(for: "p Chore/1"))
      (edited.isPending, edited.original) = (true, edited.payload)
      edited.payload = Data(#"{"id":1,"title":"oat milk"}"#.utf8)
      try await store.store([edited])

      server.put(Chore(id: 1, title: "whole milk"))
      _ = try await layered.sync(.tasks)
      #expect(try await offline.answer(.task(id: 1)).value.title == "oat milk")
      let kept = try #require(try await store.entry(for: "p Chore/1"))
      let original = try JSONDecoder().decode(Chore.self, from: try #require(kept.original))
      #expect(original.title == "whole milk")
    }
  }
}
