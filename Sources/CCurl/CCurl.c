#include "CCurl.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

// libcurl's own declarations, as far as these wrappers use them (curl/curl.h, curl/multi.h).
typedef struct {
  int msg;
  void *easy_handle;
  union {
    void *whatever;
    int result;
  } data;
} kernel_curl_message;

enum { KERNEL_CURLMSG_DONE = 1, KERNEL_CURL_GLOBAL_DEFAULT = 3 };

static struct {
  int (*global_init)(long flags);
  void *(*easy_init)(void);
  void (*easy_cleanup)(void *);
  int (*easy_setopt)(void *, int, ...);
  int (*easy_getinfo)(void *, int, ...);
  int (*easy_pause)(void *, int);
  const char *(*easy_strerror)(int);
  void *(*slist_append)(void *, const char *);
  void (*slist_free_all)(void *);
  void *(*multi_init)(void);
  int (*multi_setopt)(void *, int, ...);
  int (*multi_add_handle)(void *, void *);
  int (*multi_remove_handle)(void *, void *);
  int (*multi_perform)(void *, int *);
  int (*multi_poll)(void *, void *, unsigned int, int, int *);
  int (*multi_wakeup)(void *);
  kernel_curl_message *(*multi_info_read)(void *, int *);
  int (*multi_cleanup)(void *);
} curl;

static pthread_mutex_t load_lock = PTHREAD_MUTEX_INITIALIZER;
static int loaded = 0;
static char loaded_name[256];
static char load_error[512];

static int resolve(void *library, const char *name, void **slot) {
  *slot = dlsym(library, name);
  if (*slot == NULL) {
    snprintf(load_error, sizeof load_error, "it has no %s (libcurl 7.68 or later is needed)", name);
    return -1;
  }
  return 0;
}

// dlopen, keeping the loader's reason in load_error when it fails.
static void *open_library(const char *name) {
  void *library = dlopen(name, RTLD_NOW | RTLD_LOCAL);
  if (library == NULL) {
    const char *reason = dlerror();
    snprintf(load_error, sizeof load_error, "%s", reason ? reason : "dlopen failed");
  }
  return library;
}

int kernel_curl_load(const char *name, char *error, size_t capacity) {
  pthread_mutex_lock(&load_lock);
  int failed = 0;
  if (loaded) {
    // Bound already: a request naming another library still needs that one to exist.
    if (strcmp(name, loaded_name) != 0) {
      void *other = open_library(name);
      if (other == NULL) {
        failed = 1;
      } else {
        dlclose(other);
      }
    }
  } else {
    void *library = open_library(name);
    if (library == NULL) {
      failed = 1;
    } else {
      failed = resolve(library, "curl_global_init", (void **)&curl.global_init)
          || resolve(library, "curl_easy_init", (void **)&curl.easy_init)
          || resolve(library, "curl_easy_cleanup", (void **)&curl.easy_cleanup)
          || resolve(library, "curl_easy_setopt", (void **)&curl.easy_setopt)
          || resolve(library, "curl_easy_getinfo", (void **)&curl.easy_getinfo)
          || resolve(library, "curl_easy_pause", (void **)&curl.easy_pause)
          || resolve(library, "curl_easy_strerror", (void **)&curl.easy_strerror)
          || resolve(library, "curl_slist_append", (void **)&curl.slist_append)
          || resolve(library, "curl_slist_free_all", (void **)&curl.slist_free_all)
          || resolve(library, "curl_multi_init", (void **)&curl.multi_init)
          || resolve(library, "curl_multi_setopt", (void **)&curl.multi_setopt)
          || resolve(library, "curl_multi_add_handle", (void **)&curl.multi_add_handle)
          || resolve(library, "curl_multi_remove_handle", (void **)&curl.multi_remove_handle)
          || resolve(library, "curl_multi_perform", (void **)&curl.multi_perform)
          || resolve(library, "curl_multi_poll", (void **)&curl.multi_poll)
          || resolve(library, "curl_multi_wakeup", (void **)&curl.multi_wakeup)
          || resolve(library, "curl_multi_info_read", (void **)&curl.multi_info_read)
          || resolve(library, "curl_multi_cleanup", (void **)&curl.multi_cleanup);
      if (!failed && curl.global_init(KERNEL_CURL_GLOBAL_DEFAULT) != 0) {
        snprintf(load_error, sizeof load_error, "curl_global_init failed");
        failed = 1;
      }
      if (failed) {
        dlclose(library);
      } else {
        loaded = 1;
        snprintf(loaded_name, sizeof loaded_name, "%s", name);
      }
    }
  }
  if (failed && error != NULL && capacity > 0) snprintf(error, capacity, "%s", load_error);
  pthread_mutex_unlock(&load_lock);
  return failed ? -1 : 0;
}

void *kernel_curl_easy_init(void) { return curl.easy_init(); }
void kernel_curl_easy_cleanup(void *easy) { curl.easy_cleanup(easy); }

int kernel_curl_easy_setopt_long(void *easy, int option, long value) {
  return curl.easy_setopt(easy, option, value);
}

int kernel_curl_easy_setopt_pointer(void *easy, int option, const void *value) {
  return curl.easy_setopt(easy, option, value);
}

int kernel_curl_easy_setopt_offset(void *easy, int option, int64_t value) {
  return curl.easy_setopt(easy, option, (long long)value);
}

int kernel_curl_easy_setopt_callback(void *easy, int option, kernel_curl_data_callback callback) {
  return curl.easy_setopt(easy, option, callback);
}

int kernel_curl_easy_setopt_seek(void *easy, int option, kernel_curl_seek_callback callback) {
  return curl.easy_setopt(easy, option, callback);
}

int kernel_curl_easy_getinfo_long(void *easy, int info, long *value) {
  return curl.easy_getinfo(easy, info, value);
}

int kernel_curl_easy_pause(void *easy, int bitmask) { return curl.easy_pause(easy, bitmask); }

int kernel_curl_easy_getinfo_offset(void *easy, int info, int64_t *value) {
  return curl.easy_getinfo(easy, info, value);
}

const char *kernel_curl_easy_strerror(int code) { return curl.easy_strerror(code); }

void *kernel_curl_slist_append(void *list, const char *string) {
  return curl.slist_append(list, string);
}

void kernel_curl_slist_free_all(void *list) { curl.slist_free_all(list); }

void *kernel_curl_multi_init(void) { return curl.multi_init(); }

int kernel_curl_multi_setopt_long(void *multi, int option, long value) {
  return curl.multi_setopt(multi, option, value);
}

int kernel_curl_multi_add_handle(void *multi, void *easy) {
  return curl.multi_add_handle(multi, easy);
}

int kernel_curl_multi_remove_handle(void *multi, void *easy) {
  return curl.multi_remove_handle(multi, easy);
}

int kernel_curl_multi_perform(void *multi, int *running) {
  return curl.multi_perform(multi, running);
}

int kernel_curl_multi_poll(void *multi, int timeout_ms, int *ready) {
  return curl.multi_poll(multi, NULL, 0, timeout_ms, ready);
}

int kernel_curl_multi_wakeup(void *multi) { return curl.multi_wakeup(multi); }

int kernel_curl_multi_next_done(void *multi, void **easy, int *result) {
  int left = 0;
  kernel_curl_message *message;
  while ((message = curl.multi_info_read(multi, &left)) != NULL) {
    if (message->msg == KERNEL_CURLMSG_DONE) {
      *easy = message->easy_handle;
      *result = message->data.result;
      return 1;
    }
  }
  return 0;
}

void kernel_curl_multi_cleanup(void *multi) { curl.multi_cleanup(multi); }
