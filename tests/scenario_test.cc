// scenario_test.cc — data-driven scenario tests (tests/scenarios/*.toml).
//
// Each file is a scenario with [[expect]] blocks: a counter of the runs it
// names (case, variant; omitted = every one) must equal `eq` or lie in
// [min, max]. Every file is planned, simulated on the model with one job,
// and checked; a failure prints the run's actual counters as [[expect]]
// blocks ready to paste. Adding a case needs no C++.
#include "faultline/scenario.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "faultline/simulator.h"
#include "harness/run_scenario.h"
#include "report/report.h"

#ifndef FAULTLINE_TESTS_DIR
#error "FAULTLINE_TESTS_DIR must point at tests/"
#endif

namespace faultline {
namespace {

std::vector<std::string> scenario_files() {
  std::vector<std::string> out;
  const std::filesystem::path dir = std::filesystem::path(FAULTLINE_TESTS_DIR) / "scenarios";
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    if (e.path().extension() == ".toml") out.push_back(e.path().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

bool matches(const std::string& want, const std::string& have) {
  return want.empty() || want == have;
}

std::string describe(const Expectation& e) {
  std::string s = e.counter;
  if (e.eq) s += " == " + report::format_number(*e.eq);
  if (e.min) s += " >= " + report::format_number(*e.min);
  if (e.max) s += " <= " + report::format_number(*e.max);
  return s;
}

// Every counter of the run as [[expect]] blocks, to paste into the file.
std::string paste_block(const RunResult& r) {
  std::string out = "# actual counters of " + r.case_name + "/" + r.variant + "\n";
  for (const Counter& c : r.counters) {
    out += "[[expect]]\ncase = \"" + r.case_name + "\"\nvariant = \"" + r.variant +
           "\"\ncounter = \"" + c.name + "\"\neq = " + report::format_number(c.value) + "\n\n";
  }
  return out;
}

class ScenarioFile : public ::testing::TestWithParam<std::string> {};

TEST_P(ScenarioFile, MeetsItsExpectations) {
  const std::string& path = GetParam();
  auto run = testing::run_scenario_file(path);
  ASSERT_TRUE(run.ok()) << run.status().message();
  const Scenario* sc = &run->scenario;
  const std::vector<RunResult>* runs = &run->runs;
  ASSERT_FALSE(sc->expectations.empty()) << path << ": a scenario test needs [[expect]] blocks";

  std::vector<bool> failed(runs->size(), false);
  for (const Expectation& e : sc->expectations) {
    size_t matched = 0;
    for (size_t i = 0; i < runs->size(); ++i) {
      const RunResult& r = (*runs)[i];
      if (!matches(e.case_name, r.case_name) || !matches(e.variant, r.variant)) continue;
      ++matched;
      const double v = r.get(e.counter, NAN);
      const std::string where = path + ": " + r.case_name + "/" + r.variant + ": ";
      bool ok = !std::isnan(v);
      if (!ok) ADD_FAILURE() << where << "no counter named '" << e.counter << "'";
      if (ok && e.eq && v != *e.eq) ok = false;
      if (ok && e.min && v < *e.min) ok = false;
      if (ok && e.max && v > *e.max) ok = false;
      if (!ok && !std::isnan(v)) {
        ADD_FAILURE() << where << "expected " << describe(e) << ", got "
                      << report::format_number(v);
      }
      if (!ok) failed[i] = true;
    }
    EXPECT_GT(matched, 0u) << path << ": the expectation on " << e.counter << " (case '"
                           << e.case_name << "', variant '" << e.variant << "') matches no run";
  }
  for (size_t i = 0; i < runs->size(); ++i) {
    if (failed[i]) std::cout << paste_block((*runs)[i]);
  }
}

std::string test_name(const ::testing::TestParamInfo<std::string>& p) {
  std::string n = std::filesystem::path(p.param).stem().string();
  for (char& c : n) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return n;
}

INSTANTIATE_TEST_SUITE_P(Files, ScenarioFile, ::testing::ValuesIn(scenario_files()), test_name);

// A wrong path must not pass by finding nothing.
TEST(ScenarioFiles, AreFound) { EXPECT_GE(scenario_files().size(), 8u); }

}  // namespace
}  // namespace faultline
