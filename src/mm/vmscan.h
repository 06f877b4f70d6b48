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
// when shadow is false). Returns the pages freed.
uint64_t evict_folio(Kernel& k, AddressSpace& as, pgoff_t head, bool shadow);
// Removes a folio from the page cache without a shadow (truncate, fadvise).
// Mapped folios are left alone, as invalidate_mapping_pages() does.
bool invalidate_folio(Kernel& k, AddressSpace& as, pgoff_t head);

}  // namespace faultline::mm
