import Api
import Composition
import Layers

/// A generated client's operations in the catalog, as any service is: the config stacks them
/// per profile under `key` (`movieOperations: [logging, "cache(networkFirst)", api]`), and any
/// of `operations` under its own id (`getMovie: [memory(64, 60), api]`). Sources `api` and
/// `store`; every layer.
///
/// ```swift
/// catalog.add(OpenAPIAssembly(key: "movieOperations", operations: ["getMovie", "rateMovie"]))
/// ```
public struct OpenAPIAssembly: Assembly {
  public let key: String
  public let operations: [String]

  public init(key: String, operations: [String] = []) {
    self.key = key
    self.operations = operations
  }

  public func assemble(into catalog: inout Catalog) {
    for name in [key] + operations {
      catalog.service(name, (any OperationSender).self, tag: name) { sender in
        sender.api { client in ApiOperationSender(client: client) }
        sender.layered { base, layers in LayeredOperationSender(base: base, layers: layers) }
      }
    }
  }
}
