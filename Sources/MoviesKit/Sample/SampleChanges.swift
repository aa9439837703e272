import Foundation
import SampleApi

/// The sample api's changes feed, `GET movies/changes?since=T&per_page=N`, in WatermelonDB's
/// pull shape (`ChangesFeed.watermelon`): every movie — the bundled ones, then the made-up ones
/// past them — was created at the time of its id, 1 to N, and none has changed since, so `since`
/// T (0 or absent: from the start) answers the movies after T, at most `per_page` of them (100
/// unless asked, 1 to 1,000), `timestamp` the last one's time, and `hasMore` while more are
/// left. Any server answering this shape can stand in for it.
public enum SampleChanges {
  /// The page after `since`, of at most `perPage` movies; 400 for a `since` or `per_page` that
  /// is not a count.
  public static func page(since: String?, perPage: String?, extraMovies: Int) -> SampleResponse {
    guard let since = since.map({ Int($0) }) ?? 0, since >= 0 else {
      return .error(400, "since must be a time: a whole number of 0 or more")
    }
    guard let size = perPage.map({ Int($0) }) ?? 100, (1...1_000).contains(size) else {
      return .error(400, "per_page must be a whole number from 1 to 1000")
    }
    let total = SampleMovie.all.count + max(0, extraMovies)
    let first = min(since, total) + 1
    let last = min(total, first + size - 1)
    let movies =
      first <= last ? (first...last).map { SampleMovie.movie(id: $0) ?? .generated(id: $0) } : []
    return answer(
      created: movies, timestamp: movies.isEmpty ? since : last, hasMore: last < total)
  }

  /// A page of the feed in its shape: `created`, `updated` and `deleted` movies (by id), the
  /// `timestamp` to ask with next, and whether there is more: what a server standing in for the
  /// sample api's feed answers.
  public static func answer(
    created: [SampleMovie] = [], updated: [SampleMovie] = [], deleted: [Int] = [],
    timestamp: Int, hasMore: Bool = false
  ) -> SampleResponse {
    .staticJSON(
      Page(
        changes: ["movies": Page.Table(created: created, updated: updated, deleted: deleted)],
        timestamp: timestamp, hasMore: hasMore))
  }

  /// One page as WatermelonDB's pull answers it.
  struct Page: Encodable {
    struct Table: Encodable {
      let created: [SampleMovie]
      let updated: [SampleMovie]
      let deleted: [Int]
    }
    let changes: [String: Table]
    let timestamp: Int
    let hasMore: Bool
  }
}
