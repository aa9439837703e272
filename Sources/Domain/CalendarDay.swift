import Foundation

/// Days as `yyyy-MM-dd` in UTC, the only date format the API and the store use.
///
/// Converted with integer arithmetic on the proleptic Gregorian calendar (days since
/// 1970-01-01), not with `DateFormatter` or `Calendar`: no locale or time zone can change the
/// result, nothing lenient accepts `2016-13-45`, and a list of dated values decodes without paying
/// microseconds per date.
public enum CalendarDay {
  private static let secondsPerDay = 86_400.0

  /// Midnight UTC of `text`, or nil when it is not a real day written as `yyyy-MM-dd`.
  public static func date(from text: String) -> Date? {
    let bytes = Array(text.utf8)
    guard bytes.count == 10, bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-"),
      let year = number(bytes[0..<4]), let month = number(bytes[5..<7]),
      let day = number(bytes[8..<10]),
      (1...12).contains(month), (1...daysIn(month: month, year: year)).contains(day)
    else { return nil }
    return Date(
      timeIntervalSince1970: Double(daysSinceEpoch(year: year, month: month, day: day))
        * secondsPerDay)
  }

  /// `date` as `yyyy-MM-dd` in UTC.
  public static func string(from date: Date) -> String {
    let days = Int((date.timeIntervalSince1970 / secondsPerDay).rounded(.down))
    let (year, month, day) = civil(fromDays: days)
    return pad(year, 4) + "-" + pad(month, 2) + "-" + pad(day, 2)
  }

  private static func number(_ digits: ArraySlice<UInt8>) -> Int? {
    var value = 0
    for digit in digits {
      guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(digit) else { return nil }
      value = value * 10 + Int(digit - UInt8(ascii: "0"))
    }
    return value
  }

  private static func pad(_ value: Int, _ width: Int) -> String {
    let text = String(value)
    return String(repeating: "0", count: max(0, width - text.count)) + text
  }

  private static func daysIn(month: Int, year: Int) -> Int {
    switch month {
    case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
    case 4, 6, 9, 11: 30
    default: 31
    }
  }

  /// Days from 1970-01-01 to the given day (H. Hinnant's `days_from_civil`).
  private static func daysSinceEpoch(year: Int, month: Int, day: Int) -> Int {
    let y = month <= 2 ? year - 1 : year
    let era = (y >= 0 ? y : y - 399) / 400
    let yearOfEra = y - era * 400
    let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
    let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
    return era * 146_097 + dayOfEra - 719_468
  }

  /// The inverse of `daysSinceEpoch` (H. Hinnant's `civil_from_days`).
  private static func civil(fromDays days: Int) -> (year: Int, month: Int, day: Int) {
    let z = days + 719_468
    let era = (z >= 0 ? z : z - 146_096) / 146_097
    let dayOfEra = z - era * 146_097
    let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146_096) / 365
    let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
    let monthIndex = (5 * dayOfYear + 2) / 153
    let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
    let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
    return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
  }
}
