import Foundation

/// One element of a watched call (`ServiceStack.watch`): its answer as stored now, nothing
/// stored yet, or a refresh from the api that failed (the watch goes on showing what is
/// stored).
public enum Watched<Value: Sendable>: Sendable {
  /// The answer as stored now.
  case answer(Answer<Value>)
  /// Nothing stored answers it yet.
  case nothingStored
  /// A refresh from the api failed.
  case failed(WatchFailure)
  /// The watch cannot go on, for this reason: what it watched is gone (the store's file was
  /// deleted or replaced). The last element.
  case ended(WatchFailure)

  /// The answer's value, if this element is one.
  public var value: Value? {
    if case .answer(let answer) = self { return answer.value }
    return nil
  }

  /// The same element with its value changed by `transform`.
  public func map<Other: Sendable>(_ transform: (Value) -> Other) -> Watched<Other> {
    switch self {
    case .answer(let answer): .answer(answer.map(transform))
    case .nothingStored: .nothingStored
    case .failed(let failure): .failed(failure)
    case .ended(let failure): .ended(failure)
    }
  }
}

extension Watched: Equatable where Value: Equatable {
  /// The same element: the same value from the same origin, whatever its age (an answer grows
  /// older without changing).
  public static func == (lhs: Watched, rhs: Watched) -> Bool {
    switch (lhs, rhs) {
    case (.answer(let left), .answer(let right)):
      left.value == right.value && left.origin == right.origin
    case (.nothingStored, .nothingStored): true
    case (.failed(let left), .failed(let right)), (.ended(let left), .ended(let right)):
      left == right
    default: false
    }
  }
}

/// Why a watch's refresh from the api failed: its sentence and its kind (nil when unknown).
public struct WatchFailure: Error, Sendable, Equatable, CustomStringConvertible {
  public let description: String
  /// Its kind; nil when unknown.
  public let failure: ServiceFailure?

  /// The failure `error` is.
  public init(_ error: any Error) {
    description = "\(error)"
    failure = ServiceFailure.of(error)
  }
}
