// counters.h — the counters every engine reports, in one order: the
// kernel's vm events (FAULTLINE_VM_EVENTS), the task's own counters
// (rusage faults, RSS), elapsed_s, then the model's events; an engine then
// adds the model.* values only it has.
#pragma once

#include <cstdint>

#include "faultline/stats.h"
#include "mm/mm.h"
#include "mm/vmstat.h"

namespace faultline::engine {

// What the kernel keeps per task and per mm: getrusage's ru_minflt and
// ru_majflt, and the mm's RSS counters in pages.
struct TaskCounters {
  uint64_t min_flt = 0;
  uint64_t maj_flt = 0;
  int64_t rss[mm::NR_MM_COUNTERS] = {};
};

// Appends every counter of a run to r->counters: each VmEvent of `events`
// (a run's deltas), the task counters, and elapsed_s.
void report_counters(const mm::VmStat& events, const TaskCounters& task, double elapsed_s,
                     RunResult* r);
// The same for one file of a run: each VmEvent, then minflt and majflt.
void report_file_counters(const mm::VmStat& events, uint64_t min_flt, uint64_t maj_flt,
                          std::vector<Counter>* out);

}  // namespace faultline::engine
