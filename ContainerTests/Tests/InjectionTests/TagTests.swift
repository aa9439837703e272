import Testing

@testable import Injection

@Suite struct TagTests {
  enum Role: String { case primary, backup }
  enum Slot: Int {
    case first = 1
    case second = 2
  }

  @Test func tagsHoldSeveralRegistrationsOfOneType() throws {
    let container = Container()
    try container.register((any Engine).self) { _ in PetrolEngine(name: "untagged") }
    try container.register((any Engine).self, tag: "fast") { _ in PetrolEngine(name: "string") }
    try container.register((any Engine).self, tag: 7) { _ in PetrolEngine(name: "integer") }
    try container.register((any Engine).self, tag: Tag(Role.backup)) { _ in
      PetrolEngine(name: "enum")
    }
    try container.register((any Engine).self, tag: Tag(Slot.second)) { _ in
      PetrolEngine(name: "int enum")
    }

    #expect(try container.resolve((any Engine).self).name == "untagged")
    #expect(try container.resolve((any Engine).self, tag: "fast").name == "string")
    #expect(try container.resolve((any Engine).self, tag: 7).name == "integer")
    #expect(try container.resolve((any Engine).self, tag: Tag(Role.backup)).name == "enum")
    #expect(try container.resolve((any Engine).self, tag: Tag(Slot.second)).name == "int enum")
  }

  @Test func stringAndIntegerTagsDoNotCollide() throws {
    let container = Container()
    try container.register((any Engine).self, tag: "2") { _ in PetrolEngine(name: "text") }
    try container.register((any Engine).self, tag: 2) { _ in PetrolEngine(name: "number") }
    try container.bootstrap()
    #expect(try container.resolve((any Engine).self, tag: "2").name == "text")
    #expect(try container.resolve((any Engine).self, tag: 2).name == "number")
  }

  @Test func anUnknownTagNamesTheTagsThatExist() throws {
    let container = Container()
    try container.register((any Engine).self, tag: "fast") { _ in PetrolEngine() }
    let error = #expect(throws: InjectionError.self) {
      try container.resolve((any Engine).self, tag: "fats")
    }
    guard case .definitionNotFound(let service, _, let closest) = error else {
      Issue.record("expected definitionNotFound, got \(String(describing: error))")
      return
    }
    #expect(service == "Engine tagged \"fats\"")
    #expect(closest == ["Engine tagged \"fast\""])
  }

  @Test(arguments: [false, true])
  func tagsResolveTheSameBeforeAndAfterBootstrap(frozen: Bool) throws {
    let container = Container()
    for index in 0..<40 {
      try container.register((any Engine).self, tag: Tag("engine-\(index)")) { _ in
        PetrolEngine(name: "\(index)")
      }
    }
    if frozen { try container.bootstrap() }
    for index in 0..<40 {
      #expect(
        try container.resolve((any Engine).self, tag: Tag("engine-\(index)")).name == "\(index)")
    }
  }
}
