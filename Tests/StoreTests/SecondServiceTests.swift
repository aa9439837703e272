import Domain
import Foundation
import Store
import Synchronization
import Testing

// A second domain, as a newcomer would add one: a protocol, a value, and the layered wrapper
// with its operations. No cache or policy logic is written here: the layers are reused.

struct Quote: Codable, Sendable, Equatable {
  let id: Int
  let text: String
}

protocol QuoteService: Sendable {
  func quote(id: Int) async throws -> Quote
}

struct LayeredQuoteService: QuoteService {
  let base: any QuoteService
  let layer: any ServiceLayer

  func quote(id: Int) async throws -> Quote {
    try await layer.run(
      ServiceCall(
        name: "quote", key: "quotes/\(id)", summary: "quote \(id)",
        cache: .json(key: "quotes/\(id)"))
    ) { try await base.quote(id: id) }
  }
}

final class ScriptedQuotes: QuoteService {
  private let state = Mutex<(text: String, gone: Bool, calls: Int)>(("To infinity", false, 0))
  func goAway() { state.withLock { $0.gone = true } }
  var calls: Int { state.withLock { $0.calls } }
  func quote(id: Int) async throws -> Quote {
    let (text, gone) = state.withLock { state -> (String, Bool) in
      state.calls += 1
      return (state.text, state.gone)
    }
    if gone { throw ScriptedMovieService.Failure(failure: .unreachable) }
    return Quote(id: id, text: text)
  }
}

@Suite struct SecondServiceTests {
  @Test func aSecondServiceGetsTheSameLayersWithOnlyItsMapping() async throws {
    let database = try CacheDatabase.inMemory()
    let base = ScriptedQuotes()
    let logged = Warnings()
    let quotes = LayeredQuoteService(
      base: base,
      layer: LayerStack([
        LoggingLayer(log: logged.add), CachingLayer(database: database, policy: .networkFirst),
      ]))

    #expect(try await quotes.quote(id: 7) == Quote(id: 7, text: "To infinity"))
    base.goAway()
    let recorder = Provenance.Recorder()
    let again = try await Provenance.$recorder.withValue(recorder) { try await quotes.quote(id: 7) }
    #expect(again.text == "To infinity")
    #expect(recorder.origin == "cache")

    let offline = LayeredQuoteService(
      base: base, layer: CachingLayer(database: database, policy: .cacheOnly))
    #expect(try await offline.quote(id: 7).id == 7)
    await #expect(throws: CacheMiss.self) { try await offline.quote(id: 8) }
    #expect(logged.all.first?.hasPrefix("quote quotes/7: from network in") == true)
    #expect(logged.all.last?.hasPrefix("quote quotes/7: from cache in") == true)
  }
}
