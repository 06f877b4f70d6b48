// compare.h — the model and this machine's kernel on the same scenario.
//
// For every run of a scenario the probe replays the model's access stream
// on the host kernel (median, min and max over repetitions) and each counter
// is put beside the model's, with its relative error and whether it is
// within the scenario's tolerance.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "faultline/scenario.h"
#include "faultline/stats.h"
#include "util/status.h"

namespace faultline {

struct CompareOptions {
  int repetitions = 0;        // 0: the scenario's probe.repetitions
  bool trace_events = false;  // record the kernel's and the model's tracepoints
  std::string output_dir;     // where traces go (required with trace_events)
  std::string workspace_root = "/var/tmp/faultline-probe";
  // A recording's runs: also run the recorded program itself (its command,
  // in its directory, on copies of its files), a third column beside the
  // model and the replay.
  bool run_program = true;
  std::function<void(const std::string&)> progress;  // one line per step
};

// Runs the model and the probe on every run of the scenario. Variants that
// change kernel.* switches cannot be run on the host and are left out, with
// a note. Probe failures (no root, no loop device) are returned as errors.
Result<std::vector<CompareCase>> compare_scenario(const Scenario& sc,
                                                  const std::vector<std::string>& overrides,
                                                  const CompareOptions& opts);

// Only the probe: the kernel's counters for every run of the scenario, as
// RunResults whose counters are the medians (and .min/.max companions).
Result<std::vector<RunResult>> probe_scenario(const Scenario& sc,
                                              const std::vector<std::string>& overrides,
                                              const CompareOptions& opts);

// One run of a scenario on this machine's kernel, and the model's run of it
// as compare makes it (on this machine's memory and device limits).
struct ProbedCase {
  PlannedRun model_run;
  RunResult kernel;  // the kernel's counters: medians with .min/.max companions
  std::string kernel_release;
  // With opts.trace_events: the kernel's tracepoint files, in
  // opts.output_dir.
  std::vector<std::string> kernel_event_files;
};
Result<std::vector<ProbedCase>> probe_for_model(const Scenario& sc,
                                                const std::vector<std::string>& overrides,
                                                const CompareOptions& opts);

// A program on this machine's kernel: command (run by /bin/sh -c in the
// current directory) with each of files copied to the probe's file system
// and mounted over its path, with the configuration's file system, device,
// cache and memory limit (overrides on the defaults), as a RunResult of the
// program's counters (medians with .min/.max).
Result<RunResult> probe_command(const std::string& command, const std::vector<std::string>& files,
                                const std::vector<std::string>& overrides,
                                const CompareOptions& opts);

}  // namespace faultline
