// causes_test.cc — over every committed scenario that runs in a moment on
// the model (tests/golden, tests/scenarios, scenarios/fidelity,
// scenarios/examples), every run and every file of it: pgpgin split by cause
// sums to pgpgin exactly, the refault part is part of it, and readahead
// waste is at most what readahead read (docs/causes.md).
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <string>
#include <vector>

#include "faultline/stats.h"
#include "harness/run_scenario.h"

#ifndef FAULTLINE_TESTS_DIR
#error "FAULTLINE_TESTS_DIR must point at tests/"
#endif

namespace faultline {
namespace {

namespace fs = std::filesystem;

const char* const kCauses[] = {"model.pgpgin_readaround", "model.pgpgin_sync_ra",
                               "model.pgpgin_async_ra",   "model.pgpgin_read_ra",
                               "model.pgpgin_single",     "model.pgpgin_willneed"};

std::vector<std::string> scenario_files() {
  const fs::path tests(FAULTLINE_TESTS_DIR);
  std::vector<std::string> out;
  for (const fs::path& dir :
       {tests / "golden", tests / "scenarios", tests / ".." / "scenarios" / "fidelity",
        tests / ".." / "scenarios" / "examples"}) {
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(dir, ec)) {
      if (e.path().extension() == ".toml") out.push_back(e.path().lexically_normal().string());
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

const Counter* find(const std::vector<Counter>& cs, const std::string& name) {
  for (const Counter& c : cs) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

// The checks on one set of counters (a run's, or one file's share of it).
void check(const std::vector<Counter>& cs, const std::string& what, bool whole_run) {
  const Counter* pgpgin = find(cs, "pgpgin");
  ASSERT_NE(pgpgin, nullptr) << what;
  double sum = 0;
  for (const char* name : kCauses) {
    const Counter* c = find(cs, name);
    ASSERT_NE(c, nullptr) << what << ": no " << name;
    EXPECT_GE(c->value, 0) << what << ": " << name;
    sum += c->value;
  }
  EXPECT_EQ(sum, pgpgin->value) << what << ": the causes do not sum to pgpgin";
  const Counter* refault = find(cs, "model.pgpgin_refault");
  ASSERT_NE(refault, nullptr) << what;
  EXPECT_LE(refault->value, pgpgin->value) << what;
  const Counter* evicted = find(cs, "model.ra_wasted_evicted");
  const Counter* unused = find(cs, "model.ra_wasted_unused");
  ASSERT_TRUE(evicted && unused && find(cs, "model.pages_touched")) << what;
  // A file's share is charged with the evictions its events caused, of any
  // file's folios; the bound holds for the whole run.
  if (whole_run) {
    const double ra_kb = pgpgin->value - find(cs, "model.pgpgin_single")->value;
    EXPECT_LE((evicted->value + unused->value) * 4, ra_kb) << what;
  }
}

class CauseSplit : public ::testing::TestWithParam<std::string> {};

TEST_P(CauseSplit, SumsToPgpginInEveryRun) {
  auto run = testing::run_scenario_file(GetParam());
  ASSERT_TRUE(run.ok()) << run.status().message();
  ASSERT_FALSE(run->runs.empty());
  for (const RunResult& r : run->runs) {
    const std::string what = GetParam() + " " + r.case_name + "/" + r.variant;
    check(r.counters, what, /*whole_run=*/true);
    for (const FileResult& f : r.files) check(f.counters, what + " file " + f.path, false);
  }
}

std::string test_name(const ::testing::TestParamInfo<std::string>& p) {
  const fs::path path(p.param);
  std::string n = path.parent_path().filename().string() + "_" + path.stem().string();
  for (char& c : n) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return n;
}

INSTANTIATE_TEST_SUITE_P(Files, CauseSplit, ::testing::ValuesIn(scenario_files()), test_name);

TEST(CauseSplitFiles, AreFound) { EXPECT_GE(scenario_files().size(), 20u); }

}  // namespace
}  // namespace faultline
