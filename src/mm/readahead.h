// readahead.h — models mm/readahead.c (Linux 6.18): on-demand readahead,
// the folio-order ramp, and forced readahead.
//
// I/O is submitted per contiguous batch (read_pages) and counted in pgpgin
// in KiB. Large folios follow page_cache_ra_order(): the order ramps by 2 per
// async window and is clamped by the mapping, the window size and alignment.
#pragma once

#include "mm/mm.h"

namespace faultline::mm {

// Why pages are read (model only; the kernel does not keep it): the caller
// that starts a read names it, and it travels down to where the read is
// submitted, read_pages() or a one-folio ->read_folio, which counts the
// KiB in pgpgin and in the cause's model.pgpgin_* counter (docs/causes.md).
enum class ReadCause : uint8_t {
  kReadaround,  // do_sync_mmap_readahead: read-around (classic, VM_EXEC, VM_HUGEPAGE)
  kSyncRa,      // do_sync_mmap_readahead -> page_cache_sync_ra (VM_SEQ_READ)
  kAsyncRa,     // do_async_mmap_readahead -> page_cache_async_ra (PG_readahead on a fault)
  kReadRa,      // filemap_get_pages (read(2)): page_cache_sync_ra, page_cache_async_ra
  kSingle,      // one folio: filemap_fault without readahead, filemap_create_folio
  kWillneed,    // force_page_cache_ra of MADV_WILLNEED / POSIX_FADV_WILLNEED
};

// The counter of a cause's KiB.
VmEvent read_cause_event(ReadCause c);
// Counts a read of nr_pages pages as it is submitted: pgpgin and the
// cause's counter, in KiB. Every pgpgin of the model goes through here.
void count_read(Kernel& k, ReadCause cause, uint64_t nr_pages);

// struct readahead_control: the file, its mapping, and the current index;
// and, model only, why it reads.
struct ReadaheadControl {
  File* file;
  AddressSpace* mapping;
  FileRaState* ra;
  pgoff_t index;
  ReadCause cause;
};

// What filemap_add_folio() did.
enum class AddFolio : uint8_t {
  kAdded,
  kExists,  // -EEXIST: a folio is in the range
  kNoMem,   // -ENOMEM: the charge found no room after reclaim (__GFP_NORETRY)
};

// filemap_add_folio(): inserts a new folio (refault check, LRU, charge, and
// reclaim when over capacity). Readahead allocates with readahead_gfp_mask()
// (gfp_noretry): when reclaim cannot make room, because what is left is
// locked under I/O or unreclaimable, the charge fails and nothing is added.
// Other allocations (the faulting folio, a write's) are charged regardless.
AddFolio filemap_add_folio(Kernel& k, AddressSpace& as, pgoff_t index, unsigned order,
                           uint16_t extra_flags, bool gfp_write = false, bool gfp_noretry = false);

// Up to `count` folios of `order` from index, each added as
// filemap_add_folio(k, as, i, order, flags, false, /*gfp_noretry=*/true)
// adds it, the one at `marker` (if any) with PG_readahead too, stopping at
// the first that is not added (*stop says why; kAdded when all were).
// Returns how many were added. The runs engine adds as many at once as it
// can tell apart from one at a time; `uncached` says the caller knows none
// of the folios' pages is cached, which spares it a search.
uint64_t add_readahead_folios(Kernel& k, AddressSpace& as, pgoff_t index, unsigned order,
                              uint64_t count, uint16_t flags, pgoff_t marker, AddFolio* stop,
                              bool uncached = false);
void page_cache_sync_ra(Kernel& k, ReadaheadControl& rac, uint64_t req_count);
void page_cache_async_ra(Kernel& k, ReadaheadControl& rac, pgoff_t folio_head, uint64_t req_count);
void page_cache_ra_order(Kernel& k, ReadaheadControl& rac, FileRaState& ra);
void do_page_cache_ra(Kernel& k, ReadaheadControl& rac, uint64_t nr_to_read,
                      uint64_t lookahead_size);
void page_cache_ra_unbounded(Kernel& k, ReadaheadControl& rac, uint64_t nr_to_read,
                             uint64_t lookahead_size);
void force_page_cache_ra(Kernel& k, ReadaheadControl& rac, uint64_t nr_to_read);

// get_init_ra_size() / get_next_ra_size().
uint64_t get_init_ra_size(uint64_t size, uint64_t max);
uint64_t get_next_ra_size(const FileRaState& ra, uint64_t max);

}  // namespace faultline::mm
