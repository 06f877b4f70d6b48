// kswapd_test.cc — reclaim by kswapd on a second CPU: what it changes (the
// task's time) and what it does not (every counter), and when it applies.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "engine/engine.h"

namespace faultline::engine {
namespace {

Config config(const std::vector<std::string>& sets) {
  Config c;
  EXPECT_TRUE(apply_assignments(c, sets).ok());
  EXPECT_TRUE(validate(c).ok()) << validate(c).message();
  return c;
}

RunResult run(const Config& c) {
  auto r = make_serial_engine()->run(c, nullptr, {});
  EXPECT_TRUE(r.ok()) << r.status().message();
  return r.ok() ? *r : RunResult{};
}

// 256 MiB read at random through a cache of 16 MiB (the machine's own
// memory, no cgroup), 8 MiB read-around.
const std::vector<std::string> kPressure = {
    "file.size=256MiB",      "machine.memory=256MiB", "machine.kernel_reserved=240MiB",
    "access.pattern=random", "access.count=3000",     "device.read_ahead_kb=8192",
    "model.timeline=100"};

// The task's gap is the min-low watermark distance; none without a second
// CPU or under a cgroup's limit (which the charging task reclaims itself).
TEST(Kswapd, OnlyWithASecondCpuAndTheMachinesOwnPressure) {
  Config c;
  c.machine.memory = 8ULL << 30;
  EXPECT_EQ(kswapd_gap_pages(c), 0u);
  c.machine.cpus = 2;
  // min_free_kbytes as THP raises it on two zones: 2 MiB x 2 x 11 = 44 MiB;
  // the gap is a quarter of it (more than 0.1 % of 8 GiB).
  EXPECT_EQ(kswapd_gap_pages(c), (44ULL << 20) / 4 / 4096);
  c.machine.memory_limit = 1ULL << 30;
  EXPECT_EQ(kswapd_gap_pages(c), 0u);
}

TEST(Kswapd, TakesReclaimOffTheTaskAndChangesNoCounter) {
  std::vector<std::string> sets = kPressure;
  const RunResult one = run(config(sets));
  sets.push_back("machine.cpus=2");
  const RunResult two = run(config(sets));
  ASSERT_GT(one.get("model.pages_evicted"), 100000);
  for (const Counter& c : one.counters) {
    if (c.name == "elapsed_s" || c.name.find("_ns") != std::string::npos) continue;
    EXPECT_EQ(c.value, two.get(c.name)) << c.name;
  }
  EXPECT_EQ(one.get("model.kswapd_ns"), 0);
  EXPECT_GT(two.get("model.kswapd_ns"), 0);
  EXPECT_LT(two.get("elapsed_s"), one.get("elapsed_s"));
  // What the task saves is at most the work kswapd took over.
  EXPECT_GE(two.get("elapsed_s") + two.get("model.kswapd_ns") / 1e9 * 1.001, one.get("elapsed_s"));
  // The timeline ends at the run's time.
  const Timeline& t = two.timeline;
  ASSERT_FALSE(t.rows.empty());
  EXPECT_DOUBLE_EQ(t.rows.back()[t.column("elapsed_s")], two.get("elapsed_s"));
}

}  // namespace
}  // namespace faultline::engine
