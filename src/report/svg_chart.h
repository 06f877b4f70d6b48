// svg_chart.h — a self-contained SVG line chart, written without external
// tools or libraries: axes with ticks and labels, one <polyline> per series,
// a legend and a title. The same chart gives the same bytes.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace faultline::report {

struct ChartSeries {
  std::string name;
  std::vector<std::pair<double, double>> points;  // (x, y); non-finite ones are left out
};

struct LineChart {
  std::string title;
  std::string subtitle;
  std::string x_label;
  std::string y_label;
  // Non-empty: the x axis is categorical, and a point's x is the index of
  // its category in this list.
  std::vector<std::string> categories;
  // The x values are byte sizes: ticks are powers of two, labelled "4KiB".
  bool x_bytes = false;
  std::vector<ChartSeries> series;
};

// Whether the x axis is logarithmic: a numeric axis whose finite x values
// are all positive and span more than a factor of 30.
bool chart_log_x(const LineChart& chart);

// The chart as a complete SVG document.
std::string render_svg(const LineChart& chart);

}  // namespace faultline::report
