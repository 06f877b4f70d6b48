// timeline_report.cc — a run's timeline (model.timeline) as CSV, as JSON,
// as two SVG charts, and as the moments a table names: when the page cache
// filled and when read-around first gave way to one-folio reads.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "report/report.h"
#include "report/svg_chart.h"

namespace faultline::report {
namespace {

double at(const Timeline& t, size_t row, const char* column) {
  const size_t c = t.column(column);
  return c < t.columns.size() && c < t.rows[row].size() ? t.rows[row][c] : 0;
}

// The first row where pred holds, or rows.size().
template <typename Pred>
size_t first_row(const Timeline& t, Pred pred) {
  for (size_t i = 0; i < t.rows.size(); ++i) {
    if (pred(i)) return i;
  }
  return t.rows.size();
}

std::string moment(const Timeline& t, size_t row) {
  return fmt::format("access {} ({}s)", format_number(at(t, row, "accesses")),
                     format_number(std::round(at(t, row, "elapsed_s") * 1e3) / 1e3));
}

}  // namespace

std::string format_timeline_csv(const Timeline& t) {
  std::string out;
  for (size_t c = 0; c < t.columns.size(); ++c) out += (c ? "," : "") + t.columns[c];
  out += "\n";
  for (const std::vector<double>& row : t.rows) {
    for (size_t c = 0; c < row.size(); ++c) out += (c ? "," : "") + format_number(row[c]);
    out += "\n";
  }
  return out;
}

std::string timeline_moments(const RunResult& r) {
  const Timeline& t = r.timeline;
  if (t.rows.size() < 2) return {};
  std::string out = fmt::format("{} samples, one every {}", t.rows.size(), t.every);
  const double capacity = r.get("model.cache_capacity_pages", 0);
  if (capacity > 0) {
    // Full: within 2 % of what reclaim lets the cache hold.
    const size_t full =
        first_row(t, [&](size_t i) { return at(t, i, "page_cache_pages") >= 0.98 * capacity; });
    if (full < t.rows.size()) out += "; page cache full at " + moment(t, full);
  }
  const size_t refault =
      first_row(t, [&](size_t i) { return at(t, i, "workingset_refault_file") > 0; });
  if (refault < t.rows.size()) out += "; first refaults by " + moment(t, refault);
  const size_t off = first_row(t, [&](size_t i) { return at(t, i, "ra_skipped_mmap_miss") > 0; });
  if (off < t.rows.size())
    out += "; read-around off (mmap_miss past MMAP_LOTSAMISS) by " + moment(t, off);
  return out;
}

std::string render_timeline_svg(const RunResult& r) {
  const Timeline& t = r.timeline;
  struct Line {
    const char* name;
    const char* column;
    double scale;
  };
  struct Panel {
    const char* title;
    const char* y_label;
    std::vector<Line> lines;
  };
  const double page_mib = 4096.0 / (1 << 20);
  const Panel panels[] = {
      {"the page cache and its LRU lists",
       "MiB",
       {{"page cache", "page_cache_pages", page_mib},
        {"inactive", "inactive_pages", page_mib},
        {"active", "active_pages", page_mib}}},
      {"reads so far",
       "MiB",
       {{"read (pgpgin)", "pgpgin", 1.0 / 1024},
        {"refaulted", "workingset_refault_file", page_mib}}},
      {"faults so far", "faults", {{"major", "majflt", 1}, {"minor", "minflt", 1}}},
      {"readahead so far",
       "windows or reads",
       {{"read-around windows", "ra_readaround_windows", 1},
        {"async readahead windows", "ra_async_windows", 1},
        {"one-folio reads past LOTSAMISS", "ra_skipped_mmap_miss", 1}}},
      {"mmap_miss now", "mmap_miss", {{"largest f_ra.mmap_miss", "mmap_miss", 1}}},
  };
  // Each panel is a chart of its own, nested in one document one under the
  // other.
  std::string body;
  double width = 0, height = 0;
  for (const Panel& p : panels) {
    LineChart chart;
    chart.title = r.case_name + "/" + r.variant + ": " + p.title;
    chart.subtitle = "model.timeline: a sample every " + t.every;
    chart.x_label = "accesses";
    chart.y_label = p.y_label;
    for (const Line& l : p.lines) {
      ChartSeries s;
      s.name = l.name;
      for (size_t i = 0; i < t.rows.size(); ++i) {
        s.points.emplace_back(at(t, i, "accesses"), at(t, i, l.column) * l.scale);
      }
      chart.series.push_back(std::move(s));
    }
    std::string svg = render_svg(chart);
    // The panel's size, from its own root element.
    auto attr = [&](const char* name) {
      const std::string key = std::string(" ") + name + "=\"";
      const size_t at_key = svg.find(key);
      return at_key == std::string::npos ? 0.0 : std::stod(svg.substr(at_key + key.size()));
    };
    const double w = attr("width"), h = attr("height");
    const std::string root = "<svg xmlns=\"http://www.w3.org/2000/svg\"";
    if (svg.rfind(root, 0) == 0) {
      svg.replace(0, root.size(), fmt::format("<svg x=\"0\" y=\"{:.1f}\"", height));
    }
    body += svg;
    if (!body.empty() && body.back() != '\n') body += "\n";
    width = std::max(width, w);
    height += h;
  }
  return fmt::format(
             "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0:.1f}\" height=\"{1:.1f}\" "
             "viewBox=\"0 0 {0:.1f} {1:.1f}\">\n<title>{2}/{3} over the run</title>\n",
             width, height, r.case_name, r.variant) +
         body + "</svg>\n";
}

}  // namespace faultline::report
