// timeline.h — the run over time (model.timeline): a sample of the
// machine's gauges and the run's counters every N accesses or every
// interval of modelled time.
#pragma once

#include <cstdint>
#include <functional>

#include "faultline/config.h"
#include "faultline/stats.h"
#include "mm/mm.h"
#include "mm/vmstat.h"

namespace faultline::engine {

// X(name, value, doc): the columns of a timeline, in order, and how
// TimelineSampler::sample() gets each from its locals: done (accesses
// replayed), d (the run's vm events so far), minflt, majflt, cached (pages
// in the page cache), lru (the lruvec), mmap_miss (the largest of an open
// file). Counters are the run's so far (the same deltas its report gives at
// the end); gauges are the machine's state at the sample.
#define FAULTLINE_TIMELINE_COLUMNS(X)                                                \
  X(accesses, done, "accesses replayed so far")                                      \
  X(elapsed_s, (k_.now_ns() - t0_ns_) / 1e9, "the elapsed-time estimate so far")     \
  X(pgpgin, d[VmEvent::pgpgin], "KiB read so far")                                   \
  X(majflt, majflt, "major faults so far")                                           \
  X(minflt, minflt, "minor faults so far")                                           \
  X(workingset_refault_file, d[VmEvent::workingset_refault_file], "refaults so far") \
  X(page_cache_pages, cached, "pages in the page cache now, every file")             \
  X(active_pages, lru.nr_active, "pages on the active file LRU now")                 \
  X(inactive_pages, lru.nr_inactive, "pages on the inactive file LRU now")           \
  X(mmap_miss, mmap_miss, "the largest f_ra.mmap_miss of an open file now")          \
  X(ra_readaround_windows, d[VmEvent::ra_readaround], "read-around windows so far")  \
  X(ra_async_windows, d[VmEvent::ra_async], "async readahead windows so far")        \
  X(ra_skipped_mmap_miss, d[VmEvent::ra_skipped_mmap_miss],                          \
    "faults past MMAP_LOTSAMISS that read one folio, so far")

// The column names, in FAULTLINE_TIMELINE_COLUMNS order.
const std::vector<std::string>& timeline_columns();

class TimelineSampler {
 public:
  // What the run has faulted so far: (minflt, majflt).
  using Faults = std::function<std::pair<uint64_t, uint64_t>()>;

  // Samples k from now on; `before` and t0_ns are the start of the run's
  // counters and of its elapsed time. Off unless cfg.model.timeline().
  TimelineSampler(const ModelConfig& cfg, const mm::Kernel& k, const mm::VmStat& before,
                  double t0_ns, Faults faults);

  // After an access; `done` accesses have been replayed in all.
  // (The engine has settled the access's reclaim: Kernel::settle_reclaim.)
  void after_access(uint64_t done) {
    if (on_ && (done >= next_access_ || k_.now_ns() >= next_ns_)) [[unlikely]]
      sample(done);
  }
  // Whether it samples at all (accesses may then be replayed in batches).
  bool on() const { return on_; }
  // The last sample (if the run has not just taken it), and the timeline.
  Timeline finish(uint64_t done);

 private:
  void sample(uint64_t done);
  void thin();  // every other row, the step doubled

  bool on_;
  const mm::Kernel& k_;
  mm::VmStat before_;
  double t0_ns_;
  Faults faults_;
  uint64_t step_accesses_ = 0;
  double step_ns_ = 0;
  uint64_t next_access_ = UINT64_MAX;
  double next_ns_ = 1e300;
  uint64_t last_done_ = UINT64_MAX;
  Timeline t_;
};

}  // namespace faultline::engine
