import Api
import Domain
import Foundation

/// One call of a service, as the layers see it: its name and key, its request, how its result is
/// kept in a cache and, for a write, the order it keeps, what it changes and its precondition.
/// A service gets every layer by describing each of its calls this way once; any stack answers,
/// watches, writes (`ServiceStack.write(_:)`) and downloads it.
///
/// The key names this call's answer. An answer made of entities (`entities:`) is stored as
/// those entities, once each by type and id, so an item call reads its entity whoever stored
/// it and every stored list shows the freshest copy; an answer that is not is stored whole
/// under the key.
public struct ServiceCall<Value: Sendable>: Sendable {
  /// The call, e.g. `booksByAuthor`, for logs.
  public let name: String
  /// What identifies its result, e.g. `books/byAuthor/le-guin`.
  public let key: String
  /// What a person calls it, e.g. `the books of Le Guin`.
  public let summary: String
  /// How its result is turned into bytes for a cache store and back; nil when it is never cached.
  public let codec: CacheCodec<Value>?
  /// How its answer is made of entities, each stored once (nil: the answer is stored whole).
  public let entities: EntityShape<Value>?
  /// How the store answers it when it was never stored: a query over the stored entities of its
  /// type (a list call's; nil: nothing stored is nothing to answer).
  public let local: LocalQuery?
  /// What the api is sent for it (nil: a call only the store answers).
  public let route: Route?
  /// Its request sent through the stack's api client (every page when it pages); nil when it
  /// has no `route`.
  let fetch: (@Sendable (ApiClient) async throws -> Response<Value>)?
  /// Its value read from one answer of the api (a write's: sent now, or kept and sent later).
  let decode: (@Sendable (ApiResponse) throws -> Value)?
  /// Written, the order it keeps: writes of one ordering are sent in the order they were made
  /// (`Movie/7`); nil, its route's path.
  public private(set) var ordering: String?
  /// Written, the keys of the calls whose stored answers it changes (`key`): when the api takes
  /// it, an entity is marked stale (the next network read refreshes it), an answer stored whole
  /// is dropped.
  public private(set) var invalidates: [String] = []
  /// Written, how it changes stored answers while it waits in the outbox: the copies an app
  /// shows, marked pending, until the api's answer replaces them.
  public private(set) var optimistic: [OptimisticEdit] = []
  /// Written, the key of the stored entity it edits (`ServiceCall.book(id: 7).key`): the ETag
  /// of that copy, as its own item answer gave it, is taken when the write is made and sent as
  /// `If-Match` on every try, so the api refuses it (412) if the entity changed meanwhile. No app
  /// copies ETags into its model. Nil: sent unconditionally.
  public private(set) var precondition: String?
  /// Written, sent as `Idempotency-Key` on every try, so a server that honours it applies a
  /// repeated write once; nil until it is written, when one is made (`written()`).
  public private(set) var idempotencyKey: String?

  /// A call of these parts; `codec` nil for a call never cached.
  public init(
    name: String, key: String, summary: String, codec: CacheCodec<Value>?,
    entities: EntityShape<Value>? = nil, local: LocalQuery? = nil
  ) {
    self.name = name
    self.key = key
    self.summary = summary
    self.codec = codec
    self.entities = entities
    self.local = local
    route = nil
    fetch = nil
    decode = nil
  }

  /// A call the api answers with `request`, stored as `codec`, `entities` and `local` say. Its
  /// key is the entity's for an item call (`Movie/3`), else the route's path and query
  /// (`movies/topGrossing/2016`), unless `key` names one; `summary` defaults to the route.
  init(
    _ request: ApiRequest<Value>, name: String?, key: String?, summary: String?,
    codec: CacheCodec<Value>?, entities: EntityShape<Value>?, local: LocalQuery?,
    fetch: (@Sendable (ApiClient) async throws -> Response<Value>)? = nil
  ) {
    let route = request.route
    if let entities, let id = entities.itemID {
      // An item call is named for its entity: `book`, keyed `Book/3`, said `book 3`.
      let type = entities.type.prefix(1).lowercased() + entities.type.dropFirst()
      self.name = name ?? type
      self.key = key ?? entities.key(of: id)
      self.summary = summary ?? "\(type) \(id)"
    } else {
      self.name = name ?? "\(route.method)"
      self.key = key ?? Self.key(of: route)
      self.summary = summary ?? route.description
    }
    self.codec = codec
    self.entities = entities
    self.local = local
    self.route = route
    self.fetch = fetch ?? { client in try await client.response(request) }
    decode = { response in try request.decode(response.body, route) }
  }

  /// A call the api answers with `route`, its value made of the whole answer (status, header
  /// fields and body, as a generated client reads it), kept whole by `codec` (nil: never kept);
  /// its validators are the answer's own. With `paging`, every page of it gathered into one
  /// answer, the array at `items` holding them all (`ApiClient.response(for:paging:items:)`).
  public init(
    _ route: Route, name: String, key: String, summary: String, codec: CacheCodec<Value>?,
    paging: (next: Paging, items: String)? = nil,
    answer: @escaping @Sendable (ApiResponse) throws -> Value
  ) {
    self.name = name
    self.key = key
    self.summary = summary
    self.codec = codec
    entities = nil
    local = nil
    self.route = route
    decode = { response in try answer(response) }
    fetch = { client in
      let response: ApiResponse
      if let (next, items) = paging {
        response = try await client.response(for: route, paging: next, items: items)
      } else {
        response = try await client.response(for: route)
      }
      return Response(
        value: try answer(response), status: response.status,
        headerFields: response.headerFields, body: response.body)
    }
  }

  /// This call as a write (`ServiceStack.write(_:)`): sent in the order of `ordering` (its
  /// route's path when nil) behind the kept writes of that order, its stored answers at
  /// `invalidates` settled when the api takes it, shown changed by `optimistic` while it waits
  /// in the outbox, and sent only if the stored entity at `precondition` is unchanged.
  ///
  /// ```swift
  /// static func borrow(book id: Int) throws -> ServiceCall<Loan> {
  ///   let book = ServiceCall<Book>.book(id: id)
  ///   return ServiceCall<Loan>(.init(.post("books/\(id)/loans")), summary: "a loan of book \(id)")
  ///     .writing(ordering: book.key, optimistic: [.update(book) { $0.onLoan = true }])
  /// }
  /// ```
  public func writing(
    ordering: String? = nil, invalidates: [String] = [], optimistic: [OptimisticEdit] = [],
    precondition: String? = nil
  ) -> ServiceCall {
    var write = self
    write.ordering = ordering
    write.invalidates = invalidates
    write.optimistic = optimistic
    write.precondition = precondition
    return write
  }

  /// This call as written once: with `idempotencyKey` (its own, or a new one when it has none),
  /// kept for every try of it.
  public func written(idempotencyKey: String? = nil) -> ServiceCall {
    var write = self
    write.idempotencyKey = idempotencyKey ?? self.idempotencyKey ?? UUID().uuidString
    return write
  }

  /// The call sent once through `client`, under no layer: its value with the validators it came
  /// with. A call that carries no request is a `LayerError.miss`: only a store answers it.
  public func response(from client: ApiClient) async throws -> Response<Value> {
    guard let fetch else { throw LayerError.missing(self) }
    return try await fetch(client)
  }

  /// The key a route's answer is stored under: its path, then its query as sent
  /// (`movies/topRated/2016`, `books?author=le-guin`); the method first for any but GET
  /// (`POST books`).
  static func key(of route: Route) -> String {
    let query = route.query.map { item in item.name + (item.value.map { "=" + $0 } ?? "") }
    let path = query.isEmpty ? route.path : route.path + "?" + query.joined(separator: "&")
    return route.method == .get ? path : "\(route.method) \(path)"
  }
}

extension ServiceCall where Value: Codable {
  /// A call whose result is cached as JSON: the one line most services need.
  public init(name: String, key: String, summary: String) {
    self.init(name: name, key: key, summary: summary, codec: .json)
  }

  /// An item call that names its entity (`.item(Book.self, id: 3)`): the store answers it
  /// from that entity's row, whichever answer stored it. Its key is the entity's (`Book/3`).
  public init(name: String, entity: EntityShape<Value>, summary: String) {
    self.init(
      name: name, key: entity.itemID.map(entity.key(of:)) ?? name, summary: summary,
      codec: .json, entities: entity)
  }

  /// The item call of one entity, named for its type: `.item(Book.self, id: 3)` is the call
  /// `book`, keyed `Book/3`, that a person calls `book 3`, answered from that entity's row
  /// whichever answer stored it.
  public static func item(_ entity: Value.Type, id: Value.ID) -> ServiceCall
  where Value: Identifiable {
    let type = "\(Value.self)"
    let name = type.prefix(1).lowercased() + type.dropFirst()
    return ServiceCall(name: name, entity: .item(Value.self, id: id), summary: "\(name) \(id)")
  }

  /// A list call whose answer is entities (`.list(Book.self)`), kept as their ids; `local`
  /// answers it from the stored entities when it was never stored.
  public init(
    name: String, key: String, summary: String, entities: EntityShape<Value>,
    local: LocalQuery? = nil
  ) {
    self.init(
      name: name, key: key, summary: summary, codec: .json, entities: entities, local: local)
  }
}

extension ServiceCall where Value: Codable {
  /// A call the api answers with `request`, its answer kept as `entities` say (an item or a
  /// list of entities, `local` answering a list never stored), else whole; `stored: false`, never
  /// kept (a write's answer). Declared once, it is answered, watched and kept offline by any
  /// profile's stack (`ServiceStack`):
  ///
  /// ```swift
  /// extension ServiceCall where Value == Book {
  ///   static func book(id: Int) -> Self {
  ///     ServiceCall(.init(.get("books/\(id)"), mapping: library), entities: .item(Book.self, id: id))
  ///   }
  /// }
  /// ```
  ///
  /// Its key is derived from the request (see `init(_:name:key:summary:entities:local:stored:)`),
  /// so no path is written twice; `name` (logs) defaults to the method, `summary` (sentences) to
  /// the route.
  public init(
    _ request: ApiRequest<Value>, name: String? = nil, key: String? = nil,
    summary: String? = nil, entities: EntityShape<Value>? = nil, local: LocalQuery? = nil,
    stored: Bool = true
  ) {
    self.init(
      request, name: name, key: key, summary: summary, codec: stored ? .json : nil,
      entities: stored ? entities : nil, local: local)
  }

  /// A list the api answers a page at a time: every page of `request`, each found by `paging`
  /// from the one before, is one answer.
  public init<Element: Sendable>(
    _ request: ApiRequest<Value>, paging: Paging, name: String? = nil, key: String? = nil,
    summary: String? = nil, entities: EntityShape<Value>? = nil, local: LocalQuery? = nil
  ) where Value == [Element] {
    self.init(
      request, name: name, key: key, summary: summary, codec: .json, entities: entities,
      local: local,
      fetch: { client in
        Response(value: try await client.all(request, paging: paging), status: 200)
      })
  }
}

/// A list `CacheCodec.json` encodes a slice at a time: the same JSON as encoding it whole, but
/// `JSONEncoder`'s whole-document tree of a 100,000-entity answer took 170 MB.
protocol SliceEncodable {
  func encoded(by encoder: JSONEncoder) throws -> Data
}

extension Array: SliceEncodable where Element: Encodable {
  func encoded(by encoder: JSONEncoder) throws -> Data {
    let slice = 1_000
    guard count > slice else { return try encoder.encode(self) }
    var data = Data("[".utf8)
    var start = startIndex
    while start < endIndex {
      let end = Swift.min(start + slice, endIndex)
      let part = try encoder.encode(Array(self[start..<end]))
      if start > startIndex { data.append(UInt8(ascii: ",")) }
      // The slice's own brackets dropped: its elements join the one list.
      data.append(part.dropFirst().dropLast())
      start = end
    }
    data.append(UInt8(ascii: "]"))
    return data
  }
}

/// How one call's result becomes the bytes a cache store keeps, and back.
public struct CacheCodec<Value: Sendable>: Sendable {
  /// A value to the bytes stored.
  public let encode: @Sendable (Value) throws -> Data
  /// Stored bytes back to the value.
  public let decode: @Sendable (Data) throws -> Value

  /// A codec of `encode` and `decode`.
  public init(
    encode: @escaping @Sendable (Value) throws -> Data,
    decode: @escaping @Sendable (Data) throws -> Value
  ) {
    self.encode = encode
    self.decode = decode
  }
}

extension CacheCodec where Value: Codable {
  /// JSON, with each date as `Date`'s own number (seconds since 2001 as a `Double`, written
  /// in full), so a stored copy decodes to a value equal to the one stored, sub-second digits
  /// included, on every platform: seconds since 1970 add 978,307,200 and lose the last bits.
  /// Decoded with the same settings it was encoded with.
  public static var json: Self {
    CacheCodec(
      encode: { value in
        let encoder = JSONEncoding.encoder()
        if let list = value as? any SliceEncodable { return try list.encoded(by: encoder) }
        return try encoder.encode(value)
      },
      decode: { data in try JSONEncoding.decoder().decode(Value.self, from: data) })
  }
}

/// The settings of every JSON the layers store (`CacheCodec.json`, an entity's row): dates as
/// `Date`'s own number, encoded and decoded alike.
enum JSONEncoding {
  static func encoder() -> JSONEncoder {
    let encoder = JSONEncoder()
    encoder.dateEncodingStrategy = .deferredToDate
    return encoder
  }

  static func decoder() -> JSONDecoder {
    let decoder = JSONDecoder()
    decoder.dateDecodingStrategy = .deferredToDate
    return decoder
  }
}
