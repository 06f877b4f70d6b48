// vmscan_test.cc — the classic two-list LRU, reclaim and workingset
// detection (mm/vmscan.c, mm/swap.c, mm/workingset.c) as docs/fault-path.md
// describes them ('The classic two-list LRU', 'Workingset shadow entries and
// refaults'): eviction order, the young-PTE second trip, activation,
// unmapping on eviction, shadow entries and refaults.
#include "mm/vmscan.h"

#include <gtest/gtest.h>

#include <vector>

#include "harness/mm_model.h"

namespace faultline::mmtest {
namespace {

class Reclaim : public ::testing::Test {
 protected:
  // A machine whose page cache holds `capacity` pages; fault-around off so
  // that a touch maps exactly the page touched.
  void build(uint64_t capacity, bool fault_around = false) {
    ModelSetup s = ModelSetup().capacity(capacity);
    if (!fault_around) s.with(fault_around_off);
    m_ = std::make_unique<Model>(s);
  }
  Model& m() { return *m_; }
  void insert(pgoff_t p) { m_->cache(p, p); }
  // Pages of [0, last] present in the page cache.
  std::vector<pgoff_t> resident(pgoff_t last = 64) const {
    std::vector<pgoff_t> out;
    for (pgoff_t p = 0; p <= last; ++p) {
      if (m_->cached(p)) out.push_back(p);
    }
    return out;
  }
  // A software reference twice: inactive → referenced → active.
  void activate(pgoff_t p) {
    folio_mark_accessed(m_->k(), m_->as(), p);
    folio_mark_accessed(m_->k(), m_->as(), p);
  }
  void evict(pgoff_t p) { evict_folio(m_->k(), m_->as(), p, /*shadow=*/true); }
  bool has(pgoff_t p, uint16_t bit) const { return m_->folio_has(p, bit); }
  const Lruvec& lru() { return m_->k().lruvec(); }

  std::unique_ptr<Model> m_;
};

using Pages = std::vector<pgoff_t>;

// Untouched pages leave in insertion order, from the inactive tail; each
// leaves a shadow entry behind.
TEST_F(Reclaim, UntouchedPagesLeaveFirstInFirstOut) {
  build(8);
  for (pgoff_t p = 0; p < 8; ++p) insert(p);
  EXPECT_EQ(resident(), (Pages{0, 1, 2, 3, 4, 5, 6, 7}));
  insert(8);
  EXPECT_EQ(resident(), (Pages{1, 2, 3, 4, 5, 6, 7, 8}));
  insert(9);
  insert(10);
  EXPECT_EQ(resident(), (Pages{3, 4, 5, 6, 7, 8, 9, 10}));
  EXPECT_EQ(m().k().nr_charged(), 8u);
  EXPECT_EQ(m().count(VmEvent::pgsteal_file), 3u);
  EXPECT_EQ(m().count(VmEvent::pgscan_file), 3u);
  EXPECT_EQ(m().count(VmEvent::pages_evicted), 3u);
  EXPECT_TRUE(m().as().has_shadow(0));
  EXPECT_TRUE(m().as().has_shadow(2));
  EXPECT_FALSE(m().as().has_shadow(3));
}

// A mapped page with a young PTE is kept once: PG_referenced set, the young
// bit harvested, rotated to the inactive head. Not touched again, it is
// reclaimed when it reaches the tail the second time, and unmapped. (The
// charge of a new folio is reclaimed before the folio is added, as
// mem_cgroup_charge() does, so page 0 is rotated ahead of the newcomer.)
TEST_F(Reclaim, YoungMappedPageGetsOneSecondTrip) {
  build(4);
  for (pgoff_t p = 0; p < 4; ++p) insert(p);
  m().touch(0);
  ASSERT_TRUE(m().young(0));
  insert(4);
  EXPECT_EQ(resident(), (Pages{0, 2, 3, 4}));
  EXPECT_TRUE(has(0, kPgReferenced));
  EXPECT_FALSE(has(0, kPgActive));
  EXPECT_FALSE(m().young(0));
  EXPECT_TRUE(m().mapped(0));
  EXPECT_EQ(m().count(VmEvent::pgrotated), 1u);

  insert(5);
  insert(6);  // 2 and 3 go: page 0 outlives the pages inserted after it
  EXPECT_EQ(resident(), (Pages{0, 4, 5, 6}));
  insert(7);  // 0 is at the tail again, referenced but not young
  EXPECT_EQ(resident(), (Pages{4, 5, 6, 7}));
  EXPECT_FALSE(m().mapped(0));
  EXPECT_EQ(m().rss_file(), 0);
  EXPECT_EQ(m().count(VmEvent::pgrotated), 1u);
  EXPECT_EQ(m().count(VmEvent::pgactivate), 0u);
}

// Touched again during its second trip (young + PG_referenced): activated.
TEST_F(Reclaim, YoungAgainOnTheSecondTripIsActivated) {
  build(4);
  for (pgoff_t p = 0; p < 4; ++p) insert(p);
  m().touch(0);
  insert(4);     // second trip for 0
  m().touch(0);  // PTE present: no fault, the CPU sets the young bit
  EXPECT_EQ(m().pgfault(), 1u);
  ASSERT_TRUE(m().young(0));
  for (pgoff_t p = 5; p < 9; ++p) insert(p);
  EXPECT_TRUE(m().cached(0));
  EXPECT_TRUE(has(0, kPgActive));
  EXPECT_EQ(m().count(VmEvent::pgactivate), 1u);
  EXPECT_EQ(lru().nr_active, 1u);
  EXPECT_EQ(resident(), (Pages{0, 6, 7, 8}));
  EXPECT_EQ(m().rss_file(), 1);
}

// Two young PTEs (two VMAs with recency) activate at once.
TEST_F(Reclaim, PageYoungInTwoMappingsIsActivatedAtOnce) {
  build(4);
  Vma* second = m().k().mmap(&m().mm(), &m().file(), 0, 16, VM_READ | VM_SHARED, 0);
  for (pgoff_t p = 0; p < 4; ++p) insert(p);
  m().touch(0);
  handle_access(m().k(), *second, 0, /*write=*/false);
  insert(4);
  EXPECT_TRUE(has(0, kPgActive));
  EXPECT_EQ(resident(), (Pages{0, 2, 3, 4}));
}

// Young bits of VMAs without recency (MADV_RANDOM, MADV_SEQUENTIAL) are
// ignored: the page is reclaimed on its first trip.
TEST_F(Reclaim, YoungPteOfRandomVmaIsIgnored) {
  build(4);
  m().madvise(Madvise::kRandom);
  for (pgoff_t p = 0; p < 4; ++p) insert(p);
  m().touch(0);
  insert(4);
  EXPECT_EQ(resident(), (Pages{1, 2, 3, 4}));
  EXPECT_EQ(m().count(VmEvent::pgrotated), 0u);
}

// Eviction unmaps the page from every VMA and decrements the owner's RSS.
// Fault-around's prefaulted PTEs are young on x86, so all 16 pages of the
// window get a second trip; then the oldest of them goes.
TEST_F(Reclaim, EvictionUnmapsThePteAndDecrementsRss) {
  build(16, /*fault_around=*/true);
  for (pgoff_t p = 0; p < 16; ++p) insert(p);
  m().touch(0);
  ASSERT_EQ(m().rss_file(), 16);
  insert(16);
  EXPECT_EQ(m().count(VmEvent::pgrotated), 16u);
  EXPECT_FALSE(m().cached(0));
  EXPECT_FALSE(m().mapped(0));
  EXPECT_TRUE(m().cached(16));
  EXPECT_EQ(m().rss_file(), 15);
  EXPECT_TRUE(m().mapped(1));
  EXPECT_FALSE(m().young(1));
  EXPECT_TRUE(has(1, kPgReferenced));
}

// With old prefaulted PTEs (arm64 hardware AF) only the faulting page gets
// the second trip.
TEST_F(Reclaim, OldPrefaultedPtesGetNoSecondTrip) {
  m_ = std::make_unique<Model>(
      ModelSetup().capacity(16).with([](KernelProfile& p) { p.prefault_young = false; }));
  for (pgoff_t p = 0; p < 16; ++p) insert(p);
  m().touch(0);
  ASSERT_EQ(m().rss_file(), 16);
  ASSERT_FALSE(m().young(1));
  insert(16);
  EXPECT_EQ(m().count(VmEvent::pgrotated), 1u);
  EXPECT_TRUE(m().cached(0));
  EXPECT_FALSE(m().cached(1));
  EXPECT_FALSE(m().mapped(1));
  EXPECT_EQ(m().rss_file(), 15);
}

// read(2)'s software references: a second folio_mark_accessed activates.
TEST_F(Reclaim, SecondSoftwareReferenceActivates) {
  build(1024);
  insert(7);
  folio_mark_accessed(m().k(), m().as(), 7);
  EXPECT_TRUE(has(7, kPgReferenced));
  EXPECT_FALSE(has(7, kPgActive));
  folio_mark_accessed(m().k(), m().as(), 7);
  EXPECT_TRUE(has(7, kPgActive));
  EXPECT_FALSE(has(7, kPgReferenced));
  EXPECT_EQ(lru().nr_active, 1u);
  EXPECT_EQ(lru().nonresident_age, 1u);  // workingset_activation ages the clock
}

// --- workingset: shadows and refaults (workingset_eviction, workingset_refault) ---

// A refault whose distance is within the active list is inserted active
// (workingset_activate_file); without the shadow's workingset bit it gets
// no PG_workingset (workingset_restore_file unchanged).
TEST_F(Reclaim, RecentRefaultIsActivated) {
  build(1024);
  insert(0);
  insert(1);
  activate(1);  // nr_active 1, age 1
  evict(0);     // shadow age 1, age 2
  ASSERT_TRUE(m().as().has_shadow(0));
  insert(0);  // distance 1 <= 1
  EXPECT_EQ(m().count(VmEvent::workingset_refault_file), 1u);
  EXPECT_EQ(m().count(VmEvent::workingset_activate_file), 1u);
  EXPECT_EQ(m().count(VmEvent::workingset_restore_file), 0u);
  EXPECT_TRUE(has(0, kPgActive));
  EXPECT_FALSE(has(0, kPgWorkingset));
  EXPECT_EQ(lru().nr_active, 2u);
}

// A refault further away than the active list is a plain inactive insert.
TEST_F(Reclaim, DistantRefaultIsNotActivated) {
  build(1024);
  for (pgoff_t p = 0; p < 4; ++p) insert(p);
  activate(3);  // nr_active 1
  evict(0);
  evict(1);
  evict(2);  // distance of 0 is now 3
  insert(0);
  EXPECT_EQ(m().count(VmEvent::workingset_refault_file), 1u);
  EXPECT_EQ(m().count(VmEvent::workingset_activate_file), 0u);
  EXPECT_FALSE(has(0, kPgActive));
  EXPECT_FALSE(has(0, kPgWorkingset));
}

// A page inserted where no shadow is is not a refault.
TEST_F(Reclaim, FirstInsertIsNotARefault) {
  build(1024);
  insert(0);
  EXPECT_EQ(m().count(VmEvent::workingset_refault_file), 0u);
}

// When the inactive list is low (inactive x ratio < active), reclaim
// deactivates from the active tail: PG_active cleared, PG_workingset set.
// Those pages later refault with PG_workingset restored from the shadow.
TEST_F(Reclaim, DeactivationSetsWorkingsetAndRefaultRestoresIt) {
  build(4);
  for (pgoff_t p = 0; p < 3; ++p) {
    insert(p);
    activate(p);
  }
  insert(3);
  ASSERT_EQ(lru().nr_active, 3u);
  insert(4);  // over capacity with inactive 2 x 1 < active 3
  EXPECT_EQ(m().count(VmEvent::pgdeactivate), 3u);
  for (const pgoff_t p : {0, 1, 2}) {
    EXPECT_TRUE(has(p, kPgWorkingset)) << p;
    EXPECT_FALSE(has(p, kPgActive)) << p;
  }
  EXPECT_EQ(resident(), (Pages{0, 1, 2, 4}));  // 3 was the inactive tail
  EXPECT_FALSE(has(4, kPgWorkingset));

  activate(4);  // an active list for the refault distance to compare with
  evict(0);
  insert(0);
  EXPECT_TRUE(has(0, kPgActive));
  EXPECT_TRUE(has(0, kPgWorkingset));
  EXPECT_EQ(m().count(VmEvent::workingset_activate_file), 1u);
  EXPECT_EQ(m().count(VmEvent::workingset_restore_file), 1u);
}

// Active pages are protected from a scan of untouched pages.
TEST_F(Reclaim, ActivePagesSurviveAScan) {
  build(8);
  insert(0);
  activate(0);
  for (pgoff_t p = 1; p < 40; ++p) insert(p);
  EXPECT_TRUE(m().cached(0));
  EXPECT_EQ(resident(), (Pages{0, 33, 34, 35, 36, 37, 38, 39}));
}

// write(2) insertions (__GFP_WRITE) do not count as refaults.
TEST_F(Reclaim, WriteInsertIsNotARefault) {
  build(1024);
  insert(0);
  evict(0);
  filemap_write(m().k(), m().file(), 0, kPageSize);
  EXPECT_TRUE(m().cached(0));
  EXPECT_EQ(m().count(VmEvent::workingset_refault_file), 0u);
}

// --- the TLB flush that ends a batch of reclaim which unmapped folios -------

// Reclaim flushes once per batch that cleared PTEs (try_to_unmap_flush),
// and a batch frees SWAP_CLUSTER_MAX pages or a folio: order-0 folios, one
// flush per 32 mapped pages evicted; pages no PTE maps, none.
TEST(ReclaimFlush, OnePerSwapClusterOfMappedSmallFolios) {
  CpuCosts c;
  c.tlb_flush_ns = 5000;
  Model with(ModelSetup().capacity(64).with(fault_around_off).costs(c));
  Model without(ModelSetup().capacity(64).with(fault_around_off));
  for (Model* m : {&with, &without}) {
    m->cache(0, 63);
    for (pgoff_t p = 0; p < 40; ++p) m->touch(p);  // 40 mapped, 24 not
    m->cache(100, 163);                            // every one of them goes
    EXPECT_EQ(m->count(VmEvent::pages_evicted), 64u);
    EXPECT_FALSE(m->cached(39));
    EXPECT_EQ(m->rss_file(), 0);
    EXPECT_EQ(m->count(VmEvent::reclaim_tlb_flushes), 1u);  // 40 / 32, 8 pages towards the next
  }
  EXPECT_EQ(with.k().now_ps() - without.k().now_ps(), 5000 * 1000);
  // 24 more mapped pages make the next 32.
  for (pgoff_t p = 100; p < 124; ++p) with.touch(p);
  with.cache(200, 263);
  EXPECT_EQ(with.count(VmEvent::reclaim_tlb_flushes), 2u);
}

// Folios of SWAP_CLUSTER_MAX pages or more: a flush per mapped folio.
TEST(ReclaimFlush, OnePerMappedLargeFolio) {
  Model m(ModelSetup().capacity(128).order(5).with(fault_around_off));
  for (pgoff_t h = 0; h < 128; h += 32) m.cache_folio(h, 5);
  m.touch(0);
  m.touch(40);  // two of the four folios mapped
  for (pgoff_t h = 128; h < 256; h += 32) m.cache_folio(h, 5);
  EXPECT_EQ(m.count(VmEvent::pages_evicted), 128u);
  EXPECT_EQ(m.count(VmEvent::reclaim_tlb_flushes), 2u);
}

}  // namespace
}  // namespace faultline::mmtest
