// pgtable.h — the PTEs of one VMA: a byte of PteBits per page.
//
// Two representations of the same values, chosen by model.engine: an array
// of a byte per page that takes memory only in the 4 KiB pages of it that
// were written (pages), and runs of equal PTEs (runs), whose memory follows
// how often the PTE bits change along the VMA: a fault-around block of 16
// prefaulted PTEs is one or two runs, and a 16 TiB mapping touched in a
// million places holds a few million runs, not 4 GiB of PTE bytes.
#pragma once

#include <algorithm>
#include <cstdint>

#include "mm/types.h"
#include "util/run_map.h"
#include "util/sparse_array.h"

namespace faultline::mm {

// Per-PTE bits of a VMA page.
enum PteBits : uint8_t {
  kPtePresent = 1u << 0,
  kPteYoung = 1u << 1,  // Accessed bit
  kPteWrite = 1u << 2,  // writable
  kPteDirty = 1u << 3,
  kPteAnon = 1u << 4,  // maps a private (COW) copy, not the file page
};

class PteTable {
 public:
  PteTable() = default;
  PteTable(uint64_t nr_pages, ModelEngine engine)
      : runs_(engine == ModelEngine::kRuns), size_(nr_pages), pages_(runs_ ? 0 : nr_pages) {}

  uint64_t size() const { return size_; }

  // The PTE of page v of the VMA (0: none).
  uint8_t operator[](uint64_t v) const { return runs_ ? map_.get(v) : pages_[v]; }

  void set(uint64_t v, uint8_t pte) {
    if (runs_) {
      map_.set(v, pte);
    } else if (pte || pages_.leaf(v)) {
      pages_.mut(v) = pte;
    }
  }
  // Sets pages [first, first + n) to pte.
  void set_range(uint64_t first, uint64_t n, uint8_t pte) {
    if (runs_) {
      map_.assign(first, first + n, pte);
    } else {
      for (uint64_t v = first; v < first + n; ++v) set(v, pte);
    }
  }
  // Replaces each non-zero PTE p of [first, last) by f(p).
  template <typename F>
  void transform(uint64_t first, uint64_t last, F&& f) {
    if (last > size_) last = size_;
    if (runs_) {
      map_.transform(first, last, f);
      return;
    }
    for_each_page(first, last, [&](uint64_t v, uint8_t p) {
      const uint8_t q = f(p);
      if (q != p) pages_.mut(v) = q;
    });
  }

  // The first page in [v, limit) with a non-zero PTE, or limit.
  uint64_t next_set(uint64_t v, uint64_t limit) const {
    if (limit > size_) limit = size_;
    if (runs_) {
      const uint64_t n = map_.next_set(v);
      return n < limit ? n : limit;
    }
    uint64_t found = limit;
    for_each_page(
        v, limit,
        [&](uint64_t at, uint8_t) {
          if (found == limit) found = at;
        },
        /*first_only=*/true);
    return found;
  }

  // Calls f(first, last, pte) for each stretch of equal non-zero PTEs that
  // meets [first, last), clipped to it (pages: one page at a time).
  template <typename F>
  void for_each_set(uint64_t first, uint64_t last, F&& f) const {
    if (last > size_) last = size_;
    if (runs_) {
      map_.for_each(first, last, f);
      return;
    }
    for_each_page(first, last, [&](uint64_t v, uint8_t p) { f(v, v + 1, p); });
  }

  size_t nr_runs() const { return map_.nr_runs(); }

 private:
  // f(v, pte) for each non-zero PTE of [first, last) of the per-page array,
  // skipping leaves never written; with first_only, the first one only.
  template <typename F>
  void for_each_page(uint64_t first, uint64_t last, F&& f, bool first_only = false) const {
    using Pages = util::SparseArray<uint8_t, kPmdShift - kPageShift>;
    for (uint64_t v = first; v < last;) {
      const uint8_t* leaf = pages_.leaf(v);
      const uint64_t leaf_end = std::min(Pages::next_leaf(v), last);
      if (!leaf) {
        v = leaf_end;
        continue;
      }
      for (; v < leaf_end; ++v) {
        const uint8_t p = leaf[v & Pages::kLeafMask];
        if (!p) continue;
        f(v, p);
        if (first_only) return;
      }
    }
  }

  bool runs_ = false;
  uint64_t size_ = 0;
  util::SparseArray<uint8_t, kPmdShift - kPageShift> pages_;
  util::RunMap<uint8_t> map_;
};

}  // namespace faultline::mm
