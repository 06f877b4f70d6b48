// simulator.h — runs the planned runs of a scenario on the model.
#pragma once

#include <string>
#include <vector>

#include "faultline/scenario.h"
#include "faultline/stats.h"
#include "util/status.h"

namespace faultline {

struct SimOptions {
  int jobs = 0;           // runs in parallel; 0: one per core
  bool progress = true;   // a progress line on stderr after two seconds
  std::string trace_dir;  // if set, the model's tracepoints of each run go here
};

// Runs every planned run; results come back in plan order whatever the
// number of jobs, so reports are byte-identical for the same input.
Result<std::vector<RunResult>> simulate(const std::vector<PlannedRun>& runs,
                                        const SimOptions& opts);

}  // namespace faultline
