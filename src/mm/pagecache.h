// pagecache.h — the page cache of one inode (struct address_space).
//
// A per-page array stands in for the xarray: for each index it records
// whether a folio covers it, the order of that folio, and, where no folio is,
// a workingset shadow entry. Folio flags live on the head page. Page-cache
// folios are naturally aligned, so the head of any index is
// round_down(index, 1 << order). The array is sparse (util/sparse_array.h):
// 12 bytes per page only in the 512-page leaves that were ever written (a
// folio of at most PMD order never spans two), 1/64 byte per page of the
// file for the rest; window scans are a tight loop inside a leaf.
#pragma once

#include <cstdint>
#include <vector>

#include "mm/types.h"
#include "util/check.h"
#include "util/sparse_array.h"

namespace faultline::mm {

struct Vma;

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

class AddressSpace {
 public:
  // size_bytes: i_size. shmem: tmpfs (swap-backed, no readahead, no shadows).
  // max_order: mapping_max_folio_order (0 when the file system has no large folios).
  AddressSpace(uint32_t ino, uint64_t size_bytes, bool shmem, unsigned max_order);

  uint32_t ino() const { return ino_; }
  uint64_t i_size() const { return size_; }
  bool shmem() const { return shmem_; }
  unsigned max_order() const { return max_order_; }
  bool large_folio_support() const { return max_order_ > 0; }
  // ceil(i_size / PAGE_SIZE): indices at or past this are beyond EOF.
  pgoff_t nr_pages() const { return nr_pages_; }

  bool present(pgoff_t i) const { return slots_[i].flags & kPgPresent; }
  bool has_shadow(pgoff_t i) const { return slots_[i].flags & kPgShadow; }
  unsigned order(pgoff_t i) const { return slots_[i].order; }
  pgoff_t head(pgoff_t i) const { return round_down(i, uint64_t{1} << slots_[i].order); }
  uint32_t folio_nr_pages(pgoff_t head) const { return 1u << slots_[head].order; }
  uint16_t folio_flags(pgoff_t head) const { return slots_[head].flags; }
  bool test(pgoff_t head, uint16_t bit) const { return slots_[head].flags & bit; }
  // Flags of a resident folio (its leaf of slots_ was written by install()).
  void set(pgoff_t head, uint16_t bit) {
    Slot& s = slots_.in_written(head);
    s.flags = static_cast<uint16_t>(s.flags | bit);
  }
  void clear(pgoff_t head, uint16_t bit) {
    Slot& s = slots_.in_written(head);
    s.flags = static_cast<uint16_t>(s.flags & ~bit);
  }
  bool test_and_clear(pgoff_t head, uint16_t bit) {
    const bool was = test(head, bit);
    clear(head, bit);
    return was;
  }
  // The workload touched page i (a load or store through a mapping, a
  // read(2) or write(2) copy): clears the folio's kPgRaUnused. Returns true
  // the first time page i is touched since reset_touches().
  bool touch(pgoff_t i) {
    Slot& s = slots_.mut(i);
    if (s.flags & kPgPresent) [[likely]] {
      Slot& h = slots_.in_written(round_down(i, uint64_t{1} << s.order));
      if (h.flags & kPgRaUnused) h.flags = static_cast<uint16_t>(h.flags & ~kPgRaUnused);
    }
    if (s.touched) return false;
    s.touched = 1;
    return true;
  }
  // Forgets every touch and every kPgRaUnused: what a run counts starts here.
  void reset_touches();
  // Pages (inside EOF) of cached folios that carry kPgRaUnused.
  uint64_t nr_ra_unused_pages() const;
  uint32_t shadow_age(pgoff_t i) const { return slots_[i].shadow; }
  uint32_t lru_seq(pgoff_t head) const { return slots_[head].lru_seq; }
  void set_lru_seq(pgoff_t head, uint32_t seq) { slots_.in_written(head).lru_seq = seq; }

  // First index in [index, end] covered by an uptodate folio, or kNoIndex.
  pgoff_t next_present(pgoff_t index, pgoff_t end) const;
  // True if any index in [index, index + nr) is covered by a folio.
  bool any_present(pgoff_t index, uint64_t nr) const;
  // i, or past pages that never held a folio, a shadow or a touch (for
  // walks over the whole file); nr_pages() at the end.
  pgoff_t skip_unused(pgoff_t i) const { return slots_.next_written(i); }

  // Installs a folio of `order` at `index` (aligned, all slots free of folios).
  // Returns true and the shadow found (first one in the range) if any.
  bool install(pgoff_t index, unsigned order, uint32_t* shadow_age, bool* shadow_ws);
  // Removes the folio at head; leaves a shadow in every slot if `shadow`.
  void remove(pgoff_t head, bool shadow, uint32_t age, bool workingset);

  uint64_t nr_cached_pages() const { return nr_cached_; }
  // Bytes of the per-page array (model memory).
  uint64_t index_bytes() const { return slots_.bytes(); }
  // VMAs mapping this file (i_mmap); eviction unmaps through them.
  std::vector<Vma*>& i_mmap() { return i_mmap_; }
  const std::vector<Vma*>& i_mmap() const { return i_mmap_; }

 private:
  uint32_t ino_;
  uint64_t size_;
  bool shmem_;
  unsigned max_order_;
  pgoff_t nr_pages_;
  uint64_t nr_cached_ = 0;
  // Everything the model keeps per page, in one 12-byte slot: reclaim
  // touches pages long after they were inserted, so one cache miss per page
  // instead of one per field.
  struct Slot {
    uint16_t flags = 0;
    uint8_t order = 0;
    uint8_t touched = 0;   // the workload touched this page (kept across eviction)
    uint32_t shadow = 0;   // nonresident_age at eviction (valid with kPgShadow)
    uint32_t lru_seq = 0;  // LRU entry sequence of the folio (head only)
  };
  util::SparseArray<Slot, kPmdShift - kPageShift> slots_;
  std::vector<Vma*> i_mmap_;
};

}  // namespace faultline::mm
