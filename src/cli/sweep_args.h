// sweep_args.h — the input of `faultline sweep`: --vary KEY=VALUES parsed
// into axes, their cartesian product, and the planned runs with every
// point of the product applied on top of the scenario's own runs.
//
//   --vary access.stride=1021,2053,4099        a list
//   --vary device.read_ahead_kb=128..8192*2    a range by factor: 128, 256, ..., 8192
//   --vary machine.memory=2GiB..8GiB+2GiB      a range by step: 2, 4, 6, 8 GiB
//   --vary mapping.madvise=normal,random       any key; ranges for numeric keys only
#pragma once

#include <string>
#include <vector>

#include "faultline/scenario.h"
#include "report/sweep_report.h"
#include "util/status.h"

namespace faultline::cli {

// The most values one --vary may expand to.
inline constexpr size_t kMaxSweepValues = 1000;

// Parses "KEY=V1,V2,..." where an element may be START..END*FACTOR or
// START..END+STEP (numeric keys). Every value is checked against the key
// the way --set would check it; errors name the key and the value.
Result<report::SweepAxis> parse_vary(const std::string& arg);

// Every combination of the axes' values; the first axis varies slowest.
std::vector<std::vector<size_t>> sweep_points(const std::vector<report::SweepAxis>& axes);

struct SweepPlan {
  std::vector<PlannedRun> runs;   // by case, then point, then variant
  std::vector<size_t> run_point;  // the index into the points of each run
};

// Applies every point on top of every planned run, and validates each
// configuration; errors name the point, case and variant.
Result<SweepPlan> expand_sweep(const std::vector<PlannedRun>& plan,
                               const std::vector<report::SweepAxis>& axes,
                               const std::vector<std::vector<size_t>>& points);

}  // namespace faultline::cli
