// determinism_test.cc — the same input gives byte-identical reports: run
// twice, and with one job or two. The serial engine must produce
// byte-identical reports for the same inputs, whatever the number of jobs.
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "faultline/scenario.h"
#include "faultline/simulator.h"
#include "report/report.h"

namespace faultline {
namespace {

// The seed 1 matrix (5 cases x 4 variants), made small enough for a debug
// build: a 2 GiB file in a 1 GiB machine, and 0.1 % of the pages touched
// (524 accesses per run) instead of 1 %. The file is still twice the
// memory, so reclaim, refaults and the mmap_miss cut-off all take part.
const std::vector<std::string> kOverrides = {"file.size=2GiB", "machine.memory=1GiB",
                                             "access.fraction=0.001"};

std::string json_report(const Scenario& sc, const std::vector<PlannedRun>& plan, int jobs) {
  SimOptions opts;
  opts.jobs = jobs;
  opts.progress = false;
  auto runs = simulate(plan, opts);
  EXPECT_TRUE(runs.ok()) << runs.status().message();
  if (!runs.ok()) return "";
  return report::format_json({sc.name, sc.description, sc.source, "test"}, *runs);
}

// The first line where two texts differ, to keep a failure readable.
std::string first_difference(const std::string& a, const std::string& b) {
  std::istringstream sa(a), sb(b);
  std::string la, lb;
  for (int line = 1;; ++line) {
    const bool ea = !std::getline(sa, la);
    const bool eb = !std::getline(sb, lb);
    if (ea && eb) return "no difference";
    if (ea || eb || la != lb) {
      return "line " + std::to_string(line) + ":\n  first:  " + (ea ? "<end>" : la) +
             "\n  second: " + (eb ? "<end>" : lb);
    }
  }
}

size_t count_of(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t pos = text.find(needle); pos != std::string::npos; pos = text.find(needle, pos + 1)) {
    ++n;
  }
  return n;
}

TEST(Determinism, DefaultScenarioReportsAreByteIdentical) {
  const Scenario sc = default_scenario();
  auto plan = plan_runs(sc, kOverrides);
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  ASSERT_EQ(plan->size(), 20u);

  const std::string once = json_report(sc, *plan, 1);
  const std::string again = json_report(sc, *plan, 1);
  const std::string two_jobs = json_report(sc, *plan, 2);

  ASSERT_FALSE(once.empty());
  EXPECT_EQ(count_of(once, "\"rerun\""), 20u);
  // The runs did real work: the random baseline read pages.
  EXPECT_EQ(count_of(once, "\"pgpgin\": 0,"), 0u);
  EXPECT_TRUE(once == again) << "two runs with one job differ at " << first_difference(once, again);
  EXPECT_TRUE(once == two_jobs) << "one job and two jobs differ at "
                                << first_difference(once, two_jobs);
}

// A run's result does not depend on the runs planned before it: the same
// run alone gives the same counters as inside the matrix.
TEST(Determinism, RunAloneEqualsRunInTheMatrix) {
  const Scenario sc = default_scenario();
  auto plan = plan_runs(sc, kOverrides);
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  SimOptions opts;
  opts.jobs = 1;
  opts.progress = false;
  // The last run (sequential, P1+P2), after the others and alone.
  const std::vector<PlannedRun> tail(plan->end() - 3, plan->end());
  auto in_matrix = simulate(tail, opts);
  auto alone = simulate({plan->back()}, opts);
  ASSERT_TRUE(in_matrix.ok() && alone.ok());
  ASSERT_EQ(alone->size(), 1u);
  EXPECT_EQ(report::format_json({}, {in_matrix->back()}), report::format_json({}, *alone));
}

}  // namespace
}  // namespace faultline
