// pft.h — the pft and lat_pagefault workloads on this machine's kernel: tasks write-fault their
// own slice of anonymous memory, then zap it with MADV_DONTNEED, pass after
// pass (the seed 2 and seed 3 benchmarks' shape). No root is needed.
#pragma once

#include <cstdint>
#include <string>

#include "probe/probe.h"

namespace faultline::probe {

struct PftRequest {
  uint32_t threads = 1;  // tasks, 1..64
  workload::TaskSharing tasks = workload::TaskSharing::kThreads;
  uint64_t region_bytes = 64ULL << 20;  // per pass, split evenly between the tasks
  int passes = 4;                       // counted passes (one warm pass before them is not)
  bool zap = true;                      // MADV_DONTNEED after each counted pass
  int repetitions = 3;
};

// Counters per repetition: minflt and majflt (the tasks' rusage), pgfault
// (/proc/vmstat), elapsed_s (first start to last end of the counted passes)
// and faults_per_s.
Status run_pft(const PftRequest& req, Result* out, const ProgressFn& progress);

// lat_pagefault: the same tasks and passes, but read faults on a cached
// shmem file (memfd_create, order-0 folios, as the model's lat_pagefault
// assumes), so every fault maps a fault-around window. Adds ns_per_fault.
Status run_lat_pagefault(const PftRequest& req, Result* out, const ProgressFn& progress);

}  // namespace faultline::probe
