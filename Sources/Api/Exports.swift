// Requests and responses are swift-http-types values (`HTTPRequest`, `HTTPResponse`,
// `HTTPFields`) in every public signature here: an app that imports Api can write an adapter,
// a retrier or a transport without naming the package itself.
@_exported import HTTPTypes
