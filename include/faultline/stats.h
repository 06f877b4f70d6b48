// stats.h — results: the counters of one run under their kernel names, and
// a run of the model beside the host kernel's (compare.h makes them; the
// printers of report/ read them and nothing else).
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "util/spread.h"

namespace faultline {

struct Counter {
  std::string name;  // kernel name (pgpgin, pgmajfault, minflt, ...) or model.*
  double value = 0;
};

// The value of the counter called name in cs, or fallback if there is none.
inline double counter_value(const std::vector<Counter>& cs, const std::string& name,
                            double fallback = 0) {
  for (const Counter& c : cs) {
    if (c.name == name) return c.value;
  }
  return fallback;
}

// One file of a run that has several (a recording): the counters of what
// the accesses to that file caused, reclaim of other files' pages included.
struct FileResult {
  std::string path;
  std::vector<Counter> counters;  // the run's kernel and task counters, in its order
  double get(const std::string& name, double fallback = 0) const {
    return counter_value(counters, name, fallback);
  }
};

// One seed's run of a case and variant repeated with model.repetitions.
struct Repetition {
  uint64_t seed = 0;  // its access.seed
  std::vector<Counter> counters;
  double get(const std::string& name) const { return counter_value(counters, name); }
};

// The counter that decides whether repetitions fell on different sides of
// a threshold, and by what factor their values must differ to say so.
inline constexpr const char* kOutcomeCounter = "pgpgin";
inline constexpr double kOutcomeFactor = 2.0;

// A run over time (model.timeline): one row per sample, in the order of
// `columns`; the first row is taken before the first access, the last after
// the last one. `every` says how often samples were taken ("1000 accesses",
// "0.01 s"); a long run keeps every other sample, and doubles the step,
// each time it reaches kMaxTimelineRows.
struct Timeline {
  std::string every;
  std::vector<std::string> columns;
  std::vector<std::vector<double>> rows;
  bool empty() const { return rows.empty(); }
  // The column's index, or columns.size() if there is none of that name.
  size_t column(const std::string& name) const {
    for (size_t i = 0; i < columns.size(); ++i) {
      if (columns[i] == name) return i;
    }
    return columns.size();
  }
};
inline constexpr size_t kMaxTimelineRows = 4096;

struct RunResult {
  std::string case_name;  // row of the matrix ("random", "stride1021")
  std::string variant;    // column ("baseline", "P1+P2")
  std::vector<std::pair<std::string, std::string>> config;  // effective keys
  // The counters of the run; of repeated runs, each counter's median.
  std::vector<Counter> counters;  // stable order
  std::vector<FileResult> files;  // per file (medians too); empty: one file
  // Two or more: every seed's own counters, in seed order. Empty: one run.
  std::vector<Repetition> repetitions;
  // model.timeline: the run over time (of the planned seed when repeated).
  Timeline timeline;

  // The value of a counter, or `fallback` if the run has none of that name.
  double get(const std::string& name, double fallback = 0) const {
    return counter_value(counters, name, fallback);
  }
  // A counter's median, min and max over the repetitions (all its value
  // when the run was not repeated).
  Spread spread(const std::string& name) const {
    if (repetitions.empty()) {
      const double v = get(name);
      return {v, v, v};
    }
    std::vector<double> values;
    for (const Repetition& r : repetitions) values.push_back(r.get(name));
    return spread_of(std::move(values));
  }
  // The repetitions (indices) grouped by outcome: several groups when their
  // kOutcomeCounter values differ by more than kOutcomeFactor
  // (split_by_factor). One group or none when there is one outcome.
  std::vector<std::vector<size_t>> outcomes() const {
    std::vector<double> values;
    for (const Repetition& r : repetitions) values.push_back(r.get(kOutcomeCounter));
    std::vector<std::vector<size_t>> groups = split_by_factor(values, kOutcomeFactor);
    for (std::vector<size_t>& g : groups) std::sort(g.begin(), g.end());  // seed order
    return groups;
  }
  const std::string* config_value(const std::string& key) const {
    for (const auto& [k, v] : config) {
      if (k == key) return &v;
    }
    return nullptr;
  }
};

struct CompareRow {
  std::string counter;
  double model = 0;
  Spread kernel;
  double error = 0;       // (model - kernel median) / kernel median; 0 when both are 0
  double tolerance = -1;  // relative; < 0: shown, not judged
  bool within = true;
  // A recording's program itself (has_program): its counter, and the model's
  // error against it, judged by the same tolerance (program_judged; not
  // minflt, which also counts the program's libraries and heap).
  bool has_program = false;
  Spread program;
  double program_error = 0;
  bool program_judged = false;
  bool program_within = true;
};

struct CompareCase {
  std::string scenario;
  std::string case_name;
  std::string variant;
  std::string kernel_release;
  std::string model_profile;
  RunResult model;
  std::vector<CompareRow> rows;
  bool judged = false;  // at least one counter has a tolerance
  bool pass = true;     // every judged counter is within tolerance
  // elapsed_s against the kernel's median, within probe.time_tolerance
  // (time_judged: the kernel's access loop took some time, and the model
  // estimated it).
  bool time_judged = false;
  bool time_pass = true;
  // A recording whose program was run: whether the model's pgpgin and majflt
  // are within tolerance of the program's own (its minflt also counts its
  // anonymous memory and libraries, so it is shown, not judged).
  bool has_program = false;
  bool program_pass = true;
  std::vector<std::string> notes;
  std::vector<std::string> kernel_event_files;
  std::string model_event_file;
  double model_wall_s = 0;  // how long the model took to compute the run (not a counter:
                            // it varies from run to run, so it stays out of RunResult)
};

}  // namespace faultline
