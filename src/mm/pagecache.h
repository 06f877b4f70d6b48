// pagecache.h — the page cache of one inode (struct address_space).
//
// Two representations of the xarray, chosen by model.engine:
//
// pages (the reference): a per-page array records for each index whether a
// folio covers it, the order of that folio, and, where no folio is, a
// workingset shadow entry. Folio flags live on the head page. Page-cache
// folios are naturally aligned, so the head of any index is
// round_down(index, 1 << order). The array is sparse (util/sparse_array.h):
// 12 bytes per page only in the 512-page leaves that were ever written (a
// folio of at most PMD order never spans two), 1/64 byte per page of the
// file for the rest; window scans are a tight loop inside a leaf.
//
// runs: runs of folios in the same state (pagecache_runs.h), shadow
// entries and touched pages as runs too; nothing is sized by the file.
//
// The calls below mean the same on both; where the runs say more (a run's
// extent), the code that moves many folios at once asks runs().
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "mm/page_flags.h"
#include "mm/pagecache_runs.h"
#include "mm/types.h"
#include "util/check.h"
#include "util/sparse_array.h"

namespace faultline::mm {

struct Vma;

class AddressSpace {
 public:
  // size_bytes: i_size. shmem: tmpfs (swap-backed, no readahead, no shadows).
  // max_order: mapping_max_folio_order (0 when the file system has no large folios).
  AddressSpace(uint32_t ino, uint64_t size_bytes, bool shmem, unsigned max_order,
               ModelEngine engine = ModelEngine::kPages);

  uint32_t ino() const { return ino_; }
  uint64_t i_size() const { return size_; }
  bool shmem() const { return shmem_; }
  unsigned max_order() const { return max_order_; }
  bool large_folio_support() const { return max_order_ > 0; }
  // ceil(i_size / PAGE_SIZE): indices at or past this are beyond EOF.
  pgoff_t nr_pages() const { return nr_pages_; }

  // The runs (model.engine=runs), or nullptr.
  FolioRuns* runs() { return runs_.get(); }
  const FolioRuns* runs() const { return runs_.get(); }

  [[gnu::always_inline]] bool present(pgoff_t i) const {
    if (runs_) [[unlikely]]
      return find_run(i) != nullptr;
    return slots_[i].flags & kPgPresent;
  }
  bool has_shadow(pgoff_t i) const;
  [[gnu::always_inline]] unsigned order(pgoff_t i) const {
    if (runs_) [[unlikely]] {
      const FolioRun* r = find_run(i);
      return r ? r->order : 0;
    }
    return slots_[i].order;
  }
  [[gnu::always_inline]] pgoff_t head(pgoff_t i) const {
    if (runs_) [[unlikely]] {
      const FolioRun* r = find_run(i);
      return r ? r->head_of(i) : i;
    }
    return round_down(i, uint64_t{1} << slots_[i].order);
  }
  [[gnu::always_inline]] uint32_t folio_nr_pages(pgoff_t head) const { return 1u << order(head); }
  // The folio's flags (the runs engine: but for kPgMapped; ask
  // folio_mapped()).
  [[gnu::always_inline]] uint16_t folio_flags(pgoff_t head) const {
    if (runs_) [[unlikely]]
      return folio_flags_runs(head);
    return slots_.in_written(head).flags;
  }
  [[gnu::always_inline]] bool test(pgoff_t head, uint16_t bit) const {
    FAULTLINE_DCHECK(!runs_ || !(bit & kPgMapped));
    if (runs_) [[unlikely]]
      return folio_flags_runs(head, bit) & bit;
    return slots_.in_written(head).flags & bit;
  }
  // folio_mapped(): some PTE maps a page of the folio. The pages engine
  // keeps it as kPgMapped, set with a PTE and cleared by unmap_folio (a
  // zapped folio keeps it, harmlessly: nothing maps it to find); the runs
  // engine asks the page tables of the file's VMAs.
  bool folio_mapped(pgoff_t head) const {
    if (runs_) [[unlikely]]
      return mapped_runs(head, head + folio_nr_pages(head));
    return slots_.in_written(head).flags & kPgMapped;
  }
  // Pages [first, last), all cached, are mapped from now on by PTEs or a
  // PMD of the file's own pages (set_pte_range, do_set_pmd): kPgMapped on
  // their folios, or (runs engine) their runs' mapped stretches.
  void mark_mapped(pgoff_t first, pgoff_t last);
  // Flags of a resident folio (its leaf of slots_ was written by install()).
  [[gnu::always_inline]] void set(pgoff_t head, uint16_t bit) {
    if (runs_) [[unlikely]]
      return set_runs(head, bit, true);
    Slot& s = slots_.in_written(head);
    s.flags = static_cast<uint16_t>(s.flags | bit);
  }
  [[gnu::always_inline]] void clear(pgoff_t head, uint16_t bit) {
    if (runs_) [[unlikely]]
      return set_runs(head, bit, false);
    Slot& s = slots_.in_written(head);
    s.flags = static_cast<uint16_t>(s.flags & ~bit);
  }
  // Clears `bit` on every folio of [start, end) (folio boundaries).
  void clear_range(pgoff_t start, pgoff_t end, uint16_t bit);
  // Sets `bit` on every resident folio holding a page of [start, end).
  void set_range(pgoff_t start, pgoff_t end, uint16_t bit);
  bool test_and_clear(pgoff_t head, uint16_t bit) {
    const bool was = test(head, bit);
    if (was) clear(head, bit);
    return was;
  }
  // The workload touched page i (a load or store through a mapping, a
  // read(2) or write(2) copy): clears the folio's kPgRaUnused. Returns true
  // the first time page i is touched since reset_touches().
  [[gnu::always_inline]] bool touch(pgoff_t i) {
    if (runs_) [[unlikely]]
      return touch_runs(i);
    Slot& s = slots_.mut(i);
    if (s.flags & kPgPresent) [[likely]] {
      Slot& h = slots_.in_written(round_down(i, uint64_t{1} << s.order));
      if (h.flags & kPgRaUnused) h.flags = static_cast<uint16_t>(h.flags & ~kPgRaUnused);
    }
    if (s.touched) return false;
    s.touched = 1;
    return true;
  }
  // touch() of every page of [first, last), all of them cached; returns how
  // many were touched for the first time.
  uint64_t touch_cached(pgoff_t first, pgoff_t last);
  // Forgets every touch and every kPgRaUnused: what a run counts starts here.
  void reset_touches();
  // Pages (inside EOF) of cached folios that carry kPgRaUnused.
  uint64_t nr_ra_unused_pages() const;
  uint32_t shadow_age(pgoff_t i) const;
  // Any shadow entry anywhere (the invariants).
  bool any_shadow() const;
  // The per-page LRU's sequence number of a folio (model.engine=pages).
  [[gnu::always_inline]] uint32_t lru_seq(pgoff_t head) const {
    return slots_.in_written(head).lru_seq;
  }
  void set_lru_seq(pgoff_t head, uint32_t seq) { slots_.in_written(head).lru_seq = seq; }

  // First index in [index, end] covered by a folio, or kNoIndex.
  pgoff_t next_present(pgoff_t index, pgoff_t end) const;
  // First index in [index, end] not covered by a folio, or end + 1.
  pgoff_t next_absent(pgoff_t index, pgoff_t end) const;
  // True if any index in [index, index + nr) is covered by a folio.
  bool any_present(pgoff_t index, uint64_t nr) const;
  // Calls f(head, order, flags) for every resident folio, in index order.
  template <typename F>
  void for_each_folio(F&& f) const;

  // Installs a folio of `order` at `index` (aligned, all slots free of folios).
  // Returns true and the shadow found (first one in the range) if any.
  bool install(pgoff_t index, unsigned order, uint32_t* shadow_age, bool* shadow_ws);
  // Removes the folio at head; leaves a shadow in every slot if `shadow`.
  void remove(pgoff_t head, bool shadow, uint32_t age, bool workingset);

  uint64_t nr_cached_pages() const { return nr_cached_; }
  // VMAs mapping this file (i_mmap); eviction unmaps through them.
  std::vector<Vma*>& i_mmap() { return i_mmap_; }
  const std::vector<Vma*>& i_mmap() const { return i_mmap_; }

  // Pages of [head, head + nr) inside EOF.
  uint64_t in_file(pgoff_t head, uint64_t nr) const {
    return head >= nr_pages_ ? 0 : std::min<uint64_t>(nr, nr_pages_ - head);
  }
  // The cached count moves by n pages (the runs' bulk paths).
  void add_cached(int64_t n) {
    nr_cached_ = static_cast<uint64_t>(static_cast<int64_t>(nr_cached_) + n);
  }

 private:
  // The runs engine's side of the calls above, out of line so that the
  // per-page side stays small enough to inline.
  const FolioRun* find_run(pgoff_t i) const;
  // The folio's flags; those of `want` that live beside the runs
  // (kPgRaUnused, kPgReadahead) are read only when asked for.
  uint16_t folio_flags_runs(pgoff_t head, uint16_t want = UINT16_MAX) const;
  bool mapped_runs(pgoff_t first, pgoff_t last) const;
  void set_runs(pgoff_t head, uint16_t bit, bool on);
  bool touch_runs(pgoff_t i);

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
  using Slots = util::SparseArray<Slot, kPmdShift - kPageShift>;
  Slots slots_;
  std::unique_ptr<FolioRuns> runs_;
  std::vector<Vma*> i_mmap_;
};

template <typename F>
void AddressSpace::for_each_folio(F&& f) const {
  if (runs_) {
    runs_->for_each([&](const FolioRun& r) {
      for (pgoff_t h = r.start; h < r.end(); h += r.folio_pages()) f(h, unsigned{r.order}, r.flags);
    });
    return;
  }
  // Folios are walked head to head; none spans two leaves.
  slots_.for_each_leaf([&](pgoff_t first, const Slot* leaf, uint64_t count) {
    for (uint64_t j = 0; j < count;) {
      const Slot& s = leaf[j];
      if (!(s.flags & kPgPresent)) {
        ++j;
        continue;
      }
      f(first + j, unsigned{s.order}, s.flags);
      j += uint64_t{1} << s.order;
    }
  });
}

}  // namespace faultline::mm
