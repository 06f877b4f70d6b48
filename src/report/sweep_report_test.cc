// sweep_report_test.cc — the printers of a sweep: a row per swept value and
// a column per variant, the swept values as fields in JSON and CSV, and a
// chart series per variant over the first swept key.
#include "report/sweep_report.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <string>

namespace faultline::report {
namespace {

RunResult run(const std::string& c, const std::string& v, double stride, double pgpgin) {
  RunResult r;
  r.case_name = c;
  r.variant = v;
  r.config = {
      {"access.stride", format_number(stride)}, {"kernel.profile", "7.1"}, {"access.seed", "1"}};
  r.counters = {{"pgpgin", pgpgin}, {"majflt", stride}};
  return r;
}

// Two variants over access.stride = 1, 4, 64 in one case.
Sweep stride_sweep() {
  Sweep s;
  s.axes.push_back({"access.stride", {"1", "4", "64"}, {1, 4, 64}, false});
  s.points = {{0}, {1}, {2}};
  s.metric = "pgpgin";
  s.sets = {"file.size=1GiB"};
  for (size_t p = 0; p < 3; ++p) {
    for (const char* v : {"baseline", "P1+P2"}) {
      const double x = s.axes[0].numbers[p];
      s.runs.push_back(run("stride", v, x, x * 1024.0 * 1024.0 * (v[0] == 'b' ? 2 : 1)));
      s.run_point.push_back(p);
    }
  }
  return s;
}

const Meta kMeta{"seed1", "a test", "scenarios/seed1.toml", "0.1.0"};

TEST(SweepReport, TableHasARowPerValueAndAColumnPerVariant) {
  const std::string t = format_sweep_table(kMeta, stride_sweep());
  EXPECT_NE(t.find("pgpgin, case stride\n"), std::string::npos) << t;
  EXPECT_NE(t.find("\naccess.stride     baseline       P1+P2\n"), std::string::npos) << t;
  // pgpgin is counted in KiB and shown in GiB, as `faultline run` shows it.
  EXPECT_NE(t.find("\n           64  128.000 GiB  64.000 GiB\n"), std::string::npos) << t;
  EXPECT_NE(t.find("swept access.stride (3 values)"), std::string::npos) << t;
}

TEST(SweepReport, MissingCounterIsADash) {
  Sweep s = stride_sweep();
  s.metric = "majflt";
  s.runs[0].counters.pop_back();  // majflt of stride 1, baseline
  const std::string t = format_sweep_table(kMeta, s);
  EXPECT_NE(t.find("\n            1         -      1\n"), std::string::npos) << t;
}

TEST(SweepReport, JsonCarriesSweptValuesAndEveryCounter) {
  const auto j = nlohmann::json::parse(format_sweep_json(kMeta, stride_sweep()));
  EXPECT_EQ(j["sweep"]["metric"], "pgpgin");
  EXPECT_EQ(j["sweep"]["vary"][0]["key"], "access.stride");
  ASSERT_EQ(j["runs"].size(), 6u);
  EXPECT_EQ(j["runs"][5]["sweep"]["access.stride"], "64");
  EXPECT_EQ(j["runs"][5]["variant"], "P1+P2");
  EXPECT_EQ(j["runs"][5]["counters"]["pgpgin"], 64LL * 1024 * 1024);
  EXPECT_EQ(j["runs"][5]["counters"]["majflt"], 64);
  EXPECT_EQ(j["runs"][5]["rerun"],
            "faultline run scenarios/seed1.toml --only stride/P1+P2 --set file.size=1GiB "
            "--set access.stride=64");
}

TEST(SweepReport, CsvPutsSweptKeysFirst) {
  const std::string csv = format_sweep_csv(stride_sweep());
  EXPECT_EQ(csv.substr(0, csv.find('\n')),
            "case,variant,access.stride,kernel.profile,access.seed,pgpgin,majflt");
  EXPECT_NE(csv.find("\nstride,P1+P2,64,7.1,1,67108864,64\n"), std::string::npos) << csv;
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 7);
}

TEST(SweepReport, ChartHasASeriesPerVariant) {
  const LineChart c = sweep_chart(kMeta, stride_sweep());
  ASSERT_EQ(c.series.size(), 2u);
  EXPECT_EQ(c.series[0].name, "baseline");
  EXPECT_EQ(c.series[1].name, "P1+P2");
  ASSERT_EQ(c.series[0].points.size(), 3u);
  EXPECT_DOUBLE_EQ(c.series[0].points[2].first, 64);
  EXPECT_DOUBLE_EQ(c.series[0].points[2].second, 128);  // GiB
  EXPECT_EQ(c.y_label, "pgpgin (GiB)");
  EXPECT_EQ(c.title, "seed1: pgpgin by access.stride");
  EXPECT_TRUE(c.categories.empty());
}

TEST(SweepReport, SecondAxisAndSeveralCasesSplitSeries) {
  Sweep s;
  s.axes.push_back({"mapping.madvise", {"normal", "random"}, {NAN, NAN}, false});
  s.axes.push_back({"device.read_ahead_kb", {"128", "512"}, {128, 512}, false});
  s.points = {{0, 0}, {0, 1}, {1, 0}, {1, 1}};
  s.metric = "pgpgin";
  for (const char* c : {"a", "b"}) {
    for (size_t p = 0; p < 4; ++p) {
      s.runs.push_back(run(c, "v", 1, static_cast<double>(p)));
      s.run_point.push_back(p);
    }
  }
  const LineChart chart = sweep_chart(kMeta, s);
  EXPECT_EQ(chart.categories, (std::vector<std::string>{"normal", "random"}));
  ASSERT_EQ(chart.series.size(), 4u);
  EXPECT_EQ(chart.series[0].name, "a/v device.read_ahead_kb=128");
  EXPECT_EQ(chart.series[3].name, "b/v device.read_ahead_kb=512");
  EXPECT_EQ(chart.series[1].points.size(), 2u);
  EXPECT_EQ(point_label(s, 1), "mapping.madvise=normal device.read_ahead_kb=512");
  const std::string t = format_sweep_table(kMeta, s);
  EXPECT_NE(t.find("pgpgin, case a\n"), std::string::npos);
  EXPECT_NE(t.find("pgpgin, case b\n"), std::string::npos);
}

}  // namespace
}  // namespace faultline::report
