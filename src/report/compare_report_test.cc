// compare_report_test.cc — the printers of a comparison: the counters'
// verdict and the time verdict are counted apart, and the kernel's own
// spread is shown beside each median.
#include "report/compare_report.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

namespace faultline::report {
namespace {

CompareRow make_row(const std::string& counter, double model, Spread kernel, double tolerance) {
  CompareRow r;
  r.counter = counter;
  r.model = model;
  r.kernel = kernel;
  r.error = (model - kernel.median) / kernel.median;
  r.tolerance = tolerance;
  r.within = tolerance < 0 || std::abs(r.error) <= tolerance;
  return r;
}

// A case whose pgpgin is within 5 % and whose elapsed_s is off by `time_error`.
CompareCase make_case(const std::string& name, double time_error) {
  CompareCase c;
  c.scenario = "s";
  c.case_name = name;
  c.variant = "default";
  c.kernel_release = "6.8.0";
  c.model_profile = "6.8";
  c.rows.push_back(make_row("pgpgin", 1000, {1010, 1000, 1020}, 0.05));
  c.rows.push_back(make_row("elapsed_s", 0.2 * (1 + time_error), {0.2, 0.18, 0.26}, 0.15));
  c.judged = true;
  c.pass = c.rows[0].within;
  c.time_judged = true;
  c.time_pass = c.rows[1].within;
  return c;
}

TEST(CompareReport, TimeIsJudgedApartFromTheCounters) {
  const std::vector<CompareCase> cases = {make_case("a", 0.05), make_case("b", -0.4)};
  const std::string m = format_compare_matrix(cases);
  EXPECT_NE(m.find("2 of 2 cases within tolerance (pgpgin 5%)"), std::string::npos) << m;
  EXPECT_NE(m.find("1 of 2 cases within time tolerance (elapsed_s 15% of the kernel's median"),
            std::string::npos)
      << m;
  // (0.26 - 0.18) / 0.2 = 40 %.
  EXPECT_NE(m.find("median 40.0%, largest 40.0%"), std::string::npos) << m;
  EXPECT_NE(m.find("-40.0%!"), std::string::npos) << m;
  const std::string t = format_compare_table(cases);
  EXPECT_NE(t.find("1 of 2 cases within time tolerance"), std::string::npos) << t;
  EXPECT_NE(t.find("40.0%"), std::string::npos) << t;
}

TEST(CompareReport, JsonAndCsvCarryTheTimeVerdictAndSpread) {
  const std::vector<CompareCase> cases = {make_case("a", 0.05), make_case("b", -0.4)};
  const auto j = nlohmann::json::parse(format_compare_json(cases));
  ASSERT_EQ(j.size(), 2u);
  EXPECT_TRUE(j[0]["pass"].get<bool>());
  EXPECT_TRUE(j[0]["time_pass"].get<bool>());
  EXPECT_FALSE(j[1]["time_pass"].get<bool>());
  EXPECT_NEAR(j[1]["rows"][1]["kernel_spread"].get<double>(), 0.4, 1e-12);
  const std::string csv = format_compare_csv(cases);
  EXPECT_EQ(csv.substr(0, csv.find('\n')),
            "scenario,case,variant,counter,model,kernel_median,kernel_min,kernel_max,"
            "kernel_spread,error,tolerance,within");
  EXPECT_NE(csv.find("s,b,default,elapsed_s,0.12,0.2,0.18,0.26,0.4,-0.4,0.15,false"),
            std::string::npos)
      << csv;
}

TEST(CompareReport, NoTimeLineWhenNothingWasTimed) {
  CompareCase c = make_case("a", 0);
  c.time_judged = false;
  c.rows.pop_back();
  const std::string m = format_compare_matrix({c});
  EXPECT_EQ(m.find("time tolerance"), std::string::npos) << m;
}

}  // namespace
}  // namespace faultline::report
