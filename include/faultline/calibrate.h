// calibrate.h — a machine profile measured on this machine.
//
// The probe times a set of workloads on the host kernel (by default
// kCalibrationScenarioToml: tmpfs and warm-cache faults, read(2) of a warm
// file, cold reads of several sizes, reclaim under a cgroup limit, the same
// random windows with and without a limit), and the model's device and CPU
// costs are fitted to those times: the keys of
// kFittedKeys, so that the model's elapsed_s of each workload comes as close
// as it can to the kernel's median. The result is a machine profile
// (scenario.h) that run, sweep and compare load with --machine.
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "faultline/compare.h"
#include "faultline/scenario.h"
#include "util/spread.h"
#include "util/status.h"

namespace faultline {

// A workload of the fit: the model's run of it, and the kernel's time.
struct FitPoint {
  std::string name;  // the case's name
  PlannedRun run;
  Spread kernel_s;  // the kernel's elapsed_s over its repetitions
};

// The continuous keys the fit moves, with the range it searches; the
// device's queue depth is fitted over kFittedQueueDepths. A key with a
// second start (alt > 0) is searched from the starting profile's value and
// from alt, and the better fit kept: its effect can be taken up by other
// keys near its lower bound, so the search from there alone stays there.
struct FittedKey {
  const char* key;
  double lo, hi;
  double alt = 0;
};
extern const std::vector<FittedKey> kFittedKeys;
extern const std::vector<uint32_t> kFittedQueueDepths;

struct FitResult {
  std::vector<std::pair<std::string, std::string>> keys;  // KEY, VALUE as a profile writes them
  std::vector<double> model_s_start;  // each point's model time with the starting keys
  std::vector<double> model_s;        // ... and with the fitted ones
  double rms_start = 0, rms = 0;      // root mean square of ln(model / kernel median)
  size_t evaluations = 0;             // model runs of the whole set
};

struct FitOptions {
  int jobs = 0;  // model runs in parallel; 0: one per core
  std::function<void(const std::string&)> progress;
};

// Fits kFittedKeys (and the queue depth) to the points, starting from the
// first point's configuration: a pattern search in the logarithm of each
// key that minimises the mean square of ln(model / kernel median). A key the
// points do not depend on keeps its starting value.
Result<FitResult> fit_machine(const std::vector<FitPoint>& points, const FitOptions& opts);

extern const char* const kCalibrationScenarioToml;

struct Calibration {
  std::string kernel_release;
  std::string host;  // uname -n
  std::vector<FitPoint> points;
  FitResult fit;
};

// Probes the workloads (a scenario; its cases are the points) and fits.
Result<Calibration> calibrate(const Scenario& workloads, const CompareOptions& probe,
                              const FitOptions& fit);

// The machine profile of a calibration, as TOML, with each workload's
// kernel and model times in comments.
std::string format_machine_profile(const Calibration& c);
// The workloads, the kernel's times and the model's before and after.
std::string format_calibration_table(const Calibration& c);

}  // namespace faultline
