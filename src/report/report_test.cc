// report_test.cc — the run report of repeated runs: medians with each
// seed's range, every seed's counters in JSON, and the outcomes a median
// hides named with their seeds.
#include "report/report.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace faultline::report {
namespace {

// A run repeated over seeds 1 to 5 whose pgpgin (KiB) is bistable.
RunResult bistable() {
  RunResult r;
  r.case_name = "random";
  r.variant = "P2";
  r.config = {{"access.seed", "1"}, {"kernel.profile", "7.1"}};
  const double pgpgin[] = {1.1 * 1048576, 225.0 * 1048576, 224.0 * 1048576, 1.0 * 1048576,
                           226.0 * 1048576};
  for (uint64_t s = 1; s <= 5; ++s) {
    r.repetitions.push_back(
        {s, {{"pgpgin", pgpgin[s - 1]}, {"majflt", 100.0 + static_cast<double>(s)}}});
  }
  r.counters = {{"pgpgin", 224.0 * 1048576}, {"majflt", 103}};
  return r;
}

const Meta kMeta{"s", "d", "s.toml", "0"};

TEST(Report, TableNamesEachOutcomeAndItsSeeds) {
  const std::string t = format_table(kMeta, {bistable()});
  EXPECT_NE(t.find("seeds 1 to 5: medians of 5 runs"), std::string::npos) << t;
  EXPECT_NE(t.find("[1.000, 226.000]"), std::string::npos) << t;
  EXPECT_NE(t.find("[101, 105]"), std::string::npos) << t;
  EXPECT_NE(t.find("random/P2: the 5 seeds fall into 2 outcomes"), std::string::npos) << t;
  EXPECT_NE(t.find("pgpgin 1.000 GiB to 1.100 GiB: 2 of 5 runs (40 %), seeds 1, 4"),
            std::string::npos)
      << t;
  EXPECT_NE(t.find("pgpgin 224.000 GiB to 226.000 GiB: 3 of 5 runs (60 %), seeds 2, 3, 5"),
            std::string::npos)
      << t;
}

TEST(Report, OneOutcomeIsNotCalledTwo) {
  RunResult r = bistable();
  for (Repetition& rep : r.repetitions)
    rep.counters[0].value = 100.0 + static_cast<double>(rep.seed);
  const std::string t = format_table(kMeta, {r});
  EXPECT_EQ(t.find("outcomes"), std::string::npos) << t;
}

TEST(Report, JsonHasEverySeedTheSpreadAndTheOutcomes) {
  const auto j = nlohmann::json::parse(format_json(kMeta, {bistable()}));
  const auto& run = j["runs"][0];
  EXPECT_EQ(run["spread"]["majflt"]["min"], 101);
  EXPECT_EQ(run["spread"]["majflt"]["max"], 105);
  ASSERT_EQ(run["repetitions"].size(), 5u);
  EXPECT_EQ(run["repetitions"][3]["seed"], 4);
  ASSERT_EQ(run["outcomes"].size(), 2u);
  EXPECT_EQ(run["outcomes"][0]["seeds"], nlohmann::json({1, 4}));
  EXPECT_EQ(run["outcomes"][1]["runs"], 3);
}

TEST(Report, CsvHasMinAndMaxBesideEachCounter) {
  RunResult once;
  once.case_name = "sequential";
  once.variant = "P2";
  once.config = bistable().config;
  once.counters = {{"pgpgin", 8}, {"majflt", 1}};
  const std::string csv = format_csv({bistable(), once});
  EXPECT_NE(csv.find("pgpgin,pgpgin_min,pgpgin_max,majflt,majflt_min,majflt_max"),
            std::string::npos)
      << csv;
  EXPECT_NE(csv.find("sequential,P2,1,7.1,8,8,8,1,1,1"), std::string::npos) << csv;
  // Without repetitions the columns are as they always were.
  EXPECT_EQ(format_csv({once}).find("_min"), std::string::npos);
}

}  // namespace
}  // namespace faultline::report
