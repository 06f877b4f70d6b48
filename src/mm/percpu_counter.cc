#include "mm/percpu_counter.h"

#include <cstdlib>

#include "util/check.h"

namespace faultline::mm {

PercpuCounter::PercpuCounter(unsigned nr_cpus, int32_t batch)
    : nr_cpus_(nr_cpus), batch_(batch), counters_(std::make_unique<Slot[]>(nr_cpus)) {
  FAULTLINE_CHECK(nr_cpus >= 1 && batch >= 1);
}

void PercpuCounter::instrument(CoherenceTracker& coh, std::string_view group,
                               std::string_view percpu_group) {
  line_ = coh.add_line(group);
  first_slot_line_ = coh.add_lines(percpu_group, nr_cpus_);
}

bool PercpuCounter::add(CpuCtx& cpu, int64_t amount) {
  FAULTLINE_DCHECK(cpu.cpu < nr_cpus_);
  std::atomic<int32_t>& local = counters_[cpu.cpu].delta;
  if (first_slot_line_ != kNoLine) cpu.write(first_slot_line_ + cpu.cpu);
  // Only this CPU writes its delta, so a load and a store stand for the
  // kernel's this_cpu_try_cmpxchg loop.
  const int64_t count = local.load(std::memory_order_relaxed);
  if (std::llabs(count + amount) < batch_) {
    local.store(static_cast<int32_t>(count + amount), std::memory_order_relaxed);
    return false;
  }
  cpu.write(line_);
  SpinLockGuard g(&shared_.lock);
  shared_.count += count + amount;
  local.store(0, std::memory_order_relaxed);
  folds_.fetch_add(1, std::memory_order_relaxed);
  return true;
}

int64_t PercpuCounter::read() const {
  SpinLockGuard g(&shared_.lock);
  return shared_.count;
}

int64_t PercpuCounter::sum() const {
  SpinLockGuard g(&shared_.lock);
  int64_t s = shared_.count;
  for (unsigned c = 0; c < nr_cpus_; ++c) s += counters_[c].delta.load(std::memory_order_relaxed);
  return s;
}

int32_t PercpuCounter::delta(unsigned cpu) const {
  return counters_[cpu].delta.load(std::memory_order_relaxed);
}

}  // namespace faultline::mm
