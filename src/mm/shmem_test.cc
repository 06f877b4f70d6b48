// shmem_test.cc — tmpfs faults (mm/shmem.c through mm/memory.c) against
// docs/fault-path.md, 'shmem and tmpfs faults', and seed 4: shmem has
// ->map_pages, so a hot tmpfs file faults around like any other file; no
// readahead, no I/O, and RSS goes to MM_SHMEMPAGES.
#include "mm/shmem.h"

#include <gtest/gtest.h>

#include "harness/mm_model.h"

namespace faultline::mmtest {
namespace {

// A tmpfs file of `bytes`, written in full first (seed 4's hot file), then
// mapped MAP_SHARED; `order` is the tmpfs huge= folio order.
ModelSetup tmpfs_file(uint64_t bytes, unsigned order = 0) {
  return ModelSetup().tmpfs().bytes(bytes).order(order).capacity(uint64_t{1} << 20);
}

void write_whole_file(Model& m, unsigned order = 0) {
  shmem_write(m.k(), m.file(), 0, m.as().i_size(), order);
}

void touch_every_page(Model& m) { m.touch_range(0, m.vma().nr_pages() - 1); }

void expect_no_io(const Model& m) {
  EXPECT_EQ(m.pgpgin_kb(), 0u);
  EXPECT_EQ(m.pgmajfault(), 0u);
  EXPECT_EQ(m.maj_flt(), 0u);
  EXPECT_EQ(m.rss_file(), 0);
}

constexpr uint64_t kSeed4Pages = 262'144;  // 1 GiB

// Seed 4: a hot 1 GiB tmpfs file touched page by page. Fault-around maps 16
// pages per fault: 262,144 / 16 = 16,384 minor faults.
TEST(Tmpfs, HotFileFaultsAroundSixteenPagesAtATime) {
  Model m(tmpfs_file(1 * kGiB));
  write_whole_file(m);
  ASSERT_EQ(m.nr_cached(), kSeed4Pages);
  touch_every_page(m);
  EXPECT_EQ(m.pgfault(), kSeed4Pages / 16);
  EXPECT_EQ(m.min_flt(), kSeed4Pages / 16);
  EXPECT_EQ(m.attempts(), kSeed4Pages / 16);
  EXPECT_EQ(m.rss_shmem(), static_cast<int64_t>(kSeed4Pages));
  EXPECT_EQ(m.count(VmEvent::fault_around_mapped), kSeed4Pages);
  expect_no_io(m);
}

// fault_around_bytes = 4096: every page takes its own fault (shmem_fault +
// finish_fault), still under the VMA lock because shmem has ->map_pages.
TEST(Tmpfs, HotFileWithoutFaultAroundFaultsEveryPage) {
  Model m(tmpfs_file(1 * kGiB).with(fault_around_off));
  write_whole_file(m);
  touch_every_page(m);
  EXPECT_EQ(m.pgfault(), kSeed4Pages);
  EXPECT_EQ(m.min_flt(), kSeed4Pages);
  EXPECT_EQ(m.attempts(), kSeed4Pages);
  EXPECT_EQ(m.count(VmEvent::fault_around_calls), 0u);
  EXPECT_EQ(m.rss_shmem(), static_cast<int64_t>(kSeed4Pages));
  expect_no_io(m);
}

// shmem without ->map_pages: every page faults, and ->fault may not run
// under the VMA lock (vmf_can_call_fault), so each fault retries once under
// mmap_lock, without TRIED: minor.
TEST(Tmpfs, HotFileWithoutShmemMapPagesFaultsEveryPage) {
  Model m(tmpfs_file(1 * kGiB).with([](KernelProfile& p) { p.shmem_fault_around = false; }));
  write_whole_file(m);
  touch_every_page(m);
  EXPECT_EQ(m.pgfault(), kSeed4Pages);
  EXPECT_EQ(m.min_flt(), kSeed4Pages);
  EXPECT_EQ(m.attempts(), 2 * kSeed4Pages);
  EXPECT_EQ(m.count(VmEvent::vma_lock_retry), kSeed4Pages);
  EXPECT_EQ(m.rss_shmem(), static_cast<int64_t>(kSeed4Pages));
  expect_no_io(m);
}

// A cold tmpfs file is holes: each first touch allocates a zeroed folio, a
// minor fault; fault-around finds nothing else to map.
TEST(Tmpfs, ColdFileAllocatesEveryPageOnItsOwnFault) {
  Model m(tmpfs_file(64 * kMiB));
  touch_every_page(m);
  EXPECT_EQ(m.pgfault(), 16384u);
  EXPECT_EQ(m.min_flt(), 16384u);
  EXPECT_EQ(m.nr_cached(), 16384u);
  EXPECT_EQ(m.rss_shmem(), 16384);
  expect_no_io(m);
}

// huge=: order-9 folios are mapped by one PMD each.
TEST(Tmpfs, HugeFoliosArePmdMapped) {
  Model m(tmpfs_file(64 * kMiB, 9));
  write_whole_file(m, 9);
  EXPECT_EQ(m.as().order(0), 9u);
  touch_every_page(m);
  EXPECT_EQ(m.pgfault(), 32u);
  EXPECT_EQ(m.count(VmEvent::thp_file_mapped), 32u);
  EXPECT_EQ(m.rss_shmem(), 16384);
  expect_no_io(m);
}

// With no swap, shmem pages are never reclaimed, even past the capacity.
TEST(Tmpfs, PagesAreNeverReclaimed) {
  Model m(tmpfs_file(64 * kMiB).capacity(1024));
  write_whole_file(m);
  touch_every_page(m);
  EXPECT_EQ(m.nr_cached(), 16384u);
  EXPECT_EQ(m.count(VmEvent::pages_evicted), 0u);
  EXPECT_EQ(m.rss_shmem(), 16384);
}

// tmpfs has no readahead: its files open with ra_pages 0.
TEST(Tmpfs, OpensWithoutReadahead) {
  Model m(tmpfs_file(64 * kMiB));
  EXPECT_EQ(m.ra().ra_pages, 0u);
  m.touch(100);
  EXPECT_EQ(m.nr_cached(), 1u);
  EXPECT_EQ(m.count(VmEvent::ra_readaround), 0u);
}

}  // namespace
}  // namespace faultline::mmtest
