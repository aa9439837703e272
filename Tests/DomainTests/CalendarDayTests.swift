import Domain
import Foundation
import Testing

@Suite struct CalendarDayTests {
  @Test(arguments: [
    ("1970-01-01", 0.0), ("2016-06-17", 1_466_121_600.0), ("2000-02-29", 951_782_400.0),
    ("1969-12-31", -86_400.0), ("2017-03-01", 1_488_326_400.0),
  ])
  func daysAreMidnightUTC(text: String, seconds: Double) throws {
    let date = try #require(CalendarDay.date(from: text))
    #expect(date.timeIntervalSince1970 == seconds)
    #expect(CalendarDay.string(from: date) == text)
  }

  @Test(arguments: [
    "2016-13-01", "2016-00-10", "2016-02-30", "2015-02-29", "1900-02-29", "2016-6-17", "2016/06/17",
    "17-06-2016",
    "", "2016-06-1x", "2016-06-17T00:00:00Z",
  ])
  func anythingElseIsRefused(text: String) {
    #expect(CalendarDay.date(from: text) == nil)
  }

  @Test func everyDayOfFourCenturiesRoundTripsAndAgreesWithFoundation() throws {
    var calendar = Calendar(identifier: .gregorian)
    calendar.timeZone = try #require(TimeZone(identifier: "UTC"))
    var day = try #require(calendar.date(from: DateComponents(year: 1800, month: 1, day: 1)))
    let end = try #require(calendar.date(from: DateComponents(year: 2200, month: 1, day: 1)))
    var checked = 0
    while day < end {
      let parts = calendar.dateComponents([.year, .month, .day], from: day)
      let text = String(format: "%04d-%02d-%02d", parts.year ?? 0, parts.month ?? 0, parts.day ?? 0)
      #expect(CalendarDay.string(from: day) == text)
      #expect(CalendarDay.date(from: text) == day)
      day = day.addingTimeInterval(86_400 * 7)
      checked += 1
    }
    #expect(checked > 20_000)
  }

  @Test func aTimeWithinTheDayGivesThatDay() throws {
    let noon = try #require(CalendarDay.date(from: "2016-06-17")).addingTimeInterval(43_200)
    #expect(CalendarDay.string(from: noon) == "2016-06-17")
  }
}
