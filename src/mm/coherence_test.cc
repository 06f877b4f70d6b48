// coherence_test.cc — the miss / upgrade classification of CoherenceTracker.
#include "mm/coherence.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace faultline::mm {
namespace {

TEST(Coherence, LinesStartCleanInEveryCache) {
  CoherenceTracker coh(2);
  const LineId l = coh.add_line("x");
  EXPECT_EQ(coh.access(0, l, false), LineOutcome::kHit);
  EXPECT_EQ(coh.access(1, l, false), LineOutcome::kHit);
}

TEST(Coherence, ReadAfterAnotherCpusWriteMisses) {
  CoherenceTracker coh(2);
  const LineId l = coh.add_line("x");
  EXPECT_EQ(coh.access(0, l, true), LineOutcome::kHit);  // nobody else holds it
  EXPECT_EQ(coh.access(1, l, false), LineOutcome::kMiss);
  EXPECT_EQ(coh.access(1, l, false), LineOutcome::kHit);
  EXPECT_EQ(coh.access(0, l, false), LineOutcome::kHit);  // the writer kept a copy
}

TEST(Coherence, WriteToASharedLineIsAnUpgrade) {
  CoherenceTracker coh(2);
  const LineId l = coh.add_line("x");
  coh.access(0, l, true);
  coh.access(1, l, false);                                   // miss, now shared
  EXPECT_EQ(coh.access(0, l, true), LineOutcome::kUpgrade);  // invalidates cpu 1
  EXPECT_EQ(coh.access(0, l, true), LineOutcome::kHit);      // exclusive now
  EXPECT_EQ(coh.access(1, l, true), LineOutcome::kMiss);     // RFO
}

// CPUs 0 and 1 share a domain, 2 is in another: a line another CPU of the
// requester's domain holds comes from the shared cache (near); one held
// only outside it, or copies outside it to invalidate, cross (far).
TEST(Coherence, DomainsTellNearFromFar) {
  CoherenceTracker coh(3, {0, 0, 1});
  const LineId l = coh.add_line("x");
  bool far = true;
  coh.access(0, l, true);
  EXPECT_EQ(coh.access(1, l, false, &far), LineOutcome::kMiss);
  EXPECT_FALSE(far);  // cpu 0, same domain, held it
  EXPECT_EQ(coh.access(2, l, false, &far), LineOutcome::kMiss);
  EXPECT_TRUE(far);  // only domain 0 held it
  EXPECT_EQ(coh.access(0, l, true, &far), LineOutcome::kUpgrade);
  EXPECT_TRUE(far);         // cpu 2's copy is across
  coh.access(1, l, false);  // near miss: 0 and 1 hold it
  EXPECT_EQ(coh.access(0, l, true, &far), LineOutcome::kUpgrade);
  EXPECT_FALSE(far);  // only cpu 1 to invalidate, in the same domain
  EXPECT_EQ(coh.total().far, 2u);
}

// Transfers of one line are served one after another: a request that
// comes while the line is moving starts when that transfer ends.
TEST(Coherence, TransfersOfALineQueue) {
  CoherenceTracker coh(2);
  const LineId a = coh.add_line("x");
  const LineId b = coh.add_line("x");
  EXPECT_EQ(coh.occupy(a, 100, 50), 100);
  EXPECT_EQ(coh.occupy(a, 120, 50), 150);  // waits for the first
  EXPECT_EQ(coh.occupy(a, 400, 50), 400);  // the line is free by then
  EXPECT_EQ(coh.occupy(b, 120, 50), 120);  // another line does not wait
}

TEST(Coherence, GroupsSumTheirLines) {
  CoherenceTracker coh(2);
  const LineId a = coh.add_line("vma.line2");
  const LineId b = coh.add_line("pte.ptl");
  const LineId c = coh.add_line("vma.line2");
  coh.access(0, a, true);
  coh.access(1, a, true);
  coh.access(0, c, true);
  coh.access(1, c, false);
  coh.access(1, b, true);
  const auto g = coh.groups();
  ASSERT_EQ(g.size(), 2u);
  EXPECT_EQ(g[0].name, "vma.line2");
  EXPECT_EQ(g[0].lines, 2u);
  EXPECT_EQ(g[0].accesses, 4u);
  EXPECT_EQ(g[0].misses, 2u);
  EXPECT_EQ(g[1].misses, 0u);
  EXPECT_EQ(coh.total().accesses, 5u);
}

TEST(Coherence, CpuCtxTalliesTheStep) {
  CoherenceTracker coh(2);
  const LineId l = coh.add_line("x");
  CpuCtx c0{0, &coh}, c1{1, &coh};
  c0.write(l);
  c1.read(l);
  c0.write(l);
  EXPECT_EQ(c1.step_misses, 1u);
  EXPECT_EQ(c0.step_upgrades, 1u);
  CpuCtx untracked{0};
  untracked.write(l);  // no tracker: nothing recorded
  EXPECT_EQ(coh.total().accesses, 3u);
}

// CPU i of coh with timing on, every transfer 100 ns.
CpuCtx timed_cpu(CoherenceTracker& coh, unsigned i) {
  CpuCtx c;
  c.cpu = i;
  c.coh = &coh;
  c.near_ns = c.far_ns = 100;
  c.timed = true;
  return c;
}

// A read miss pays the whole transfer but keeps the line from the next
// request for read_hold of it; a write keeps it for the whole transfer.
TEST(Coherence, AReadMissHoldsTheLineForPartOfItsTransfer) {
  for (const double hold : {1.0, 0.25}) {
    SCOPED_TRACE(hold);
    CoherenceTracker coh(3);
    const LineId l = coh.add_line("x");
    CpuCtx c[3];
    for (unsigned i = 0; i < 3; ++i) {
      c[i] = timed_cpu(coh, i);
      c[i].read_hold = hold;
    }
    c[0].begin_step(0);
    c[0].write(l);  // the line starts clean: a hit, no transfer
    c[1].begin_step(0);
    c[1].read(l);  // a miss: 100 ns for the reader
    EXPECT_EQ(c[1].step_transfer_ns, 100);
    c[2].begin_step(0);
    c[2].write(l);  // waits for the part of the read that holds the line
    EXPECT_EQ(c[2].step_transfer_ns, 100 * hold + 100);
    c[0].begin_step(0);
    c[0].write(l);  // waits for the whole of the write before it
    EXPECT_EQ(c[0].step_transfer_ns, 100 * hold + 200);
  }
}

// With a spread, each transfer costs its cost times a factor drawn
// uniformly with mean 1 and that coefficient of variation: the factors stay
// within 1 +- sqrt(3) x spread, average 1, and repeat for the same seed.
TEST(Coherence, ASpreadDrawsEachTransfersTimeAroundItsCost) {
  auto costs = [](uint64_t seed, double spread) {
    CoherenceTracker coh(2);
    const LineId l = coh.add_line("x");
    CpuCtx c[2];
    for (unsigned i = 0; i < 2; ++i) {
      c[i] = timed_cpu(coh, i);
      c[i].spread = spread;
      c[i].rng = Rng(seed, i);
    }
    std::vector<double> out;
    double now = 0;
    for (int k = 0; k < 4000; ++k) {
      CpuCtx& x = c[k % 2];  // the CPUs take turns: every write is a miss
      x.begin_step(now);
      x.write(l);
      if (k > 0) out.push_back(x.step_transfer_ns);
      now += 1000;  // long after the previous transfer: no wait
    }
    return out;
  };
  for (const double t : costs(1, 0)) ASSERT_EQ(t, 100);
  const std::vector<double> a = costs(1, 0.2), b = costs(1, 0.2), d = costs(2, 0.2);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, d);
  double sum = 0, sq = 0;
  for (const double t : a) {
    ASSERT_GE(t, 100 * (1 - 0.2 * std::sqrt(3.0)));
    ASSERT_LE(t, 100 * (1 + 0.2 * std::sqrt(3.0)));
    sum += t;
    sq += t * t;
  }
  const double mean = sum / static_cast<double>(a.size());
  const double cv = std::sqrt(sq / static_cast<double>(a.size()) - mean * mean) / mean;
  EXPECT_NEAR(mean, 100, 2);
  EXPECT_NEAR(cv, 0.2, 0.01);
}

}  // namespace
}  // namespace faultline::mm
