import Api
import Domain
import Foundation
import KernelTesting
import Layers
import SampleApi
import Store
import Synchronization
import Testing

/// An app's note, as its api sends it.
private struct Note: Codable, Sendable, Equatable, Identifiable {
  let id: Int
  var text: String
  var pinned: Bool
}

/// What the server holds, which a test changes.
private final class Notes: Sendable {
  let all: Mutex<[Note]>
  init(_ notes: [Note]) { all = Mutex(notes) }
}

/// The app's calls, each declared once with its request: no service type, no method per call,
/// no watch code.
extension ServiceCall where Value == Note {
  fileprivate static func note(id: Int) -> Self {
    ServiceCall(.init(.get("notes/\(id)")), entities: .item(Note.self, id: id))
  }
}

extension ServiceCall where Value == [Note] {
  /// The pinned or unpinned notes; `complete`: every one of them (a complete list of those its
  /// filter selects).
  fileprivate static func notes(pinned: Bool, complete: Bool = false) -> Self {
    ServiceCall(
      .init(.get("notes", query: [URLQueryItem(name: "pinned", value: "\(pinned)")])),
      entities: .list(Note.self),
      local: LocalQuery(
        filters: [.init("pinned", equals: .boolean(pinned))], order: [.init("id")],
        summary: "stored notes", complete: complete))
  }

  /// Every note the server has: a complete list of the whole type.
  fileprivate static let everyNote = ServiceCall(
    .init(.get("notes")), entities: .list(Note.self),
    local: LocalQuery(order: [.init("id")], summary: "every stored note", complete: true))

  /// Never asks the api (it has no route for it): the stored notes, pinned or not.
  fileprivate static let storedNotes = ServiceCall(
    name: "storedNotes", key: "notes/stored", summary: "the stored notes",
    entities: .list(Note.self), local: LocalQuery(order: [.init("id")], summary: "stored notes"))
}

/// One runner for every call: a `ServiceStack` answers and watches calls that carry their
/// requests, over real loopback HTTP and a real SQLite file, and the store alone answers them
/// offline.
@Suite struct ServiceStackTests {
  /// A server of notes: `GET notes/{id}` and `GET notes?pinned=`, from `notes`; it counts what
  /// it is asked.
  private static func server(_ notes: Notes, asked: Counter) async throws -> FixtureServer {
    let server = try await FixtureServer.start(routes: FixtureRoutes())
    let json: @Sendable (any Encodable) -> SampleResponse = { value in
      SampleResponse(status: 200, body: (try? JSONEncoder().encode(value)) ?? Data())
    }
    server.handle("GET", "/api/notes/{id}") { request in
      asked.increment()
      let id = Int(request.parameters["id"] ?? "") ?? 0
      guard let note = notes.all.withLock({ $0.first { $0.id == id } }) else {
        return SampleResponse(status: 404)
      }
      return json(note)
    }
    server.handle("GET", "/api/notes") { request in
      asked.increment()
      guard let pinned = request.query["pinned"].map({ $0 == "true" }) else {
        return json(notes.all.withLock { $0 })
      }
      return json(notes.all.withLock { $0.filter { $0.pinned == pinned } })
    }
    return server
  }

  private static func stack(
    _ server: FixtureServer?, _ store: SQLiteCacheStore, _ policy: CachePolicy
  )
    throws -> ServiceStack
  {
    let client = try server.map(ApiClient.loopback)
    return ServiceStack(client: client, layers: [CachingLayer(store: store, policy: policy)])
  }

  /// `body` with a layered stack over a server holding one note, milk, on a new SQLite file.
  private static func withMilk(
    _ body: (ServiceStack, Notes, Counter) async throws -> Void
  ) async throws {
    let folder = try TemporaryDirectory("stack")
    defer { folder.remove() }
    let notes = Notes([Note(id: 1, text: "milk", pinned: true)])
    let asked = Counter()
    let server = try await Self.server(notes, asked: asked)
    let store = try SQLiteCacheStore.open(at: folder.url.appendingPathComponent("cache.sqlite"))
    do {
      try await body(try Self.stack(server, store, .networkFirst), notes, asked)
    } catch {
      await server.stop()
      throw error
    }
    await server.stop()
  }

  @Test func aCallsKeyComesFromItsRequest() {
    #expect(ServiceCall<Note>.note(id: 3).key == "Note/3")
    #expect(ServiceCall<Note>.note(id: 3).summary == "note 3")
    #expect(ServiceCall<[Note]>.notes(pinned: true).key == "notes?pinned=true")
    #expect(ServiceCall<[Note]>.notes(pinned: true).summary == "GET notes")
    let post = ServiceCall<Note>(.init(.post("notes", body: .bytes(Data()))), stored: false)
    #expect(post.key == "POST notes" && post.codec == nil)
    #expect(ServiceCall<[Note]>.storedNotes.route == nil)
  }

  @Test func theLayeredStackStoresWhatTheStoreAloneThenAnswers() async throws {
    let folder = try TemporaryDirectory("stack")
    defer { folder.remove() }
    let notes = Notes([
      Note(id: 1, text: "milk", pinned: true), Note(id: 2, text: "eggs", pinned: false),
    ])
    let asked = Counter()
    let server = try await Self.server(notes, asked: asked)
    let store = try SQLiteCacheStore.open(at: folder.url.appendingPathComponent("cache.sqlite"))
    let layered = try Self.stack(server, store, .networkFirst)
    #expect(try await layered.answer(.notes(pinned: true)).value.map(\.text) == ["milk"])
    #expect(try await layered.answer(.note(id: 2)).value.text == "eggs")
    await server.stop()

    let offline = try Self.stack(nil, store, .cacheOnly)
    #expect(try await offline.answer(.notes(pinned: true)).value.map(\.text) == ["milk"])
    // Note 1 came in the list: stored once, it answers its own call.
    #expect(try await offline.answer(.note(id: 1)).value.text == "milk")
    // Never asked, the unpinned list is what its local query finds among the stored notes.
    #expect(try await offline.answer(.notes(pinned: false)).value.map(\.id) == [2])
    await #expect(throws: LayerError.miss(what: "note 3")) {
      try await offline.answer(.note(id: 3))
    }
    #expect(asked.value == 2)
  }

  /// A complete list's answer takes out of the store what its filters select and it lacks: a
  /// note deleted or no longer pinned leaves the pinned list and the store (only no longer
  /// stored, since it may exist unpinned); lacking from the list of every note, it is gone.
  @Test func aCompleteListTakesOutWhatItLacks() async throws {
    let folder = try TemporaryDirectory("stack")
    defer { folder.remove() }
    let notes = Notes([
      Note(id: 1, text: "milk", pinned: true), Note(id: 2, text: "eggs", pinned: false),
      Note(id: 3, text: "bread", pinned: true),
    ])
    let server = try await Self.server(notes, asked: Counter())
    let store = try SQLiteCacheStore.open(at: folder.url.appendingPathComponent("cache.sqlite"))
    let layered = try Self.stack(server, store, .networkFirst)
    let offline = try Self.stack(nil, store, .cacheOnly)
    #expect(
      try await layered.answer(.notes(pinned: true, complete: true)).value.map(\.id) == [1, 3])
    #expect(try await layered.answer(.note(id: 2)).value.text == "eggs")
    notes.all.withLock { all in
      all.removeAll { $0.id == 3 }
      all[0].pinned = false
    }
    #expect(try await layered.answer(.notes(pinned: true, complete: true)).value.isEmpty)
    await #expect(throws: LayerError.miss(what: "note 1")) {
      try await offline.answer(.note(id: 1))
    }
    await #expect(throws: LayerError.miss(what: "note 3")) {
      try await offline.answer(.note(id: 3))
    }
    #expect(try await offline.answer(.note(id: 2)).value.text == "eggs")

    // A local query may not know everything until a complete list of the whole type answers.
    #expect(try await offline.answer(.storedNotes).isComplete == false)
    #expect(try await layered.answer(.everyNote).value.map(\.id) == [1, 2])
    notes.all.withLock { $0.removeAll { $0.id == 2 } }
    #expect(try await layered.answer(.everyNote).value.map(\.id) == [1])
    let gone = await #expect(throws: LayerError.self) { try await offline.answer(.note(id: 2)) }
    #expect(gone.map { if case .gone(what: "note 2", _) = $0 { true } else { false } } == true)
    #expect(try await offline.answer(.everyNote).value.map(\.text) == ["milk"])
    let all = try await offline.answer(.storedNotes)
    #expect(all.isComplete && all.origin == .local && all.value.map(\.text) == ["milk"])
    await server.stop()
  }

  @Test func aCallWithNoRequestIsAnsweredByTheStoreAndNeverAsksTheApi() async throws {
    try await Self.withMilk { layered, notes, asked in
      await #expect(throws: LayerError.miss(what: "the stored notes")) {
        try await layered.answer(.storedNotes)
      }
      _ = try await layered.answer(.note(id: 1))
      #expect(try await layered.answer(.storedNotes).value.map(\.text) == ["milk"])
      #expect(asked.value == 1)
    }
  }

  @Test func anyCallIsWatchedWithNoWatchCode() async throws {
    try await Self.withMilk { layered, notes, asked in
      let watch = try #require(layered.watch(.notes(pinned: true), refresh: false))
      var elements = watch.makeAsyncIterator()
      #expect(await elements.next() == .nothingStored)
      _ = try await layered.answer(.notes(pinned: true))
      #expect(await elements.next()?.value?.map(\.text) == ["milk"])
      // Another call's answer holds the same note: the watched list shows it.
      notes.all.withLock { $0[0].text = "oat milk" }
      _ = try await layered.answer(.note(id: 1))
      #expect(await elements.next()?.value?.map(\.text) == ["oat milk"])
      // A stack that stores nothing has nothing to watch.
      #expect(ServiceStack(client: nil, layers: []).watch(.notes(pinned: true)) == nil)
    }
  }

  /// Reads and writes in one stack: an `OutboxLayer` over the store keeps the write and shows
  /// its edit; over the api the same stack sends it; with neither there is nothing to write to.
  @Test func theStacksOutboxKeepsAWriteOfflineAndItsApiSendsIt() async throws {
    let folder = try TemporaryDirectory("stack")
    defer { folder.remove() }
    let notes = Notes([Note(id: 1, text: "milk", pinned: true)])
    let asked = Counter()
    let server = try await Self.server(notes, asked: asked)
    server.handle("PUT", "/api/notes/{id}") { request in
      SampleResponse(status: 200, body: request.body)
    }
    let cache = try SQLiteCacheStore.open(at: folder.url.appendingPathComponent("cache.sqlite"))
    let outbox = Outbox(
      store: try SQLiteOutboxStore.open(at: folder.url.appendingPathComponent("outbox.sqlite")))
    let origin = "\(server.baseURL.scheme ?? "")://127.0.0.1:\(server.baseURL.port ?? 0)"
    let kept = OutboxLayer(outbox: outbox, origin: origin, partition: "p")
    let layered = try Self.stack(server, cache, .networkFirst)
    _ = try await ServiceStack(
      client: layered.client,
      layers: [CachingLayer(store: cache, policy: .networkFirst, partition: "p")]
    ).answer(.note(id: 1))
    let edit = ServiceCall<Note>(
      .init(.put("notes/1", body: try .json(Note(id: 1, text: "oat milk", pinned: true)))),
      name: "editNote", summary: "an edit of note 1", stored: false
    ).writing(
      ordering: "Note/1",
      optimistic: [.update(ServiceCall<Note>.note(id: 1)) { $0.text = "oat milk" }])

    let offline = ServiceStack(
      client: nil, layers: [kept, CachingLayer(store: cache, policy: .cacheOnly, partition: "p")])
    guard case .queued = try await offline.write(edit) else {
      Issue.record("the stack over the store did not keep the write")
      await server.stop()
      return
    }
    #expect(try await offline.answer(.note(id: 1)).value.text == "oat milk")
    #expect(try await outbox.store.writes().count == 1)

    let online = ServiceStack(
      client: layered.client,
      layers: [kept, CachingLayer(store: cache, policy: .networkFirst, partition: "p")])
    guard case .sent(let sent) = try await online.write(edit) else {
      Issue.record("the stack over the api did not send the write")
      await server.stop()
      return
    }
    #expect(sent.text == "oat milk")
    // The kept write of the same note went first, in order.
    #expect(try await outbox.store.writes().isEmpty)
    await server.stop()
    await #expect(throws: LayerError.needsApi(what: "an edit of note 1")) {
      try await ServiceStack(client: nil, layers: []).write(edit)
    }
  }
}
