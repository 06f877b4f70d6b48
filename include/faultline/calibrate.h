// calibrate.h — a machine profile measured on this machine.
//
// The probe times a set of workloads on the host kernel (by default
// kCalibrationScenarioToml: tmpfs and warm-cache faults, read(2) of a warm
// file, cold reads of several sizes, reclaim under a cgroup limit, the same
// random windows with and without a limit), and the model's device and CPU
// costs are fitted to those times: the keys of
// kFittedKeys, so that the model's elapsed_s of each workload comes as close
// as it can to the kernel's median. The kernel's own time per folio that
// readahead adds is measured beside them from its tracepoints
// (InsertionTiming), and reported against the fitted cpu.add_folio_ns, or
// held as its value. The result is a machine profile (scenario.h) that run,
// sweep and compare load with --machine.
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
  // Keys of kFittedKeys measured otherwise (KEY, value): held at that value,
  // not searched.
  std::vector<std::pair<std::string, double>> measured;
  // calibrate(): hold cpu.add_folio_ns at the traced insertion time
  // (InsertionTiming) instead of fitting it.
  bool hold_insertion = false;
};

// Fits kFittedKeys (and the queue depth) to the points, starting from the
// first point's configuration: a pattern search in the logarithm of each
// key that minimises the mean square of ln(model / kernel median). A key the
// points do not depend on keeps its starting value.
Result<FitResult> fit_machine(const std::vector<FitPoint>& points, const FitOptions& opts);

extern const char* const kCalibrationScenarioToml;

// The kernel's own time per folio that readahead adds, read off its
// tracepoints: page_cache_ra_unbounded() allocates and adds a window's
// folios one after another before it submits their read, so the
// mm_filemap_add_to_page_cache events of one window, at consecutive
// indices, are spaced by the insertion's CPU time (and one tracepoint's).
struct InsertionTiming {
  size_t windows = 0;  // runs of at least kMinTimedFolios insertions
  uint64_t folios = 0;
  double median_ns = 0, q1_ns = 0, q3_ns = 0;  // ns per folio, over the windows
};
inline constexpr uint64_t kMinTimedFolios = 256;
// Reads tracefs text files (the probe's --trace-dir output). A file that
// cannot be read is an error naming it; none with a window gives windows 0.
Result<InsertionTiming> insertion_timing(const std::vector<std::string>& trace_files);
// The traced workload calibrate measures it with: cold random 8 MiB
// read-around windows.
extern const char* const kInsertionScenarioToml;

struct Calibration {
  std::string kernel_release;
  std::string host;  // uname -n
  std::vector<FitPoint> points;
  InsertionTiming insertion;    // windows 0: not measured (no tracefs)
  bool insertion_held = false;  // cpu.add_folio_ns is insertion.median_ns
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
