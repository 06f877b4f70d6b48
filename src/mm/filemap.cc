#include "mm/filemap.h"

#include <algorithm>

#include "mm/readahead.h"
#include "mm/vmscan.h"

namespace faultline::mm {
namespace {

// maybe_unlock_mmap_for_io(): the fault lock may be dropped only on the first
// try of a fault that is allowed to retry. Returns true if it was dropped
// (the kernel returns the pinned file).
bool maybe_unlock_mmap_for_io(const VmFault& vmf) {
  const fault_flags_t f = vmf.flags;
  return (f & FAULT_FLAG_ALLOW_RETRY) && !(f & FAULT_FLAG_TRIED) && !(f & FAULT_FLAG_RETRY_NOWAIT);
}

void mmap_miss_set(Kernel& k, FileRaState& ra, uint32_t value, const AddressSpace& as) {
  if (value == ra.mmap_miss) return;
  ra.mmap_miss = static_cast<uint16_t>(value);
  k.note_mmap_miss(value);
  if (k.tracing()) k.trace({.kind = TraceKind::kMmapMiss, .ino = as.ino(), .mmap_miss = value});
}

void mmap_miss_credit(Kernel& k, FileRaState& ra, uint32_t credit, const AddressSpace& as) {
  if (credit == 0) return;
  const uint32_t before = ra.mmap_miss;
  const uint32_t after = credit >= before ? 0 : before - credit;
  k.vmstat().inc(VmEvent::mmap_miss_credit, before - after);
  mmap_miss_set(k, ra, after, as);
}

// do_async_mmap_readahead(): a cached folio was found by ->fault. Credits
// one hit, and starts the next window if the folio carries the marker.
// Returns true if the fault lock was dropped.
bool do_async_mmap_readahead(Kernel& k, VmFault& vmf, pgoff_t head) {
  File* file = vmf.vma->vm_file;
  FileRaState& ra = file->f_ra;
  AddressSpace& as = *file->mapping;
  // If we don't want any read-ahead, don't bother.
  if ((vmf.vma->vm_flags & VM_RAND_READ) || ra.ra_pages == 0) return false;
  // Folios are never locked here: I/O completes when it is submitted, so the
  // 6.19 "unlocked only" condition and the 6.1x unconditional credit agree.
  if (ra.mmap_miss > 0) mmap_miss_credit(k, ra, 1, as);
  if (as.test(head, kPgReadahead)) {
    const bool dropped = maybe_unlock_mmap_for_io(vmf);
    ReadaheadControl rac{file, &as, &ra, vmf.pgoff, ReadCause::kAsyncRa};
    page_cache_async_ra(k, rac, head, ra.ra_pages);
    return dropped;
  }
  return false;
}

// The VM_HUGEPAGE branch of do_sync_mmap_readahead(): read the 2 MiB
// around the fault, and the next 2 MiB unless told not to, in PMD-order
// folios (order 0 where the mapping has no large folios). ra->start is
// left as it was.
bool thp_readaround(Kernel& k, VmFault& vmf, ReadaheadControl& rac) {
  FileRaState& ra = *rac.ra;
  const bool dropped = maybe_unlock_mmap_for_io(vmf);
  rac.index = round_down(vmf.pgoff, kHpagePmdNr);
  ra.size = kHpagePmdNr;
  // Fetch two PMD folios, so we get the chance to actually readahead,
  // unless we've been told not to.
  if (!(vmf.vma->vm_flags & VM_RAND_READ)) ra.size *= 2;
  ra.async_size = kHpagePmdNr;
  ra.order = kHpagePmdOrder;
  k.vmstat().inc(VmEvent::ra_readaround);
  page_cache_ra_order(k, rac, ra);
  return dropped;
}

// do_sync_mmap_readahead(): a page-cache miss in ->fault. Returns true if
// the fault lock was dropped for the I/O.
bool do_sync_mmap_readahead(Kernel& k, VmFault& vmf) {
  File* file = vmf.vma->vm_file;
  FileRaState& ra = file->f_ra;
  AddressSpace& as = *file->mapping;
  const vm_flags_t vm_flags = vmf.vma->vm_flags;
  ReadaheadControl rac{file, &as, &ra, vmf.pgoff, ReadCause::kReadaround};
  // CONFIG_TRANSPARENT_HUGEPAGE and HPAGE_PMD_ORDER <= MAX_PAGECACHE_ORDER
  // hold on x86-64: only the VMA flag decides. A mapping without large
  // folios then reads the same window in order-0 folios.
  const bool thp = vm_flags & VM_HUGEPAGE;
  bool dropped = false;
  // ≤6.18: the THP branch comes first, whatever VM_RAND_READ, VM_SEQ_READ,
  // ra_pages or mmap_miss say, and never touches mmap_miss.
  if (thp && k.profile().thp_ra_before_mmap_miss) return thp_readaround(k, vmf, rac);
  if (!thp) {
    // If we don't want any read-ahead, don't bother.
    if ((vm_flags & VM_RAND_READ) && !(vm_flags & VM_EXEC)) return false;
    if (ra.ra_pages == 0) return false;
    if (vm_flags & VM_SEQ_READ) {
      dropped = maybe_unlock_mmap_for_io(vmf);
      rac.cause = ReadCause::kSyncRa;
      page_cache_sync_ra(k, rac, ra.ra_pages);
      return dropped;
    }
  }
  if (!(vm_flags & VM_SEQ_READ)) {
    // Avoid banging the cache line if not needed.
    uint32_t mmap_miss = ra.mmap_miss;
    if (mmap_miss < kMmapLotsamiss * 10) mmap_miss_set(k, ra, ++mmap_miss, as);
    // Do we miss much more than hit in this file? If so, stop bothering
    // with read-ahead. It will only hurt.
    if (mmap_miss > kMmapLotsamiss) {
      k.vmstat().inc(VmEvent::ra_skipped_mmap_miss);
      return false;
    }
  }
  if (thp) return thp_readaround(k, vmf, rac);
  if (vm_flags & VM_EXEC) {
    // exec_folio_order() is 0 on x86: a forward window with no marker.
    const pgoff_t start = std::max<pgoff_t>(vmf.pgoff, vmf.vma->vm_pgoff);
    const pgoff_t end =
        std::min<pgoff_t>(start + ra.ra_pages, vmf.vma->vm_pgoff + vmf.vma->nr_pages());
    ra.start = start;
    ra.size = static_cast<uint32_t>(end - start);
    ra.async_size = 0;
    ra.order = 0;
  } else {
    // mmap read-around
    ra.start = vmf.pgoff > ra.ra_pages / 2 ? vmf.pgoff - ra.ra_pages / 2 : 0;
    ra.size = ra.ra_pages;
    ra.async_size = ra.ra_pages / 4;
    ra.order = 0;
  }
  dropped = maybe_unlock_mmap_for_io(vmf);
  rac.index = ra.start;
  k.vmstat().inc(VmEvent::ra_readaround);
  page_cache_ra_order(k, rac, ra);
  return dropped;
}

// next_uptodate_folio(): the next folio in [index, end] that fault-around
// may map: present, uptodate, not carrying the readahead marker, inside EOF.
// Returns the first index of it that lies at or after `index`. In an
// order-0 run of the runs engine it also sets *marked to the run's first
// marked head after it (or the run's end): where the mappable stretch ends.
pgoff_t next_uptodate_folio(const AddressSpace& as, pgoff_t index, pgoff_t end,
                            pgoff_t* marked = nullptr) {
  const pgoff_t max_idx = as.nr_pages();
  if (index > end) return kNoIndex;
  if (const FolioRuns* runs = as.runs()) {
    // A run's folios all pass or all fail.
    auto& rs = const_cast<FolioRuns&>(*runs);
    for (FolioRun* r = rs.next_run(index); r; r = rs.next_run_after(r)) {
      if (r->start > end) return kNoIndex;
      if (!(r->flags & kPgUptodate)) continue;
      if (r->order == 0) {
        // The first folio without the marker, and the next one with it, in
        // one search.
        const auto [at, m] = rs.next_unmarked(std::max(index, r->start), r->end());
        if (at == r->end()) continue;
        if (at > end || at >= max_idx) return kNoIndex;
        if (marked) *marked = m;
        return at;
      }
      // Its folios from index on, but for those carrying the marker.
      for (pgoff_t at = std::max(index, r->start); at < r->end();) {
        if (at > end || at >= max_idx) return kNoIndex;
        const pgoff_t head = r->head_of(at);
        if (!rs.marked(head)) return at;
        at = head + r->folio_pages();
      }
    }
    return kNoIndex;
  }
  while (index <= end && index < max_idx) {
    if (!as.present(index)) {
      ++index;
      continue;
    }
    const pgoff_t head = as.head(index);
    const uint16_t f = as.folio_flags(head);
    if ((f & kPgUptodate) && !(f & kPgReadahead)) return index;
    index = head + as.folio_nr_pages(head);
  }
  return kNoIndex;
}

}  // namespace

vm_fault_t filemap_map_pages(Kernel& k, VmFault& vmf, pgoff_t start_pgoff, pgoff_t end_pgoff) {
  Vma& vma = *vmf.vma;
  File& file = *vma.vm_file;
  AddressSpace& as = *file.mapping;
  const KernelProfile& prof = k.profile();
  const pgoff_t file_end = as.nr_pages() - 1;
  end_pgoff = std::min(end_pgoff, file_end);
  k.vmstat().inc(VmEvent::fault_around_calls);
  vm_fault_t ret = 0;
  uint32_t local_miss = 0;  // baseline credit: pages found mappable
  uint32_t p1_credit = 0;   // P1 credit: the faulting address was mapped
  uint64_t rss = 0;
  const MmCounter counter = as.shmem() ? MM_SHMEMPAGES : MM_FILEPAGES;
  pgoff_t marked = kNoIndex;  // runs: the next marked head of idx's run
  pgoff_t idx = next_uptodate_folio(as, start_pgoff, end_pgoff, &marked);
  if (idx != kNoIndex) {
    // The kernel's tracepoint fires only when there is a folio to map.
    if (k.tracing())
      k.trace({.kind = TraceKind::kFilemapMapPages,
               .ino = as.ino(),
               .index = start_pgoff,
               .end = end_pgoff});
    const pgoff_t first_head = as.head(idx);
    // Do not map with a PMD across i_size (shmem excepted). The test is
    // file_end >= folio_next_index(): the folio holding the last page of the
    // file never passes it, even when it ends exactly at EOF.
    const bool before_eof = file_end >= first_head + as.folio_nr_pages(first_head);
    if (before_eof || as.shmem()) {
      // filemap_map_pmd()
      if (vma.pmd_none(vmf.vpage) && do_set_pmd(k, vmf, first_head)) {
        ret = VM_FAULT_NOPAGE;
        idx = kNoIndex;
      }
    } else if (vma.pmd_none(vmf.vpage)) {
      // filemap_map_pmd() was skipped, so no PTE table was installed:
      // pte_offset_map_lock() finds none; nothing is mapped or credited.
      idx = kNoIndex;
    }
  }
  while (idx != kNoIndex) {
    if (const FolioRun* r = as.runs() ? as.runs()->find(idx) : nullptr; r && r->order == 0) {
      // The runs engine: the pages of a run of order-0 folios inside the
      // window, each one folio, mapped at once; every count the loop below
      // keeps per folio is one per page here.
      const bool workingset = r->flags & kPgWorkingset;
      // Up to the end of the run, of the window, or the next marked folio.
      FAULTLINE_DCHECK(marked == as.runs()->next_marked(idx, r->end()));
      const pgoff_t last = std::min<pgoff_t>(marked, end_pgoff + 1) - 1;
      const uint64_t pages = last - idx + 1;
      if (!(prof.workingset_exclusion && workingset)) local_miss += static_cast<uint32_t>(pages);
      // The faulting page had no PTE and gets one here.
      bool fault_here = false;
      const uint64_t mapped_here =
          set_pte_range(k, vmf, idx, pages, /*writable=*/false, &fault_here);
      rss += mapped_here;
      k.cpu_work(CpuCost::map_folio_ns, mapped_here);
      if (!prof.batched_rss && mapped_here) {
        vma.vm_mm->add_rss(counter, static_cast<int64_t>(mapped_here));
        k.vmstat().inc(VmEvent::rss_updates, mapped_here);
      }
      if (fault_here) {
        ret |= VM_FAULT_NOPAGE;
        if (!workingset) ++p1_credit;
      }
      idx = next_uptodate_folio(as, last + 1, end_pgoff, &marked);
      continue;
    }
    const pgoff_t head = as.head(idx);
    const uint64_t nr = as.folio_nr_pages(head);
    const bool workingset = as.test(head, kPgWorkingset);
    // The part of the folio inside the window...
    pgoff_t first = idx;
    pgoff_t last = std::min<pgoff_t>(head + nr - 1, end_pgoff);
    // ...or the whole folio when it fits the VMA, one page table and EOF
    // (filemap_map_folio_range, 6.18+).
    if (nr > 1 && prof.whole_folio_fault_around && head >= vma.vm_pgoff &&
        head + nr <= vma.vm_pgoff + vma.nr_pages() && (file_end >= head + nr || as.shmem())) {
      const uint64_t vstart = vma.vpn(head - vma.vm_pgoff);
      if (vstart / kPtrsPerPte == (vstart + nr - 1) / kPtrsPerPte) {
        first = head;
        last = head + nr - 1;
      }
    }
    vm_fault_t map_ret = 0;
    uint64_t mapped_here = 0;
    for (pgoff_t p = first; p <= last; ++p) {
      // Counted before the PTE check: an already-mapped page is a "hit" too.
      if (!(prof.workingset_exclusion && workingset)) ++local_miss;
      const uint64_t vpage = p - vma.vm_pgoff;
      if (vma.ptes[vpage] & kPtePresent) continue;
      mapped_here += set_pte_range(k, vmf, p, 1, /*writable=*/false);
      if (p == vmf.pgoff) map_ret |= VM_FAULT_NOPAGE;
    }
    rss += mapped_here;
    if (mapped_here) k.cpu_work(CpuCost::map_folio_ns);
    if (!prof.batched_rss && mapped_here)
      k.add_mm_counter(*vma.vm_mm, counter, static_cast<int64_t>(mapped_here));
    ret |= map_ret;
    if ((map_ret & VM_FAULT_NOPAGE) && !workingset) ++p1_credit;
    idx = next_uptodate_folio(as, head + nr, end_pgoff, &marked);
  }
  if (prof.batched_rss && rss) k.add_mm_counter(*vma.vm_mm, counter, static_cast<int64_t>(rss));
  k.vmstat().inc(VmEvent::fault_around_mapped, rss);
  // The mmap_miss credit. P2: a FAULT_FLAG_TRIED attempt maps the page the
  // previous attempt had to read; that is not a hit. P1: only the faulting
  // address counts, once.
  if (!(prof.mmap_miss_p2 && (vmf.flags & FAULT_FLAG_TRIED))) {
    mmap_miss_credit(k, file.f_ra, prof.mmap_miss_p1 ? p1_credit : local_miss, as);
  }
  return ret;
}

vm_fault_t filemap_fault(Kernel& k, VmFault& vmf) {
  File& file = *vmf.vma->vm_file;
  AddressSpace& as = *file.mapping;
  const pgoff_t index = vmf.pgoff;
  if (index >= as.nr_pages()) return VM_FAULT_SIGBUS;
  if (k.tracing()) k.trace({.kind = TraceKind::kFilemapFault, .ino = as.ino(), .index = index});
  vm_fault_t ret = 0;
  bool dropped = false;
  if (as.present(index)) {
    // We found the page, so try async readahead before waiting for the lock.
    // filemap_get_folio() took a reference: reclaim cannot free the folio
    // while the async readahead it triggers allocates the next window.
    const pgoff_t head = as.head(index);
    as.set(head, kPgRefHeld);
    if (!(vmf.flags & FAULT_FLAG_TRIED)) dropped = do_async_mmap_readahead(k, vmf, head);
    if (as.present(head)) as.clear(head, kPgRefHeld);
  } else {
    // No page in the page cache at all.
    k.vmstat().inc(VmEvent::pgmajfault);
    ret = VM_FAULT_MAJOR;
    dropped = do_sync_mmap_readahead(k, vmf);
    if (as.present(index)) {
      // Readahead inserted the folio with its read in flight: the fault
      // sleeps on the folio lock, having dropped the fault lock if it could
      // (lock_folio_maybe_drop_mmap), until the request that holds the
      // page completes; the rest of the window goes on without it.
      dropped = dropped || maybe_unlock_mmap_for_io(vmf);
      k.wait_on_read(as.ino(), index);
    } else {
      // No readahead: create one folio of the mapping's minimum order and
      // read it synchronously (page_not_uptodate).
      filemap_add_folio(k, as, index, 0, 0);
      as.clear(index, kPgUptodate);
      dropped = dropped || maybe_unlock_mmap_for_io(vmf);
      count_read(k, ReadCause::kSingle, 1);
      k.vmstat().inc(VmEvent::read_bios);
      k.vmstat().inc(VmEvent::single_folio_reads);
      k.submit_read(as.ino(), index, 1, /*sync=*/true);
      as.set(index, kPgUptodate);
    }
  }
  if (dropped) {
    // The fault lock was dropped: the VMA may have changed, so the fault
    // must be redone (out_retry).
    return ret | VM_FAULT_RETRY;
  }
  if (!as.present(index)) return ret | VM_FAULT_RETRY;  // evicted under us: redo
  vmf.folio = as.head(index);
  return ret | VM_FAULT_LOCKED;
}

namespace {

// filemap_get_read_batch(): the cached folios from index up to last_index,
// stopping after a !uptodate or PG_readahead folio, at most a folio_batch
// (31 folios).
size_t filemap_get_read_batch(const AddressSpace& as, pgoff_t index, pgoff_t last_index,
                              pgoff_t* heads) {
  size_t n = 0;
  while (index <= last_index && index < as.nr_pages() && n < 31 && as.present(index)) {
    const pgoff_t head = as.head(index);
    heads[n++] = head;
    const uint16_t f = as.folio_flags(head);
    if (!(f & kPgUptodate) || (f & kPgReadahead)) break;
    index = head + as.folio_nr_pages(head);
  }
  return n;
}

}  // namespace

void filemap_read(Kernel& k, File& file, uint64_t pos, uint64_t count) {
  AddressSpace& as = *file.mapping;
  k.cpu_work(CpuCost::read_call_ns);
  FileRaState& ra = file.f_ra;
  const uint64_t isize = as.i_size();
  int64_t last_pos = ra.prev_pos;
  pgoff_t heads[31];
  while (count > 0 && pos < isize) {
    // filemap_get_pages()
    const pgoff_t index = pos >> kPageShift;
    const pgoff_t last_index = (pos + count + kPageSize - 1) >> kPageShift;
    size_t n = filemap_get_read_batch(as, index, last_index - 1, heads);
    if (n == 0) {
      ReadaheadControl rac{&file, &as, &ra, index, ReadCause::kReadRa};
      page_cache_sync_ra(k, rac, last_index - index);
      n = filemap_get_read_batch(as, index, last_index - 1, heads);
    }
    if (n == 0) {
      // filemap_create_folio(): read one min-order folio synchronously.
      filemap_add_folio(k, as, index, 0, 0);
      count_read(k, ReadCause::kSingle, 1);
      k.vmstat().inc(VmEvent::read_bios);
      k.submit_read(as.ino(), index, 1, /*sync=*/true);
      n = filemap_get_read_batch(as, index, last_index - 1, heads);
      if (n == 0) return;  // evicted at once: the capacity is below one folio
    }
    const pgoff_t last_head = heads[n - 1];
    if (as.test(last_head, kPgReadahead)) {
      // filemap_readahead()
      ReadaheadControl rac{&file, &as, &ra, last_head, ReadCause::kReadRa};
      for (size_t i = 0; i < n; ++i) as.set(heads[i], kPgRefHeld);  // the batch's references
      page_cache_async_ra(k, rac, last_head, last_index - last_head);
      for (size_t i = 0; i < n; ++i) {
        if (as.present(heads[i]) && as.head(heads[i]) == heads[i]) as.clear(heads[i], kPgRefHeld);
      }
    }
    // When a read accesses the same folio several times, only mark it as
    // accessed the first time.
    const bool same_folio =
        last_pos > 0 && as.present((static_cast<uint64_t>(last_pos) - 1) >> kPageShift) &&
        as.head((static_cast<uint64_t>(last_pos) - 1) >> kPageShift) == heads[0] &&
        as.head(index) == heads[0];
    if (!same_folio && as.present(heads[0])) folio_mark_accessed(k, as, heads[0]);
    for (size_t i = 1; i < n; ++i) {
      if (as.present(heads[i]) && as.head(heads[i]) == heads[i]) {
        folio_mark_accessed(k, as, heads[i]);
      }
    }
    const uint64_t batch_end =
        std::min<uint64_t>((heads[n - 1] + as.folio_nr_pages(heads[n - 1])) << kPageShift, isize);
    const uint64_t copied = std::min<uint64_t>(count, batch_end - pos);
    // The copy waits for folios whose read is still in flight, and touches
    // the pages it copies from.
    const uint64_t copied_pages = ((pos + copied + kPageSize - 1) >> kPageShift) - index;
    k.wait_on_read(as.ino(), index, copied_pages);
    touch_pages(k, as, index, copied_pages);
    k.cpu_copy(copied);
    pos += copied;
    count -= copied;
    last_pos = static_cast<int64_t>(pos);
  }
  ra.prev_pos = last_pos;
}

void touch_pages(Kernel& k, AddressSpace& as, pgoff_t index, uint64_t nr) {
  const pgoff_t end = std::min<pgoff_t>(index + nr, as.nr_pages());
  uint64_t first_touches = 0;
  for (pgoff_t i = index; i < end; ++i) first_touches += as.touch(i);
  if (first_touches) k.vmstat().inc(VmEvent::pages_touched, first_touches);
}

void filemap_write(Kernel& k, File& file, uint64_t pos, uint64_t count) {
  AddressSpace& as = *file.mapping;
  const uint64_t chunk = kPageSize << as.max_order();  // mapping_max_folio_size()
  while (count > 0) {
    const uint64_t offset = pos & (chunk - 1);
    uint64_t bytes = std::min(chunk - offset, count);
    const pgoff_t index = pos >> kPageShift;
    if (index >= as.nr_pages()) return;  // the model's files do not grow
    if (!as.present(index)) {
      // __filemap_get_folio(FGP_WRITEBEGIN | fgf_set_order(bytes))
      unsigned order = ilog2(bytes) > kPageShift ? ilog2(bytes) - kPageShift : 0;
      order = std::min(order, as.max_order());
      if (index & ((uint64_t{1} << order) - 1))
        order = static_cast<unsigned>(__builtin_ctzll(index));
      while (order > 0 && (index + (uint64_t{1} << order) > as.nr_pages() ||
                           as.any_present(index, uint64_t{1} << order))) {
        --order;
      }
      filemap_add_folio(k, as, index, order, kPgDirty, /*gfp_write=*/true);
    }
    const pgoff_t head = as.head(index);
    as.set(head, kPgDirty);
    const uint64_t folio_end = (head + as.folio_nr_pages(head)) << kPageShift;
    bytes = std::min(bytes, folio_end - pos);
    touch_pages(k, as, index, ((pos + bytes + kPageSize - 1) >> kPageShift) - index);
    pos += bytes;
    count -= bytes;
  }
}

void filemap_fsync(Kernel& k, AddressSpace& as) {
  for (pgoff_t i = as.next_present(0, kNoIndex); i != kNoIndex;) {
    const pgoff_t head = as.head(i);
    const uint64_t nr = as.folio_nr_pages(head);
    if (as.test_and_clear(head, kPgDirty)) {
      k.vmstat().inc(VmEvent::pgpgout, std::min<uint64_t>(nr, as.nr_pages() - head) * 4);
    }
    i = as.next_present(head + nr, kNoIndex);
  }
}

}  // namespace faultline::mm
