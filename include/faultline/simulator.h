// simulator.h — runs the planned runs of a scenario on the model.
#pragma once

#include <cstddef>
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
  // If set, where a failed simulate() stores the plan index of the first
  // failed run, the one whose error it returns.
  size_t* failed_run = nullptr;
};

// s with every character but letters, digits, '-' and '.' replaced by '_',
// so that a case or variant name can be part of a file name.
std::string file_safe(const std::string& s);
// The file simulate() writes the tracepoints of a run to, under dir.
std::string model_trace_path(const std::string& dir, const std::string& case_name,
                             const std::string& variant);

// Runs every planned run; results come back in plan order whatever the
// number of jobs, so reports are byte-identical for the same input.
Result<std::vector<RunResult>> simulate(const std::vector<PlannedRun>& runs,
                                        const SimOptions& opts);

}  // namespace faultline
