import Api
import Composition
import Domain
import Foundation
import KernelTesting
import Layers
import MoviesKit
import MoviesTesting
import SampleApi
import Store
import Synchronization
import Testing

/// A write conditioned on the stored copy it edits, over real loopback HTTP and real SQLite
/// files: its `If-Match` is the ETag the item's own answer gave, taken when the write is made;
/// a 412 keeps the server's version (and its ETag) beside the write and undoes the edit; the
/// write can then be sent again against that version.
@Suite(.timeLimit(.minutes(1))) struct ConditionalWriteTests {
  /// A server holding movie 7 in versions: `GET` answers it with its ETag, `PATCH` applies a
  /// new rating only when `If-Match` names the current version.
  final class Versioned: Sendable {
    struct State {
      var version = 1
      var rating = 50.0
      var applied: [String?] = []
      /// Every PATCH received, by its `If-Match`.
      var patches: [String?] = []
    }
    let state = Mutex(State())

    func movie(_ state: State) -> SampleResponse {
      let body =
        #"{"id": 7, "name": "Zootopia", "year": 2016, "releaseDate": "2016-03-04","#
        + #" "grossing": 341268248, "rating": \#(state.rating), "cast": []}"#
      return SampleResponse(
        status: 200,
        headers: ["Content-Type": "application/json", "ETag": "\"v\(state.version)\""],
        body: Data(body.utf8))
    }

    func install(on server: FixtureServer) {
      server.handle("GET", "/api/movies/7") { [self] _ in state.withLock { movie($0) } }
      server.handle("PATCH", "/api/movies/7") { [self] request in
        state.withLock { state in
          let ifMatch = request.headers["if-match"]
          state.patches.append(ifMatch)
          guard ifMatch == "\"v\(state.version)\"" else {
            var refused = movie(state)
            refused.status = 412
            return refused
          }
          state.applied.append(ifMatch)
          state.version += 1
          state.rating = 80
          return movie(state)
        }
      }
    }
  }

  static func patch() throws -> ServiceCall<Movie> {
    let movie = ServiceCall<Movie>.movie(id: 7)
    return ServiceCall(
      .init(Route(.patch, "movies/7", body: try .json(["rating": 80]))), name: "rateMovie",
      summary: "a new rating of movie 7", stored: false
    ).writing(
      ordering: movie.key, invalidates: [movie.key],
      optimistic: [.update(movie) { $0.rating = 80 }], precondition: movie.key)
  }

  /// The versioned server on loopback, its origin, and a cache and an outbox on real files.
  static func withVersionedApi(
    _ body: (Versioned, LoopbackApi, String, SQLiteCacheStore, Outbox) async throws -> Void
  ) async throws {
    try await withTemporaryDirectory { folder in
      let versioned = Versioned()
      try await withLoopbackApi(routes: .sampleMovies(), authentication: nil) { api in
        versioned.install(on: api.server)
        try await body(
          versioned, api, api.context.environment.origin.description,
          try SQLiteCacheStore.open(at: folder.appending("cache.sqlite")),
          Outbox(store: try SQLiteOutboxStore.open(at: folder.appending("outbox.sqlite"))))
      }
    }
  }

  @Test func aConflictKeepsTheServersVersionAndIsSentAgainstIt() async throws {
    try await Self.withVersionedApi { versioned, api, origin, cache, outbox in
      do {
        let read = ServiceStack(
          client: api.client,
          layers: [CachingLayer(store: cache, policy: .networkFirst, partition: origin)])
        #expect(try await read.answer(.movie(id: 7)).value.rating == 50)

        // Meanwhile another client changes it: version 2 on the server, version 1 stored here.
        versioned.state.withLock { $0.version = 2 }
        let offline = Writer(
          origin: origin, partition: origin, send: nil, outbox: outbox, cache: cache)
        let kept = try #require(try await offline.write(try Self.patch()).kept)
        #expect(kept.ifMatch == "\"v1\"")
        #expect(try await cache.entry(for: origin + " Movie/7")?.isPending == true)

        let sync = { try await outbox.sync(origin: origin, send: .api(api.client), cache: cache) }
        let first = try await sync()
        let conflict = try #require(first.conflicts.first)
        #expect(conflict.serverETag == "\"v2\"")
        #expect(String(decoding: conflict.serverBody ?? Data(), as: UTF8.self).contains("Zootopia"))
        // The edit is undone: the stored copy is the api's again.
        let undone = try #require(try await cache.entry(for: origin + " Movie/7"))
        #expect(!undone.isPending)
        #expect(versioned.state.withLock { $0.applied }.isEmpty)

        // Sent again over the server's version: applied once, with its ETag.
        let online = Writer(
          origin: origin, partition: origin, send: .api(api.client), outbox: outbox, cache: cache)
        #expect(try await online.resendOverServerVersion(kept.id)?.ifMatch == "\"v2\"")
        #expect(try await sync().sent.count == 1)
        #expect(versioned.state.withLock { $0.applied } == ["\"v2\""])
      }
    }
  }

  /// A copy that came from a list has no ETag of its own: its list's validator is never taken
  /// for it.
  @Test func aCopyFromAListIsNeverConditionedOnTheListsETag() async throws {
    let cache = InMemoryStore()
    try await cache.store(
      CacheEntry(
        key: "p Movie/7", payload: Data("{}".utf8), storedAt: Date(),
        validators: CacheValidators(), scope: "p|Movie"))
    let writer = Writer(origin: "p", partition: "p", send: nil, outbox: nil, cache: cache)
    #expect(await writer.ifMatch(for: try Self.patch()) == nil)
  }

  /// The stocktake check: a conditional write on an entity seen only in a list never reaches
  /// the server without `If-Match`, online or kept for later; it is refused with one sentence,
  /// and nothing is sent, kept or edited.
  @Test func aConditionalWriteOnAnEntitySeenOnlyInAListIsRefusedNotSentUnconditionally()
    async throws
  {
    try await Self.withVersionedApi { versioned, api, origin, cache, outbox in
      do {
        // Movie 7 as a list stores it: an entity with no ETag of its own.
        try await cache.store(
          CacheEntry(
            key: origin + " Movie/7",
            payload: try JSONEncoder().encode(try Movie.fixture(7, "Zootopia")),
            storedAt: Date(), validators: CacheValidators(), scope: origin + "|Movie"))
        for send in [WriteSender.api(api.client), nil] {
          let writer = Writer(
            origin: origin, partition: origin, send: send, outbox: outbox, cache: cache)
          await #expect(
            throws: LayerError.unknownVersion(what: "a new rating of movie 7", key: "Movie/7")
          ) { try await writer.write(try Self.patch()) }
        }
        #expect(versioned.state.withLock { $0.patches }.isEmpty)
        #expect(try await outbox.store.writes().isEmpty)
        #expect(try await cache.entry(for: origin + " Movie/7")?.isPending == false)
        let refusal = LayerError.unknownVersion(what: "a new rating of movie 7", key: "Movie/7")
        #expect(ServiceFailure.of(refusal) == .conflict)
        #expect("\(refusal)".hasPrefix("A new rating of movie 7 was not sent: it edits Movie/7"))
        #expect("\(refusal)".contains("read it on its own first"))
      }
    }
  }
}
