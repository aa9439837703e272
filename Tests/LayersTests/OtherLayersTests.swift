import Domain
import Foundation
import KernelTesting
import Layers
import MoviesKit
import MoviesTesting
import Synchronization
import Testing

/// Counts the calls that reach it, then passes them on.
private final class CountingLayer: ServiceLayer {
  let arrived = Counter()
  func run<Value: Sendable>(_ call: ServiceCall<Value>, next: Next<Value>) async throws
    -> Answer<Value>
  {
    arrived.increment()
    return try await next()
  }
}

/// A gate requests wait at until the test opens it.
private final class Gate: Sendable {
  private let state = Mutex<(open: Bool, waiting: [CheckedContinuation<Void, Never>])>(
    (false, []))
  func open() {
    let waiting = state.withLock { state -> [CheckedContinuation<Void, Never>] in
      state.open = true
      defer { state.waiting = [] }
      return state.waiting
    }
    for continuation in waiting { continuation.resume() }
  }
  @Sendable func pass() async {
    await withCheckedContinuation { continuation in
      let open = state.withLock { state -> Bool in
        if !state.open { state.waiting.append(continuation) }
        return state.open
      }
      if open { continuation.resume() }
    }
  }
}

@Suite(.timeLimit(.minutes(1))) struct OtherLayersTests {
  @Test func concurrentIdenticalCallsShareOneBaseCall() async throws {
    let dory = try Movie.fixture(1, "Finding Dory")
    let base = ScriptedMovieApi([dory])
    let gate = Gate()
    let counting = CountingLayer()
    let service = MovieStack(
      ServiceStack(
        client: try base.client(waitingOn: gate.pass), layers: [counting, DedupeLayer()]))
    let movies = try await withThrowingTaskGroup(of: Movie.self) { group in
      for _ in 0..<10 { group.addTask { try await service.movie(id: 1) } }
      // Open the base once every call has reached the dedupe layer.
      await counting.arrived.reach(10)
      gate.open()
      return try await group.reduce(into: [Movie]()) { $0.append($1) }
    }
    #expect(movies == Array(repeating: dory, count: 10))
    #expect(base.calls == 1)
    _ = try await service.movie(id: 1)
    #expect(base.calls == 2)  // a call after the shared one finished goes to the base again
  }

  @Test func theMemoryLayerKeepsRecentResultsForTheirMaxAge() async throws {
    let clock = TestWallClock()
    let base = ScriptedMovieApi([
      try Movie.fixture(1, "A"), try Movie.fixture(2, "B"), try Movie.fixture(3, "C"),
    ])
    let memory = MemoryLayer(capacity: 2, maxAge: .seconds(10), clock: clock.wallClock)
    let service = try MovieStack(api: base, layers: [memory])

    _ = try await service.movie(id: 1)
    clock.advance(4)
    let again = try await service.stack.answer(.movie(id: 1))
    #expect(base.calls == 1)
    #expect(again.origin == .cache && again.age == 4)

    clock.advance(7)
    _ = try await service.movie(id: 1)  // 11 s old: asked again
    #expect(base.calls == 2)

    _ = try await service.movie(id: 2)
    _ = try await service.movie(id: 1)  // 1 is now the most recently used
    _ = try await service.movie(id: 3)  // evicts 2
    #expect(memory.count == 2)
    let before = base.calls
    _ = try await service.movie(id: 1)
    #expect(base.calls == before)
    _ = try await service.movie(id: 2)
    #expect(base.calls == before + 1)
  }

  /// A call with no codec (a write such as adding a book) is never answered nor shared by a
  /// layer: two at once under one key, and a third after them, each reach the source.
  @Test(arguments: ["memory", "dedupe"])
  func aCallWithNoCodecIsNeverAnsweredOrShared(layer: String) async throws {
    let counting = CountingLayer()
    let stack = LayerStack([counting, layer == "memory" ? MemoryLayer() : DedupeLayer()])
    let reached = Counter()
    let gate = Counter()
    let call = ServiceCall<String>(name: "add", key: "books", summary: "adding a book", codec: nil)
    let add = { @Sendable (title: String) in
      try await stack.run(
        call,
        next: Next { _ in
          _ = reached.increment()
          await gate.reach(1)
          return Answer(value: title, origin: .network)
        }
      ).value
    }
    let answers = try await withThrowingTaskGroup(of: String.self) { group in
      for title in ["Dune", "Emma"] { group.addTask { try await add(title) } }
      // Both are in the stack before either answers.
      await counting.arrived.reach(2)
      _ = gate.increment()
      return try await group.reduce(into: Set<String>()) { $0.insert($1) }
    }
    #expect(answers == ["Dune", "Emma"])
    #expect(try await add("Ubik") == "Ubik")
    #expect(reached.value == 3)
  }

  @Test func theLoggingLayerNamesTheOperationOriginAndFailure() async throws {
    let lines = Recorder<String>()
    let base = ScriptedMovieApi([try Movie.fixture(1, "A")])
    let service = try MovieStack(
      api: base,
      layers: [
        LoggingLayer(log: lines.append),
        CachingLayer(store: InMemoryStore(), policy: .networkFirst),
      ])
    _ = try await service.movie(id: 1)
    base.fail(.rejected)
    _ = try? await service.movie(id: 2)
    #expect(lines.all.count == 2)
    #expect(lines.all[0].hasPrefix("movie Movie/1: from network in "))
    #expect(lines.all[1].hasPrefix("movie Movie/2: failed after "))
  }
}

/// The cache's JSON codec: a long list is encoded a slice at a time, and reads back the same.
@Suite struct CacheCodecTests {
  @Test func aLongListIsTheSameJSONAsEncodedWhole() throws {
    let movies = (1...2_500).map { id in
      Movie(
        id: id, name: "Movie \(id) \"quoted\"", year: 2016,
        releaseDate: Date(timeIntervalSince1970: Double(id) * 86_400), grossing: id * 1_000,
        rating: Double(id % 100), cast: [MovieActor(name: "Actor \(id)")])
    }
    let whole = JSONEncoder()
    whole.dateEncodingStrategy = .deferredToDate
    let codec = CacheCodec<[Movie]>.json
    let encoded = try codec.encode(movies)
    let parsed = try JSONSerialization.jsonObject(with: encoded) as? NSArray
    let parsedWhole = try JSONSerialization.jsonObject(with: whole.encode(movies)) as? NSArray
    #expect(parsed != nil && parsed == parsedWhole)
    #expect(try codec.decode(encoded) == movies)
    #expect(try codec.decode(codec.encode(Array(movies.prefix(3)))) == Array(movies.prefix(3)))
    #expect(try codec.decode(codec.encode([])) == [])
  }
}
