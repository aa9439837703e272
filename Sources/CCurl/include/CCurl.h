// libcurl, opened with dlopen when the first request is made: no link-time dependency, no
// headers needed to build. The few calls Kernel's transport makes are wrapped in
// non-variadic functions; the option numbers are libcurl's stable ABI.
#ifndef KERNEL_CCURL_H
#define KERNEL_CCURL_H

#include <stddef.h>
#include <stdint.h>

typedef size_t (*kernel_curl_data_callback)(char *data, size_t size, size_t count, void *context);
/// CURLMOPT_SOCKETFUNCTION: what libcurl wants to wait for on `socket` (KERNEL_CURL_POLL_*).
typedef int (*kernel_curl_socket_callback)(
    void *easy, int socket, int what, void *context, void *socket_context);
/// CURLMOPT_TIMERFUNCTION: when libcurl wants its timeout action (-1: no timer).
typedef int (*kernel_curl_timer_callback)(void *multi, long timeout_ms, void *context);

enum {
  KERNEL_CURLOPT_WRITEDATA = 10001,
  KERNEL_CURLOPT_URL = 10002,
  KERNEL_CURLOPT_WRITEFUNCTION = 20011,
  KERNEL_CURLOPT_LOW_SPEED_LIMIT = 19,
  KERNEL_CURLOPT_LOW_SPEED_TIME = 20,
  KERNEL_CURLOPT_HTTPHEADER = 10023,
  KERNEL_CURLOPT_HEADERDATA = 10029,
  KERNEL_CURLOPT_CUSTOMREQUEST = 10036,
  KERNEL_CURLOPT_NOPROGRESS = 43,
  KERNEL_CURLOPT_NOBODY = 44,
  KERNEL_CURLOPT_POST = 47,
  KERNEL_CURLOPT_FOLLOWLOCATION = 52,
  KERNEL_CURLOPT_HEADERFUNCTION = 20079,
  KERNEL_CURLOPT_HTTPGET = 80,
  KERNEL_CURLOPT_HTTP_VERSION = 84,
  KERNEL_CURLOPT_NOSIGNAL = 99,
  KERNEL_CURLOPT_MAXFILESIZE_LARGE = 30117,
  KERNEL_CURLOPT_POSTFIELDSIZE_LARGE = 30120,
  KERNEL_CURLOPT_TCP_NODELAY = 121,
  KERNEL_CURLOPT_TIMEOUT_MS = 155,
  KERNEL_CURLOPT_CONNECTTIMEOUT_MS = 156,
  KERNEL_CURLOPT_COPYPOSTFIELDS = 10165,
  KERNEL_CURLOPT_PROTOCOLS = 181,
  KERNEL_CURLMOPT_MAXCONNECTS = 6,
  KERNEL_CURLMOPT_MAX_HOST_CONNECTIONS = 7,
  KERNEL_CURLMOPT_SOCKETFUNCTION = 20001,
  KERNEL_CURLMOPT_SOCKETDATA = 10002,
  KERNEL_CURLMOPT_TIMERFUNCTION = 20004,
  KERNEL_CURLMOPT_TIMERDATA = 10005,
  KERNEL_CURL_POLL_IN = 1,
  KERNEL_CURL_POLL_OUT = 2,
  KERNEL_CURL_POLL_INOUT = 3,
  KERNEL_CURL_POLL_REMOVE = 4,
  KERNEL_CURL_SOCKET_TIMEOUT = -1,
  KERNEL_CURL_CSELECT_IN = 1,
  KERNEL_CURL_CSELECT_OUT = 2,
  KERNEL_CURL_CSELECT_ERR = 4,
  KERNEL_CURLINFO_RESPONSE_CODE = 0x200002,
  KERNEL_CURLPROTO_HTTP = 1,
  KERNEL_CURLPROTO_HTTPS = 2,
  KERNEL_CURL_HTTP_VERSION_1_1 = 2,
};

/// Opens `library` and initialises libcurl, once per process; a failure is not kept, so a later
/// call tries again. Once bound, a call naming another library only checks that it opens.
/// 0 when loaded; otherwise the loader's reason is written to `error`.
int kernel_curl_load(const char *library, char *error, size_t capacity);

void *kernel_curl_easy_init(void);
void kernel_curl_easy_cleanup(void *easy);
int kernel_curl_easy_setopt_long(void *easy, int option, long value);
int kernel_curl_easy_setopt_pointer(void *easy, int option, const void *value);
int kernel_curl_easy_setopt_offset(void *easy, int option, int64_t value);
int kernel_curl_easy_setopt_callback(void *easy, int option, kernel_curl_data_callback callback);
int kernel_curl_easy_getinfo_long(void *easy, int info, long *value);
const char *kernel_curl_easy_strerror(int code);

void *kernel_curl_slist_append(void *list, const char *string);
void kernel_curl_slist_free_all(void *list);

void *kernel_curl_multi_init(void);
int kernel_curl_multi_setopt_long(void *multi, int option, long value);
int kernel_curl_multi_add_handle(void *multi, void *easy);
int kernel_curl_multi_remove_handle(void *multi, void *easy);
int kernel_curl_multi_setopt_pointer(void *multi, int option, const void *value);
int kernel_curl_multi_setopt_socket_callback(void *multi, kernel_curl_socket_callback callback);
int kernel_curl_multi_setopt_timer_callback(void *multi, kernel_curl_timer_callback callback);
/// Lets libcurl act on `socket` (KERNEL_CURL_CSELECT_* in `events`), or on its timeout when
/// `socket` is KERNEL_CURL_SOCKET_TIMEOUT.
int kernel_curl_multi_socket_action(void *multi, int socket, int events, int *running);
/// The next finished transfer: 1 with its handle and result code, or 0 when there is none.
int kernel_curl_multi_next_done(void *multi, void **easy, int *result);
void kernel_curl_multi_cleanup(void *multi);

/// A set of sockets one thread waits on while others change it: epoll on Linux, poll(2)
/// elsewhere. Changes made while the waiter waits count at once (on Linux without waking it).
/// NULL when the system gives no descriptor for it.
void *kernel_poller_create(void);
void kernel_poller_destroy(void *poller);
/// Waits for `socket` to be readable (`read`) and/or writable (`write`); again changes it.
int kernel_poller_watch(void *poller, int socket, int read, int write);
int kernel_poller_unwatch(void *poller, int socket);
/// Ends the wait in progress, or the next one, at once.
void kernel_poller_wake(void *poller);
/// Waits up to `timeout_ms` (-1: no limit) and writes up to `capacity` ready sockets with their
/// KERNEL_CURL_CSELECT_* events; the count, 0 on timeout or a wake, -1 on an error.
int kernel_poller_wait(void *poller, int timeout_ms, int *sockets, int *events, int capacity);

#endif
