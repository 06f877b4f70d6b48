// vmscan.h — the classic two-list LRU, reclaim and workingset detection.
//
// Models mm/swap.c (folio_add_lru, folio_mark_accessed), mm/vmscan.c
// (shrink_inactive_list, folio_check_references, shrink_active_list,
// inactive_is_low) and mm/workingset.c (workingset_eviction,
// workingset_refault) for file folios. Reclaim runs when the charged pages
// exceed the capacity and evicts down to it (kswapd and direct reclaim are
// not told apart: counters depend on the eviction order, not on who evicts).
#pragma once

#include "mm/mm.h"

namespace faultline::mm {

// folio_add_lru(): onto the head of the active list if PG_active, else inactive.
void folio_add_lru(Kernel& k, AddressSpace& as, pgoff_t head);
// folio_mark_accessed(): the software reference of read(2).
void folio_mark_accessed(Kernel& k, AddressSpace& as, pgoff_t head);
// workingset_refault(): a folio is re-inserted where a shadow entry was.
void workingset_refault(Kernel& k, AddressSpace& as, pgoff_t head, uint32_t shadow_age,
                        bool shadow_ws);
// Reclaims until nr more pages fit the capacity (try_charge's reclaim).
// Gives up, leaving the charge over capacity, when nothing on the LRU can be
// freed (every folio locked, or only unreclaimable memory left).
void reclaim_for(Kernel& k, uint64_t nr);
// Reclaims until the charged pages fit the capacity.
inline void reclaim_if_needed(Kernel& k) { reclaim_for(k, 0); }
// Unmaps and drops one folio (reclaim's __remove_mapping, or invalidation
// when shadow is false). Returns the pages freed; *unmapped (if given):
// whether PTEs mapped it. Its CPU time is the caller's to charge
// (Kernel::reclaim_work for reclaim).
uint64_t evict_folio(Kernel& k, AddressSpace& as, pgoff_t head, bool shadow,
                     bool* unmapped = nullptr);
// The runs engine's reclaim for insertions made many at a time: what
// reclaim_for(k, nr) would do before each of `count` insertions of nr pages
// when it only ever evicts folios of one size from the inactive list's tail
// runs, each of which it reclaims (none locked, held, young or at EOF).
struct BulkReclaim {
  FolioRun* tail = nullptr;  // the first run evicted from (nullptr: none needed)
  uint64_t folio_pages = 1;  // the folios' pages
  int64_t excess = 0;        // charged - capacity before the first insertion
  uint64_t nr = 0;           // pages per insertion
  // Folios evicted before the j-th insertion is charged (j from 1), in all.
  uint64_t evictions(uint64_t j) const {
    const int64_t over = excess + static_cast<int64_t>(j * nr);
    return over <= 0 ? 0 : (static_cast<uint64_t>(over) + folio_pages - 1) / folio_pages;
  }
};
// How many of the `count` insertions the plan serves (0: the next one needs
// the per-folio reclaim).
uint64_t plan_bulk_reclaim(Kernel& k, uint64_t nr, uint64_t count, BulkReclaim* plan);
// Whether inactive_is_low() stays false at every step of the plan's reclaim
// for m insertions of which `activated` go to the active list.
bool bulk_reclaim_keeps_balance(const Kernel& k, const BulkReclaim& plan, uint64_t m,
                                uint64_t activated);
// Reclaims the first `folios` folios from the tail run on, run after run,
// as shrink_one_inactive and evict_folio reclaim each, but for their shadow
// entries and the workingset clock, which the caller sets (the clock may
// move between two evictions), and their tracepoints, which the caller
// emits in order.
void bulk_evict(Kernel& k, FolioRun* tail, uint64_t folios);
// Removes a folio from the page cache without a shadow (truncate, fadvise).
// Mapped folios are left alone, as invalidate_mapping_pages() does.
bool invalidate_folio(Kernel& k, AddressSpace& as, pgoff_t head);

}  // namespace faultline::mm
