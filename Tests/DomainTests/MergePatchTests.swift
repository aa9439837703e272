import Domain
import Foundation
import Testing

/// JSON Merge Patch (RFC 7386), made and applied: what a kept write's edit changed.
struct MergePatchTests {
  private func json(_ text: String) throws -> JSONValue {
    try JSONDecoder().decode(JSONValue.self, from: Data(text.utf8))
  }

  @Test func aPatchHoldsWhatChangedAndMakesTheTargetOfTheSource() throws {
    let source = try json(
      #"{"id": 3, "rating": 65.5, "cast": ["a"], "studio": {"name": "x", "city": "y"}, "gone": 1}"#)
    let target = try json(
      #"{"id": 3, "rating": 80, "cast": ["a", "b"], "studio": {"name": "x", "city": "z"}}"#)
    let patch = JSONValue.mergePatch(from: source, to: target)
    #expect(
      patch
        == (try json(#"{"rating": 80, "cast": ["a", "b"], "studio": {"city": "z"}, "gone": null}"#))
    )
    #expect(source.applying(mergePatch: patch) == target)
  }

  @Test func patchesOfDifferentFieldsMakeBothOfTheSource() throws {
    let source = try json(#"{"id": 3, "rating": 65, "name": "A"}"#)
    let rated = JSONValue.mergePatch(
      from: source, to: try json(#"{"id": 3, "rating": 80, "name": "A"}"#))
    let renamed = JSONValue.mergePatch(
      from: source, to: try json(#"{"id": 3, "rating": 65, "name": "B"}"#))
    #expect(
      source.applying(mergePatch: rated).applying(mergePatch: renamed)
        == (try json(#"{"id": 3, "rating": 80, "name": "B"}"#)))
  }

  @Test func aValueThatIsNotAnObjectIsReplacedWhole() throws {
    let patch = JSONValue.mergePatch(from: try json("[1, 2]"), to: try json("[3]"))
    #expect(patch == (try json("[3]")))
    #expect(JSONValue.string("x").applying(mergePatch: patch) == (try json("[3]")))
    #expect(
      JSONValue.string("x").applying(mergePatch: try json(#"{"a": 1}"#)) == (try json(#"{"a": 1}"#))
    )
  }
}
