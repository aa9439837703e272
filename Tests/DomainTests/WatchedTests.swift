import Domain
import Foundation
import Testing

/// A watch's element: mapping changes an answer's value and keeps its origin, age and every
/// other element as it is; two elements are the same whatever an answer's age.
@Suite struct WatchedTests {
  struct Refused: Error, CustomStringConvertible {
    var description: String { "refused" }
  }

  @Test func mappingChangesOnlyAnAnswersValue() {
    let answer = Watched.answer(Answer(value: 2, origin: .cache, age: 30))
    let mapped = answer.map { "\($0 * 10)" }
    #expect(mapped.value == "20")
    guard case .answer(let shown) = mapped else {
      Issue.record("\(mapped) is not an answer")
      return
    }
    #expect(shown.origin == .cache && shown.age == 30)
    let failure = WatchFailure(Refused())
    #expect(Watched<Int>.failed(failure).map { "\($0)" } == .failed(failure))
    #expect(Watched<Int>.ended(failure).map { "\($0)" } == .ended(failure))
    #expect(Watched<Int>.nothingStored.map { "\($0)" } == .nothingStored)
    #expect(Watched<Int>.nothingStored.map { "\($0)" }.value == nil)
  }

  @Test func twoAnswersAreTheSameWhateverTheirAgeButNotTheirOrigin() {
    let older = Watched.answer(Answer(value: 1, origin: .cache, age: 300))
    #expect(older == .answer(Answer(value: 1, origin: .cache, age: 0)))
    #expect(older != .answer(Answer(value: 1, origin: .network, age: 300)))
    #expect(older != .answer(Answer(value: 2, origin: .cache, age: 300)))
    #expect(older != .nothingStored)
  }
}
