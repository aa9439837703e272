import Foundation

extension JSONDocument {
  // The values of nodes that already have the wanted kind, nil otherwise: the containers' fast
  // paths, which leave every error to a decoder at the node.

  @inline(__always) func plainBool(at index: Int) -> Bool? {
    switch nodes[index].kind {
    case .true: true
    case .false: false
    default: nil
    }
  }

  @inline(__always) func plainString(at index: Int) -> String? {
    nodes[index].kind == .string ? string(at: index) : nil
  }

  @inline(__always) func plainDouble(at index: Int) -> Double? {
    nodes[index].kind == .number ? double(at: index) : nil
  }

  /// `Int`, the integer nearly every field is, without generic dispatch.
  @inline(__always) func plainInt(at index: Int) -> Int? {
    nodes[index].kind == .number ? integer(Int.self, at: index) : nil
  }

  @inline(__always) func plainInteger<T: FixedWidthInteger>(_ type: T.Type, at index: Int) -> T? {
    nodes[index].kind == .number ? integer(type, at: index) : nil
  }

  /// The number at `index` as a `T`, or nil when it does not fit exactly. Integers are read
  /// digit by digit; a number with a fraction or exponent fits when its value is whole.
  @_specialize(where T == Int)
  func integer<T: FixedWidthInteger>(_ type: T.Type, at index: Int) -> T? {
    let node = nodes[index]
    guard !node.flag else { return double(at: index).flatMap { T(exactly: $0) } }
    var position = node.start
    let end = node.start + node.length
    let negative = bytes[position] == UInt8(ascii: "-")
    if negative { position += 1 }
    var value: T = 0
    while position < end {
      let digit = T(bytes[position] &- UInt8(ascii: "0"))
      let (shifted, overflowed) = value.multipliedReportingOverflow(by: 10)
      let (next, carried) =
        negative
        ? shifted.subtractingReportingOverflow(digit) : shifted.addingReportingOverflow(digit)
      if overflowed || carried { return nil }
      value = next
      position += 1
    }
    return value
  }

  /// The number at `index` as the nearest `Double`, or nil when it is beyond `Double`'s range.
  /// Up to 19 significant digits and a power of ten within 10^±22 are exact in one multiply or
  /// divide (Clinger's fast path); anything else goes to the C library's correctly rounded
  /// `strtod`.
  func double(at index: Int) -> Double? {
    let node = nodes[index]
    var position = node.start
    let end = node.start + node.length
    let negative = bytes[position] == UInt8(ascii: "-")
    if negative { position += 1 }
    var mantissa: UInt64 = 0
    var digits = 0
    var exponent = 0
    var inFraction = false
    var fast = true
    scan: while position < end {
      let byte = bytes[position]
      switch byte {
      case UInt8(ascii: "0")...UInt8(ascii: "9"):
        if digits > 0 || byte != UInt8(ascii: "0") { digits += 1 }
        if digits > 19 { fast = false }
        mantissa = mantissa &* 10 &+ UInt64(byte - UInt8(ascii: "0"))
        if inFraction { exponent -= 1 }
      case UInt8(ascii: "."): inFraction = true
      default:
        position += 1
        var written = 0
        var exponentNegative = false
        if bytes[position] == UInt8(ascii: "-") || bytes[position] == UInt8(ascii: "+") {
          exponentNegative = bytes[position] == UInt8(ascii: "-")
          position += 1
        }
        while position < end {
          written = written &* 10 &+ Int(bytes[position] - UInt8(ascii: "0"))
          if written > 400 { fast = false }
          position += 1
        }
        exponent += exponentNegative ? -written : written
        break scan
      }
      position += 1
    }
    if fast, mantissa <= 1 << 53, (-22...22).contains(exponent) {
      var value = Double(mantissa)
      if exponent < 0 {
        value /= Self.powersOfTen[-exponent]
      } else {
        value *= Self.powersOfTen[exponent]
      }
      return negative ? -value : value
    }
    guard let value = Double(numberText(at: index)), value.isFinite else { return nil }
    return value
  }

  /// 10^0 through 10^22, each exactly representable.
  private static let powersOfTen: [Double] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
    1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
  ]
}
