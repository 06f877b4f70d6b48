// stats.h — the result of one run: counters under their kernel names.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace faultline {

struct Counter {
  std::string name;  // kernel name (pgpgin, pgmajfault, minflt, ...) or model.*
  double value = 0;
};

struct RunResult {
  std::string case_name;  // row of the matrix ("random", "stride1021")
  std::string variant;    // column ("baseline", "P1+P2")
  std::vector<std::pair<std::string, std::string>> config;  // effective keys
  std::vector<Counter> counters;                            // stable order

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

}  // namespace faultline
