import Domain

/// The movie example's writes: what its `movieWrites` stack (`[outbox, api]`, `[outbox]`,
/// `[api]`) answers. A rating is sent at once, or kept in the outbox and sent later.
public protocol MovieWrites: Sendable {
  /// Rates movie `id` with `score` (1–100); `ifUnchanged`, only if the movie is still the
  /// version stored when it was read (`WriteCall.rate`).
  func rate(movie id: Int, score: Int, ifUnchanged: Bool) async throws -> Written<Rating>
}
