#include "engine/timeline.h"

#include <algorithm>
#include <cstdio>

namespace faultline::engine {

const std::vector<std::string>& timeline_columns() {
  static const std::vector<std::string> kColumns = {
#define FAULTLINE_X(name, value, doc) #name,
      FAULTLINE_TIMELINE_COLUMNS(FAULTLINE_X)
#undef FAULTLINE_X
  };
  return kColumns;
}

TimelineSampler::TimelineSampler(const ModelConfig& cfg, const mm::Kernel& k,
                                 const mm::VmStat& before, double t0_ns, Faults faults)
    : on_(cfg.timeline()), k_(k), before_(before), t0_ns_(t0_ns), faults_(std::move(faults)) {
  if (!on_) return;
  step_accesses_ = cfg.timeline_accesses;
  step_ns_ = cfg.timeline_interval_s * 1e9;
  if (step_accesses_) next_access_ = step_accesses_;
  if (step_ns_ > 0) next_ns_ = t0_ns_ + step_ns_;
  t_.columns = timeline_columns();
  sample(0);
}

void TimelineSampler::sample(uint64_t done) {
  const mm::VmStat d = k_.vmstat() - before_;
  const auto [minflt, majflt] = faults_();
  uint64_t cached = 0;
  for (const auto& as : k_.address_spaces()) cached += as ? as->nr_cached_pages() : 0;
  uint32_t mmap_miss = 0;
  for (const auto& f : k_.files()) mmap_miss = std::max(mmap_miss, f ? f->f_ra.mmap_miss : 0u);
  using mm::VmEvent;
  const mm::Lruvec& lru = k_.lruvec();
  t_.rows.push_back({
#define FAULTLINE_X(name, value, doc) static_cast<double>(value),
      FAULTLINE_TIMELINE_COLUMNS(FAULTLINE_X)
#undef FAULTLINE_X
  });
  last_done_ = done;
  // The next sample: a step on from this one, in accesses or in modelled
  // time (a long stall of the device may pass several time steps at once).
  if (step_accesses_) next_access_ = done + step_accesses_;
  if (step_ns_ > 0) {
    const double now = k_.now_ns();
    while (next_ns_ <= now) next_ns_ += step_ns_;
  }
  if (t_.rows.size() >= kMaxTimelineRows) thin();
}

void TimelineSampler::thin() {
  // Keep rows 0, 2, 4, ...: the first sample stays, and the step doubles.
  size_t w = 1;
  for (size_t r = 2; r < t_.rows.size(); r += 2) t_.rows[w++] = std::move(t_.rows[r]);
  t_.rows.resize(w);
  // The next sample already due is on the coarser grid too: rows.size() is
  // even here, so the dropped last row was an odd step and the next is even.
  step_accesses_ *= 2;
  step_ns_ *= 2;
  last_done_ = static_cast<uint64_t>(t_.rows.back()[0]);
}

Timeline TimelineSampler::finish(uint64_t done) {
  if (!on_) return {};
  if (last_done_ != done || t_.rows.size() == 1) sample(done);
  char buf[64];
  if (step_accesses_) {
    std::snprintf(buf, sizeof buf, "%llu accesses",
                  static_cast<unsigned long long>(step_accesses_));
  } else {
    std::snprintf(buf, sizeof buf, "%g s", step_ns_ / 1e9);
  }
  t_.every = buf;
  return std::move(t_);
}

}  // namespace faultline::engine
