import Foundation

/// Days as `yyyy-MM-dd` in UTC, the only date format the API and the store use.
///
/// Parsed by hand rather than with `DateFormatter`, which is neither `Sendable` nor cheap, and
/// whose leniency would accept `2016-13-45`.
public enum CalendarDay {
  private static let utc: Calendar = {
    var calendar = Calendar(identifier: .gregorian)
    calendar.timeZone = TimeZone(identifier: "UTC") ?? TimeZone(secondsFromGMT: 0) ?? .current
    return calendar
  }()

  /// Midnight UTC of `text`, or nil when it is not a real day written as `yyyy-MM-dd`.
  public static func date(from text: String) -> Date? {
    let parts = text.split(separator: "-", omittingEmptySubsequences: false)
    guard parts.count == 3, parts[0].count == 4, parts[1].count == 2, parts[2].count == 2,
      let year = Int(parts[0]), let month = Int(parts[1]), let day = Int(parts[2]),
      (1...12).contains(month), (1...31).contains(day)
    else { return nil }
    let components = DateComponents(year: year, month: month, day: day)
    guard let date = utc.date(from: components),
      utc.component(.day, from: date) == day, utc.component(.month, from: date) == month
    else { return nil }
    return date
  }

  /// `date` as `yyyy-MM-dd` in UTC.
  public static func string(from date: Date) -> String {
    let parts = utc.dateComponents([.year, .month, .day], from: date)
    let year = parts.year ?? 0
    let month = parts.month ?? 0
    let day = parts.day ?? 0
    return "\(year)-\(month < 10 ? "0" : "")\(month)-\(day < 10 ? "0" : "")\(day)"
  }
}
