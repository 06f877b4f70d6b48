// svg_chart_test.cc — the SVG line chart: well-formed markup, one polyline
// per series, the legend's names, no NaN in coordinates, the log-scale rule,
// escaping, and the same bytes for the same chart.
#include "report/svg_chart.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

namespace faultline::report {
namespace {

size_t count(const std::string& hay, const std::string& needle) {
  size_t n = 0;
  for (size_t p = hay.find(needle); p != std::string::npos; p = hay.find(needle, p + 1)) ++n;
  return n;
}

// A small checker of XML-ish well-formedness: tags nest and close, attribute
// values are quoted, and text holds no bare '<' or '&' that is not an entity.
::testing::AssertionResult WellFormed(const std::string& s) {
  std::vector<std::string> stack;
  size_t i = 0;
  size_t roots = 0;
  while (i < s.size()) {
    if (s[i] == '&') {
      const size_t semi = s.find(';', i);
      const std::string ent = semi == std::string::npos ? "" : s.substr(i, semi - i + 1);
      if (ent != "&amp;" && ent != "&lt;" && ent != "&gt;" && ent != "&quot;" && ent != "&apos;")
        return ::testing::AssertionFailure() << "bare '&' at " << i;
      i = semi + 1;
      continue;
    }
    if (s[i] == '>') return ::testing::AssertionFailure() << "bare '>' at " << i;
    if (s[i] != '<') {
      ++i;
      continue;
    }
    const size_t end = s.find('>', i);
    if (end == std::string::npos) return ::testing::AssertionFailure() << "unclosed tag at " << i;
    std::string tag = s.substr(i + 1, end - i - 1);
    i = end + 1;
    if (tag.empty()) return ::testing::AssertionFailure() << "empty tag";
    if (tag[0] == '/') {
      const std::string name = tag.substr(1);
      if (stack.empty() || stack.back() != name)
        return ::testing::AssertionFailure() << "</" << name << "> closes nothing open";
      stack.pop_back();
      continue;
    }
    const bool self_closing = tag.back() == '/';
    if (self_closing) tag.pop_back();
    const std::string name = tag.substr(0, tag.find_first_of(" \n"));
    // Attributes: name="value" pairs, value without '<'.
    size_t p = name.size();
    while (p < tag.size()) {
      while (p < tag.size() && (tag[p] == ' ' || tag[p] == '\n')) ++p;
      if (p >= tag.size()) break;
      const size_t eq = tag.find('=', p);
      if (eq == std::string::npos || eq + 1 >= tag.size() || tag[eq + 1] != '"')
        return ::testing::AssertionFailure() << "unquoted attribute in <" << name << ">";
      const size_t close = tag.find('"', eq + 2);
      if (close == std::string::npos)
        return ::testing::AssertionFailure() << "unterminated attribute in <" << name << ">";
      if (tag.substr(eq + 2, close - eq - 2).find('<') != std::string::npos)
        return ::testing::AssertionFailure() << "'<' in an attribute of <" << name << ">";
      p = close + 1;
    }
    if (stack.empty()) ++roots;
    if (!self_closing) stack.push_back(name);
  }
  if (!stack.empty()) return ::testing::AssertionFailure() << "<" << stack.back() << "> not closed";
  if (roots != 1) return ::testing::AssertionFailure() << roots << " root elements";
  return ::testing::AssertionSuccess();
}

// Every number in every points="..." attribute, which must all be finite.
std::vector<double> polyline_coords(const std::string& svg) {
  std::vector<double> out;
  for (size_t p = svg.find("points=\""); p != std::string::npos; p = svg.find("points=\"", p + 1)) {
    const size_t b = p + 8, e = svg.find('"', b);
    std::string list = svg.substr(b, e - b);
    for (char& c : list) c = c == ',' ? ' ' : c;
    size_t q = 0;
    while (q < list.size()) {
      size_t used = 0;
      const std::string rest = list.substr(q);
      if (rest.find_first_not_of(' ') == std::string::npos) break;
      out.push_back(std::stod(rest, &used));
      q += used;
    }
  }
  return out;
}

LineChart stride_chart() {
  LineChart c;
  c.title = "seed1-mmap-miss: pgpgin by access.stride";
  c.subtitle = "case stride1021";
  c.x_label = "access.stride";
  c.y_label = "pgpgin (GiB)";
  for (const char* name : {"baseline", "P1", "P2", "P1+P2"}) {
    ChartSeries s{name, {}};
    for (double x = 1; x <= 4096; x *= 2) s.points.emplace_back(x, std::log2(x) * 30);
    c.series.push_back(s);
  }
  return c;
}

TEST(SvgChart, WellFormedWithOnePolylinePerSeries) {
  const LineChart c = stride_chart();
  const std::string svg = render_svg(c);
  EXPECT_TRUE(WellFormed(svg));
  EXPECT_EQ(svg.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\"", 0), 0u);
  EXPECT_EQ(count(svg, "<polyline"), c.series.size());
  // 13 points per series, each a marker.
  EXPECT_EQ(count(svg, "<circle"), 13 * c.series.size());
  for (const ChartSeries& s : c.series) {
    EXPECT_NE(svg.find(">" + s.name + "</text>"), std::string::npos) << s.name;
  }
  EXPECT_NE(svg.find(c.title), std::string::npos);
  EXPECT_NE(svg.find("pgpgin (GiB)"), std::string::npos);
}

TEST(SvgChart, NoNaNInCoordinates) {
  LineChart c = stride_chart();
  c.series[1].points.emplace_back(8192, NAN);      // left out
  c.series[2].points.emplace_back(INFINITY, 5.0);  // left out
  c.series.push_back({"empty", {}});               // a series with no point
  const std::string svg = render_svg(c);
  EXPECT_TRUE(WellFormed(svg));
  EXPECT_EQ(svg.find("nan"), std::string::npos);
  EXPECT_EQ(svg.find("inf"), std::string::npos);
  EXPECT_EQ(count(svg, "<polyline"), c.series.size());
  const std::vector<double> xy = polyline_coords(svg);
  EXPECT_EQ(xy.size(), 2u * 13 * 4);
  for (double v : xy) {
    EXPECT_TRUE(std::isfinite(v));
    EXPECT_GE(v, 0);
    EXPECT_LE(v, 1200);
  }
}

TEST(SvgChart, LogScaleOnlyForWidePositiveRanges) {
  LineChart c = stride_chart();  // 1 .. 4096
  EXPECT_TRUE(chart_log_x(c));
  EXPECT_NE(render_svg(c).find("access.stride (log scale)"), std::string::npos);
  // Powers of ten label the log axis.
  EXPECT_NE(render_svg(c).find(">1000</text>"), std::string::npos);

  LineChart narrow;
  narrow.series.push_back({"a", {{10, 1}, {20, 2}, {300, 3}}});  // a factor of 30
  EXPECT_FALSE(chart_log_x(narrow));
  LineChart with_zero;
  with_zero.series.push_back({"a", {{0, 1}, {1000, 2}}});
  EXPECT_FALSE(chart_log_x(with_zero));
  LineChart categorical;
  categorical.categories = {"normal", "random"};
  categorical.series.push_back({"a", {{0, 1}, {1, 2}}});
  EXPECT_FALSE(chart_log_x(categorical));
  const std::string svg = render_svg(categorical);
  EXPECT_TRUE(WellFormed(svg));
  EXPECT_NE(svg.find(">random</text>"), std::string::npos);
}

TEST(SvgChart, ByteAxisTicksAreSizes) {
  LineChart c;
  c.x_bytes = true;
  c.series.push_back({"a", {{128.0 * 1024, 1}, {8192.0 * 1024, 2}}});
  const std::string svg = render_svg(c);
  EXPECT_TRUE(chart_log_x(c));
  EXPECT_NE(svg.find(">128 KiB</text>"), std::string::npos);
  EXPECT_NE(svg.find(">8 MiB</text>"), std::string::npos);
}

TEST(SvgChart, SmallValuesHaveDecimalTicksAndNoNegativeZero) {
  LineChart c;
  c.series.push_back({"a", {{1, 0.0004}, {2, 0.052}}});
  const std::string svg = render_svg(c);
  EXPECT_NE(svg.find(">0.00</text>"), std::string::npos);
  EXPECT_NE(svg.find(">0.05</text>"), std::string::npos);
  EXPECT_EQ(svg.find(">-0"), std::string::npos);
}

TEST(SvgChart, EscapesText) {
  LineChart c;
  c.title = "a <b> & \"c\"";
  c.series.push_back({"x<y & z", {{1, 1}, {2, 2}}});
  const std::string svg = render_svg(c);
  EXPECT_TRUE(WellFormed(svg));
  EXPECT_NE(svg.find("x&lt;y &amp; z"), std::string::npos);
  EXPECT_EQ(svg.find("<b>"), std::string::npos);
}

TEST(SvgChart, EmptyChartIsStillADocument) {
  LineChart c;
  c.title = "nothing";
  const std::string svg = render_svg(c);
  EXPECT_TRUE(WellFormed(svg));
  EXPECT_EQ(svg.find("nan"), std::string::npos);
  EXPECT_NE(svg.find("no data"), std::string::npos);
}

TEST(SvgChart, SameChartSameBytes) {
  EXPECT_EQ(render_svg(stride_chart()), render_svg(stride_chart()));
}

}  // namespace
}  // namespace faultline::report
