// percpu_counter_test.cc — lib/percpu_counter.c's batch and folding.
#include "mm/percpu_counter.h"

#include <gtest/gtest.h>

namespace faultline::mm {
namespace {

TEST(PercpuCounter, BatchIsMax32OrTwicePerCpu) {
  EXPECT_EQ(percpu_counter_batch(1), 32);
  EXPECT_EQ(percpu_counter_batch(16), 32);
  EXPECT_EQ(percpu_counter_batch(17), 34);
  EXPECT_EQ(percpu_counter_batch(84), 168);
}

TEST(PercpuCounter, FoldsWhenTheDeltaReachesTheBatch) {
  PercpuCounter c(2, 32);
  CpuCtx cpu0{0};
  for (int i = 0; i < 31; ++i) EXPECT_FALSE(c.add(cpu0, 1));
  EXPECT_EQ(c.read(), 0);  // the approximate value lags
  EXPECT_EQ(c.delta(0), 31);
  EXPECT_EQ(c.sum(), 31);
  EXPECT_TRUE(c.add(cpu0, 1));  // |31 + 1| >= 32: the whole delta moves
  EXPECT_EQ(c.read(), 32);
  EXPECT_EQ(c.delta(0), 0);
  EXPECT_EQ(c.folds(), 1u);
}

TEST(PercpuCounter, OneAddOfSixteenOrSixteenAddsOfOneFoldAlike) {
  // Seed 3 saves calls, not folds: 16 pages per fault-around, batch 32.
  PercpuCounter per_folio(1, 32), batched(1, 32);
  CpuCtx cpu{0};
  for (int fault = 0; fault < 8; ++fault) {
    for (int i = 0; i < 16; ++i) per_folio.add(cpu, 1);
    batched.add(cpu, 16);
  }
  EXPECT_EQ(per_folio.folds(), 4u);
  EXPECT_EQ(batched.folds(), 4u);
  EXPECT_EQ(per_folio.sum(), 128);
  EXPECT_EQ(batched.sum(), 128);
}

TEST(PercpuCounter, NegativeAmountsAndSeveralCpus) {
  PercpuCounter c(2, 32);
  CpuCtx cpu0{0}, cpu1{1};
  c.add(cpu0, 10);
  c.add(cpu1, 20);
  EXPECT_EQ(c.read(), 0);
  EXPECT_EQ(c.sum(), 30);
  EXPECT_TRUE(c.add(cpu1, -60));  // |20 - 60| >= 32: a zap folds at once
  EXPECT_EQ(c.read(), -40);
  EXPECT_EQ(c.delta(1), 0);
  EXPECT_EQ(c.sum(), -30);
}

TEST(PercpuCounter, FoldsAreTheOnlySharedWrites) {
  CoherenceTracker coh(2);
  PercpuCounter c(2, 32);
  c.instrument(coh, "rss.anon", "rss.percpu");
  CpuCtx cpu0{0, &coh}, cpu1{1, &coh};
  for (int i = 0; i < 64; ++i) {
    c.add(cpu0, 1);
    c.add(cpu1, 1);
  }
  const auto groups = coh.groups();
  ASSERT_EQ(groups.size(), 2u);
  EXPECT_EQ(groups[0].name, "rss.anon");
  EXPECT_EQ(groups[0].accesses, 4u);  // two folds per CPU
  EXPECT_EQ(groups[0].misses, 3u);    // all but the very first change hands
  EXPECT_EQ(groups[1].name, "rss.percpu");
  EXPECT_EQ(groups[1].accesses, 128u);
  EXPECT_EQ(groups[1].misses, 0u);
}

}  // namespace
}  // namespace faultline::mm
