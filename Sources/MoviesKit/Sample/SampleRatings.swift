import Domain
import Foundation
import SampleApi
import Synchronization

/// The sample API's ratings: `POST movies/{id}/ratings` with `{"score": N}` (1–100) answers
/// 201 with the rating, honouring `Idempotency-Key` as the IETF draft says (the same request
/// again with its key answers the first answer and applies nothing twice; the key reused for
/// another request — another movie or score — is 422); `GET movies/{id}/ratings` answers what was
/// applied, so a test
/// can count. Movies in `conflicts` answer 409, as a server that holds a newer version would.
public final class SampleRatings: Sendable {
  private struct State {
    var applied: [Int: [Rating]] = [:]
    /// Each key's first answer, and the request (movie and body) it answered.
    var answers: [String: (movie: Int, body: Data, answer: SampleResponse)] = [:]
    var conflicts: Set<Int>
    var next = 1
  }

  private let state: Mutex<State>

  /// Ratings of no movie yet; movies in `conflicts` answer 409.
  public init(conflicts: Set<Int> = []) { state = Mutex(State(conflicts: conflicts)) }

  /// The ratings applied to movie `id`, in order.
  public func applied(to id: Int) -> [Rating] { state.withLock { $0.applied[id] ?? [] } }

  /// How many ratings were applied in all.
  public var appliedCount: Int { state.withLock { $0.applied.values.reduce(0) { $0 + $1.count } } }

  /// Whether movie `id` answers ratings with 409 from now on.
  public func setConflict(_ conflict: Bool, movie id: Int) {
    state.withLock { state in
      if conflict {
        state.conflicts.insert(id)
      } else {
        state.conflicts.remove(id)
      }
    }
  }

  /// The answer to a rating of movie `id` with `body`, once per idempotency key.
  func rate(_ id: Int, body: Data, idempotencyKey: String?) -> SampleResponse {
    struct Asked: Decodable { let score: Int }
    guard let asked = try? JSONDecoder().decode(Asked.self, from: body) else {
      return .error(400, "a rating is {\"score\": N}")
    }
    guard (1...100).contains(asked.score) else {
      return .error(400, "a score is from 1 to 100, not \(asked.score)")
    }
    return state.withLock { state in
      if let key = idempotencyKey, let first = state.answers[key] {
        guard first.movie == id, first.body == body else {
          return .error(
            422, "the Idempotency-Key \(key) was used for another request; use a new key")
        }
        return first.answer
      }
      // A conflict applies nothing, so it is not kept: the same write may be tried again.
      if state.conflicts.contains(id) {
        return .error(409, "movie \(id) was rated in the meantime; rate it again")
      }
      let rating = Rating(id: state.next, movieId: id, score: asked.score)
      state.next += 1
      state.applied[id, default: []].append(rating)
      let answer = SampleResponse.json(rating, status: 201)
      if let key = idempotencyKey { state.answers[key] = (id, body, answer) }
      return answer
    }
  }

  /// What `GET movies/{id}/ratings` answers.
  func list(_ id: Int) -> SampleResponse {
    struct Listed: Encodable {
      let movieId: Int
      let count: Int
      let scores: [Int]
    }
    let ratings = applied(to: id)
    return .json(Listed(movieId: id, count: ratings.count, scores: ratings.map(\.score)))
  }
}
