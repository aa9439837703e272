// libcurl, opened with dlopen when the first request is made: no link-time dependency, no
// headers needed to build. The few calls Kernel's transport makes are wrapped in
// non-variadic functions; the option numbers are libcurl's stable ABI.
#ifndef KERNEL_CCURL_H
#define KERNEL_CCURL_H

#include <stddef.h>
#include <stdint.h>

typedef size_t (*kernel_curl_data_callback)(char *data, size_t size, size_t count, void *context);
/// libcurl's seek callback: 0 when done, 1 on failure, 2 when it cannot seek.
typedef int (*kernel_curl_seek_callback)(void *context, int64_t offset, int origin);

enum {
  KERNEL_CURLOPT_WRITEDATA = 10001,
  KERNEL_CURLOPT_READDATA = 10009,
  KERNEL_CURLOPT_READFUNCTION = 20012,
  KERNEL_CURLOPT_POST = 47,
  KERNEL_CURLOPT_ACCEPT_ENCODING = 10102,
  KERNEL_CURLOPT_SEEKFUNCTION = 20167,
  KERNEL_CURLOPT_SEEKDATA = 10168,
  KERNEL_CURLOPT_URL = 10002,
  KERNEL_CURLOPT_WRITEFUNCTION = 20011,
  KERNEL_CURLOPT_LOW_SPEED_LIMIT = 19,
  KERNEL_CURLOPT_LOW_SPEED_TIME = 20,
  KERNEL_CURLOPT_HTTPHEADER = 10023,
  KERNEL_CURLOPT_HEADERDATA = 10029,
  KERNEL_CURLOPT_CUSTOMREQUEST = 10036,
  KERNEL_CURLOPT_NOBODY = 44,
  KERNEL_CURLOPT_FOLLOWLOCATION = 52,
  KERNEL_CURLOPT_HEADERFUNCTION = 20079,
  KERNEL_CURLOPT_HTTPGET = 80,
  KERNEL_CURLOPT_HTTP_VERSION = 84,
  KERNEL_CURLOPT_BUFFERSIZE = 98,
  KERNEL_CURLOPT_NOSIGNAL = 99,
  KERNEL_CURLOPT_MAXFILESIZE_LARGE = 30117,
  KERNEL_CURLOPT_POSTFIELDSIZE_LARGE = 30120,
  KERNEL_CURLOPT_TCP_NODELAY = 121,
  KERNEL_CURLOPT_TIMEOUT_MS = 155,
  KERNEL_CURLOPT_CONNECTTIMEOUT_MS = 156,
  KERNEL_CURLOPT_COPYPOSTFIELDS = 10165,
  KERNEL_CURLOPT_PROTOCOLS = 181,
  KERNEL_CURLMOPT_MAX_HOST_CONNECTIONS = 7,
  KERNEL_CURLINFO_RESPONSE_CODE = 0x200002,
  KERNEL_CURLINFO_SIZE_UPLOAD_T = 0x600000 + 7,
  KERNEL_CURLINFO_SIZE_DOWNLOAD_T = 0x600000 + 8,
  KERNEL_CURLINFO_TOTAL_TIME_T = 0x600000 + 50,
  KERNEL_CURLINFO_CONNECT_TIME_T = 0x600000 + 52,
  KERNEL_CURLINFO_STARTTRANSFER_TIME_T = 0x600000 + 54,
  KERNEL_CURLINFO_APPCONNECT_TIME_T = 0x600000 + 56,
  KERNEL_CURLPROTO_HTTP = 1,
  KERNEL_CURLPROTO_HTTPS = 2,
  KERNEL_CURL_HTTP_VERSION_1_1 = 2,
};

/// Opens `library` and initialises libcurl, once per process; a failure is not kept, so a later
/// call tries again. Once bound, a call naming another library only checks that it opens.
/// 0 when loaded; otherwise the loader's reason is written to `error`. libcurl 7.68 or later is
/// needed (`curl_multi_poll`, `curl_multi_wakeup`).
int kernel_curl_load(const char *library, char *error, size_t capacity);

void *kernel_curl_easy_init(void);
void kernel_curl_easy_cleanup(void *easy);
int kernel_curl_easy_setopt_long(void *easy, int option, long value);
int kernel_curl_easy_setopt_pointer(void *easy, int option, const void *value);
int kernel_curl_easy_setopt_offset(void *easy, int option, int64_t value);
int kernel_curl_easy_setopt_callback(void *easy, int option, kernel_curl_data_callback callback);
int kernel_curl_easy_setopt_seek(void *easy, int option, kernel_curl_seek_callback callback);
int kernel_curl_easy_getinfo_long(void *easy, int info, long *value);
/// Pauses or resumes a transfer (`CURLPAUSE_CONT` is 0); on the engine's thread.
int kernel_curl_easy_pause(void *easy, int bitmask);
/// A `curl_off_t` (64-bit) piece of information: the `*_T` sizes and times, in bytes and µs.
int kernel_curl_easy_getinfo_offset(void *easy, int info, int64_t *value);
const char *kernel_curl_easy_strerror(int code);

void *kernel_curl_slist_append(void *list, const char *string);
void kernel_curl_slist_free_all(void *list);

void *kernel_curl_multi_init(void);
int kernel_curl_multi_setopt_long(void *multi, int option, long value);
int kernel_curl_multi_add_handle(void *multi, void *easy);
int kernel_curl_multi_remove_handle(void *multi, void *easy);
/// Lets libcurl do what it can now on every transfer, without waiting.
int kernel_curl_multi_perform(void *multi, int *running);
/// Waits up to `timeout_ms` (shortened to libcurl's own timeout) for any transfer's socket, or
/// for `kernel_curl_multi_wakeup`.
int kernel_curl_multi_poll(void *multi, int timeout_ms, int *ready);
/// Ends a `kernel_curl_multi_poll` in progress, or the next one, at once: the one call that may
/// be made from another thread than the one using the multi handle.
int kernel_curl_multi_wakeup(void *multi);
/// The next finished transfer: 1 with its handle and result code, or 0 when there is none.
int kernel_curl_multi_next_done(void *multi, void **easy, int *result);
void kernel_curl_multi_cleanup(void *multi);

#endif
