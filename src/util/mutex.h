// mutex.h — annotated locks: Mutex (a sleeping lock) and SpinLock.
//
// libstdc++'s std::mutex carries no thread-safety attributes, so clang's
// -Wthread-safety cannot see it; these wrappers can. SpinLock is one 32-bit
// word, like the kernel's spinlock_t without lockdep, so it can sit inside a
// structure whose cache-line layout matters (the split PTE lock in a
// struct ptdesc, a percpu_counter's lock). Neither lock creates threads.
#pragma once

#include <sched.h>

#include <atomic>
#include <cstdint>
#include <mutex>

#include "util/thread_annotations.h"

namespace faultline {

class CAPABILITY("mutex") Mutex {
 public:
  Mutex() = default;
  Mutex(const Mutex&) = delete;
  Mutex& operator=(const Mutex&) = delete;

  void lock() ACQUIRE() { mu_.lock(); }
  void unlock() RELEASE() { mu_.unlock(); }
  bool try_lock() TRY_ACQUIRE(true) { return mu_.try_lock(); }
  // Documents (and tells the analysis) that the caller holds the lock.
  void assert_held() const ASSERT_CAPABILITY(this) {}

 private:
  std::mutex mu_;
};

// Test-and-test-and-set spinlock (queued spinlocks aside, the cache-line
// behaviour of arch_spin_lock: one RMW to take it, one store to drop it).
class CAPABILITY("spinlock") SpinLock {
 public:
  SpinLock() = default;
  SpinLock(const SpinLock&) = delete;
  SpinLock& operator=(const SpinLock&) = delete;

  void lock() ACQUIRE() {
    for (;;) {
      if (!word_.exchange(1, std::memory_order_acquire)) return;
      // More runnable threads than CPUs: a holder that was preempted needs
      // the CPU back, so give it up after a while instead of spinning on.
      for (unsigned spins = 0; word_.load(std::memory_order_relaxed); ++spins) {
        if (spins < 1024) {
          cpu_relax();
        } else {
          sched_yield();
        }
      }
    }
  }
  bool try_lock() TRY_ACQUIRE(true) {
    return !word_.load(std::memory_order_relaxed) && !word_.exchange(1, std::memory_order_acquire);
  }
  void unlock() RELEASE() { word_.store(0, std::memory_order_release); }
  bool is_locked() const { return word_.load(std::memory_order_relaxed) != 0; }
  void assert_held() const ASSERT_CAPABILITY(this) {}

  static void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
  }

 private:
  std::atomic<uint32_t> word_{0};
};

// Scoped holder for either lock (MutexLock l(&mu);).
template <typename Lock>
class SCOPED_CAPABILITY LockGuard {
 public:
  explicit LockGuard(Lock* l) ACQUIRE(l) : l_(l) { l_->lock(); }
  ~LockGuard() RELEASE() { l_->unlock(); }
  LockGuard(const LockGuard&) = delete;
  LockGuard& operator=(const LockGuard&) = delete;

 private:
  Lock* l_;
};
using MutexLock = LockGuard<Mutex>;
using SpinLockGuard = LockGuard<SpinLock>;

}  // namespace faultline
