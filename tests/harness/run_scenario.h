// run_scenario.h — load a scenario file and run all of it on the model, the
// way the scenario and golden tests both need it: one job, no progress line.
#pragma once

#include <string>
#include <vector>

#include "faultline/scenario.h"
#include "faultline/simulator.h"

namespace faultline::testing {

struct ScenarioRun {
  Scenario scenario;
  std::vector<RunResult> runs;
};

inline Result<ScenarioRun> run_scenario_file(const std::string& path) {
  auto sc = load_scenario(path);
  if (!sc.ok()) return sc.status();
  auto plan = plan_runs(*sc, {});
  if (!plan.ok()) return plan.status();
  SimOptions opts;
  opts.jobs = 1;
  opts.progress = false;
  auto runs = simulate(*plan, opts);
  if (!runs.ok()) return runs.status();
  return ScenarioRun{std::move(*sc), std::move(*runs)};
}

}  // namespace faultline::testing
