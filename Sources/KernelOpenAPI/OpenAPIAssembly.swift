import Api
import Composition
import Layers

/// A generated client's operations in the catalog, as any service is: the config stacks them
/// per profile under `key` (`movieOperations: [logging, "cache(networkFirst)", api]`), and any
/// of `operations` under its own id (`getMovie: [memory(64, 60), api]`). Sources `api` and
/// `store`; every layer. Each of `writes` is stacked as a write (`rateMovie: [outbox, api]`,
/// see `OperationWriter`).
///
/// ```swift
/// catalog.add(
///   OpenAPIAssembly(key: "movieOperations", operations: ["getMovie"], writes: ["rateMovie"]))
/// ```
public struct OpenAPIAssembly: Assembly {
  /// The config key every operation is stacked under (`movieOperations`).
  public let key: String
  /// Operation ids a config may stack on their own (`getMovie`).
  public let operations: [String]
  /// Operation ids stacked as writes (`rateMovie: [outbox, api]`).
  public let writes: [String]

  /// The operations under `key`, with `operations` and `writes` stackable on their own.
  public init(key: String, operations: [String] = [], writes: [String] = []) {
    self.key = key
    self.operations = operations
    self.writes = writes
  }

  /// Registers a service per key and operation (sources `api` and `store`), and a write per write.
  public func assemble(into catalog: inout Catalog) {
    for name in [key] + operations {
      catalog.service(name, (any OperationSender).self, tag: name) { sender in
        sender.api { client in ApiOperationSender(client: client) }
        sender.layered { base, layers in LayeredOperationSender(base: base, layers: layers) }
      }
    }
    let sender: @Sendable (ApiClient) -> WriteSender = { .operation($0) }
    let make: @Sendable (Writer) -> any OperationSender = { OperationWriter(writer: $0) }
    for name in writes {
      catalog.writes(name, (any OperationSender).self, tag: name, sender: sender, make)
    }
  }
}
