// stats.h — results: the counters of one run under their kernel names, and
// a run of the model beside the host kernel's (compare.h makes them; the
// printers of report/ read them and nothing else).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "util/spread.h"

namespace faultline {

struct Counter {
  std::string name;  // kernel name (pgpgin, pgmajfault, minflt, ...) or model.*
  double value = 0;
};

// One file of a run that has several (a recording): the counters of what
// the accesses to that file caused, reclaim of other files' pages included.
struct FileResult {
  std::string path;
  std::vector<Counter> counters;  // the run's kernel and task counters, in its order
  double get(const std::string& name, double fallback = 0) const {
    for (const Counter& c : counters) {
      if (c.name == name) return c.value;
    }
    return fallback;
  }
};

struct RunResult {
  std::string case_name;  // row of the matrix ("random", "stride1021")
  std::string variant;    // column ("baseline", "P1+P2")
  std::vector<std::pair<std::string, std::string>> config;  // effective keys
  std::vector<Counter> counters;                            // stable order
  std::vector<FileResult> files;                            // per file; empty: one file

  // The value of a counter, or `fallback` if the run has none of that name.
  double get(const std::string& name, double fallback = 0) const {
    for (const Counter& c : counters) {
      if (c.name == name) return c.value;
    }
    return fallback;
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
