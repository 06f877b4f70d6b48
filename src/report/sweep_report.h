// sweep_report.h — printers of a sweep (`faultline sweep`): the scenario's
// runs repeated for every value of one or more swept keys. A table of one
// metric (a row per swept value, a column per variant, a table per case),
// JSON and CSV with every counter and the swept values as fields, and an
// SVG line chart of the metric over the first swept key.
#pragma once

#include <string>
#include <vector>

#include "faultline/stats.h"
#include "report/report.h"
#include "report/svg_chart.h"

namespace faultline::report {

// One swept key and its values, in the order they were given.
struct SweepAxis {
  std::string key;                  // "access.stride"
  std::vector<std::string> values;  // as given or generated: "1021", "128MiB", "random"
  std::vector<double> numbers;      // the values as numbers; NaN where not numeric
  bool bytes = false;               // a size key: numbers are bytes
  // Whether every value is a number (the chart then has a numeric x axis).
  bool numeric() const;
};

struct Sweep {
  std::vector<SweepAxis> axes;
  // Every combination of values, one index per axis; the first axis varies slowest.
  std::vector<std::vector<size_t>> points;
  std::string metric;             // the counter of the table and the chart
  std::vector<std::string> sets;  // --set assignments, repeated in the rerun lines
  std::vector<RunResult> runs;    // by case, then point, then variant
  std::vector<size_t> run_point;  // the index into points of each run
};

// "access.stride=1021 device.read_ahead_kb=128": the values of one point.
std::string point_label(const Sweep& sweep, size_t point);

std::string format_sweep_table(const Meta& meta, const Sweep& sweep);
std::string format_sweep_json(const Meta& meta, const Sweep& sweep);
std::string format_sweep_csv(const Sweep& sweep);
// x: the first swept key; y: the metric in counter_unit(); a series per
// variant (per case and variant when there are several cases, and per
// combination of the other swept keys).
LineChart sweep_chart(const Meta& meta, const Sweep& sweep);

}  // namespace faultline::report
