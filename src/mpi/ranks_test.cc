// ranks_test.cc — what spreading runs over MPI ranks rests on, without
// MPI: results survive the bytes they are gathered as, exactly, and runs
// are dealt out deterministically and evenly by their expected cost.
#include "mpi/ranks.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace faultline::mpi {
namespace {

RunResult sample(int i) {
  RunResult r;
  r.case_name = "case" + std::to_string(i);
  r.variant = i % 2 ? "" : "P1+P2";
  r.config = {{"file.size", "1073741824"}, {"access.trace", "/a path/with spaces"}};
  r.counters = {{"pgpgin", 65536.0 + i},
                {"elapsed_s", 0.1 + 1e-17 * i},
                {"model.tiny", std::numeric_limits<double>::denorm_min()},
                {"model.neg", -0.0},
                {"model.inf", std::numeric_limits<double>::infinity()}};
  if (i == 2) r.files = {{"index", {{"pgpgin", 1.5}}}, {"", {}}};
  if (i == 3) r.repetitions = {{3, {{"pgpgin", 4.0}}}, {4, {{"pgpgin", 1e9 + 0.5}}}};
  if (i == 1)
    r.timeline = {"100 accesses", {"accesses", "elapsed_s"}, {{0, 0}, {100, 0.1 + 1e-17}}};
  return r;
}

TEST(Ranks, ResultsRoundTripExactly) {
  std::vector<std::pair<uint64_t, RunResult>> in;
  for (int i = 0; i < 4; ++i) in.emplace_back(10 + i, sample(i));
  auto out = decode_results(encode_results(in));
  ASSERT_TRUE(out.ok()) << out.status().message();
  ASSERT_EQ(out->size(), in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    const RunResult& a = in[i].second;
    const RunResult& b = (*out)[i].second;
    EXPECT_EQ((*out)[i].first, in[i].first);
    EXPECT_EQ(a.case_name, b.case_name);
    EXPECT_EQ(a.variant, b.variant);
    EXPECT_EQ(a.config, b.config);
    ASSERT_EQ(a.counters.size(), b.counters.size());
    for (size_t j = 0; j < a.counters.size(); ++j) {
      EXPECT_EQ(a.counters[j].name, b.counters[j].name);
      // Bit for bit: the reports print what was computed.
      EXPECT_EQ(std::signbit(a.counters[j].value), std::signbit(b.counters[j].value));
      EXPECT_EQ(a.counters[j].value, b.counters[j].value);
    }
    ASSERT_EQ(a.files.size(), b.files.size());
    for (size_t j = 0; j < a.files.size(); ++j) {
      EXPECT_EQ(a.files[j].path, b.files[j].path);
      EXPECT_EQ(a.files[j].counters.size(), b.files[j].counters.size());
    }
    ASSERT_EQ(a.repetitions.size(), b.repetitions.size());
    for (size_t j = 0; j < a.repetitions.size(); ++j) {
      EXPECT_EQ(a.repetitions[j].seed, b.repetitions[j].seed);
      ASSERT_EQ(a.repetitions[j].counters.size(), b.repetitions[j].counters.size());
      EXPECT_EQ(a.repetitions[j].counters[0].value, b.repetitions[j].counters[0].value);
    }
    EXPECT_EQ(a.timeline.every, b.timeline.every);
    EXPECT_EQ(a.timeline.columns, b.timeline.columns);
    EXPECT_EQ(a.timeline.rows, b.timeline.rows);
  }
}

TEST(Ranks, TruncatedBytesAreAnError) {
  std::vector<std::pair<uint64_t, RunResult>> in = {{0, sample(2)}};
  const std::string bytes = encode_results(in);
  for (size_t cut : {size_t{0}, size_t{3}, bytes.size() / 2, bytes.size() - 1}) {
    EXPECT_FALSE(decode_results(bytes.substr(0, cut)).ok()) << cut;
  }
  EXPECT_FALSE(decode_results(bytes + "x").ok());
}

TEST(Ranks, RunsAreDealtLongestFirstToTheLeastLoadedRank) {
  // 9 + 1 | 8 + 2 | 7 + 3: every rank ends with 10.
  const std::vector<uint64_t> costs = {1, 2, 3, 7, 8, 9};
  const std::vector<int> owner = assign_runs(costs, 3);
  EXPECT_EQ(owner, (std::vector<int>{0, 1, 2, 2, 1, 0}));
  std::vector<uint64_t> load(3, 0);
  for (size_t i = 0; i < costs.size(); ++i) load[static_cast<size_t>(owner[i])] += costs[i];
  EXPECT_EQ(load, (std::vector<uint64_t>{10, 10, 10}));
  // Equal costs: in plan order, round the ranks.
  EXPECT_EQ(assign_runs({5, 5, 5, 5}, 2), (std::vector<int>{0, 1, 0, 1}));
  EXPECT_EQ(assign_runs(costs, 1), std::vector<int>(costs.size(), 0));
  EXPECT_EQ(assign_runs(costs, 3), owner);  // the same every time
}

TEST(Ranks, CostGrowsWithTheAccesses) {
  Config small, large;
  small.access.fraction = 0.01;
  large.access.fraction = 0.5;
  EXPECT_LT(expected_cost(small), expected_cost(large));
  Config warm = small;
  warm.file.cache = workload::CacheState::kWarmRead;
  EXPECT_LT(expected_cost(small), expected_cost(warm));
}

// Without mpirun nothing of MPI is touched.
TEST(Ranks, AloneIsOneRank) {
  if (launched_by_mpi()) GTEST_SKIP() << "run under mpirun";
  EXPECT_EQ(rank(), 0);
  EXPECT_EQ(size(), 1);
  EXPECT_TRUE(is_root());
}

}  // namespace
}  // namespace faultline::mpi
