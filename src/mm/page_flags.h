// page_flags.h — the flags the model keeps per page and per folio
// (include/linux/page-flags.h, and a few of the model's own).
#pragma once

#include <cstdint>

namespace faultline::mm {

// Per-page bits.
enum PageBits : uint16_t {
  kPgPresent = 1u << 0,   // a folio covers this index
  kPgShadow = 1u << 1,    // a workingset shadow entry sits here
  kPgShadowWs = 1u << 2,  // the shadow's workingset bit
  // Folio flags, valid on the head page only.
  kPgUptodate = 1u << 3,    // PG_uptodate
  kPgReadahead = 1u << 4,   // PG_readahead: the async readahead marker
  kPgWorkingset = 1u << 5,  // PG_workingset
  kPgActive = 1u << 6,      // PG_active: on the active list
  kPgReferenced = 1u << 7,  // PG_referenced
  kPgDirty = 1u << 8,       // PG_dirty
  kPgSwapBacked = 1u << 9,  // PG_swapbacked: shmem/tmpfs
  kPgLru = 1u << 10,        // PG_lru: on an LRU list
  kPgLocked = 1u << 12,     // PG_locked: a readahead batch not yet submitted
  kPgRefHeld = 1u << 13,    // a fault or read(2) holds a reference: reclaim cannot free it
  kPgMapped = 1u << 11,     // some PTE may map the folio (folio_mapped(); cleared on unmap)
  // Model only: read by readahead, read-around or WILLNEED and not touched by
  // the workload since (model.ra_wasted_evicted, model.ra_wasted_unused).
  kPgRaUnused = 1u << 14,
};

}  // namespace faultline::mm
