// percpu_counter.h — models lib/percpu_counter.c, the counter type of the
// mm's RSS counters since 6.2 (f1a7941243c1).
//
// A shared 64-bit count under a spinlock plus one s32 delta per CPU. An add
// goes to the local delta; when |delta + amount| reaches the batch the whole
// amount is folded into the shared count under the lock
// (percpu_counter_add_batch). The shared part and every CPU's delta sit on
// their own cache lines, so folds are the only writes other CPUs see.
//
// Simplified: a "CPU" is a logical CPU of the concurrent model, and tasks
// never migrate, so a delta is written only by its own CPU; CPU hotplug and
// the irq-safe variants are not modelled.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string_view>

#include "mm/coherence.h"
#include "util/mutex.h"
#include "util/thread_annotations.h"

namespace faultline::mm {

// percpu_counter_batch (compute_batch_value): max(32, 2 x online CPUs).
inline constexpr int32_t percpu_counter_batch(unsigned nr_cpus) {
  return static_cast<int32_t>(2 * nr_cpus) > 32 ? static_cast<int32_t>(2 * nr_cpus) : 32;
}

class PercpuCounter {
 public:
  PercpuCounter(unsigned nr_cpus, int32_t batch);
  PercpuCounter(const PercpuCounter&) = delete;
  PercpuCounter& operator=(const PercpuCounter&) = delete;

  // Registers the counter's lines: the shared count in `group`, the deltas
  // in `percpu_group`.
  void instrument(CoherenceTracker& coh, std::string_view group, std::string_view percpu_group);

  // percpu_counter_add_batch(fbc, amount, batch) on cpu. Returns true if the
  // add folded the CPU's delta into the shared count.
  bool add(CpuCtx& cpu, int64_t amount);
  // percpu_counter_read(): the shared count only (what get_mm_counter reads).
  int64_t read() const;
  // percpu_counter_sum(): the shared count plus every CPU's delta, under the lock.
  int64_t sum() const;
  // The local delta of one CPU (tests).
  int32_t delta(unsigned cpu) const;

  int32_t batch() const { return batch_; }
  unsigned nr_cpus() const { return nr_cpus_; }
  uint64_t folds() const { return folds_.load(std::memory_order_relaxed); }

 private:
  // struct percpu_counter's own line: lock + count.
  struct alignas(64) Shared {
    mutable SpinLock lock;
    int64_t count GUARDED_BY(lock) = 0;
  };
  // One CPU's s32 (a percpu allocation: never on a line with another CPU's).
  struct alignas(64) Slot {
    std::atomic<int32_t> delta{0};
  };

  unsigned nr_cpus_;
  int32_t batch_;
  Shared shared_;
  std::unique_ptr<Slot[]> counters_;
  std::atomic<uint64_t> folds_{0};  // model statistic, not part of the kernel's struct
  LineId line_ = kNoLine;
  LineId first_slot_line_ = kNoLine;
};

}  // namespace faultline::mm
