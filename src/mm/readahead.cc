#include "mm/readahead.h"

#include <algorithm>

#include "mm/vmscan.h"

namespace faultline::mm {
namespace {

// A contiguous run of folios allocated by one readahead call, waiting for
// read_pages() to submit it as one batch.
// Its folios stay locked until then, so reclaim cannot take them.
struct Batch {
  pgoff_t start = 0;
  uint64_t nr_pages = 0;
  void add(pgoff_t index, uint64_t nr) {
    if (nr_pages == 0) start = index;
    nr_pages += nr;
  }
};

// read_pages(): hands the batch to ->readahead; one bio stream, counted at
// submit_bio in pgpgin.
void read_pages(Kernel& k, const ReadaheadControl& rac, Batch& b) {
  if (b.nr_pages == 0) return;
  AddressSpace& as = *rac.mapping;
  for (pgoff_t i = b.start; i < b.start + b.nr_pages; i += as.folio_nr_pages(i)) {
    as.clear(i, kPgLocked);  // the read completes (folio_end_read)
  }
  count_read(k, rac.cause, b.nr_pages);
  k.vmstat().inc(VmEvent::read_bios);
  k.submit_read(as.ino(), b.start, b.nr_pages, rac.sync, rac.wanted);
  b.nr_pages = 0;
}

// A folio read by readahead carries kPgRaUnused until the workload touches
// it; one read only because it was needed never counts as waste.
uint16_t ra_unused_flag(const ReadaheadControl& rac) {
  return rac.cause == ReadCause::kSingle ? uint16_t{0} : uint16_t{kPgRaUnused};
}

uint64_t ractl_max_pages(const Kernel& k, const FileRaState& ra, uint64_t req_count) {
  uint64_t max_pages = ra.ra_pages;
  // Within the limits of the device, a large request is read in one go.
  if (req_count > max_pages && k.bdi().io_pages > max_pages) {
    max_pages = std::min<uint64_t>(req_count, k.bdi().io_pages);
  }
  return max_pages;
}

// page_cache_prev_miss(): the last index at or before `index` with no folio,
// scanning back at most max_scan slots; kNoIndex if the scan passed index 0.
// If no hole is found in max_scan slots the last index scanned is returned
// (so the caller sees a run of max_scan - 1 cached pages), as 6.18 does.
pgoff_t page_cache_prev_miss(const AddressSpace& as, pgoff_t index, uint64_t max_scan) {
  pgoff_t i = index;
  for (uint64_t n = 0; n < max_scan; ++n) {
    i = index - n;
    if (!as.present(i)) return i;
    if (i == 0) return kNoIndex;
  }
  return i;
}

// page_cache_next_miss(): the first index at or after `index` with no folio.
pgoff_t page_cache_next_miss(const AddressSpace& as, pgoff_t index, uint64_t max_scan) {
  for (uint64_t n = 0; n < max_scan; ++n, ++index) {
    if (index >= as.nr_pages() || !as.present(index)) return index;
  }
  return kNoIndex;
}

void trace_ra(Kernel& k, TraceKind kind, const ReadaheadControl& rac, uint64_t req) {
  const FileRaState& ra = *rac.ra;
  if (k.tracing())
    k.trace({.kind = kind,
             .ino = rac.mapping->ino(),
             .index = rac.index,
             .req_count = static_cast<uint32_t>(req),
             .ra_start = ra.start,
             .ra_size = ra.size,
             .ra_async_size = ra.async_size,
             .ra_pages = ra.ra_pages,
             .mmap_miss = ra.mmap_miss});
}

}  // namespace

VmEvent read_cause_event(ReadCause c) {
  switch (c) {
    case ReadCause::kReadaround:
      return VmEvent::pgpgin_readaround;
    case ReadCause::kSyncRa:
      return VmEvent::pgpgin_sync_ra;
    case ReadCause::kAsyncRa:
      return VmEvent::pgpgin_async_ra;
    case ReadCause::kReadRa:
      return VmEvent::pgpgin_read_ra;
    case ReadCause::kSingle:
      return VmEvent::pgpgin_single;
    case ReadCause::kWillneed:
      return VmEvent::pgpgin_willneed;
  }
  return VmEvent::pgpgin_single;
}

void count_read(Kernel& k, ReadCause cause, uint64_t nr_pages) {
  const uint64_t kb = nr_pages * (kPageSize / 1024);
  k.vmstat().inc(VmEvent::pgpgin, kb);
  k.vmstat().inc(read_cause_event(cause), kb);
}

AddFolio filemap_add_folio(Kernel& k, AddressSpace& as, pgoff_t index, unsigned order,
                           uint16_t extra_flags, bool gfp_write, bool gfp_noretry) {
  const uint64_t nr = uint64_t{1} << order;
  if (as.any_present(index, nr)) return AddFolio::kExists;
  const uint64_t in_file = std::min<uint64_t>(nr, as.nr_pages() - index);
  // mem_cgroup_charge() before the folio is in the page cache or on the
  // LRU: reclaim makes room first, so it never takes the folio being added.
  reclaim_for(k, in_file);
  if (gfp_noretry && k.nr_charged() + in_file > k.capacity_pages()) {
    k.vmstat().inc(VmEvent::ra_nomem);
    return AddFolio::kNoMem;
  }
  uint32_t shadow_age = 0;
  bool shadow_ws = false;
  const bool had_shadow = as.install(index, order, &shadow_age, &shadow_ws);
  as.set(index, static_cast<uint16_t>(kPgUptodate | extra_flags));
  if (as.shmem()) as.set(index, kPgSwapBacked);
  k.charge(static_cast<int64_t>(in_file));
  k.vmstat().inc(VmEvent::pages_inserted, in_file);
  k.cpu_work(CpuCost::add_folio_ns);
  if (k.tracing())
    k.trace({.kind = TraceKind::kAddToPageCache, .ino = as.ino(), .index = index, .order = order});
  // Write insertions (__GFP_WRITE) do not count as refaults.
  if (had_shadow && !as.shmem() && !gfp_write) {
    workingset_refault(k, as, index, shadow_age, shadow_ws);
    // Every insertion but a write's is read in the same call (read_pages or
    // the one-folio read), so this is the refault part of that read's pgpgin.
    k.vmstat().inc(VmEvent::pgpgin_refault, in_file * (kPageSize / 1024));
  }
  folio_add_lru(k, as, index);
  return AddFolio::kAdded;
}

uint64_t get_init_ra_size(uint64_t size, uint64_t max) {
  uint64_t newsize = roundup_pow_of_two(size);
  if (newsize <= max / 32) {
    newsize *= 4;
  } else if (newsize <= max / 4) {
    newsize *= 2;
  } else {
    newsize = max;
  }
  return newsize;
}

uint64_t get_next_ra_size(const FileRaState& ra, uint64_t max) {
  const uint64_t cur = ra.size;
  if (cur < max / 16) return 4 * cur;
  if (cur <= max / 2) return 2 * cur;
  return max;
}

void page_cache_ra_unbounded(Kernel& k, ReadaheadControl& rac, uint64_t nr_to_read,
                             uint64_t lookahead_size) {
  AddressSpace& as = *rac.mapping;
  const pgoff_t index = rac.index;
  if (k.tracing())
    k.trace({.kind = TraceKind::kPageCacheRaUnbounded,
             .ino = as.ino(),
             .index = index,
             .end = nr_to_read,
             .req_count = static_cast<uint32_t>(lookahead_size),
             .mmap_miss = rac.ra->mmap_miss});
  // The marker goes on the first page of the lookahead part.
  const uint64_t mark = lookahead_size <= nr_to_read ? nr_to_read - lookahead_size : kNoIndex;
  Batch batch;
  for (uint64_t i = 0; i < nr_to_read; ++i) {
    const pgoff_t idx = index + i;
    if (as.present(idx)) {
      read_pages(k, rac, batch);  // already cached: submit what we have, skip it
      continue;
    }
    const uint16_t flags = kPgLocked | ra_unused_flag(rac) | (i == mark ? kPgReadahead : 0);
    const AddFolio added = filemap_add_folio(k, as, idx, 0, flags, false, /*gfp_noretry=*/true);
    if (added == AddFolio::kNoMem) break;  // read what is allocated, stop there
    if (added == AddFolio::kExists) {
      read_pages(k, rac, batch);
      continue;
    }
    batch.add(idx, 1);
  }
  read_pages(k, rac, batch);
}

void do_page_cache_ra(Kernel& k, ReadaheadControl& rac, uint64_t nr_to_read,
                      uint64_t lookahead_size) {
  const AddressSpace& as = *rac.mapping;
  if (as.i_size() == 0) return;
  const pgoff_t end_index = as.nr_pages() - 1;
  if (rac.index > end_index) return;
  // Don't read past the page containing the last byte of the file.
  if (nr_to_read > end_index - rac.index) nr_to_read = end_index - rac.index + 1;
  page_cache_ra_unbounded(k, rac, nr_to_read, lookahead_size);
}

void force_page_cache_ra(Kernel& k, ReadaheadControl& rac, uint64_t nr_to_read) {
  const FileRaState& ra = *rac.ra;
  const uint64_t max_pages = std::max<uint64_t>(k.bdi().io_pages, ra.ra_pages);
  nr_to_read = std::min(nr_to_read, max_pages);
  k.vmstat().inc(VmEvent::ra_forced);
  while (nr_to_read) {
    const uint64_t this_chunk = std::min<uint64_t>((2u << 20) / kPageSize, nr_to_read);
    do_page_cache_ra(k, rac, this_chunk, 0);
    rac.index += this_chunk;
    nr_to_read -= this_chunk;
  }
}

void page_cache_ra_order(Kernel& k, ReadaheadControl& rac, FileRaState& ra) {
  AddressSpace& as = *rac.mapping;
  const pgoff_t start = rac.index;
  pgoff_t index = start;
  if (!as.large_folio_support()) {
    ra.order = 0;
    if (k.tracing())
      k.trace({.kind = TraceKind::kPageCacheRaOrder,
               .ino = as.ino(),
               .index = index,
               .order = 0,
               .ra_start = ra.start,
               .ra_size = ra.size,
               .ra_async_size = ra.async_size,
               .ra_pages = ra.ra_pages,
               .mmap_miss = ra.mmap_miss});
    do_page_cache_ra(k, rac, ra.size, ra.async_size);
    return;
  }
  if (as.nr_pages() == 0) return;
  const pgoff_t limit = std::min<pgoff_t>(as.nr_pages() - 1, index + ra.size - 1);
  const pgoff_t mark = index + ra.size - ra.async_size;
  unsigned new_order = ra.order;
  if (k.profile().ra_order_plus2 && new_order < as.max_order()) new_order += 2;
  new_order = std::min<unsigned>(as.max_order(), new_order);
  new_order = std::min(new_order, ilog2(ra.size));
  ra.order = static_cast<uint16_t>(new_order);
  if (k.tracing())
    k.trace({.kind = TraceKind::kPageCacheRaOrder,
             .ino = as.ino(),
             .index = index,
             .order = new_order,
             .ra_start = ra.start,
             .ra_size = ra.size,
             .ra_async_size = ra.async_size,
             .ra_pages = ra.ra_pages,
             .mmap_miss = ra.mmap_miss});
  Batch batch;
  bool failed = false;
  while (index <= limit) {
    unsigned order = new_order;
    // Align with smaller pages if needed.
    if (index & ((uint64_t{1} << order) - 1)) order = static_cast<unsigned>(__builtin_ctzll(index));
    // Don't allocate pages past EOF.
    while (order > 0 && index + (uint64_t{1} << order) - 1 > limit) --order;
    const uint16_t flags = kPgLocked | ra_unused_flag(rac) |
                           (index == round_down(mark, uint64_t{1} << order) ? kPgReadahead : 0);
    if (filemap_add_folio(k, as, index, order, flags, false, /*gfp_noretry=*/true) !=
        AddFolio::kAdded) {
      failed = true;
      break;
    }
    batch.add(index, std::min<uint64_t>(uint64_t{1} << order, as.nr_pages() - index));
    index += uint64_t{1} << order;
  }
  read_pages(k, rac, batch);
  // If there were already pages in the page cache, fall back to order-0
  // readahead for the rest of the window.
  if (failed) {
    rac.index = index;
    do_page_cache_ra(k, rac, ra.size - (index - start), ra.async_size);
  }
}

void page_cache_sync_ra(Kernel& k, ReadaheadControl& rac, uint64_t req_count) {
  FileRaState& ra = *rac.ra;
  const pgoff_t index = rac.index;
  trace_ra(k, TraceKind::kPageCacheSyncRa, rac, req_count);  // the state before the call
  bool do_forced_ra = rac.file && (rac.file->f_mode & FMODE_RANDOM);
  if (ra.ra_pages == 0) {
    // Readahead is off: the read is limited to the one page the caller
    // needs (read(2) of one folio without readahead).
    req_count = 1;
    do_forced_ra = true;
    rac.cause = ReadCause::kSingle;
  }
  if (do_forced_ra) {
    force_page_cache_ra(k, rac, req_count);
    return;
  }
  const uint64_t max_pages = ractl_max_pages(k, ra, req_count);
  const uint64_t prev_index = static_cast<uint64_t>(ra.prev_pos) >> kPageShift;
  // Start of file, oversized read, or sequential cache miss: trivial case.
  if (index == 0 || req_count > max_pages || index - prev_index <= 1) {
    ra.start = index;
    ra.size = static_cast<uint32_t>(get_init_ra_size(req_count, max_pages));
    ra.async_size = static_cast<uint32_t>(ra.size > req_count ? ra.size - req_count : ra.size >> 1);
  } else {
    // Query the page cache and look for the traces (cached history pages)
    // that a sequential stream would leave behind.
    const pgoff_t miss = page_cache_prev_miss(*rac.mapping, index - 1, max_pages);
    uint64_t contig_count = miss == kNoIndex ? index : index - miss - 1;
    // Standalone, small random read: read as is, and do not pollute the
    // readahead state.
    if (contig_count <= req_count) {
      do_page_cache_ra(k, rac, req_count, 0);
      return;
    }
    // File cached from the beginning: it is a strong indication of
    // long-run stream (or whole-file read).
    if (miss == kNoIndex) contig_count *= 2;
    ra.start = index;
    ra.size = static_cast<uint32_t>(std::min(contig_count + req_count, max_pages));
    ra.async_size = 1;
  }
  ra.order = 0;
  k.vmstat().inc(VmEvent::ra_sync);
  rac.index = ra.start;
  page_cache_ra_order(k, rac, ra);
}

void page_cache_async_ra(Kernel& k, ReadaheadControl& rac, pgoff_t folio_head, uint64_t req_count) {
  FileRaState& ra = *rac.ra;
  AddressSpace& as = *rac.mapping;
  if (ra.ra_pages == 0) return;
  trace_ra(k, TraceKind::kPageCacheAsyncRa, rac, req_count);  // the state before the call
  // Same bit is used for PG_readahead and PG_reclaim: a folio under
  // writeback keeps it. The model has no writeback in flight.
  as.clear(folio_head, kPgReadahead);
  const uint64_t max_pages = ractl_max_pages(k, ra, req_count);
  const pgoff_t index = rac.index;
  const pgoff_t expected =
      round_down(ra.start + ra.size - ra.async_size, as.folio_nr_pages(folio_head));
  if (index == expected) {
    // It's the expected callback index: assume sequential access and ramp up.
    ra.start += ra.size;
    // In the case of MADV_HUGEPAGE, the actual size might exceed the readahead window.
    ra.size = static_cast<uint32_t>(std::max<uint64_t>(ra.size, get_next_ra_size(ra, max_pages)));
  } else {
    // Hit a marked folio without valid readahead state, e.g. interleaved
    // reads: query the page cache and look for the first hole.
    const pgoff_t start = page_cache_next_miss(as, index + 1, max_pages);
    if (start == kNoIndex || start - index > max_pages) return;
    ra.start = start;
    ra.size = static_cast<uint32_t>(start - index);  // old async_size
    ra.size += static_cast<uint32_t>(req_count);
    ra.size = static_cast<uint32_t>(get_next_ra_size(ra, max_pages));
  }
  if (k.profile().ra_order_plus2) {
    ra.order = static_cast<uint16_t>(as.order(folio_head));  // ra_order adds the 2
  } else {
    ra.order = static_cast<uint16_t>(ra.order + 2);
  }
  // End the window on a natural boundary of the folio order, if that keeps it non-empty.
  const unsigned align_order =
      std::min<unsigned>(ra.order, static_cast<unsigned>(__builtin_ctzll(max_pages)));
  const uint64_t align = uint64_t{1} << align_order;
  const uint64_t end = ra.start + ra.size;
  const uint64_t aligned_end = round_down(end, align);
  if (aligned_end > ra.start) ra.size -= static_cast<uint32_t>(end - aligned_end);
  ra.async_size = ra.size;
  k.vmstat().inc(VmEvent::ra_async);
  rac.index = ra.start;
  rac.sync = false;
  page_cache_ra_order(k, rac, ra);
}

}  // namespace faultline::mm
