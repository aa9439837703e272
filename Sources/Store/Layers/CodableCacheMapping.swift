import Foundation
import GRDB

extension CacheMapping where Value: Codable {
  /// Keeps the value as JSON in its cache entry: a service with no tables of its own gets the
  /// cache layers with this one line.
  public static func json(key: String) -> Self {
    CacheMapping(
      read: { db in
        let statement = try db.cachedStatement(
          sql: "SELECT payload, storedAt FROM cache_entry WHERE key = ?")
        guard let row = try Row.fetchOne(statement, arguments: [key]), let payload: Data = row[0]
        else { return nil }
        return (
          try JSONDecoder().decode(Value.self, from: payload), Date(timeIntervalSince1970: row[1])
        )
      },
      write: { value, storedAt, db in
        let statement = try db.cachedStatement(
          sql: """
            INSERT INTO cache_entry (key, storedAt, payload) VALUES (?, ?, ?)
            ON CONFLICT(key) DO UPDATE SET payload = excluded.payload, storedAt = excluded.storedAt
            """)
        try statement.execute(arguments: [
          key, storedAt.timeIntervalSince1970, try JSONEncoder().encode(value),
        ])
      })
  }
}
