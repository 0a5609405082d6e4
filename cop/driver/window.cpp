#include "driver/window.h"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <new>

namespace cop::driver {

namespace {

void init_mutex(pthread_mutex_t* m) {
  pthread_mutexattr_t a;
  pthread_mutexattr_init(&a);
  pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
  pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
  pthread_mutex_init(m, &a);
  pthread_mutexattr_destroy(&a);
}

}  // namespace

void csr_set_error(Window& w, wire::Error code) {
  w.csr_err_code.store(static_cast<uint32_t>(code));
  w.csr_err.store(1, std::memory_order_release);
}

void csr_channel_down(Window& w) {
  w.csr_rdy.store(0);
  csr_set_error(w, wire::Error::link_down);
}

void csr_channel_up(Window& w) {
  w.csr_err.store(0);
  w.csr_err_code.store(0);
  w.csr_rdy.store(1, std::memory_order_release);
}

void init_window(Window* w, int driver_pid, uint16_t channel) {
  std::memset(static_cast<void*>(w), 0, sizeof(Window));
  new (w) Window{};  // the atomics
  w->magic = kWindowMagic;
  w->version = kWindowVersion;
  w->driver_pid = driver_pid;
  w->channel = channel;
  init_mutex(&w->channel_lock);
  init_mutex(&w->buffer_lock);
  init_mutex(&w->table_lock);
  init_mutex(&w->host_lock);
  init_mutex(&w->settle_lock);
  for (auto& t : w->tasks) t.tkno = -1;
}

void clear_out_of_context(Window& w) {
  lock_robust(&w.buffer_lock);
  for (uint32_t i = 0; i < w.ooc_high; ++i) w.ooc[i].used = 0;
  w.ooc_count = 0;
  w.ooc_high = 0;
  pthread_mutex_unlock(&w.buffer_lock);
}

void lock_robust(pthread_mutex_t* m) {
  if (pthread_mutex_lock(m) == EOWNERDEAD) pthread_mutex_consistent(m);
}

bool try_lock_robust(pthread_mutex_t* m) {
  const int r = pthread_mutex_trylock(m);
  if (r == EOWNERDEAD) {
    pthread_mutex_consistent(m);
    return true;
  }
  return r == 0;
}

void futex_wait(std::atomic<uint32_t>* word, uint32_t seen, int timeout_ms) {
  timespec ts{timeout_ms / 1000, long(timeout_ms % 1000) * 1000000L};
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), FUTEX_WAIT, seen, &ts, nullptr, 0);
}

void futex_wake_all(std::atomic<uint32_t>* word) {
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), FUTEX_WAKE, INT32_MAX, nullptr, nullptr, 0);
}

uint64_t monotonic_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return uint64_t(ts.tv_sec) * 1000000000ull + uint64_t(ts.tv_nsec);
}

}  // namespace cop::driver
