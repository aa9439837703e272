import Domain
import Foundation
import Testing

@testable import KernelCommands

/// JSON for scripts, written one way: by `JSONEncoder`.
@Suite struct ReplyTests {
  @Test func fieldsAreWrittenByJSONEncoderWithSortedKeys() throws {
    let text = try Reply.json([
      "name": "Amélie \"/\" \u{1B}", "count": 3, "ratio": 0.5, "ok": true,
      "list": [1, 2], "nested": ["b": "x", "a": Double.nan] as [String: Any],
    ])
    #expect(
      text
        == #"{"count":3,"list":[1,2],"name":"Amélie \"/\" \u001b","nested":{"a":null,"b":"x"},"ok":true,"ratio":0.5}"#
    )
    let back = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any]
    #expect(back?["name"] as? String == "Amélie \"/\" \u{1B}")
  }

  @Test func datesAreWrittenAsISO8601WithMilliseconds() throws {
    struct Stamped: Encodable { let at: Date }
    let at = Date(timeIntervalSince1970: 1_764_064_807.123)
    #expect(try Reply.json(encoding: Stamped(at: at)) == #"{"at":"2025-11-25T10:00:07.123Z"}"#)
  }

  @Test func somethingThatIsNoJSONValueIsAnError() {
    #expect(throws: EncodingError.self) { _ = try Reply.json(["when": Date()]) }
  }

  /// A count says its noun in the singular for one, grouped by thousands otherwise.
  @Test func aCountSaysOneInTheSingular() {
    #expect(Reply.count(1, "request") == "1 request")
    #expect(Reply.count(0, "request") == "0 requests")
    #expect(Reply.count(12_000, "movie") == "12,000 movies")
    #expect(Reply.count(2, "entity", plural: "entities") == "2 entities")
  }

  @Test func aTablePadsItsColumnsAlignsNumbersRightAndEndsNoLineInSpaces() {
    let table = Reply.table(
      ["ID", "TITLE", "GROSS"], [["3", "Amélie", "33,225,499"], ["12", "Up", "735"]],
      rightAligned: [2])
    #expect(
      table == """
        ID  TITLE        GROSS
        3   Amélie  33,225,499
        12  Up             735
        """)
    // A last cell that is empty or only whitespace leaves no spaces at its line's end.
    #expect(Reply.table(["ID", "NOTE"], [["1", ""], ["2", "\u{3000}"]]) == "ID  NOTE\n1\n2")
  }
}

/// Repeated global options folded before ArgumentParser sees them, in one pass.
@Suite struct GlobalOptionsTests {
  @Test func theLastOfARepeatedOptionCountsAndFlagsAppearOnce() {
    let folded = GlobalOptions.foldingRepeats([
      "--profile", "offline", "-v", "movies", "--profile=api", "get", "-v", "1", "--verbose",
      "--format", "json", "--", "--profile", "x",
    ])
    #expect(
      folded == [
        "-v", "movies", "--profile=api", "get", "1", "--format", "json", "--", "--profile", "x",
      ])
  }

  @Test func aValueThatLooksLikeAFlagStaysTheOptionsValue() {
    #expect(
      GlobalOptions.foldingRepeats(["--environment", "-v", "env", "list"])
        == ["--environment", "-v", "env", "list"])
  }
}

/// Ids from standard input, checked as they are read.
@Suite struct BulkArgumentsTests {
  /// Hands out `chunks` one per read, counting the reads.
  private final class Chunks: @unchecked Sendable {
    // Read by one test on one thread.
    var left: [Data]
    var reads = 0
    init(_ chunks: [String]) { left = chunks.map { Data($0.utf8) } }
    func read() -> Data {
      reads += 1
      return left.isEmpty ? Data() : left.removeFirst()
    }
  }

  @Test func idsSpanChunksAndSeparators() throws {
    let input = Chunks(["1 2,3\n4", "5 6\r\n", "7"])
    #expect(try BulkArguments.numbers(from: input.read, noun: "movie id") == [1, 2, 3, 45, 6, 7])
  }

  @Test func theFirstByteThatIsNoIdEndsTheReading() throws {
    let input = Chunks(["1 2 x3 4", String(repeating: "\0", count: 1 << 16), "5"])
    #expect {
      _ = try BulkArguments.numbers(from: input.read, noun: "movie id")
    } throws: { error in
      "\(error)"
        == "Standard input holds \"x3\", which is not a movie id; ids are positive whole numbers."
    }
    #expect(input.reads == 1)
  }

  @Test func anIdTooLongIsRefusedBeforeItIsWhole() throws {
    let input = Chunks([String(repeating: "9", count: 19), String(repeating: "9", count: 1 << 16)])
    #expect(throws: UsageError.self) {
      _ = try BulkArguments.numbers(from: input.read, noun: "movie id")
    }
    #expect(input.reads == 1)
  }
}

extension ReplyTests {
  /// The footer says where the answer came from as the JSON does: a pending answer is the
  /// cached copy with unsent changes, never "from the api".
  @Test func aPendingAnswersFooterSaysPending() {
    var fetched = Answer(value: 1, origin: .pending, age: 90)
    fetched.elapsed = .milliseconds(3)
    #expect(
      fetched.footer("1 movie")
        == "1 movie from cache, 1 min old, with changes not yet sent (outbox list shows them)")
    #expect(!fetched.footer("1 movie").contains("from the api"))
  }

  /// A local query's answer says whether the api may know more, in both forms: over a complete
  /// collection, all there is, and `"complete": true`.
  @Test func aCompleteLocalAnswerSaysItIsAllThereIs() {
    var answer = Answer(value: [1, 2], origin: .local, age: 120)
    let partial = answer
    #expect(partial.footer("2 products").contains("the api may know more"))
    #expect(partial.fields == ["origin": .string("local"), "ageSeconds": .integer(120)])
    answer.isComplete = true
    let complete = answer
    #expect(
      complete.footer("2 products")
        == "2 products found among those stored, all there are as of the last complete list or"
        + " sync, 2 min old")
    #expect(
      complete.fields == [
        "origin": .string("local"), "ageSeconds": .integer(120), "complete": .boolean(true),
      ])
    // An answer from the api now has no age to tell; one no whole number holds is left out.
    #expect(Answer(value: 1, origin: .network, age: 0).fields == ["origin": .string("network")])
    #expect(
      Answer(value: 1, origin: .cache, age: .infinity).fields == ["origin": .string("cache")])
    #expect(complete.map(\.count).isComplete)
  }

  /// Ages another program wrote, past any range, are shown without a trap.
  @Test func anAgeOfAnyDoubleIsShown() {
    for seconds in [-1e300, 1e300, .nan, .infinity, -.infinity, 59.9, 86_400 * 3] {
      #expect(!Reply.age(seconds).isEmpty)
    }
    #expect(Reply.age(86_400 * 3) == "3 days old")
  }
}

/// The data dir's files Kernel knows as its own: a folder holding only them may be tightened.
@Suite struct DataDirectoryFilesTests {
  @Test func theOutboxAndItsLogAreKernelsFiles() {
    for name in [
      "cache.sqlite", "cache.sqlite-wal", "outbox.sqlite", "outbox.sqlite-wal", "outbox.sqlite-shm",
      "context.json", ".context.json.1234.tmp",
    ] {
      #expect(Invocation.isKernelFile(name), "\(name)")
    }
    #expect(!Invocation.isKernelFile("notes.txt"))
  }
}
