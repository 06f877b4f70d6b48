// fuzz_sweep_args.cc — the --vary parser of faultline sweep: each line of
// the input is one --vary argument; the axes that parse are expanded over
// a small plan, as the sweep expands them.
#include <cstddef>
#include <cstdint>

#include "cli/sweep_args.h"
#include "faultline/scenario.h"
#include "fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace faultline;
  static const std::vector<PlannedRun> plan = [] {
    Scenario sc;
    sc.name = "fuzz";
    auto runs = plan_runs(sc, {"file.size=64MiB", "machine.memory=1GiB"});
    return runs.ok() ? *runs : std::vector<PlannedRun>{};
  }();
  std::vector<report::SweepAxis> axes;
  size_t combinations = 1;
  for (const std::string& line : fuzz::lines({reinterpret_cast<const char*>(data), size})) {
    auto axis = cli::parse_vary(line);
    if (!axis.ok()) continue;
    if (axis->values.empty() || axis->values.size() > cli::kMaxSweepValues) __builtin_trap();
    // The CLI refuses more than 4096 points; 256 run the same code at a
    // sixteenth of the cost, so no input nears the 1 s limit under ASan.
    if (combinations * axis->values.size() > 256) break;
    combinations *= axis->values.size();
    axes.push_back(*axis);
  }
  if (!axes.empty()) (void)cli::expand_sweep(plan, axes, cli::sweep_points(axes));
  return 0;
}
