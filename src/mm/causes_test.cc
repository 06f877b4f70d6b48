// causes_test.cc — pgpgin split by what read it (model.pgpgin_*), the
// refault part of it, and readahead waste (model.ra_wasted_*), as
// docs/causes.md describes them: each cause on a small hand-made case, the
// causes summing to pgpgin exactly, and which folios count as waste.
#include <gtest/gtest.h>

#include <array>
#include <random>

#include "harness/mm_model.h"

namespace faultline::mmtest {
namespace {

constexpr std::array<VmEvent, 6> kCauses = {VmEvent::pgpgin_readaround, VmEvent::pgpgin_sync_ra,
                                            VmEvent::pgpgin_async_ra,   VmEvent::pgpgin_read_ra,
                                            VmEvent::pgpgin_single,     VmEvent::pgpgin_willneed};

uint64_t cause_sum(const Model& m) {
  uint64_t n = 0;
  for (const VmEvent e : kCauses) n += m.count(e);
  return n;
}

// The KiB of every cause but `cause` (which should then hold all of pgpgin).
uint64_t others(const Model& m, VmEvent cause) { return cause_sum(m) - m.count(cause); }

// What must hold after anything: the causes sum to pgpgin, the refaults are
// part of it, and waste is at most what readahead read.
void expect_invariants(Model& m) {
  EXPECT_EQ(cause_sum(m), m.pgpgin_kb());
  EXPECT_LE(m.count(VmEvent::pgpgin_refault), m.pgpgin_kb());
  const uint64_t ra_kb = m.pgpgin_kb() - m.count(VmEvent::pgpgin_single);
  EXPECT_LE((m.count(VmEvent::ra_wasted_evicted) + m.as().nr_ra_unused_pages()) * 4, ra_kb);
  EXPECT_LE(m.count(VmEvent::pages_touched), m.as().nr_pages());
}

bool ra_unused(const Model& m, pgoff_t p) { return m.folio_has(p, kPgRaUnused); }

// --- one cause each -----------------------------------------------------------

// A random fault with read-around: the whole window is read-around; only the
// faulting page is touched, not what fault-around mapped around it.
TEST(ReadCauses, RandomFaultIsReadAround) {
  Model m(ModelSetup().bytes(64 * kMiB).ra(32));
  m.touch(1000);
  EXPECT_EQ(m.pgpgin_kb(), 32u * 4);
  EXPECT_EQ(m.count(VmEvent::pgpgin_readaround), 32u * 4);
  EXPECT_EQ(others(m, VmEvent::pgpgin_readaround), 0u);
  EXPECT_EQ(m.count(VmEvent::pages_touched), 1u);
  EXPECT_FALSE(ra_unused(m, 1000));
  ASSERT_TRUE(m.mapped(1001));      // fault-around mapped it ...
  EXPECT_TRUE(ra_unused(m, 1001));  // ... but the workload has not touched it
  EXPECT_EQ(m.as().nr_ra_unused_pages(), 31u);
  m.touch(1001);  // a PTE hit touches it
  EXPECT_FALSE(ra_unused(m, 1001));
  EXPECT_EQ(m.as().nr_ra_unused_pages(), 30u);
  EXPECT_EQ(m.count(VmEvent::pages_touched), 2u);
  m.touch(1001);  // distinct pages: the same page again counts once
  EXPECT_EQ(m.count(VmEvent::pages_touched), 2u);
  expect_invariants(m);
}

// A fault on the PG_readahead folio of the read-around window starts the
// async window: its pages are async readahead of a fault.
TEST(ReadCauses, MarkerFaultIsAsyncReadahead) {
  Model m(ModelSetup().bytes(64 * kMiB).ra(32));
  m.touch(1000);  // window [984, 1016), marker on 1008
  ASSERT_TRUE(m.marked(1008));
  const uint64_t before = m.pgpgin_kb();
  m.touch(1008);
  EXPECT_GT(m.pgpgin_kb(), before);
  EXPECT_EQ(m.count(VmEvent::pgpgin_async_ra), m.pgpgin_kb() - before);
  EXPECT_EQ(m.count(VmEvent::pgpgin_readaround), before);
  expect_invariants(m);
}

// MADV_SEQUENTIAL: a miss reads forward with page_cache_sync_ra.
TEST(ReadCauses, SeqReadFaultIsSyncReadahead) {
  Model m(ModelSetup().bytes(64 * kMiB).ra(32));
  m.madvise(Madvise::kSequential);
  m.touch(500);
  EXPECT_GT(m.pgpgin_kb(), 4u);
  EXPECT_EQ(m.count(VmEvent::pgpgin_sync_ra), m.pgpgin_kb());
  expect_invariants(m);
}

// Past MMAP_LOTSAMISS, and under MADV_RANDOM, a miss reads one folio; a
// one-folio read is never waste.
TEST(ReadCauses, FaultPastLotsamissIsSingle) {
  Model m(ModelSetup().bytes(64 * kMiB).ra(32));
  m.set_mmap_miss(kMmapLotsamiss);
  m.touch(3000);
  EXPECT_EQ(m.count(VmEvent::ra_skipped_mmap_miss), 1u);
  EXPECT_EQ(m.pgpgin_kb(), 4u);
  EXPECT_EQ(m.count(VmEvent::pgpgin_single), 4u);
  EXPECT_EQ(others(m, VmEvent::pgpgin_single), 0u);
  EXPECT_EQ(m.as().nr_ra_unused_pages(), 0u);
  expect_invariants(m);
}

TEST(ReadCauses, RandReadFaultIsSingle) {
  Model m(ModelSetup().bytes(64 * kMiB).ra(32));
  m.madvise(Madvise::kRandom);
  for (const pgoff_t p : {10, 5000, 9000}) m.touch(p);
  EXPECT_EQ(m.count(VmEvent::pgpgin_single), 3u * 4);
  EXPECT_EQ(others(m, VmEvent::pgpgin_single), 0u);
  expect_invariants(m);
}

// A sequential read(2) stream: sync then async readahead, all of it read(2)
// readahead. What is read ahead of the last read is still unused.
TEST(ReadCauses, SequentialReadIsReadReadahead) {
  Model m(ModelSetup().bytes(64 * kMiB).ra(32).unmapped());
  for (pgoff_t p = 0; p <= 100; ++p) m.read_pages(p, 1);
  EXPECT_GT(m.pgpgin_kb(), 101u * 4);
  EXPECT_EQ(m.count(VmEvent::pgpgin_read_ra), m.pgpgin_kb());
  EXPECT_EQ(m.count(VmEvent::pages_touched), 101u);
  EXPECT_EQ(m.as().nr_ra_unused_pages(), m.nr_cached() - 101);
  expect_invariants(m);
}

// read(2) with readahead off reads the one page it needs.
TEST(ReadCauses, ReadWithoutReadaheadIsSingle) {
  Model m(ModelSetup().bytes(64 * kMiB).ra(0).unmapped());
  m.read_pages(7, 1);
  m.read_pages(8, 1);
  EXPECT_EQ(m.pgpgin_kb(), 2u * 4);
  EXPECT_EQ(m.count(VmEvent::pgpgin_single), 2u * 4);
  EXPECT_EQ(m.as().nr_ra_unused_pages(), 0u);
  expect_invariants(m);
}

// MADV_WILLNEED and POSIX_FADV_WILLNEED: forced readahead, all unused until touched.
TEST(ReadCauses, WillneedIsWillneed) {
  Model m(ModelSetup().bytes(64 * kMiB).ra(32).io(256));
  m.madvise(Madvise::kWillneed);  // capped at max(io_pages, ra_pages) = 256
  EXPECT_EQ(m.pgpgin_kb(), 256u * 4);
  EXPECT_EQ(m.count(VmEvent::pgpgin_willneed), 256u * 4);
  EXPECT_EQ(m.as().nr_ra_unused_pages(), 256u);
  do_fadvise(m.k(), m.file(), 1000, 64, Fadvise::kWillneed);
  EXPECT_EQ(m.count(VmEvent::pgpgin_willneed), (256u + 64) * 4);
  EXPECT_EQ(others(m, VmEvent::pgpgin_willneed), 0u);
  m.touch(3);  // cached: fault-around maps it, the access touches it
  EXPECT_EQ(m.as().nr_ra_unused_pages(), 256u + 64 - 1);
  expect_invariants(m);
}

// MADV_HUGEPAGE read-around is read-around; touching one page of a large
// folio makes the whole folio used.
TEST(ReadCauses, HugepageReadAroundIsReadAround) {
  Model m(ModelSetup().bytes(64 * kMiB).ra(32).order(kHpagePmdOrder));
  m.madvise(Madvise::kHugepage);
  m.touch(700);
  EXPECT_EQ(m.count(VmEvent::pgpgin_readaround), m.pgpgin_kb());
  EXPECT_EQ(m.pgpgin_kb(), 2u * kHpagePmdNr * 4);
  EXPECT_EQ(m.as().order(700), kHpagePmdOrder);
  EXPECT_FALSE(ra_unused(m, 512));                      // 700's folio [512, 1024): touched
  EXPECT_EQ(m.as().nr_ra_unused_pages(), kHpagePmdNr);  // the other PMD folio
  expect_invariants(m);
}

// --- refaults and waste under a small capacity -------------------------------

// Ten random faults in 64 pages of memory: read-around windows evict each
// other, mostly untouched (waste); faulting the first page again reads its
// window over shadow entries (refaults).
TEST(ReadCauses, RefaultUnderSmallCapacity) {
  Model m(ModelSetup().bytes(64 * kMiB).ra(32).capacity(64));
  for (pgoff_t p = 0; p < 10; ++p) m.touch(1000 + p * 1000);
  EXPECT_EQ(m.count(VmEvent::pgpgin_refault), 0u);
  const uint64_t evicted = m.count(VmEvent::pages_evicted);
  ASSERT_GT(evicted, 0u);
  // Every evicted page but the ten touched ones was read ahead and never touched.
  EXPECT_GE(m.count(VmEvent::ra_wasted_evicted), evicted - 10);
  EXPECT_LE(m.count(VmEvent::ra_wasted_evicted), evicted);
  ASSERT_FALSE(m.cached(1000));
  ASSERT_TRUE(m.as().has_shadow(1000));
  m.touch(1000);
  EXPECT_GT(m.count(VmEvent::pgpgin_refault), 0u);
  EXPECT_EQ(m.count(VmEvent::pgpgin_refault), m.count(VmEvent::workingset_refault_file) * 4);
  EXPECT_EQ(m.count(VmEvent::pages_touched), 10u);  // page 1000 again: not a new page
  expect_invariants(m);
}

// Reading pages only to have them evicted is waste; reading them with read(2)
// first is not.
TEST(ReadCauses, WasteIsUntouchedReadaheadOnly) {
  Model m(ModelSetup().bytes(64 * kMiB).ra(32).unmapped());
  m.read_pages(0, 32);  // 32 pages read and copied, and an async window after them
  const uint64_t ahead = m.nr_cached() - 32;
  ASSERT_GT(ahead, 0u);
  EXPECT_EQ(m.as().nr_ra_unused_pages(), ahead);
  do_fadvise(m.k(), m.file(), 0, 32, Fadvise::kDontneed);  // dropped, but used: not waste
  EXPECT_EQ(m.count(VmEvent::ra_wasted_evicted), 0u);
  do_fadvise(m.k(), m.file(), 32, 1000, Fadvise::kDontneed);  // the window read ahead
  EXPECT_EQ(m.count(VmEvent::ra_wasted_evicted), ahead);
  do_fadvise(m.k(), m.file(), 2000, 32, Fadvise::kWillneed);  // 32 pages, untouched
  do_fadvise(m.k(), m.file(), 2000, 32, Fadvise::kDontneed);
  EXPECT_EQ(m.count(VmEvent::ra_wasted_evicted), ahead + 32);
  EXPECT_EQ(m.as().nr_ra_unused_pages(), 0u);
  expect_invariants(m);
}

// Any mix of faults, reads, advice and evictions keeps the causes summing to
// pgpgin, in order-0 and large-folio page caches.
TEST(ReadCauses, SumToPgpginUnderAnyMix) {
  for (const unsigned order : {0u, 4u}) {
    Model m(ModelSetup().bytes(16 * kMiB).ra(64).order(order).capacity(512));
    std::mt19937_64 rng(order + 1);
    const uint64_t pages = m.as().nr_pages();
    for (int i = 0; i < 3000; ++i) {
      const pgoff_t p = rng() % pages;
      switch (rng() % 10) {
        case 0:
          m.read_pages(p, 1 + rng() % 8);
          break;
        case 1:
          do_madvise(m.k(), m.vma(), p, std::min<uint64_t>(64, pages - p), Madvise::kWillneed);
          break;
        case 2:
          m.madvise(rng() % 2 ? Madvise::kRandom : Madvise::kNormal);
          break;
        case 3:
          m.write(p);
          break;
        default:
          m.touch(p);
          break;
      }
      ASSERT_EQ(cause_sum(m), m.pgpgin_kb()) << "order " << order << ", step " << i;
    }
    expect_invariants(m);
    EXPECT_GT(m.count(VmEvent::pgpgin_refault), 0u) << order;
    EXPECT_GT(m.count(VmEvent::ra_wasted_evicted), 0u) << order;
  }
}

}  // namespace
}  // namespace faultline::mmtest
