#include "report/svg_chart.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "util/units.h"

namespace faultline::report {
namespace {

// Tableau 10: distinguishable, and readable by most colour-blind readers.
constexpr const char* kColours[] = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
                                    "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"};
constexpr size_t kNrColours = sizeof kColours / sizeof kColours[0];
// After ten series the colours repeat with a dash pattern.
constexpr const char* kDashes[] = {"", "7,4", "2,3"};

constexpr double kWidth = 760;  // the plot and its axes, without the legend
constexpr double kHeight = 460;
constexpr double kTop = 64;
constexpr double kBottom = 58;
constexpr double kRightPad = 16;
constexpr double kCharWidth = 6.6;  // average glyph width of 11-12px sans-serif
constexpr double kLegendRow = 18;

std::string xml_escape(const std::string& s) {
  std::string o;
  for (char c : s) {
    switch (c) {
      case '&':
        o += "&amp;";
        break;
      case '<':
        o += "&lt;";
        break;
      case '>':
        o += "&gt;";
        break;
      case '"':
        o += "&quot;";
        break;
      case '\'':
        o += "&apos;";
        break;
      default:
        o += c;
    }
  }
  return o;
}

// A coordinate: one decimal, never "-0.0".
std::string coord(double v) {
  std::string s = fmt::format("{:.1f}", v);
  return s == "-0.0" ? "0.0" : s;
}

std::string plain_number(double v) {
  if (std::fabs(v) < 1e15 && v == std::floor(v))
    return fmt::format("{}", static_cast<long long>(v));
  return fmt::format("{:.4g}", v);
}

struct Tick {
  double value;  // in axis units (log10 of x on a log axis)
  std::string label;
};

// A step of 1, 2 or 5 times a power of ten giving about `target` intervals.
double nice_step(double range, int target) {
  const double raw = range / target;
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  const double f = raw / mag;
  return (f < 1.5 ? 1 : f < 3 ? 2 : f < 7 ? 5 : 10) * mag;
}

std::vector<Tick> linear_ticks(double lo, double hi, double step, bool bytes) {
  std::vector<Tick> out;
  const int decimals = std::max(0, static_cast<int>(-std::floor(std::log10(step) + 1e-9)));
  for (double k = std::ceil(lo / step - 1e-9); k * step <= hi + step * 1e-9; k += 1) {
    const double v = std::fabs(k * step) < step * 1e-9 ? 0.0 : k * step;  // no "-0.00"
    const std::string label = bytes && v >= 0 ? format_size(static_cast<uint64_t>(std::llround(v)))
                                              : fmt::format("{:.{}f}", v, decimals);
    out.push_back({v, label});
  }
  return out;
}

// Ticks of a log axis over [lo, hi] (actual values, lo > 0): powers of ten
// when at least two fit (never for bytes), else powers of two, thinned to
// at most eight.
std::vector<Tick> log_ticks(double lo, double hi, bool bytes) {
  std::vector<Tick> out;
  if (!bytes) {
    for (int e = static_cast<int>(std::ceil(std::log10(lo) - 1e-9));
         e <= static_cast<int>(std::floor(std::log10(hi) + 1e-9)); ++e) {
      out.push_back({static_cast<double>(e), plain_number(std::pow(10.0, e))});
    }
    if (out.size() >= 2) return out;
    out.clear();
  }
  const int e0 = static_cast<int>(std::ceil(std::log2(lo) - 1e-9));
  const int e1 = static_cast<int>(std::floor(std::log2(hi) + 1e-9));
  const int every = std::max(1, (e1 - e0 + 8) / 8);
  for (int e = e0; e <= e1; e += every) {
    const double v = std::ldexp(1.0, e);
    out.push_back(
        {std::log10(v), bytes && e >= 0 ? format_size(uint64_t{1} << e) : plain_number(v)});
  }
  return out;
}

bool finite_point(const std::pair<double, double>& p) {
  return std::isfinite(p.first) && std::isfinite(p.second);
}

}  // namespace

bool chart_log_x(const LineChart& chart) {
  if (!chart.categories.empty()) return false;
  double lo = INFINITY, hi = -INFINITY;
  for (const ChartSeries& s : chart.series) {
    for (const auto& p : s.points) {
      if (!finite_point(p)) continue;
      if (p.first <= 0) return false;
      lo = std::min(lo, p.first);
      hi = std::max(hi, p.first);
    }
  }
  return hi > 0 && hi / lo > 30;
}

std::string render_svg(const LineChart& chart) {
  const bool log_x = chart_log_x(chart);
  const bool categorical = !chart.categories.empty();

  // The data's extent, in axis units (log10 on a log axis).
  double x_lo = INFINITY, x_hi = -INFINITY, y_lo = INFINITY, y_hi = -INFINITY;
  for (const ChartSeries& s : chart.series) {
    for (const auto& p : s.points) {
      if (!finite_point(p)) continue;
      const double x = log_x ? std::log10(p.first) : p.first;
      x_lo = std::min(x_lo, x);
      x_hi = std::max(x_hi, x);
      y_lo = std::min(y_lo, p.second);
      y_hi = std::max(y_hi, p.second);
    }
  }
  const bool empty = !(x_lo <= x_hi);
  if (empty) x_lo = 0, x_hi = 1, y_lo = 0, y_hi = 1;

  // x axis: the data's extent (categories: their slots), ticks inside it.
  std::vector<Tick> x_ticks;
  if (categorical) {
    x_lo = -0.5;
    x_hi = static_cast<double>(chart.categories.size()) - 0.5;
    for (size_t i = 0; i < chart.categories.size(); ++i)
      x_ticks.push_back({static_cast<double>(i), chart.categories[i]});
  } else if (log_x) {
    x_ticks = log_ticks(std::pow(10.0, x_lo), std::pow(10.0, x_hi), chart.x_bytes);
  } else {
    if (x_hi - x_lo <= 0) x_lo -= 1, x_hi += 1;
    // Sizes step by a power of two (1 GiB, not 0.93 GiB); other values by 1, 2 or 5.
    const double step = chart.x_bytes ? std::exp2(std::ceil(std::log2((x_hi - x_lo) / 6)))
                                      : nice_step(x_hi - x_lo, 6);
    x_ticks = linear_ticks(x_lo, x_hi, step, chart.x_bytes);
  }
  if (!categorical) {
    // 3 % of room on each side, so the end points are not on the frame.
    const double pad = (x_hi - x_lo) * 0.03;
    x_lo -= pad, x_hi += pad;
  }

  // y axis: from zero when every value is positive, out to whole ticks.
  if (y_lo > 0) y_lo = 0;
  if (y_hi <= y_lo) y_hi = y_lo + 1;
  const double y_step = nice_step(y_hi - y_lo, 6);
  y_lo = std::floor(y_lo / y_step + 1e-9) * y_step;
  y_hi = std::ceil(y_hi / y_step - 1e-9) * y_step;
  const std::vector<Tick> y_ticks = linear_ticks(y_lo, y_hi, y_step, false);

  size_t y_label_chars = 1;
  for (const Tick& t : y_ticks) y_label_chars = std::max(y_label_chars, t.label.size());
  const double left = 34 + kCharWidth * static_cast<double>(y_label_chars);
  size_t name_chars = 4;
  for (const ChartSeries& s : chart.series) name_chars = std::max(name_chars, s.name.size());
  const double legend_w = std::min(360.0, 44 + kCharWidth * static_cast<double>(name_chars));
  const double width = kWidth + legend_w;
  const double height =
      std::max(kHeight, kTop + kBottom + kLegendRow * static_cast<double>(chart.series.size() + 1));
  const double plot_l = left, plot_r = kWidth - kRightPad;
  const double plot_t = kTop, plot_b = height - kBottom;
  auto px = [&](double x) { return plot_l + (x - x_lo) / (x_hi - x_lo) * (plot_r - plot_l); };
  auto py = [&](double y) { return plot_b - (y - y_lo) / (y_hi - y_lo) * (plot_b - plot_t); };

  std::string o;
  o += fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" "
      "viewBox=\"0 0 {0} {1}\" font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\" "
      "font-size=\"12\">\n",
      coord(width), coord(height));
  o += "<title>" + xml_escape(chart.title) + "</title>\n";
  o += fmt::format("<rect x=\"0\" y=\"0\" width=\"{}\" height=\"{}\" fill=\"#ffffff\"/>\n",
                   coord(width), coord(height));
  o += fmt::format("<text x=\"{}\" y=\"24\" font-size=\"16\" font-weight=\"bold\">{}</text>\n",
                   coord(plot_l), xml_escape(chart.title));
  if (!chart.subtitle.empty()) {
    o += fmt::format("<text x=\"{}\" y=\"44\" fill=\"#555555\">{}</text>\n", coord(plot_l),
                     xml_escape(chart.subtitle));
  }

  // Grid and ticks.
  o += "<g stroke=\"#e3e3e3\" stroke-width=\"1\">\n";
  for (const Tick& t : y_ticks) {
    o += fmt::format("<line x1=\"{0}\" y1=\"{2}\" x2=\"{1}\" y2=\"{2}\"/>\n", coord(plot_l),
                     coord(plot_r), coord(py(t.value)));
  }
  for (const Tick& t : x_ticks) {
    o += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\"/>\n", coord(px(t.value)),
                     coord(plot_t), coord(plot_b));
  }
  o += "</g>\n";
  o += fmt::format(
      "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"#333333\"/>\n",
      coord(plot_l), coord(plot_t), coord(plot_r - plot_l), coord(plot_b - plot_t));
  o += "<g fill=\"#333333\" font-size=\"11\">\n";
  for (const Tick& t : y_ticks) {
    o += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>\n", coord(plot_l - 6),
                     coord(py(t.value) + 4), xml_escape(t.label));
  }
  for (const Tick& t : x_ticks) {
    o += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n",
                     coord(px(t.value)), coord(plot_b + 16), xml_escape(t.label));
  }
  o += "</g>\n";
  const std::string x_label = chart.x_label + (log_x ? " (log scale)" : "");
  o += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n",
                   coord((plot_l + plot_r) / 2), coord(height - 16), xml_escape(x_label));
  o += fmt::format(
      "<text x=\"14\" y=\"{0}\" text-anchor=\"middle\" transform=\"rotate(-90 14 "
      "{0})\">{1}</text>\n",
      coord((plot_t + plot_b) / 2), xml_escape(chart.y_label));

  // The series: earlier ones drawn wider, so a later series on top of an
  // identical one (P1 on baseline) leaves the earlier one's edges visible.
  const size_t n = chart.series.size();
  for (size_t i = 0; i < n; ++i) {
    const ChartSeries& s = chart.series[i];
    const char* colour = kColours[i % kNrColours];
    const char* dash = kDashes[(i / kNrColours) % 3];
    const double w = 1.75 + 1.25 * static_cast<double>(std::min<size_t>(n - 1 - i, 4));
    std::vector<std::pair<double, double>> pts;
    for (const auto& p : s.points) {
      if (finite_point(p) && (!log_x || p.first > 0)) pts.push_back(p);
    }
    std::stable_sort(pts.begin(), pts.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    std::string points;
    for (const auto& [x, y] : pts) {
      if (!points.empty()) points += ' ';
      points += coord(px(log_x ? std::log10(x) : x)) + "," + coord(py(y));
    }
    o += fmt::format("<g><title>{}</title>\n", xml_escape(s.name));
    o += fmt::format(
        "<polyline fill=\"none\" stroke=\"{}\" stroke-width=\"{}\" stroke-linejoin=\"round\"{} "
        "points=\"{}\"/>\n",
        colour, coord(w), *dash ? fmt::format(" stroke-dasharray=\"{}\"", dash) : "", points);
    for (const auto& [x, y] : pts) {
      o += fmt::format("<circle cx=\"{}\" cy=\"{}\" r=\"3\" fill=\"{}\"/>\n",
                       coord(px(log_x ? std::log10(x) : x)), coord(py(y)), colour);
    }
    o += "</g>\n";
  }

  // The legend, right of the plot.
  const double lx = kWidth;
  o += "<g font-size=\"12\">\n";
  for (size_t i = 0; i < chart.series.size(); ++i) {
    const double ly = plot_t + 8 + kLegendRow * static_cast<double>(i);
    const char* dash = kDashes[(i / kNrColours) % 3];
    o += fmt::format(
        "<line x1=\"{0}\" y1=\"{2}\" x2=\"{1}\" y2=\"{2}\" stroke=\"{3}\" "
        "stroke-width=\"3\"{4}/>\n",
        coord(lx), coord(lx + 24), coord(ly), kColours[i % kNrColours],
        *dash ? fmt::format(" stroke-dasharray=\"{}\"", dash) : "");
    o += fmt::format("<text x=\"{}\" y=\"{}\">{}</text>\n", coord(lx + 30), coord(ly + 4),
                     xml_escape(chart.series[i].name));
  }
  o += "</g>\n";
  if (empty) {
    o += fmt::format(
        "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" fill=\"#999999\">no data</text>\n",
        coord((plot_l + plot_r) / 2), coord((plot_t + plot_b) / 2));
  }
  o += "</svg>\n";
  return o;
}

}  // namespace faultline::report
