// zlib and brotli's encoder, for tests only: a loopback server that sends gzip, deflate and
// brotli bodies (and a gzip bomb) the way real servers do, to check the transport decodes them.
#include <zlib.h>
#include <brotli/encode.h>
