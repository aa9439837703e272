#include "CCurl.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#if defined(__linux__)

#include <sys/epoll.h>
#include <sys/eventfd.h>

// epoll: a socket added or changed from any thread counts in the wait already in progress.
typedef struct {
  int epoll;
  int wake;
} poller;

void *kernel_poller_create(void) {
  poller *p = malloc(sizeof *p);
  if (p == NULL) return NULL;
  p->epoll = epoll_create1(EPOLL_CLOEXEC);
  p->wake = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  struct epoll_event event = {.events = EPOLLIN, .data.fd = p->wake};
  if (p->epoll < 0 || p->wake < 0 || epoll_ctl(p->epoll, EPOLL_CTL_ADD, p->wake, &event) != 0) {
    if (p->epoll >= 0) close(p->epoll);
    if (p->wake >= 0) close(p->wake);
    free(p);
    return NULL;
  }
  return p;
}

void kernel_poller_destroy(void *opaque) {
  poller *p = opaque;
  close(p->epoll);
  close(p->wake);
  free(p);
}

int kernel_poller_watch(void *opaque, int socket, int read, int write) {
  poller *p = opaque;
  struct epoll_event event = {
      .events = (read ? EPOLLIN : 0) | (write ? EPOLLOUT : 0), .data.fd = socket};
  if (epoll_ctl(p->epoll, EPOLL_CTL_MOD, socket, &event) == 0) return 0;
  return epoll_ctl(p->epoll, EPOLL_CTL_ADD, socket, &event);
}

int kernel_poller_unwatch(void *opaque, int socket) {
  poller *p = opaque;
  struct epoll_event unused = {0};
  return epoll_ctl(p->epoll, EPOLL_CTL_DEL, socket, &unused);
}

void kernel_poller_wake(void *opaque) {
  poller *p = opaque;
  uint64_t one = 1;
  ssize_t written = write(p->wake, &one, sizeof one);
  (void)written;  // EAGAIN: a wake is already pending, which is all that is asked.
}

int kernel_poller_wait(void *opaque, int timeout_ms, int *sockets, int *events, int capacity) {
  poller *p = opaque;
  struct epoll_event ready[32];
  int limit = capacity < 32 ? capacity : 32;
  int count = epoll_wait(p->epoll, ready, limit, timeout_ms);
  if (count < 0) return errno == EINTR ? 0 : -1;
  int written = 0;
  for (int i = 0; i < count; i++) {
    if (ready[i].data.fd == p->wake) {
      uint64_t drained;
      ssize_t read_bytes = read(p->wake, &drained, sizeof drained);
      (void)read_bytes;
      continue;
    }
    sockets[written] = ready[i].data.fd;
    events[written] = ((ready[i].events & EPOLLIN) ? KERNEL_CURL_CSELECT_IN : 0)
        | ((ready[i].events & EPOLLOUT) ? KERNEL_CURL_CSELECT_OUT : 0)
        | ((ready[i].events & (EPOLLERR | EPOLLHUP)) ? KERNEL_CURL_CSELECT_ERR : 0);
    written++;
  }
  return written;
}

#else

#include <poll.h>
#include <pthread.h>

// poll(2): the set lives here under a lock, and a change wakes the waiter so that it waits
// on the new set.
typedef struct {
  pthread_mutex_t lock;
  struct pollfd *watched;
  int count;
  int capacity;
  int pipe[2];
} poller;

void *kernel_poller_create(void) {
  poller *p = calloc(1, sizeof *p);
  if (p == NULL) return NULL;
  if (pipe(p->pipe) != 0) {
    free(p);
    return NULL;
  }
  for (int i = 0; i < 2; i++) {
    fcntl(p->pipe[i], F_SETFL, O_NONBLOCK);
    fcntl(p->pipe[i], F_SETFD, FD_CLOEXEC);
  }
  pthread_mutex_init(&p->lock, NULL);
  return p;
}

void kernel_poller_destroy(void *opaque) {
  poller *p = opaque;
  close(p->pipe[0]);
  close(p->pipe[1]);
  pthread_mutex_destroy(&p->lock);
  free(p->watched);
  free(p);
}

void kernel_poller_wake(void *opaque) {
  poller *p = opaque;
  char byte = 1;
  ssize_t written = write(p->pipe[1], &byte, 1);
  (void)written;
}

int kernel_poller_watch(void *opaque, int socket, int read, int write) {
  poller *p = opaque;
  short events = (short)((read ? POLLIN : 0) | (write ? POLLOUT : 0));
  pthread_mutex_lock(&p->lock);
  int i = 0;
  while (i < p->count && p->watched[i].fd != socket) i++;
  if (i == p->count) {
    if (p->count == p->capacity) {
      int capacity = p->capacity ? p->capacity * 2 : 8;
      struct pollfd *grown = realloc(p->watched, (size_t)capacity * sizeof *grown);
      if (grown == NULL) {
        pthread_mutex_unlock(&p->lock);
        return -1;
      }
      p->watched = grown;
      p->capacity = capacity;
    }
    p->count++;
  }
  p->watched[i] = (struct pollfd){.fd = socket, .events = events};
  pthread_mutex_unlock(&p->lock);
  kernel_poller_wake(p);
  return 0;
}

int kernel_poller_unwatch(void *opaque, int socket) {
  poller *p = opaque;
  pthread_mutex_lock(&p->lock);
  for (int i = 0; i < p->count; i++) {
    if (p->watched[i].fd == socket) {
      p->watched[i] = p->watched[--p->count];
      break;
    }
  }
  pthread_mutex_unlock(&p->lock);
  kernel_poller_wake(p);
  return 0;
}

int kernel_poller_wait(void *opaque, int timeout_ms, int *sockets, int *events, int capacity) {
  poller *p = opaque;
  pthread_mutex_lock(&p->lock);
  int count = p->count;
  struct pollfd *set = malloc((size_t)(count + 1) * sizeof *set);
  if (set == NULL) {
    pthread_mutex_unlock(&p->lock);
    return -1;
  }
  set[0] = (struct pollfd){.fd = p->pipe[0], .events = POLLIN};
  for (int i = 0; i < count; i++) set[i + 1] = p->watched[i];
  pthread_mutex_unlock(&p->lock);
  int ready = poll(set, (nfds_t)count + 1, timeout_ms);
  int written = 0;
  if (ready < 0) {
    free(set);
    return errno == EINTR ? 0 : -1;
  }
  if (set[0].revents) {
    char drained[64];
    while (read(p->pipe[0], drained, sizeof drained) > 0) {
    }
  }
  for (int i = 1; i <= count && written < capacity; i++) {
    if (set[i].revents == 0) continue;
    sockets[written] = set[i].fd;
    events[written] = ((set[i].revents & POLLIN) ? KERNEL_CURL_CSELECT_IN : 0)
        | ((set[i].revents & POLLOUT) ? KERNEL_CURL_CSELECT_OUT : 0)
        | ((set[i].revents & (POLLERR | POLLHUP | POLLNVAL)) ? KERNEL_CURL_CSELECT_ERR : 0);
    written++;
  }
  free(set);
  return written;
}

#endif
