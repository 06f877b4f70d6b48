// readahead_test.cc — on-demand readahead (mm/readahead.c: page_cache_sync_ra,
// page_cache_async_ra, page_cache_ra_order) as docs/fault-path.md describes it
// ('On-demand readahead for read(2)', 'page_cache_ra_order and folio orders'):
// the window ladders, read(2) streams, the folio-order ramp of large folios,
// the order-0 fallback, and where the PG_readahead marker lands.
#include "mm/readahead.h"

#include <gtest/gtest.h>

#include <map>
#include <tuple>
#include <vector>

#include "harness/mm_model.h"

namespace faultline::mmtest {
namespace {

// A file read with read(2) only (no VMA).
ModelSetup reader(uint32_t ra_pages, unsigned max_order = 0) {
  return ModelSetup().bytes(64 * kMiB).ra(ra_pages).order(max_order).unmapped();
}

// (start, size, async_size) of the readahead state.
using Window = std::tuple<pgoff_t, uint32_t, uint32_t>;
Window window(const FileRaState& ra) { return {ra.start, ra.size, ra.async_size}; }

std::vector<uint64_t> next_sizes(uint64_t first, uint64_t max, int n) {
  FileRaState ra;
  ra.size = static_cast<uint32_t>(first);
  std::vector<uint64_t> out{first};
  for (int i = 1; i < n; ++i) {
    ra.size = static_cast<uint32_t>(get_next_ra_size(ra, max));
    out.push_back(ra.size);
  }
  return out;
}

// --- ladders (get_init_ra_size, get_next_ra_size) ----------------------------

TEST(ReadaheadLadder, InitSize) {
  EXPECT_EQ(get_init_ra_size(1, 32), 4u);    // 1 <= 32/32: x4
  EXPECT_EQ(get_init_ra_size(2, 32), 4u);    // 2 <= 32/4: x2
  EXPECT_EQ(get_init_ra_size(3, 32), 8u);    // rounded up to 4, x2
  EXPECT_EQ(get_init_ra_size(16, 32), 32u);  // > max/4: max
  EXPECT_EQ(get_init_ra_size(1, 2048), 4u);
  EXPECT_EQ(get_init_ra_size(64, 2048), 256u);
  EXPECT_EQ(get_init_ra_size(100, 2048), 256u);
  EXPECT_EQ(get_init_ra_size(2048, 2048), 2048u);
}

TEST(ReadaheadLadder, NextSizeRampsTo32) {
  EXPECT_EQ(next_sizes(4, 32, 5), (std::vector<uint64_t>{4, 8, 16, 32, 32}));
}

TEST(ReadaheadLadder, NextSizeRampsTo2048) {
  EXPECT_EQ(next_sizes(4, 2048, 8), (std::vector<uint64_t>{4, 16, 64, 256, 512, 1024, 2048, 2048}));
}

// --- read(2) streams (page_cache_sync_ra, page_cache_async_ra) ---------------

// 4 KiB reads from offset 0 with ra_pages 32: the first read opens (0, 4, 3)
// with the marker on page 1; each marker hit moves the window to its end and
// ramps it 8, 16, 32, 32, ..., the marker on the first page of each window.
TEST(ReadaheadStream, SequentialReadsRampTheWindow) {
  Model m(reader(32));
  std::map<pgoff_t, Window> opened;  // page whose read moved the window -> window
  Window last{};
  for (pgoff_t p = 0; p <= 100; ++p) {
    m.read_pages(p, 1);
    if (window(m.ra()) != last) opened[p] = last = window(m.ra());
    EXPECT_EQ(m.ra().prev_pos, static_cast<int64_t>((p + 1) * kPageSize));
  }
  EXPECT_EQ(opened, (std::map<pgoff_t, Window>{{0, {0, 4, 3}},
                                               {1, {4, 8, 8}},
                                               {4, {12, 16, 16}},
                                               {12, {28, 32, 32}},
                                               {28, {60, 32, 32}},
                                               {60, {92, 32, 32}},
                                               {92, {124, 32, 32}}}));
  EXPECT_EQ(m.pgpgin_kb(), 4u * 156);
  EXPECT_EQ(m.cached_in(0, 155), 156u);
  EXPECT_FALSE(m.cached(156));
  EXPECT_EQ(m.count(VmEvent::ra_sync), 1u);
  EXPECT_EQ(m.count(VmEvent::ra_async), 6u);
  EXPECT_EQ(m.marks(0, 200), std::vector<pgoff_t>{124});
}

TEST(ReadaheadStream, MarkerHitGrowsWindow) {
  Model m(reader(32));
  m.read_pages(0, 1);
  ASSERT_TRUE(m.marked(1));
  const uint32_t first = m.ra().size;
  m.read_pages(1, 1);
  EXPECT_FALSE(m.marked(1));
  EXPECT_GT(m.ra().size, first);
  EXPECT_EQ(m.ra().start, 4u);
  EXPECT_TRUE(m.marked(4));
}

// A small read that neither starts the file nor follows the previous one,
// with no cached run behind it, reads only the request and leaves the
// window state alone.
TEST(ReadaheadStream, RandomSmallReadReadsOnlyTheRequest) {
  Model m(reader(32));
  m.read_pages(1000, 1);
  m.read_pages(5000, 2);
  EXPECT_EQ(m.pgpgin_kb(), 4u * 3);
  EXPECT_EQ(m.ra().size, 0u);
  EXPECT_EQ(m.count(VmEvent::ra_sync), 0u);
  EXPECT_TRUE(m.marks(0, 16383).empty());
}

// A read that follows the previous one (index - prev_index <= 1) is
// sequential wherever it is: it opens a fresh initial window.
TEST(ReadaheadStream, ReadAfterPreviousIsSequential) {
  Model m(reader(32));
  m.read_pages(1000, 1);
  m.read_pages(1001, 1);
  EXPECT_EQ(window(m.ra()), (Window{1001, 4, 3}));
  EXPECT_EQ(m.pgpgin_kb(), 4u * 5);
}

// ra_pages = 0 (read_ahead_kb = 0): every miss reads the one page asked for.
TEST(ReadaheadStream, NoReadaheadReadsOnePagePerMiss) {
  Model m(reader(0));
  for (pgoff_t p = 0; p < 10; ++p) m.read_pages(p, 1);
  EXPECT_EQ(m.pgpgin_kb(), 40u);
  EXPECT_EQ(m.count(VmEvent::ra_forced), 10u);
  EXPECT_TRUE(m.marks(0, 100).empty());
}

// POSIX_FADV_RANDOM (FMODE_RANDOM): exactly the request, no window state.
TEST(ReadaheadStream, FmodeRandomReadsExactlyTheRequest) {
  Model m(reader(32));
  m.file().f_mode |= FMODE_RANDOM;
  m.read_pages(0, 16);
  EXPECT_EQ(m.pgpgin_kb(), 64u);
  EXPECT_EQ(m.ra().size, 0u);
  EXPECT_TRUE(m.marks(0, 100).empty());
}

// prev_pos is the read(2) position only; faults never set it (only filemap_read does).
TEST(ReadaheadStream, FaultsDoNotSetPrevPos) {
  Model m(ModelSetup().ra(32));
  m.touch(10);
  EXPECT_EQ(m.ra().prev_pos, -1);
  m.read_pages(3, 2);
  EXPECT_EQ(m.ra().prev_pos, static_cast<int64_t>(5 * kPageSize));
}

// A marker hit that is not where this file's window expects it (another
// open file read the pages): page_cache_async_ra starts the new window at the
// first hole after the marker, sized from the distance to it plus the request.
TEST(ReadaheadStream, MarkerOfAnotherStreamStartsAtTheFirstHole) {
  Model m(reader(32));
  m.read_pages(0, 1);  // (0, 4, 3): pages 0-3 cached, marker on 1
  File* other = m.k().open(&m.as());
  filemap_read(m.k(), *other, 1 * kPageSize, kPageSize);
  EXPECT_EQ(window(other->f_ra), (Window{4, 8, 8}));  // next(3 + 1) = 8
  EXPECT_EQ(m.cached_in(0, 100), 12u);
  EXPECT_EQ(m.marks(0, 100), std::vector<pgoff_t>{4});
  EXPECT_EQ(window(m.ra()), (Window{0, 4, 3}));  // the first file's state is its own
}

// MADV_WILLNEED / POSIX_FADV_WILLNEED: force_page_cache_ra reads only the
// absent pages, at most max(io_pages, ra_pages), in 2 MiB chunks, unmarked.
TEST(ReadaheadForced, WillneedReadsAbsentPagesInTwoMegabyteChunks) {
  Model m(ModelSetup().ra(32).io(1024));
  m.cache(100, 109);
  m.madvise(Madvise::kWillneed);
  EXPECT_EQ(m.cached_in(0, 1023), 1024u);
  EXPECT_FALSE(m.cached(1024));
  EXPECT_EQ(m.pgpgin_kb(), 4u * (1024 - 10));
  EXPECT_TRUE(m.marks(0, 2000).empty());
  EXPECT_EQ(m.count(VmEvent::ra_forced), 1u);
  // [0, 100), [110, 512) in the first chunk, [512, 1024) in the second.
  EXPECT_EQ(m.count(VmEvent::read_bios), 3u);
  EXPECT_EQ(m.rss_file(), 0);
  EXPECT_EQ(m.mmap_miss(), 0u);
}

// --- large folios: the order ramp (page_cache_ra_order, page_cache_async_ra) ---

// With ra_pages 2048 and large folios, each async window asks for two more
// orders than the last, the window end is aligned to the new order, and the
// folios are clamped by alignment, the window size and the mapping maximum.
TEST(ReadaheadOrder, AsyncWindowsRampTheFolioOrder) {
  Model m(reader(2048, 9));
  std::map<pgoff_t, unsigned> ra_order;  // marker page read -> ra->order after it
  for (pgoff_t p = 0; p < 1100; ++p) {
    const bool marker = m.marked(p);
    m.read_pages(p, 1);
    if (marker) ra_order[p] = m.ra().order;
  }
  EXPECT_EQ(ra_order, (std::map<pgoff_t, unsigned>{
                          {1, 2}, {4, 4}, {20, 6}, {80, 8}, {320, 8}, {768, 9}, {1024, 9}}));
  // folio head -> order, window by window.
  const std::map<pgoff_t, unsigned> want = {
      {0, 0},    {1, 0},   {2, 0},   {3, 0},              // sync (0, 4, 3)
      {4, 2},    {8, 2},   {12, 2},  {16, 2},             // (4, 16): order 2
      {20, 2},   {24, 3},  {32, 4},  {48, 4},  {64, 4},   // (20, 60): order 4
      {80, 4},   {96, 5},  {128, 6}, {192, 6}, {256, 6},  // (80, 240): order 6
      {320, 6},  {384, 7}, {512, 8},                      // (320, 448): order 8
      {768, 8},                                           // (768, 256): ilog2 clamp
      {1024, 9},                                          // (1024, 512): max order
      {1536, 9}};                                         // (1536, 512)
  for (const auto& [head, order] : want) {
    SCOPED_TRACE(::testing::Message() << "folio at " << head);
    ASSERT_TRUE(m.cached(head));
    EXPECT_EQ(m.as().head(head), head);
    EXPECT_EQ(m.as().order(head), order);
  }
  EXPECT_EQ(window(m.ra()), (Window{1536, 512, 512}));
  EXPECT_EQ(m.pgpgin_kb(), 4u * 2048);
}

TEST(ReadaheadOrder, RampIsClampedByTheMappingMaximum) {
  Model m(reader(2048, 4));
  for (pgoff_t p = 0; p < 600; ++p) m.read_pages(p, 1);
  EXPECT_EQ(m.as().order(32), 4u);
  EXPECT_EQ(m.as().order(128), 4u);
  EXPECT_EQ(m.as().order(512), 4u);
  EXPECT_LE(m.ra().order, 4u);
  for (pgoff_t p = 0; p < 600; ++p) EXPECT_LE(m.as().order(p), 4u);
}

// A folio already inside the window makes the large-folio loop stop with
// -EEXIST; the rest of the window is read with order-0 pages around it.
TEST(ReadaheadOrder, PresentFolioFallsBackToOrderZero) {
  Model m(reader(2048, 9));
  m.cache(20, 20);
  FileRaState& ra = m.ra();
  ra.start = 0;
  ra.size = 64;
  ra.async_size = 32;
  ra.order = 4;
  ReadaheadControl rac{&m.file(), &m.as(), &ra, 0, ReadCause::kReadaround};
  page_cache_ra_order(m.k(), rac, ra);
  EXPECT_EQ(m.as().order(0), 4u);
  EXPECT_EQ(m.as().head(15), 0u);
  for (const pgoff_t p : {16, 19, 21, 40, 63}) EXPECT_EQ(m.as().order(p), 0u) << p;
  EXPECT_EQ(m.cached_in(0, 63), 64u);
  EXPECT_FALSE(m.cached(64));
  EXPECT_EQ(m.pgpgin_kb(), 4u * 63);
  // The fallback marks relative to its own start: 16 + (48 - 32).
  EXPECT_EQ(m.marks(0, 63), std::vector<pgoff_t>{32});
}

// --- readahead_gfp_mask(): __GFP_NORETRY charges ---

// When reclaim finds only folios locked under I/O, a readahead folio's charge
// fails (-ENOMEM) and page_cache_ra_unbounded() reads what it has so far.
TEST(ReadaheadNoRetry, WindowStopsWhereTheRoomEnds) {
  Model m(ModelSetup().pages(1024).ra(64).capacity(48));
  for (pgoff_t p = 0; p < 32; ++p) {  // an earlier window, still in flight
    ASSERT_EQ(filemap_add_folio(m.k(), m.as(), p, 0, kPgLocked), AddFolio::kAdded);
  }
  ReadaheadControl rac{&m.file(), &m.as(), &m.ra(), 100, ReadCause::kReadaround};
  do_page_cache_ra(m.k(), rac, 64, 0);
  EXPECT_EQ(m.cached_in(100, 163), 16u);  // 48 - 32
  EXPECT_TRUE(m.cached(115));
  EXPECT_FALSE(m.cached(116));
  EXPECT_EQ(m.count(VmEvent::ra_nomem), 1u);
  EXPECT_EQ(m.pgpgin_kb(), 4u * 16);
  EXPECT_LE(m.k().nr_charged(), m.k().capacity_pages());
}

// With unlocked folios to evict, reclaim makes room and the window is whole.
TEST(ReadaheadNoRetry, ReclaimMakesRoomForTheWindow) {
  Model m(ModelSetup().pages(1024).ra(64).capacity(48));
  m.cache(0, 31);
  ReadaheadControl rac{&m.file(), &m.as(), &m.ra(), 100, ReadCause::kReadaround};
  do_page_cache_ra(m.k(), rac, 40, 0);
  EXPECT_EQ(m.cached_in(100, 139), 40u);
  EXPECT_EQ(m.count(VmEvent::ra_nomem), 0u);
  EXPECT_LE(m.k().nr_charged(), m.k().capacity_pages());
}

// The faulting folio's own allocation does not give up: where the kernel
// would OOM-kill, the model goes over the capacity and records that reclaim
// gave up.
TEST(ReadaheadNoRetry, AFaultsFolioIsChargedRegardless) {
  Model m(ModelSetup().pages(1024).ra(0).capacity(8).with(fault_around_off));
  for (pgoff_t p = 0; p < 8; ++p) {
    ASSERT_EQ(filemap_add_folio(m.k(), m.as(), p, 0, kPgLocked), AddFolio::kAdded);
  }
  EXPECT_FALSE(m.k().reclaim_gave_up());
  m.touch(500);
  EXPECT_TRUE(m.cached(500));
  EXPECT_EQ(m.k().nr_charged(), 9u);
  EXPECT_TRUE(m.k().reclaim_gave_up());
}

// --- the PG_readahead marker (page_cache_ra_order, page_cache_ra_unbounded) ---

class Marker : public ::testing::Test {
 protected:
  static ModelSetup mapped(uint64_t file_pages, unsigned max_order = 0) {
    return ModelSetup().pages(file_pages).ra(2048).order(max_order);
  }
};

// Read-around [p - R/2, p + R/2) marks start + size - async = p + R/4.
TEST_F(Marker, ReadAroundMarksAQuarterWindowAhead) {
  Model m(mapped(16384));
  m.touch(5000);
  EXPECT_EQ(m.marks(0, 16383), std::vector<pgoff_t>{5000 + 512});
}

// Near the start of the file the window starts at 0: the mark is at 3R/4.
TEST_F(Marker, WindowClippedAtZeroMarksThreeQuarters) {
  Model m(mapped(16384));
  m.touch(100);
  EXPECT_EQ(m.cached_in(0, 2047), 2048u);
  EXPECT_EQ(m.marks(0, 16383), std::vector<pgoff_t>{1536});
}

// Only newly allocated pages are marked: a cached page at the mark stays
// unmarked, and no other page is marked instead.
TEST_F(Marker, CachedPageAtTheMarkIsNotMarked) {
  Model m(mapped(16384));
  m.cache(5512, 5512);
  m.touch(5000);
  EXPECT_TRUE(m.marks(0, 16383).empty());
  EXPECT_EQ(m.pgpgin_kb(), 4u * 2047);
}

// Order-0 path, window truncated at EOF: do_page_cache_ra marks
// clipped_len - async = 1200 - 512.
TEST_F(Marker, EofClippedWindowMarksFromTheClippedLength) {
  Model m(mapped(1200));
  m.touch(1000);
  EXPECT_EQ(m.cached_in(0, 1199), 1200u);
  EXPECT_EQ(m.marks(0, 1199), std::vector<pgoff_t>{688});
}

// ...and omits the marker when async_size exceeds the clipped length.
TEST_F(Marker, EofClippedWindowShorterThanAsyncHasNoMarker) {
  Model m(mapped(400));
  m.touch(100);
  EXPECT_EQ(m.cached_in(0, 399), 400u);
  EXPECT_TRUE(m.marks(0, 399).empty());
}

// Large-folio path (7.1): the mark stays at start + size - async and is set
// if it still lies inside the truncated window.
TEST_F(Marker, LargeFolioPathKeepsTheMarkInsideATruncatedWindow) {
  Model m(mapped(1800, 9));
  m.touch(1000);
  EXPECT_EQ(m.cached_in(0, 1799), 1800u);
  EXPECT_EQ(m.marks(0, 1799), std::vector<pgoff_t>{1536});
}

// page_cache_sync_ra: when every page from the start of the file up to index-1 is cached,
// page_cache_prev_miss finds no hole ("none" = ULONG_MAX), so contig_count =
// index - ULONG_MAX - 1 = index, doubled: size = min(2 * index + req, max).
// A 4 KiB read(2) at page 5 of a fresh file descriptor with pages 0-4 cached
// opens (5, 11, 1): 11 pages read, marker on page 15.
TEST(ReadaheadStream, CachedFileStartSizesWindowFromIndex) {
  Model m(reader(32));
  m.cache(0, 4);
  m.read_pages(5, 1);
  EXPECT_EQ(window(m.ra()), (Window{5, 11, 1}));
  EXPECT_EQ(m.pgpgin_kb(), 4u * 11);
  EXPECT_EQ(m.marks(0, 100), std::vector<pgoff_t>{15});
}

// A cached run that does not reach the file start: contig = the run.
TEST(ReadaheadStream, CachedRunBehindTheReadSizesTheWindow) {
  Model m(reader(32));
  m.cache(100, 109);
  m.read_pages(110, 1);
  EXPECT_EQ(window(m.ra()), (Window{110, 11, 1}));
  EXPECT_EQ(m.pgpgin_kb(), 4u * 11);
}

// POSIX_FADV_SEQUENTIAL doubles the file's ra_pages, and mmap read-around
// sizes its window from it: a cold fault reads 2 x ra_pages around itself.
TEST(Fadvise, SequentialDoublesTheReadAroundWindow) {
  Model m(ModelSetup().ra(32));
  do_fadvise(m.k(), m.file(), 0, m.as().nr_pages(), Fadvise::kSequential);
  EXPECT_EQ(m.ra().ra_pages, 64u);
  m.touch(100);
  EXPECT_EQ(m.pgpgin_kb(), 4u * 64);
  do_fadvise(m.k(), m.file(), 0, 0, Fadvise::kNormal);
  EXPECT_EQ(m.ra().ra_pages, 32u);
}

// POSIX_FADV_RANDOM changes read(2) only: a fault still reads around.
TEST(Fadvise, RandomLeavesFaultsAlone) {
  Model m(ModelSetup().ra(32));
  do_fadvise(m.k(), m.file(), 0, m.as().nr_pages(), Fadvise::kRandom);
  EXPECT_TRUE(m.file().f_mode & FMODE_RANDOM);
  m.touch(100);
  EXPECT_EQ(m.pgpgin_kb(), 4u * 32);
  m.read_pages(1000, 4);
  EXPECT_EQ(m.pgpgin_kb(), 4u * (32 + 4));
}

// POSIX_FADV_WILLNEED reads the range, capped at max(io_pages, ra_pages).
TEST(Fadvise, WillneedIsCappedLikeMadvise) {
  Model m(ModelSetup().ra(32).io(64));
  do_fadvise(m.k(), m.file(), 10, 1000, Fadvise::kWillneed);
  EXPECT_EQ(m.cached_in(0, 2000), 64u);
  EXPECT_TRUE(m.cached(10));
  EXPECT_TRUE(m.cached(73));
  EXPECT_FALSE(m.cached(74));
}

// POSIX_FADV_DONTNEED drops clean, unmapped folios wholly inside the range,
// with no shadow entries; mapped pages stay.
TEST(Fadvise, DontneedDropsUnmappedFoliosInTheRange) {
  Model m(ModelSetup().ra(32));
  m.cache(0, 63);
  m.touch(5);  // fault-around maps 0-15
  do_fadvise(m.k(), m.file(), 0, 48, Fadvise::kDontneed);
  EXPECT_EQ(m.cached_in(0, 63), 16u + 16u);  // 0-15 mapped, 48-63 outside the range
  EXPECT_TRUE(m.cached(0));
  EXPECT_FALSE(m.cached(16));
  EXPECT_FALSE(m.as().has_shadow(16));
  EXPECT_TRUE(m.cached(48));
}

// The elapsed-time estimate: readahead keeps the pages ahead of a
// sequential reader in the cache at once, but the reader cannot copy them
// before the device has read them, so a cold sequential read takes at least
// the file's size over the device's bandwidth. A second pass over the cached
// file waits for nothing.
TEST(ElapsedTime, SequentialReadWaitsForTheDevice) {
  Model m(reader(32));
  const uint64_t pages = m.as().nr_pages();
  for (pgoff_t p = 0; p < pages; p += 16) m.read_pages(p, 16);
  const double transfer_ns =
      static_cast<double>(pages * kPageSize) / m.k().bdi().bandwidth_bytes_per_s * 1e9;
  EXPECT_GE(m.k().now_ns(), transfer_ns);
  EXPECT_GE(static_cast<double>(m.count(VmEvent::io_wait_ns)), 0.9 * transfer_ns);
  const uint64_t waited = m.count(VmEvent::io_wait_ns);
  File* again = m.k().open(&m.as());
  for (pgoff_t p = 0; p < pages; p += 16)
    filemap_read(m.k(), *again, p * kPageSize, 16 * kPageSize);
  EXPECT_EQ(m.count(VmEvent::io_wait_ns), waited);
}

// The device serves its requests one at a time, each for request_ns and its
// transfer; the latency of one overlaps the service of the next. Four
// asynchronous single-page reads and a synchronous fifth: the fifth completes
// after five services and one latency.
TEST(ElapsedTime, TheDeviceServesOneRequestAtATime) {
  for (double request_ns : {0.0, 20e3}) {
    BackingDev bdi;
    bdi.bandwidth_bytes_per_s = 4096e6;  // a page a microsecond
    bdi.latency_ns = 50e3;
    bdi.request_ns = request_ns;
    bdi.queue_depth = 0;
    Kernel k(kernel_profile(kDefaultRelease), 1024, bdi, CpuCosts{});
    for (pgoff_t p = 0; p < 4; ++p) k.submit_read(0, p, 1, /*sync=*/false);
    k.submit_read(0, 4, 1, /*sync=*/true);
    EXPECT_NEAR(k.now_ns(), 5 * (request_ns + 1e3) + 50e3, 1e-3) << request_ns;
  }
}

// With shared_batches, the requests of one batch are served together and
// complete together: the first page of an 8-page batch split into requests
// of 4 is ready only when the whole batch is, after both requests' time.
// Without, it is ready when the first request is.
TEST(ElapsedTime, ASharedBatchCompletesAsAWhole) {
  for (bool shared : {false, true}) {
    BackingDev bdi;
    bdi.bandwidth_bytes_per_s = 4096e6;  // a page a microsecond
    bdi.latency_ns = 50e3;
    bdi.request_ns = 20e3;
    bdi.io_pages = 4;
    bdi.shared_batches = shared;
    Kernel k(kernel_profile(kDefaultRelease), 1024, bdi, CpuCosts{});
    k.submit_read(0, 0, 8, /*sync=*/false);
    k.wait_on_read(0, 0);
    const double first = shared ? 2 * 20e3 + 8e3 + 50e3 : 20e3 + 4e3 + 50e3;
    EXPECT_NEAR(k.now_ns(), first, 1e-3) << shared;
    k.wait_on_read(0, 7);
    EXPECT_NEAR(k.now_ns(), 2 * 20e3 + 8e3 + 50e3, 1e-3) << shared;
  }
}

// A read-around window cut by a cached page is read in two batches, each
// submitted without waiting on the one before (page_cache_ra_unbounded);
// the fault then sleeps on the lock of the folio it wants (filemap_fault),
// so it waits for that page's request alone, whichever batch holds it, and
// the CPU that adds the second batch's folios overlaps the first's read.
TEST(ElapsedTime, AFaultWaitsForTheRequestOfItsOwnPage) {
  CpuCosts cpu;
#define FAULTLINE_X(name, ns, doc) cpu.name = 0;
  FAULTLINE_CPU_COSTS(FAULTLINE_X)
#undef FAULTLINE_X
  cpu.add_folio_ns = 10e3;
  // The window of a fault at 100 with 32 pages of read-around: [84, 116).
  auto fault_wait = [&](pgoff_t cached) {
    Model m(ModelSetup().ra(32).costs(cpu));
    m.cache(cached, cached);
    const uint64_t before = m.count(VmEvent::io_wait_ns);
    m.touch(100);
    EXPECT_EQ(m.count(VmEvent::read_bios), 2u) << cached;
    return static_cast<double>(m.count(VmEvent::io_wait_ns) - before);
  };
  const BackingDev bdi;
  const double page_ns = kPageSize / bdi.bandwidth_bytes_per_s * 1e9;
  // Page 100 in the first batch, [84, 108): the task adds the second's 7
  // folios while it is read, and the second, [109, 116), read after it, is
  // not waited for.
  EXPECT_NEAR(fault_wait(108), 24 * page_ns + bdi.latency_ns - 7 * cpu.add_folio_ns, 2.0);
  // Page 100 in the second batch, [93, 116): the first, [84, 92), was read
  // while the task added the second's 23 folios (230 us), so the fault
  // waits for the second's transfer and latency only.
  EXPECT_NEAR(fault_wait(92), 23 * page_ns + bdi.latency_ns, 2.0);
}

// A read(2) from the page cache costs its call and its copy: 64 KiB calls
// over a cached 64 MiB file.
TEST(ElapsedTime, CachedReadCostsTheCallAndTheCopy) {
  Model m(reader(32));
  const uint64_t pages = m.as().nr_pages();
  m.cache(0, pages - 1);
  const double t0 = m.k().now_ns();
  for (pgoff_t p = 0; p < pages; p += 16) m.read_pages(p, 16);
  const CpuCosts& c = m.k().cpu();
  const double calls = static_cast<double>(pages / 16);
  EXPECT_NEAR(m.k().now_ns() - t0,
              calls * c.read_call_ns + static_cast<double>(pages) * c.copy_page_ns, 1.0);
}

}  // namespace
}  // namespace faultline::mmtest

namespace faultline::mmtest {
namespace {

// Sequential read(2) of a 64 MiB file through a 4 MiB cache, settled after
// each call as the engines do; returns the clock (ns).
double read_through(Model& m, uint64_t kswapd_gap) {
  m.k().set_kswapd(kswapd_gap);
  m.k().settle_reclaim();
  const uint64_t pages = m.as().nr_pages();
  for (pgoff_t p = 0; p < pages; p += 16) {
    m.read_pages(p, 16);
    m.k().settle_reclaim();
  }
  return m.k().now_ns();
}

// kswapd on a second CPU takes reclaim off the reader: the counters are
// the same, the reader's time is less by about the evictions' cost, which
// kswapd spent instead; the reader never waits while kswapd is no more
// than the watermark gap behind.
TEST(ElapsedTime, KswapdReclaimsBesideTheReader) {
  Model direct(reader(32).capacity(1024));
  Model beside(reader(32).capacity(1024));
  const double t_direct = read_through(direct, 0);
  const double t_beside = read_through(beside, 2048);
  for (VmEvent e : {VmEvent::pgpgin, VmEvent::pages_evicted, VmEvent::pgsteal_file}) {
    EXPECT_EQ(direct.count(e), beside.count(e));
  }
  const uint64_t evicted = direct.count(VmEvent::pages_evicted);
  ASSERT_GT(evicted, 15000u);
  const double work = static_cast<double>(evicted) * direct.k().cpu().evict_folio_ns;
  EXPECT_EQ(direct.count(VmEvent::kswapd_ns), 0u);
  EXPECT_NEAR(static_cast<double>(beside.count(VmEvent::kswapd_ns)), work, work * 1e-3);
  EXPECT_EQ(beside.count(VmEvent::reclaim_wait_ns), 0u);
  EXPECT_LT(t_beside, t_direct);
  // The device bounds both; what the reader saves is at most kswapd's work.
  EXPECT_GE(t_beside, t_direct - work * 1.001);
}

// When a folio takes kswapd longer to evict than the device takes to read
// one, kswapd falls behind: once it is more than the gap behind, the reader
// waits for it, and then it runs at kswapd's pace.
TEST(ElapsedTime, ReaderWaitsForAKswapdThatFallsBehind) {
  CpuCosts slow;
  slow.evict_folio_ns = 100e3;  // 100 µs a folio; the device reads one in 2 µs
  Model m(reader(32).capacity(1024).costs(slow));
  const double t = read_through(m, 64);
  EXPECT_GT(m.count(VmEvent::reclaim_wait_ns), 0u);
  const double work = static_cast<double>(m.count(VmEvent::pages_evicted)) * slow.evict_folio_ns;
  EXPECT_GE(t, work - 64 * slow.evict_folio_ns - 1);
}

}  // namespace
}  // namespace faultline::mmtest
