// concurrent_engine_test.cc — exact coherence counts of the deterministic
// interleavings, derived by hand (see the comments), and their direction
// per seed variant.
#include "engine/concurrent_engine.h"

#include <gtest/gtest.h>

namespace faultline::engine {
namespace {

Config pft(unsigned threads, uint64_t region, uint64_t passes) {
  Config c;
  c.kernel.profile = mm::Release::k7_4;
  c.access.workload = workload::Kind::kPft;
  c.access.op = workload::AccessOp::kWrite;
  c.access.threads = threads;
  c.access.region = region;
  c.access.passes = passes;
  c.access.interleave = Interleave::kLockstep;
  return c;
}

RunResult run(const Config& c) {
  auto r = make_concurrent_engine()->run(c, nullptr, {});
  EXPECT_TRUE(r.ok());
  return r.ok() ? *r : RunResult{};
}

double total(const RunResult& r, const std::string& name) { return r.get(name) * r.get("pgfault"); }

enum Variant { kBase, kPatch1, kPatch12 };
Config with(Config c, Variant v) {
  if (v != kBase) c.kernel.vma_refcnt_p1 = true;
  if (v == kPatch12) c.kernel.vma_refcnt_p2 = true;
  return c;
}

TEST(ConcurrentEngine, RoutesOnlyConcurrentWorkloads) {
  Config c;
  EXPECT_FALSE(is_concurrent_workload(c));
  c.access.workload = workload::Kind::kPft;
  EXPECT_TRUE(is_concurrent_workload(c));
}

TEST(ConcurrentEngine, OneThreadHasNoTransfers) {
  for (Variant v : {kBase, kPatch1, kPatch12}) {
    const RunResult r = run(with(pft(1, 2 << 20, 2), v));
    EXPECT_EQ(r.get("pgfault"), 1024);
    EXPECT_EQ(r.get("vma_lock_success"), 1024);
    EXPECT_EQ(r.get("model.coherence_misses"), 0);
    EXPECT_EQ(r.get("model.coherence_upgrades"), 0);
    EXPECT_EQ(r.get("rss_anon_kb"), 0);  // the last zap emptied it
  }
  // Line 2 accesses per fault: inc + dec, plus 2 assertion loads (base,
  // +patch1) and the __vm_anon_pgoff_hi load (base only). Two zaps (inc + dec
  // each) over 1024 faults.
  const double zap = 4.0 / 1024;
  EXPECT_DOUBLE_EQ(
      run(with(pft(1, 2 << 20, 2), kBase)).get("model.coherence.vma.line2.accesses_per_fault"),
      5 + zap);
  EXPECT_DOUBLE_EQ(
      run(with(pft(1, 2 << 20, 2), kPatch1)).get("model.coherence.vma.line2.accesses_per_fault"),
      4 + zap);
  EXPECT_DOUBLE_EQ(
      run(with(pft(1, 2 << 20, 2), kPatch12)).get("model.coherence.vma.line2.accesses_per_fault"),
      2 + zap);
}

// Two threads in lockstep, 512 pages (one PTE table) each, 2 passes: 2048
// faults. A runs each step just before B, so on vm_refcnt's line:
//   vma_start_read inc   A miss (B wrote last)      B miss
//   assertion loads      A miss, hit                B hit, hit   (base, +patch1)
//   __vm_anon_pgoff_hi   A hit                      B hit        (base)
//   vma_end_read dec     A upgrade (B shares it)    B miss
// = 2 misses + 0.5 upgrades per fault; without the loads (+patch2) the dec
// finds B's inc: 2 misses, no upgrade. The first inc ever is a hit, and each
// of the 4 zaps adds an inc and a dec per thread, all misses:
//   misses = 4 x 512 x 2 + 4 x 2 - 1 = 4103, upgrades = 512 x 2 = 1024.
// Other lines: line 1 once (B reads the anon_vma A installed), the
// mmap_lock line once + 1 upgrade (A's trylock for it), the anon RSS count
// 17 folds per thread per pass (16 at 32-page batches + the zap's) less the
// first = 67, the TLB line 4 misses per pass + 2 upgrades per pass less one
// (the IPI handlers read tlb_gen).
TEST(ConcurrentEngine, TwoThreadsLockstepExactCounts) {
  for (Variant v : {kBase, kPatch1, kPatch12}) {
    SCOPED_TRACE(v);
    const RunResult r = run(with(pft(2, 4 << 20, 2), v));
    ASSERT_EQ(r.get("pgfault"), 2048);
    EXPECT_EQ(total(r, "model.coherence.vma.line0.misses_per_fault"), 0);
    EXPECT_EQ(total(r, "model.coherence.vma.line1.misses_per_fault"), 1);
    EXPECT_EQ(total(r, "model.coherence.vma.line2.misses_per_fault"), 4103);
    EXPECT_EQ(total(r, "model.coherence.vma.line2.upgrades_per_fault"), v == kPatch12 ? 0 : 1024);
    EXPECT_EQ(total(r, "model.coherence.mm.mmap_lock.misses_per_fault"), 1);
    EXPECT_EQ(total(r, "model.coherence.mm.mmap_lock.upgrades_per_fault"), 1);
    EXPECT_EQ(total(r, "model.coherence.rss.anon.misses_per_fault"), 67);
    EXPECT_EQ(total(r, "model.coherence.mm.tlb.misses_per_fault"), 8);
    EXPECT_EQ(total(r, "model.coherence.mm.tlb.upgrades_per_fault"), 3);
    EXPECT_EQ(total(r, "model.coherence.pte.ptl.misses_per_fault"), 0);
    EXPECT_EQ(r.get("model.coherence_misses"), 4180);
    EXPECT_EQ(r.get("model.coherence_upgrades"), v == kPatch12 ? 4 : 1028);
    EXPECT_EQ(r.get("model.tlb_ipis"), 4);
  }
}

// The timed interleaving is the scenario's: with 7 CPUs on one VMA each
// patch removes transfers of vm_refcnt's line, as the seed reports; with a
// VMA per thread or processes there is nothing left to remove.
TEST(ConcurrentEngine, TimedSevenThreadsMoveAsTheSeedReports) {
  using workload::TaskSharing;
  auto transfers = [](Variant v, TaskSharing tasks) {
    Config c = with(pft(7, 7 << 20, 2), v);
    c.access.interleave = Interleave::kTimed;
    c.access.tasks = tasks;
    return run(c).get("model.coherence_transfers_per_fault");
  };
  const double base = transfers(kBase, TaskSharing::kThreads);
  const double p1 = transfers(kPatch1, TaskSharing::kThreads);
  const double p12 = transfers(kPatch12, TaskSharing::kThreads);
  EXPECT_GT(base, p1 + 0.2);
  EXPECT_GT(p1, p12 + 0.2);
  EXPECT_LT(transfers(kBase, TaskSharing::kThreadsVmaEach), 0.1);
  EXPECT_EQ(transfers(kBase, TaskSharing::kProcesses), 0);
  EXPECT_EQ(transfers(kPatch12, TaskSharing::kProcesses), 0);
}

// Seven threads packed in one domain or spread one per domain: the same
// steps, but spread, vm_refcnt's line crosses domains, and each crossing
// costs smp.line_far_ns and holds up the next one.
TEST(ConcurrentEngine, SpreadAcrossDomainsPaysTheFarCost) {
  Config c = pft(7, 7 << 20, 2);
  c.access.interleave = Interleave::kTimed;
  c.machine.cpus = 84;
  c.machine.cpus_per_domain = 7;
  c.smp.line_near_ns = 20;
  c.smp.line_far_ns = 150;
  const RunResult packed = run(c);
  c.access.placement = Placement::kSpread;
  const RunResult spread = run(c);
  EXPECT_EQ(packed.get("model.coherence_far_transfers_per_fault"), 0);
  EXPECT_GT(spread.get("model.coherence_far_transfers_per_fault"), 3);
  EXPECT_LT(spread.get("model.est_faults_per_s"), 0.9 * packed.get("model.est_faults_per_s"));
  // With the two costs equal, where the tasks run makes no difference.
  c.smp.line_far_ns = c.smp.line_near_ns;
  EXPECT_EQ(run(c).get("model.est_faults_per_s"), packed.get("model.est_faults_per_s"));
}

// A line that every fault moves bounds the rate: however many threads, no
// more than one fault per (its transfers per fault x their cost).
TEST(ConcurrentEngine, ABouncingLineBoundsTheRate) {
  Config c = with(pft(12, 12 << 20, 1), kPatch12);
  c.access.interleave = Interleave::kTimed;
  c.smp.line_near_ns = c.smp.line_far_ns = 400;
  const RunResult r = run(c);
  const double per_fault_ns = (r.get("model.coherence.vma.line2.misses_per_fault") +
                               r.get("model.coherence.vma.line2.upgrades_per_fault")) *
                              400;
  EXPECT_LE(r.get("model.est_faults_per_s"), 1e9 / per_fault_ns * 1.02);
  EXPECT_GE(r.get("model.est_faults_per_s"), 1e9 / per_fault_ns * 0.8);
}

// Read misses that hold their line for part of the transfer: the base
// kernel's reads of vm_refcnt's line then queue the writes less, so the
// same faults run faster, and the bound counts each read at its part.
TEST(ConcurrentEngine, ReadsThatHoldTheLineLessRaiseTheBound) {
  Config c = pft(12, 12 << 20, 1);
  c.access.interleave = Interleave::kTimed;
  c.smp.line_near_ns = c.smp.line_far_ns = 400;
  const RunResult whole = run(c);
  c.smp.line_read_hold = 0.25;
  const RunResult part = run(c);
  EXPECT_GT(part.get("model.est_faults_per_s"), 1.1 * whole.get("model.est_faults_per_s"));
  const double writes = part.get("model.coherence.vma.line2.upgrades_per_fault") +
                        part.get("model.coherence.vma.line2.misses_per_fault");
  EXPECT_LE(part.get("model.est_faults_per_s"), 1e9 / (writes * 0.25 * 400) * 1.02);
}

// pft's timed phase: one pass, the pages left mapped. No zap, and so none
// of the zap's cost in the time.
TEST(ConcurrentEngine, WithoutTheZapOnePassLeavesThePagesMapped) {
  Config c = pft(4, 4 << 20, 1);
  c.access.interleave = Interleave::kTimed;
  c.smp.zap_page_ns = 500;
  const RunResult zapped = run(c);
  c.access.zap = false;
  const RunResult mapped = run(c);
  EXPECT_GT(zapped.get("model.zaps"), 0);
  EXPECT_EQ(mapped.get("model.zaps"), 0);
  EXPECT_EQ(mapped.get("pgfault"), zapped.get("pgfault"));
  EXPECT_EQ(mapped.get("pgfault"), 1024);
  EXPECT_EQ(mapped.get("rss_anon_kb"), 4096);
  EXPECT_GT(mapped.get("model.est_faults_per_s"), 1.2 * zapped.get("model.est_faults_per_s"));
}

TEST(ConcurrentEngine, DebugVmKeepsTheAssertion) {
  Config c = with(pft(1, 2 << 20, 1), kPatch12);
  c.kernel.debug_vm = true;
  EXPECT_DOUBLE_EQ(run(c).get("model.coherence.vma.line2.accesses_per_fault"), 4 + 2.0 / 512);
}

// The mmap_lock path (no per-VMA locks): every fault writes the mm's
// rwsem line twice, and with two threads in lockstep each write misses
// except the second of A's pair.
TEST(ConcurrentEngine, MmapLockPathBouncesTheRwsem) {
  Config c = pft(2, 4 << 20, 1);
  c.kernel.per_vma_lock = false;
  const RunResult r = run(c);
  EXPECT_EQ(r.get("vma_lock_success"), 0);
  EXPECT_EQ(r.get("model.mmap_lock_faults"), 1024);
  EXPECT_EQ(r.get("model.coherence.vma.line2.misses_per_fault"), 0);
  EXPECT_GT(r.get("model.coherence.mm.mmap_lock.misses_per_fault"), 1.9);
}

// Four processes on two CPUs (machine.cpus) take turns: the estimate is
// that of two at a time, twice one task's rate, not four times.
TEST(ConcurrentEngine, MoreTasksThanCpusShareThem) {
  Config one = pft(1, 4 << 20, 2);
  one.access.tasks = workload::TaskSharing::kProcesses;
  Config four = pft(4, 16 << 20, 2);
  four.access.tasks = workload::TaskSharing::kProcesses;
  const double rate1 = run(one).get("model.est_faults_per_s");
  const double rate4 = run(four).get("model.est_faults_per_s");
  four.machine.cpus = 2;
  const double rate4on2 = run(four).get("model.est_faults_per_s");
  EXPECT_NEAR(rate4 / rate1, 4.0, 0.2);
  EXPECT_NEAR(rate4on2 / rate1, 2.0, 0.1);
}

// Seed 3: lat_pagefault, one task, 2048 pages (4 PTE tables) per pass: 128
// faults of 16 pages. Unbatched: one add_mm_counter per folio; batched: one
// per call; the zap adds one per PTE table either way.
Config lat_pagefault(bool batched, unsigned threads, uint64_t region, uint64_t passes) {
  Config c;
  c.kernel.profile = mm::Release::k7_1;
  c.kernel.batched_rss = batched;
  c.access.workload = workload::Kind::kLatPagefault;
  c.access.threads = threads;
  c.access.region = region;
  c.access.passes = passes;
  c.access.interleave = Interleave::kLockstep;
  return c;
}

TEST(ConcurrentEngine, LatPagefaultRssUpdates) {
  for (bool batched : {false, true}) {
    const RunResult r = run(lat_pagefault(batched, 1, 8 << 20, 3));
    EXPECT_EQ(r.get("pgfault"), 3 * 128);
    EXPECT_EQ(r.get("model.rss_updates"), 3 * ((batched ? 128 : 2048) + 4));
    // Folds: 2048 pages at batch 32 = 64 per pass, plus 4 zap folds.
    EXPECT_EQ(r.get("model.rss_folds"), 3 * (64 + 4));
    EXPECT_EQ(r.get("model.coherence_misses"), 0);
    EXPECT_EQ(r.get("rss_file_kb"), 0);
  }
}

// Seed 3 with two threads on one mapping, in lockstep so both settings run
// the same interleaving: batching removes 15 of the 16 percpu_counter adds
// per fault (each an access to the CPU's own delta line), but an add of 16
// and sixteen adds of 1 reach the batch equally often, so the shared count's
// line moves as often either way.
TEST(ConcurrentEngine, LatPagefaultBatchingLeavesTransfersAlone) {
  RunResult res[2];
  for (bool batched : {false, true}) res[batched] = run(lat_pagefault(batched, 2, 16 << 20, 2));
  EXPECT_EQ(res[0].get("model.rss_folds"), res[1].get("model.rss_folds"));
  EXPECT_GT(res[0].get("model.coherence_misses"), 0);
  EXPECT_EQ(res[0].get("model.coherence_misses"), res[1].get("model.coherence_misses"));
  EXPECT_EQ(res[0].get("model.coherence_upgrades"), res[1].get("model.coherence_upgrades"));
  EXPECT_NEAR(
      res[0].get("model.line_accesses_per_fault") - res[1].get("model.line_accesses_per_fault"),
      15.0, 0.1);
  EXPECT_GT(res[0].get("model.est_ns_per_fault"), res[1].get("model.est_ns_per_fault"));
  EXPECT_GT(res[1].get("elapsed_s"), 0);
}

}  // namespace
}  // namespace faultline::engine
