import Foundation

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

extension FixtureRoutes {
  /// The most files a folder may hold, and the largest one: fixtures, not a data set.
  public static let folderLimits = (files: 10_000, bytesPerFile: 1 << 20)

  /// Routes answering `GET` from the JSON files under `directory`, read and checked now:
  ///
  /// - `DIR/api/books/7.json` answers `GET /api/books/7` with the file, as `application/json`;
  ///   `DIR/api/books.json` answers `GET /api/books`.
  /// - A file name may end in a query, one file per page: `DIR/api/books?page=2.json` answers
  ///   `GET /api/books?page=2` (and `books.json` every other page).
  /// - A folder or file named `{name}` matches any one segment: `DIR/api/books/{id}.json`
  ///   answers every book that has no file of its own.
  /// - A file name may end in a method: `DIR/api/books.post.json` answers `POST /api/books`
  ///   (201 Created), and `.put`, `.patch` and `.delete` their methods (200), whatever body
  ///   the request carries: the canned answer to a write.
  /// - Only `.json` files are served; hidden files and folders are skipped. Every file must be
  ///   JSON, at most 1 MB, and in the folder (a link to a file elsewhere is refused); a file that
  ///   is not is an error naming it, before anything is served.
  ///
  /// `GET /api/auth` (the base path's `auth`) hands out tokens unless a file answers it.
  public static func folder(_ directory: URL) throws -> FixtureRoutes {
    let root = directory.standardizedFileURL
    var status = stat()
    guard stat(root.path, &status) == 0 else {
      throw FixtureServerError.unusableFolder(
        path: root.path, reason: String(cString: strerror(errno)).lowercased())
    }
    guard status.st_mode & S_IFMT == S_IFDIR else {
      throw FixtureServerError.unusableFolder(path: root.path, reason: "it is not a folder")
    }
    var routes = FixtureRoutes()
    var count = 0
    for path in try jsonFiles(under: root) {
      count += 1
      guard count <= folderLimits.files else {
        throw FixtureServerError.unusableFolder(
          path: root.path, reason: "it holds more than \(folderLimits.files) JSON files")
      }
      let body = try read(root.appendingPathComponent(path), within: root)
      var pattern = "/" + path.dropLast(".json".count)
      var method = "GET"
      for write in ["post", "put", "patch", "delete"] where pattern.hasSuffix(".\(write)") {
        pattern = String(pattern.dropLast(write.count + 1))
        method = write.uppercased()
      }
      let status = method == "POST" ? 201 : 200
      routes.add(method, pattern) { _ in
        SampleResponse(status: status, headers: ["Content-Type": "application/json"], body: body)
      }
    }
    guard count > 0 else {
      throw FixtureServerError.unusableFolder(path: root.path, reason: "it holds no .json file")
    }
    return routes
  }

  /// The `.json` files under `root`, as paths relative to it, skipping hidden names.
  private static func jsonFiles(under root: URL) throws -> [String] {
    guard
      let walk = FileManager.default.enumerator(
        at: root, includingPropertiesForKeys: nil, options: [.skipsHiddenFiles])
    else {
      throw FixtureServerError.unusableFolder(path: root.path, reason: "it cannot be read")
    }
    let prefix = root.path.hasSuffix("/") ? root.path : root.path + "/"
    var paths: [String] = []
    for case let url as URL in walk where url.pathExtension == "json" {
      let path = url.standardizedFileURL.path
      guard path.hasPrefix(prefix) else { continue }
      paths.append(String(path.dropFirst(prefix.count)))
    }
    return paths.sorted()
  }

  /// A fixture's bytes, once it is known to be a regular file of JSON within the limit, in
  /// `root`: a link that leads out of the folder is refused, since what it leads to is not what
  /// the folder holds.
  private static func read(_ file: URL, within root: URL) throws -> Data {
    let folder = root.resolvingSymlinksInPath().path
    let target = file.resolvingSymlinksInPath().path
    guard target.hasPrefix(folder.hasSuffix("/") ? folder : folder + "/") else {
      throw FixtureServerError.badFile(
        path: file.path,
        reason: "it is a link to \(target), outside the fixture folder; copy the file in instead")
    }
    var status = stat()
    guard stat(file.path, &status) == 0, status.st_mode & S_IFMT == S_IFREG else {
      throw FixtureServerError.badFile(path: file.path, reason: "it is not a regular file")
    }
    guard status.st_size <= folderLimits.bytesPerFile else {
      throw FixtureServerError.badFile(path: file.path, reason: "it is larger than 1 MB")
    }
    let data: Data
    do { data = try Data(contentsOf: file) } catch {
      throw FixtureServerError.badFile(path: file.path, reason: "it cannot be read")
    }
    do {
      _ = try JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])
    } catch {
      throw FixtureServerError.badFile(path: file.path, reason: "it does not hold JSON")
    }
    return data
  }
}
