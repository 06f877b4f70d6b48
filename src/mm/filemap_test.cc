// filemap_test.cc — the file read-fault path (mm/filemap.c, mm/memory.c,
// arch/x86/mm/fault.c) as docs/fault-path.md describes it: the worked
// per-fault trace (the AppendixB tests; 'A worked per-fault trace'),
// fault-around geometry (do_fault_around), the mmap_miss state machine and
// its variants (do_sync_mmap_readahead, filemap_map_pages, 'Seed 1's P1 and
// P2'), madvise hints ('madvise and fadvise') and the attempt structure of a
// fault (do_user_addr_fault, mm_account_fault).
#include "mm/filemap.h"

#include <gtest/gtest.h>

#include <ostream>
#include <vector>

#include "harness/mm_model.h"
#include "mm/pagecache_runs.h"
#include "util/random.h"

namespace faultline::mmtest {
namespace {

// --- helpers ----------------------------------------------------------------

// The counters the worked per-fault trace lists after each step.
struct Counters {
  uint64_t pgfault = 0;
  uint64_t pgmajfault = 0;
  uint64_t min_flt = 0;
  uint64_t maj_flt = 0;
  uint64_t pgpgin_kb = 0;
  int64_t rss_file = 0;
  uint32_t mmap_miss = 0;
  bool operator==(const Counters&) const = default;
};

std::ostream& operator<<(std::ostream& os, const Counters& c) {
  return os << "{pgfault " << c.pgfault << ", pgmajfault " << c.pgmajfault << ", min_flt "
            << c.min_flt << ", maj_flt " << c.maj_flt << ", pgpgin " << c.pgpgin_kb
            << " KiB, rss_file " << c.rss_file << ", mmap_miss " << c.mmap_miss << "}";
}

Counters counters(const Model& m) {
  return {m.pgfault(),   m.pgmajfault(), m.min_flt(),  m.maj_flt(),
          m.pgpgin_kb(), m.rss_file(),   m.mmap_miss()};
}

// The fault-around windows [start, end] filemap_map_pages was called with.
struct Window {
  pgoff_t start, end;
  bool operator==(const Window&) const = default;
};
std::ostream& operator<<(std::ostream& os, const Window& w) {
  return os << "[" << w.start << ", " << w.end << "]";
}

std::vector<Window> windows(const RecordingTracer& t) {
  std::vector<Window> out;
  for (const TraceEvent& e : t.of(TraceKind::kFilemapMapPages)) out.push_back({e.index, e.end});
  return out;
}

// The worked trace's machine: N = 5,242,880 pages (20 GiB), R = 2048, fault-around
// 16 pages, a 2 MiB-aligned VMA at file offset 0, per-VMA locks, no large
// folios, and more memory than the test will ever fill.
ModelSetup appendix_b(bool p1p2) {
  ModelSetup s = ModelSetup().bytes(20 * kGiB).ra(2048).order(0);
  if (p1p2) s.with(p1_p2);
  return s;
}

// A smaller file with the seed's readahead window.
ModelSetup ra2048() { return ModelSetup().bytes(64 * kMiB).ra(2048); }  // 16384 pages

// --- the worked per-fault trace (docs/fault-path.md) -------------------------

class AppendixB : public ::testing::TestWithParam<bool> {
 protected:
  bool p1p2() const { return GetParam(); }
  // mmap_miss after a step: baseline (B) or P1+P2 (P).
  uint32_t miss(uint32_t b, uint32_t p) const { return p1p2() ? p : b; }
};

TEST_P(AppendixB, WorkedPerFaultTrace) {
  Model m(appendix_b(p1p2()));
  ASSERT_EQ(m.as().nr_pages(), 5'242'880u);

  // 1. Touch 10000 (miss): read-around [8976, 11024), mark on 10512; the
  // TRIED retry's fault-around maps [10000, 10015].
  m.touch(10000);
  EXPECT_EQ(counters(m), (Counters{1, 1, 0, 1, 8192, 16, miss(0, 1)}));
  EXPECT_EQ(m.attempts(), 2u);
  EXPECT_EQ(m.ra().start, 8976u);
  EXPECT_EQ(m.ra().size, 2048u);
  EXPECT_EQ(m.ra().async_size, 512u);
  EXPECT_EQ(m.cached_in(8976, 11023), 2048u);
  EXPECT_FALSE(m.cached(8975));
  EXPECT_FALSE(m.cached(11024));
  EXPECT_EQ(m.marks(8976, 11023), std::vector<pgoff_t>{10512});
  EXPECT_EQ(m.mapped_in(10000, 10015), 16u);
  EXPECT_FALSE(m.mapped(9999));
  EXPECT_FALSE(m.mapped(10016));

  // 2. Touch 10001: the PTE is present, no fault.
  m.touch(10001);
  EXPECT_EQ(counters(m), (Counters{1, 1, 0, 1, 8192, 16, miss(0, 1)}));
  EXPECT_EQ(m.attempts(), 2u);
  EXPECT_EQ(m.count(VmEvent::pte_hits), 1u);

  // 3. Touch 10100 (cached, unmapped): one attempt, fault-around maps
  // [10096, 10111]; B −16, P −1.
  m.touch(10100);
  EXPECT_EQ(counters(m), (Counters{2, 1, 1, 1, 8192, 32, miss(0, 0)}));
  EXPECT_EQ(m.attempts(), 3u);
  EXPECT_EQ(m.mapped_in(10096, 10111), 16u);

  // 4. Touch 10512 (PG_readahead): fault-around skips it, ->fault runs the
  // async readahead [11024, 13072) and retries without TRIED: a minor fault.
  m.touch(10512);
  EXPECT_EQ(counters(m), (Counters{3, 1, 2, 1, 16384, 48, miss(0, 0)}));
  EXPECT_EQ(m.attempts(), 5u);
  EXPECT_EQ(m.ra().start, 11024u);
  EXPECT_EQ(m.ra().size, 2048u);
  EXPECT_EQ(m.ra().async_size, 2048u);
  EXPECT_EQ(m.ra().order, 0u);  // 2 with large folios
  EXPECT_EQ(m.cached_in(11024, 13071), 2048u);
  EXPECT_EQ(m.marks(8976, 13071), std::vector<pgoff_t>{11024});
  EXPECT_EQ(m.mapped_in(10512, 10527), 16u);
  EXPECT_EQ(m.count(VmEvent::ra_async), 1u);

  // 5. Touch 2,000,000 (miss): same as step 1.
  m.touch(2'000'000);
  EXPECT_EQ(counters(m), (Counters{4, 2, 2, 2, 24576, 64, miss(0, 1)}));
  EXPECT_EQ(m.attempts(), 7u);
  EXPECT_EQ(m.ra().start, 2'000'000u - 1024);
  EXPECT_EQ(m.marks(1'998'976, 2'001'023), std::vector<pgoff_t>{2'000'512});
  EXPECT_EQ(m.count(VmEvent::ra_readaround), 2u);
}

INSTANTIATE_TEST_SUITE_P(Variants, AppendixB, ::testing::Values(false, true),
                         [](const auto& p) { return p.param ? "P1P2" : "Baseline"; });

// Step 4 in detail: the baseline credits every mappable page of both
// fault-around passes (the already-mapped ones included) plus the async −1;
// P1+P2 credits the async −1 and the second pass's faulting page.
TEST(AppendixB, MarkerHitCreditsEachPass) {
  for (const bool p : {false, true}) {
    SCOPED_TRACE(p ? "P1+P2" : "baseline");
    Model m(appendix_b(p));
    m.touch(10000);
    m.set_mmap_miss(100);
    m.touch(10512);
    EXPECT_EQ(m.mmap_miss(), p ? 100u - 1 - 1 : 100u - 15 - 1 - 16);
  }
}

// Step 6: with P1+P2, 101 misses without a hit drive mmap_miss to 101; the
// 101st reads a single page and is still a major fault whose TRIED retry
// maps only that page.
TEST(AppendixB, HundredAndFirstMissReadsOnePage) {
  Model m(appendix_b(true));
  const auto miss_at = [](uint64_t i) { return 10000 + i * 4096; };  // windows never meet
  for (uint64_t i = 0; i < 100; ++i) m.touch(miss_at(i));
  EXPECT_EQ(m.mmap_miss(), 100u);
  EXPECT_EQ(m.count(VmEvent::ra_readaround), 100u);
  EXPECT_EQ(m.pgpgin_kb(), 100u * 8192);
  EXPECT_EQ(m.rss_file(), 100 * 16);

  m.touch(miss_at(100));
  EXPECT_EQ(m.mmap_miss(), 101u);
  EXPECT_EQ(m.pgpgin_kb(), 100u * 8192 + 4);
  EXPECT_EQ(m.count(VmEvent::ra_readaround), 100u);
  EXPECT_EQ(m.count(VmEvent::ra_skipped_mmap_miss), 1u);
  EXPECT_EQ(m.count(VmEvent::single_folio_reads), 1u);
  EXPECT_EQ(m.pgmajfault(), 101u);
  EXPECT_EQ(m.maj_flt(), 101u);
  EXPECT_EQ(m.attempts(), 202u);
  EXPECT_EQ(m.rss_file(), 100 * 16 + 1);
  EXPECT_EQ(m.cached_in(miss_at(100) - 1024, miss_at(100) + 1023), 1u);
}

// The baseline never gets there: every miss is +1 then −16 on its retry.
TEST(AppendixB, BaselineKeepsReadAroundOn) {
  Model m(appendix_b(false));
  for (uint64_t i = 0; i < 101; ++i) m.touch(10000 + i * 4096);
  EXPECT_EQ(m.mmap_miss(), 0u);
  EXPECT_EQ(m.k().mmap_miss_peak(), 1u);
  EXPECT_EQ(m.count(VmEvent::ra_readaround), 101u);
  EXPECT_EQ(m.pgpgin_kb(), 101u * 8192);
}

// --- fault-around geometry (do_fault_around) ---------------------------------

class FaultAround : public ::testing::Test {
 protected:
  // A warm file: every page cached, so one fault-around call maps its window.
  void build(ModelSetup s) {
    m_ = std::make_unique<Model>(s);
    m_->cache(0, m_->as().nr_pages() - 1);
    m_->k().set_tracer(&trace_);
  }
  Model& m() { return *m_; }
  std::vector<Window> windows() const { return faultline::mmtest::windows(trace_); }

  std::unique_ptr<Model> m_;
  RecordingTracer trace_;
};

// Example 1: a 2 MiB-aligned VMA at offset 0, fault at pgoff 1000 (slot 488).
TEST_F(FaultAround, WindowIsTheAlignedBlockOfVirtualAddresses) {
  build({});
  m().touch(1000);
  EXPECT_EQ(windows(), (std::vector<Window>{{992, 1007}}));
  EXPECT_EQ(m().mapped_in(992, 1007), 16u);
  EXPECT_FALSE(m().mapped(991));
  EXPECT_FALSE(m().mapped(1008));
  EXPECT_EQ(m().rss_file(), 16);
  EXPECT_EQ(m().count(VmEvent::fault_around_mapped), 16u);
}

// Example 2: the VMA starts at slot 100 of its page table; a fault at VMA
// page 5 (slot 105) gets [max(96, 100), 115] → pgoffs [0, 15].
TEST_F(FaultAround, WindowStartsAtVmaStartInsideItsTable) {
  build(ModelSetup().align(100));
  m().touch(5);
  EXPECT_EQ(windows(), (std::vector<Window>{{0, 15}}));
  EXPECT_EQ(m().mapped_in(0, 15), 16u);
  EXPECT_FALSE(m().mapped(16));
}

// The block is aligned in virtual space, not in the file: a VMA at a 2 MiB
// boundary mapping the file from pgoff 3 faults around [3 + 16, 3 + 31].
TEST_F(FaultAround, WindowIsNotAlignedInFileOffsets) {
  build(ModelSetup().pgoff(3));
  m().touch(20);
  EXPECT_EQ(windows(), (std::vector<Window>{{19, 34}}));
  EXPECT_EQ(m().mapped_in(16, 31), 16u);
}

TEST_F(FaultAround, WindowIsClippedAtVmaEnd) {
  build(ModelSetup().vma_pages(20));
  m().touch(18);
  EXPECT_EQ(windows(), (std::vector<Window>{{16, 19}}));
  EXPECT_EQ(m().rss_file(), 4);
}

// A VMA starting at slot 500: the window [500, 515] would cross into the
// next page table; it stops at slot 511. The next table starts a new block.
TEST_F(FaultAround, WindowIsClippedAtPageTableEnd) {
  build(ModelSetup().align(500));
  m().touch(5);
  EXPECT_EQ(windows(), (std::vector<Window>{{0, 11}}));
  m().touch(12);  // slot 0 of the next table
  EXPECT_EQ(windows(), (std::vector<Window>{{0, 11}, {12, 27}}));
  EXPECT_EQ(m().rss_file(), 12 + 16);
}

// filemap_map_pages clamps the window to the last page inside i_size.
TEST_F(FaultAround, WindowIsClampedAtEof) {
  build(ModelSetup().bytes(10 * kPageSize + 100).vma_pages(16));
  ASSERT_EQ(m().as().nr_pages(), 11u);
  m().touch(3);
  EXPECT_EQ(windows(), (std::vector<Window>{{0, 10}}));
  EXPECT_EQ(m().rss_file(), 11);
}

// next_uptodate_folio() skips PG_readahead folios: fault-around never maps a
// marked page (it must reach ->fault to start the async readahead).
TEST_F(FaultAround, SkipsReadaheadMarkedPages) {
  build({});
  m().as().set(5, kPgReadahead);
  m().touch(0);
  EXPECT_FALSE(m().mapped(5));
  EXPECT_EQ(m().mapped_in(0, 15), 15u);
  EXPECT_EQ(m().rss_file(), 15);
  EXPECT_TRUE(m().marked(5));
}

// Pages that are not cached (holes, shadows) are skipped too.
TEST(FaultAroundCold, MapsOnlyCachedPages) {
  Model m;
  m.cache(0, 3);
  m.cache(8, 8);
  m.touch(0);
  EXPECT_EQ(m.rss_file(), 5);
  EXPECT_TRUE(m.mapped(8));
  EXPECT_FALSE(m.mapped(4));
}

TEST(FaultAroundBytes, RoundsDownToAPowerOfTwoOfPages) {
  const auto pages = [](uint32_t bytes) {
    KernelProfile p;
    p.fault_around_bytes = bytes;
    return p.fault_around_pages();
  };
  EXPECT_EQ(pages(65536), 16u);
  EXPECT_EQ(pages(4096), 1u);
  EXPECT_EQ(pages(0), 1u);
  EXPECT_EQ(pages(100000), 16u);
  EXPECT_EQ(pages(2u << 20), 512u);
}

TEST(FaultAroundBytes, LargerWindowMapsMorePages) {
  Model m(ModelSetup().with([](KernelProfile& p) { p.fault_around_bytes = 128 << 10; }));
  m.cache(0, 127);
  m.touch(40);
  EXPECT_EQ(m.mapped_in(32, 63), 32u);
  EXPECT_FALSE(m.mapped(31));
  EXPECT_FALSE(m.mapped(64));
}

// fault_around_bytes = 4096 disables fault-around: every page faults, and
// each fault is resolved by ->fault + finish_fault (one PTE).
TEST(FaultAroundBytes, OnePageDisablesFaultAround) {
  Model m(ModelSetup().with(fault_around_off));
  m.cache(0, 31);
  m.touch_range(0, 31);
  EXPECT_EQ(m.pgfault(), 32u);
  EXPECT_EQ(m.min_flt(), 32u);
  EXPECT_EQ(m.attempts(), 32u);
  EXPECT_EQ(m.count(VmEvent::fault_around_calls), 0u);
  EXPECT_EQ(m.rss_file(), 32);
}

// Without fault-around the retry of a miss is resolved inside ->fault on the
// TRIED attempt (no async path, no credit), and a first-attempt hit reaches
// do_async_mmap_readahead (−1): mmap_miss is exactly misses − hits
// (docs/fault-path.md, 'The mmap_miss credit').
TEST(FaultAroundBytes, WithoutFaultAroundMmapMissCountsMissesMinusHits) {
  Model m(ra2048().with(fault_around_off));
  m.touch(10000);
  EXPECT_EQ(m.pgmajfault(), 1u);
  EXPECT_EQ(m.maj_flt(), 1u);
  EXPECT_EQ(m.attempts(), 2u);
  EXPECT_EQ(m.rss_file(), 1);
  EXPECT_EQ(m.pgpgin_kb(), 8192u);
  EXPECT_EQ(m.count(VmEvent::single_folio_reads), 0u);
  EXPECT_EQ(m.mmap_miss(), 1u);

  m.touch(10001);  // cached: a hit through ->fault
  EXPECT_EQ(m.min_flt(), 1u);
  EXPECT_EQ(m.attempts(), 3u);
  EXPECT_EQ(m.rss_file(), 2);
  EXPECT_EQ(m.mmap_miss(), 0u);

  m.touch(14000);
  m.touch(12500);  // outside every window: two misses
  EXPECT_EQ(m.mmap_miss(), 2u);
}

// --- madvise hints (mm/madvise.c) --------------------------------------------

// MADV_RANDOM: no read-around; each miss reads exactly one folio, and the
// sync path neither increments mmap_miss nor (P2) does the retry credit it.
// --- a hypervisor that shadows the page tables (cpu.shadow_fault_ns) -------

ModelSetup shadowed() {
  CpuCosts c;
  c.shadow_fault_ns = 10000;
  return ModelSetup().costs(c);
}

// A fault-around block of 16 PTEs loaded in order: the faulting load's
// retry exits and maps its aligned group of 8, a load in the other group
// exits once more; a second pass exits no more.
TEST(ShadowPaging, TwoExitsForAFaultAroundBlockLoadedInOrder) {
  Model m(shadowed());
  m.cache(0, 63);
  m.touch_range(0, 15);
  EXPECT_EQ(m.pgfault(), 1u);
  EXPECT_EQ(m.count(VmEvent::shadow_faults), 2u);
  m.touch_range(0, 15);
  EXPECT_EQ(m.count(VmEvent::shadow_faults), 2u);
  // The same through the batched path, over the next block.
  m.touch(16);
  EXPECT_EQ(m.count(VmEvent::shadow_faults), 3u);
  EXPECT_EQ(handle_pte_hits(m.k(), m.vma(), 17, 15, /*write=*/false), 15u);
  EXPECT_EQ(m.count(VmEvent::shadow_faults), 4u);
}

// The prefetch goes through the group in order and stops at the first PTE
// that is not present: a group with a hole maps only what lies before it.
TEST(ShadowPaging, PrefetchStopsAtTheFirstAbsentPte) {
  Model m(shadowed());
  m.cache(0, 2);
  m.cache(4, 7);  // page 3 is not cached: fault-around leaves its PTE empty
  m.touch(5);     // fault; the retry maps 5, then 0, 1, 2 and stops at 3
  EXPECT_EQ(m.count(VmEvent::shadow_faults), 1u);
  m.touch(1);
  EXPECT_EQ(m.count(VmEvent::shadow_faults), 1u);
  m.touch(6);  // past the hole: an exit of its own, and again no prefetch
  EXPECT_EQ(m.count(VmEvent::shadow_faults), 2u);
  m.touch(7);
  EXPECT_EQ(m.count(VmEvent::shadow_faults), 3u);
}

// The exits cost shadow_fault_ns each, and a PTE the kernel sets again (a
// zap, then a fault) loses its shadow.
TEST(ShadowPaging, ExitsCostTimeAndARewrittenPteExitsAgain) {
  Model with(shadowed()), without;
  for (Model* m : {&with, &without}) {
    m->cache(0, 15);
    m->touch_range(0, 15);
  }
  EXPECT_EQ(with.k().now_ps() - without.k().now_ps(), 2 * 10000 * 1000);
  EXPECT_EQ(without.count(VmEvent::shadow_faults), 0u);
  do_madvise(with.k(), with.vma(), 0, 16, Madvise::kDontneed);
  with.touch(3);
  EXPECT_EQ(with.count(VmEvent::shadow_faults), 3u);
}

TEST(MadvRandom, EachMissReadsOnePage) {
  Model m(ra2048().with(p1_p2));
  m.madvise(Madvise::kRandom);
  for (const uint64_t p : {100, 5000, 9000}) m.touch(p);
  EXPECT_EQ(m.pgpgin_kb(), 12u);
  EXPECT_EQ(m.pgmajfault(), 3u);
  EXPECT_EQ(m.maj_flt(), 3u);
  EXPECT_EQ(m.count(VmEvent::ra_readaround), 0u);
  EXPECT_EQ(m.count(VmEvent::single_folio_reads), 3u);
  EXPECT_EQ(m.nr_cached(), 3u);
  EXPECT_EQ(m.rss_file(), 3);
  EXPECT_EQ(m.mmap_miss(), 0u);
}

// do_async_mmap_readahead returns before its credit on VM_RAND_READ.
TEST(MadvRandom, CachedHitThroughFaultIsNotCredited) {
  Model m(ra2048().with(fault_around_off));
  m.madvise(Madvise::kRandom);
  m.cache(50, 50);
  m.set_mmap_miss(5);
  m.touch(50);
  EXPECT_EQ(m.min_flt(), 1u);
  EXPECT_EQ(m.mmap_miss(), 5u);
}

// MADV_SEQUENTIAL at the start of the file: page_cache_sync_ra(ra_pages)
// opens a window of ra_pages with async_size ra_pages / 2; no mmap_miss.
TEST(MadvSequential, MissAtFileStartOpensOndemandWindow) {
  Model m(ra2048().with(p1_p2));
  m.madvise(Madvise::kSequential);
  m.touch(0);
  EXPECT_EQ(m.pgpgin_kb(), 8192u);
  EXPECT_EQ(m.ra().start, 0u);
  EXPECT_EQ(m.ra().size, 2048u);
  EXPECT_EQ(m.ra().async_size, 1024u);
  EXPECT_EQ(m.marks(0, 4095), std::vector<pgoff_t>{1024});
  EXPECT_EQ(m.count(VmEvent::ra_sync), 1u);
  EXPECT_EQ(m.count(VmEvent::ra_readaround), 0u);
  EXPECT_EQ(m.mmap_miss(), 0u);
  EXPECT_EQ(m.maj_flt(), 1u);
}

// A later miss with no cached run behind it reads ra_pages pages from the
// fault, without a marker and without touching the window state
// (page_cache_sync_ra: do_page_cache_ra(ra_pages, 0)).
TEST(MadvSequential, IsolatedMissReadsForwardWithoutMarker) {
  Model m(ra2048().with(p1_p2));
  m.madvise(Madvise::kSequential);
  m.touch(10000);
  EXPECT_EQ(m.pgpgin_kb(), 8192u);
  EXPECT_EQ(m.cached_in(10000, 12047), 2048u);
  EXPECT_FALSE(m.cached(9999));
  EXPECT_TRUE(m.marks(9000, 13000).empty());
  EXPECT_EQ(m.ra().size, 0u);
  EXPECT_EQ(m.mmap_miss(), 0u);
}

// MADV_HUGEPAGE on a mapping with large folios (7.1): the THP read-around
// reads two PMD folios from the 512-aligned index, marks the second, counts
// the miss in mmap_miss, and fault-around maps the first with one PMD.
TEST(MadvHugepage, ReadsTwoPmdFoliosAndMapsOneWithAPmd) {
  Model m(ra2048().order(9).with(p1_p2));
  m.madvise(Madvise::kHugepage);
  m.touch(1000);
  EXPECT_EQ(m.cached_in(0, 16383), 1024u);
  EXPECT_EQ(m.as().order(512), 9u);
  EXPECT_EQ(m.as().order(1024), 9u);
  EXPECT_EQ(m.marks(0, 16383), std::vector<pgoff_t>{1024});
  EXPECT_EQ(m.pgpgin_kb(), 4096u);
  EXPECT_EQ(m.mmap_miss(), 1u);
  EXPECT_EQ(m.count(VmEvent::thp_file_mapped), 1u);
  EXPECT_EQ(m.rss_file(), 512);
  EXPECT_EQ(m.maj_flt(), 1u);
}

// 7.1 puts the THP branch after the mmap_miss cut-off; 6.18 before it.
TEST(MadvHugepage, MmapMissCutOffAppliesIn71Only) {
  for (const Release profile : {Release::k7_1, Release::k6_18}) {
    SCOPED_TRACE(enum_name(profile));
    Model m(ra2048().kernel(profile).order(9).with(p1_p2));
    m.madvise(Madvise::kHugepage);
    m.set_mmap_miss(100);
    m.touch(1000);
    const bool cut = profile == Release::k7_1;
    EXPECT_EQ(m.pgpgin_kb(), cut ? 4u : 4096u);
    EXPECT_EQ(m.mmap_miss(), cut ? 101u : 100u);
  }
}

// MADV_RANDOM does not stop THP read-around (7.1), but it is not doubled.
TEST(MadvHugepage, RandomHintReadsOnePmdFolio) {
  Model m(ra2048().order(9));
  m.madvise(Madvise::kHugepage);
  m.vma().vm_flags |= VM_RAND_READ;
  m.touch(1000);
  EXPECT_EQ(m.pgpgin_kb(), 2048u);
  EXPECT_EQ(m.cached_in(512, 1023), 512u);
  EXPECT_EQ(m.mmap_miss(), 1u);
}

// VM_EXEC (6.16+, exec_folio_order 0 on x86): the window runs forward from
// the fault, ra_pages long, with no async part and so no marker; VM_EXEC
// keeps read-around even under MADV_RANDOM.
TEST(ExecReadAround, ReadsForwardWithoutMarker) {
  for (const bool random : {false, true}) {
    SCOPED_TRACE(random ? "MADV_RANDOM" : "MADV_NORMAL");
    Model m(ra2048().flags(VM_READ | VM_EXEC | VM_SHARED).with(p1_p2));
    if (random) m.madvise(Madvise::kRandom);
    m.touch(1000);
    EXPECT_EQ(m.cached_in(0, 16383), 2048u);
    EXPECT_EQ(m.cached_in(1000, 3047), 2048u);
    EXPECT_TRUE(m.marks(0, 16383).empty());
    EXPECT_EQ(m.mmap_miss(), 1u);
  }
}

// read_ahead_kb = 0: a miss reads one page, and mmap_miss is not touched by
// either path (do_sync_mmap_readahead, do_async_mmap_readahead).
TEST(FilemapFault, NoReadaheadReadsOnePageAndSkipsMmapMiss) {
  Model m(ModelSetup().ra(0).with(fault_around_off));
  m.touch(100);
  m.touch(101);
  EXPECT_EQ(m.pgpgin_kb(), 8u);
  EXPECT_EQ(m.pgmajfault(), 2u);
  EXPECT_EQ(m.mmap_miss(), 0u);
  m.cache(200, 200);
  m.set_mmap_miss(7);
  m.touch(200);  // a hit through ->fault: do_async returns before its credit
  EXPECT_EQ(m.mmap_miss(), 7u);
}

// Large folios (6.18+): fault-around maps a whole folio that fits the VMA,
// one page table and EOF, and the baseline credits every page of it.
TEST(FaultAroundLargeFolio, MapsAndCreditsTheWholeFolio) {
  Model m(ModelSetup().order(9));
  m.cache_folio(64, 6);  // pages 64-127
  m.set_mmap_miss(100);
  m.touch(70);
  EXPECT_EQ(m.mapped_in(64, 127), 64u);
  EXPECT_EQ(m.rss_file(), 64);
  EXPECT_EQ(m.mmap_miss(), 100u - 64);
}

// A PMD-order folio is mapped by one PMD (filemap_map_pmd), which credits
// nothing: the credit loop is never reached.
TEST(FaultAroundLargeFolio, PmdMappingCreditsNothing) {
  Model m(ModelSetup().order(9));
  m.cache_folio(512, 9);
  m.set_mmap_miss(100);
  m.touch(600);
  EXPECT_EQ(m.count(VmEvent::thp_file_mapped), 1u);
  EXPECT_EQ(m.rss_file(), 512);
  EXPECT_EQ(m.mmap_miss(), 100u);
}

// Seed 3: since 6.10 one add_mm_counter per filemap_map_pages call; before,
// one per PTE batch (per folio here).
TEST(FaultAroundRss, BatchedRssUpdatesOncePerCall) {
  for (const bool batched : {true, false}) {
    SCOPED_TRACE(batched ? "batched" : "per folio");
    Model m(ModelSetup().with([batched](KernelProfile& p) { p.batched_rss = batched; }));
    m.cache(0, 15);
    m.touch(0);
    EXPECT_EQ(m.rss_file(), 16);
    EXPECT_EQ(m.count(VmEvent::rss_updates), batched ? 1u : 16u);
  }
}

// P1's single credit also skips a PG_workingset faulting folio.
TEST(MmapMissWorkingset, P1SkipsAWorkingsetFaultingPage) {
  Model m(ModelSetup().with([](KernelProfile& p) { p.mmap_miss_p1 = true; }));
  m.cache(0, 15);
  m.as().set(8, kPgWorkingset);
  m.set_mmap_miss(50);
  m.touch(8);
  EXPECT_EQ(m.mmap_miss(), 50u);
  m.cache(16, 31);
  m.touch(20);
  EXPECT_EQ(m.mmap_miss(), 49u);
}

// --- the mmap_miss state machine (do_sync_mmap_readahead, filemap_map_pages) ---

class MmapMiss : public ::testing::Test {
 protected:
  // P1+P2 so that retries credit nothing: only do_sync_mmap_readahead moves
  // the counter on a pure miss.
  MmapMiss() : m_(ra2048().with(p1_p2)) {}
  // A miss far from every earlier window.
  void miss() {
    m_.touch(next_);
    next_ += 3000;
  }
  Model m_;
  uint64_t next_ = 1024;
};

TEST_F(MmapMiss, HundredStillReadsAround) {
  m_.set_mmap_miss(99);
  miss();
  EXPECT_EQ(m_.mmap_miss(), 100u);
  EXPECT_EQ(m_.count(VmEvent::ra_readaround), 1u);
  EXPECT_EQ(m_.pgpgin_kb(), 8192u);
}

TEST_F(MmapMiss, AboveHundredReadsOnePage) {
  m_.set_mmap_miss(100);
  miss();
  EXPECT_EQ(m_.mmap_miss(), 101u);
  EXPECT_EQ(m_.count(VmEvent::ra_readaround), 0u);
  EXPECT_EQ(m_.count(VmEvent::ra_skipped_mmap_miss), 1u);
  EXPECT_EQ(m_.pgpgin_kb(), 4u);
}

TEST_F(MmapMiss, CappedAtThousand) {
  m_.set_mmap_miss(999);
  miss();
  EXPECT_EQ(m_.mmap_miss(), 1000u);
  miss();
  EXPECT_EQ(m_.mmap_miss(), 1000u);
  EXPECT_EQ(m_.pgpgin_kb(), 8u);
  EXPECT_EQ(m_.k().mmap_miss_peak(), 1000u);
}

// A hit credits 1 under P1, floored at 0.
TEST_F(MmapMiss, HitCreditIsFlooredAtZero) {
  miss();                // +1
  m_.touch(1024 + 100);  // hit: −1
  m_.touch(1024 + 200);  // hit: floor
  EXPECT_EQ(m_.mmap_miss(), 0u);
  EXPECT_EQ(m_.count(VmEvent::mmap_miss_credit), 1u);
}

// Seed 1's P1 and P2: a miss and a genuine hit under each variant, from mmap_miss = 50.
struct VariantCase {
  const char* name;
  bool p1, p2;
  uint32_t after_miss, after_hit;
};

class MmapMissVariants : public ::testing::TestWithParam<VariantCase> {};

TEST_P(MmapMissVariants, MissThenHitFollowTheTable) {
  const VariantCase& v = GetParam();
  Model m(ra2048().with([v](KernelProfile& p) {
    p.mmap_miss_p1 = v.p1;
    p.mmap_miss_p2 = v.p2;
  }));
  m.set_mmap_miss(50);
  m.touch(10000);  // miss: +1, then the retry maps 16 read-around pages
  EXPECT_EQ(m.mmap_miss(), v.after_miss);
  m.touch(10100);  // genuine minor hit: 16 mappable pages in the window
  EXPECT_EQ(m.mmap_miss(), v.after_hit);
}

INSTANTIATE_TEST_SUITE_P(
    Table, MmapMissVariants,
    ::testing::Values(VariantCase{"baseline", false, false, 50 + 1 - 16, 50 + 1 - 16 - 16},
                      VariantCase{"P1", true, false, 50 + 1 - 1, 50 + 1 - 1 - 1},
                      VariantCase{"P2", false, true, 50 + 1, 50 + 1 - 16},
                      VariantCase{"P1P2", true, true, 50 + 1, 50 + 1 - 1}),
    [](const auto& p) { return std::string(p.param.name); });

// P1 alone changes nothing for a pure miss stream (+1 −1), P2 alone fixes it.
TEST(MmapMissVariantsStream, OnlyP2StopsAPureMissStream) {
  for (const auto& [p1, p2, stops] :
       {std::tuple{false, false, false}, std::tuple{true, false, false},
        std::tuple{false, true, true}, std::tuple{true, true, true}}) {
    SCOPED_TRACE(::testing::Message() << "p1=" << p1 << " p2=" << p2);
    Model m(appendix_b(false).with([p1 = p1, p2 = p2](KernelProfile& p) {
      p.mmap_miss_p1 = p1;
      p.mmap_miss_p2 = p2;
    }));
    for (uint64_t i = 0; i < 120; ++i) m.touch(10000 + i * 4096);
    EXPECT_EQ(m.count(VmEvent::ra_readaround), stops ? 100u : 120u);
  }
}

// The workingset exclusion (6.10+): a PG_workingset page earns no credit.
TEST(MmapMissWorkingset, WorkingsetPagesAreNotCredited) {
  for (const bool exclusion : {true, false}) {
    SCOPED_TRACE(exclusion ? "6.10+" : "6.9");
    Model m(
        ModelSetup().with([exclusion](KernelProfile& p) { p.workingset_exclusion = exclusion; }));
    m.cache(0, 15);
    for (pgoff_t p = 0; p < 4; ++p) m.as().set(p, kPgWorkingset);
    m.set_mmap_miss(50);
    m.touch(8);
    EXPECT_EQ(m.mmap_miss(), exclusion ? 50u - 12 : 50u - 16);
  }
}

// --- the attempt structure (do_user_addr_fault, mm_account_fault) ------------

// B: a miss costs a VMA-lock attempt that returns MAJOR|RETRY (not
// accounted) and an mmap_lock attempt with TRIED: one major fault.
TEST(FaultAttempts, MissTakesTwoAttemptsAndEndsMajor) {
  Model m(ra2048());
  m.touch(10000);
  EXPECT_EQ(m.attempts(), 2u);
  EXPECT_EQ(m.count(VmEvent::fault_retries), 1u);
  EXPECT_EQ(m.count(VmEvent::vma_lock_retry), 1u);
  EXPECT_EQ(m.count(VmEvent::vma_lock_success), 0u);
  EXPECT_EQ(m.pgfault(), 1u);
  EXPECT_EQ(m.pgmajfault(), 1u);
  EXPECT_EQ(m.maj_flt(), 1u);
  EXPECT_EQ(m.min_flt(), 0u);
}

// A: a cached page is mapped by fault-around on the first attempt.
TEST(FaultAttempts, MinorHitTakesOneAttemptUnderTheVmaLock) {
  Model m(ra2048());
  m.cache(0, 15);
  m.touch(3);
  EXPECT_EQ(m.attempts(), 1u);
  EXPECT_EQ(m.count(VmEvent::vma_lock_success), 1u);
  EXPECT_EQ(m.min_flt(), 1u);
  EXPECT_EQ(m.maj_flt(), 0u);
}

// D: a PG_readahead hit retries without TRIED (no MAJOR): minor, and P2 does
// not suppress the retry's credit (−1 async, −1 second fault-around).
TEST(FaultAttempts, ReadaheadHitRetriesWithoutTriedAndEndsMinor) {
  Model m(ra2048().with(p1_p2));
  m.touch(10000);
  m.set_mmap_miss(10);
  const uint64_t attempts = m.attempts();
  m.touch(10512);
  EXPECT_EQ(m.attempts(), attempts + 2);
  EXPECT_EQ(m.pgmajfault(), 1u);
  EXPECT_EQ(m.min_flt(), 1u);
  EXPECT_EQ(m.maj_flt(), 1u);
  EXPECT_EQ(m.mmap_miss(), 8u);
}

// Without per-VMA locks every retry carries TRIED: the readahead hit is
// major in rusage, yet no pgmajfault (mm_account_fault, filemap_fault).
TEST(FaultAttempts, MmapLockOnlyMakesReadaheadHitMajorInRusage) {
  Model m(ra2048().with([](KernelProfile& p) { p.per_vma_lock = false; }));
  m.touch(10000);
  EXPECT_EQ(m.maj_flt(), 1u);
  EXPECT_EQ(m.count(VmEvent::vma_lock_retry), 0u);
  m.touch(10512);
  EXPECT_EQ(m.pgmajfault(), 1u);
  EXPECT_EQ(m.maj_flt(), 2u);
  EXPECT_EQ(m.min_flt(), 0u);
  EXPECT_EQ(m.attempts(), 4u);
}

// 6.7.0-6.7.9 (no TRIED after a MAJOR VMA-lock attempt): misses count as
// minor faults in rusage although pgmajfault counts them; P2 then credits
// the retry, so a miss stream cannot raise mmap_miss.
TEST(FaultAttempts, WithoutTriedAfterMajorMissesAreMinorInRusage) {
  Model m(ra2048().with(p1_p2).with([](KernelProfile& p) { p.tried_after_major = false; }));
  m.touch(10000);
  EXPECT_EQ(m.pgmajfault(), 1u);
  EXPECT_EQ(m.maj_flt(), 0u);
  EXPECT_EQ(m.min_flt(), 1u);
  EXPECT_EQ(m.attempts(), 2u);
  EXPECT_EQ(m.mmap_miss(), 0u);
}

// A write to a private mapping goes through do_cow_fault: no fault-around,
// ->fault (with its readahead), a private copy counted in MM_ANONPAGES.
TEST(FaultAttempts, PrivateWriteCopiesThePage) {
  Model m(ra2048().flags(VM_READ | VM_WRITE));
  m.write(10000);
  EXPECT_EQ(m.maj_flt(), 1u);
  EXPECT_EQ(m.rss_anon(), 1);
  EXPECT_EQ(m.rss_file(), 0);
  EXPECT_EQ(m.count(VmEvent::fault_around_calls), 0u);
  EXPECT_EQ(m.pgpgin_kb(), 8192u);
  m.write(10001);
  EXPECT_EQ(m.min_flt(), 1u);
  EXPECT_EQ(m.rss_anon(), 2);
}

// --- behaviours once missing from the model ---------------------------------------

// mm_account_fault: pgfault counts every attempt that does not return RETRY, errors
// included ("count ALL non-retry faults for vmstat, including error"); only
// the rusage counters skip VM_FAULT_ERROR: a load beyond EOF (SIGBUS) counts
// one pgfault and no minflt or majflt.
TEST(FaultAttempts, SigbusFaultStillCountsPgfault) {
  Model m(ModelSetup().pages(4).vma_pages(8));
  m.touch(6);
  EXPECT_EQ(m.pgfault(), 1u);
  EXPECT_EQ(m.min_flt() + m.maj_flt(), 0u);
  EXPECT_FALSE(m.mapped(6));
}

// finish_fault maps the whole large folio only if all its PTEs are
// empty, otherwise one PTE: a partly mapped folio gets the faulting page
// mapped, not a NOPAGE that would fault again forever.
TEST(FinishFault, PartlyMappedLargeFolioFallsBackToOnePte) {
  Model m(ModelSetup().with(fault_around_off).order(9));
  m.cache_folio(0, 4);  // pages 0-15
  m.touch(0);
  ASSERT_EQ(m.mapped_in(0, 15), 16u);  // the whole folio
  do_madvise(m.k(), m.vma(), 3, 1, Madvise::kDontneed);
  ASSERT_FALSE(m.mapped(3));
  m.touch(3);
  EXPECT_TRUE(m.mapped(3));
  EXPECT_EQ(m.pgfault(), 2u);
  EXPECT_EQ(m.rss_file(), 16);
}

// The THP branch of do_sync_mmap_readahead depends on VM_HUGEPAGE and
// HPAGE_PMD_ORDER <= MAX_PAGECACHE_ORDER only; page_cache_ra_order then falls
// back to order-0 pages on a mapping without large folios. So a miss at
// pgoff 1000 of a MADV_HUGEPAGE mapping reads [512, 1536) with the marker at
// 1024 whatever the file system, not the classic read-around [0, 2048).
TEST(MadvHugepage, ThpReadAroundDoesNotDependOnLargeFolios) {
  Model m(ra2048());
  m.madvise(Madvise::kHugepage);
  m.touch(1000);
  EXPECT_EQ(m.cached_in(0, 16383), 1024u);
  EXPECT_EQ(m.cached_in(512, 1535), 1024u);
  EXPECT_EQ(m.marks(0, 16383), std::vector<pgoff_t>{1024});
  EXPECT_EQ(m.pgpgin_kb(), 4096u);
}

// --- loads through present PTEs, a stretch at a time ---------------------------

// handle_pte_hits over a stretch is handle_access of each page in turn: the
// same counters, PTEs, page touches and clock, to the picosecond. Requests
// of 4 pages make fault-around (16 pages) map pages whose reads are still
// in flight, so some of the loads wait; a private copy among them is a hit
// that touches no file page, and a page touched before is not touched for
// the first time again; the stretch ends at the first page that would
// fault.
TEST(PteHits, AStretchIsEachLoadInTurn) {
  const ModelSetup setup =
      ModelSetup().bytes(64 * kMiB).ra(32).io(4).order(0).flags(VM_READ | VM_WRITE);
  Model one(setup), each(setup);
  for (Model* m : {&one, &each}) {
    m->touch(0);  // read-around [0, 32), fault-around maps [0, 16)
    m->write(5);  // a private copy of page 5
    m->touch(3);  // a hit: page 3 is touched before the stretch
  }
  const VmStat before = one.k().vmstat();
  EXPECT_EQ(handle_pte_hits(one.k(), one.vma(), 1, 40, /*write=*/false), 15u);
  for (uint64_t v = 1; v < 16; ++v) each.touch(v);
  EXPECT_EQ(one.k().vmstat().v, each.k().vmstat().v);
  EXPECT_EQ(one.k().now_ps(), each.k().now_ps());
  EXPECT_GT((one.k().vmstat() - before)[VmEvent::io_wait_ns], 0u);
  EXPECT_EQ((one.k().vmstat() - before)[VmEvent::pages_touched], 13u);  // 1-15 but 3 and 5
  for (uint64_t v = 0; v < 40; ++v) EXPECT_EQ(one.vma().ptes[v], each.vma().ptes[v]) << v;
  // Page 16 has no PTE: nothing to take, and nothing changes.
  EXPECT_EQ(handle_pte_hits(one.k(), one.vma(), 16, 8, /*write=*/false), 0u);
  EXPECT_EQ(one.k().vmstat().v, each.k().vmstat().v);
  // A store through a read-only PTE faults (do_wp_page): not a hit.
  EXPECT_EQ(handle_pte_hits(one.k(), one.vma(), 1, 4, /*write=*/true), 0u);
}

// FolioRuns::next_unmarked() against a scan of the same marks: the first
// index without the marker and the first marked one after it.
TEST(FolioRuns, NextUnmarkedMatchesAScanOfTheMarks) {
  constexpr pgoff_t kSize = 200;
  mm::FolioRuns runs(nullptr, kSize, /*shmem=*/false);
  std::vector<bool> mark(kSize, false);
  Rng rng(7, 1);
  for (int op = 0; op < 5000; ++op) {
    const pgoff_t p = rng.below(kSize);
    if (rng.below(3) == 0) {
      runs.touch(p);  // other bits beside the marks split their runs
    } else {
      const bool on = rng.below(2) == 0;
      runs.set_marked(p, on);
      mark[p] = on;
    }
    const pgoff_t i = rng.below(kSize), end = i + rng.below(kSize - i + 1);
    pgoff_t first = i;
    while (first < end && mark[first]) ++first;
    pgoff_t next = first;
    while (next < end && !mark[next]) ++next;
    const auto [a, b] = runs.next_unmarked(i, end);
    ASSERT_EQ(a, first) << "op " << op << " [" << i << ", " << end << ")";
    ASSERT_EQ(b, next) << "op " << op << " [" << i << ", " << end << ")";
  }
}

}  // namespace
}  // namespace faultline::mmtest
