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
#include <array>
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
  // Not the kernel's: a hypervisor that shadows the guest's page tables
  // maps this PTE in its own (memory.cc, shadow_faults()). Only tracked
  // when cpu.shadow_fault_ns is set; any write of the PTE by the kernel
  // drops it.
  kPteShadowed = 1u << 5,
};

class PteTable {
 public:
  PteTable() = default;
  PteTable(uint64_t nr_pages, ModelEngine engine)
      : runs_(engine == ModelEngine::kRuns), size_(nr_pages), pages_(runs_ ? 0 : nr_pages) {}

  uint64_t size() const { return size_; }

  // The PTE of page v of the VMA (0: none).
  uint8_t operator[](uint64_t v) const {
    if (!runs_) return pages_[v];
    if (point_.epoch == epoch_ && v >= point_.first && v < point_.last) return point_.pte;
    const uint8_t pte = map_.get(v);
    point_ = {v, v + 1, pte, epoch_};
    return pte;
  }

  void set(uint64_t v, uint8_t pte) {
    if (runs_) {
      forget();
      map_.set(v, pte);
      point_ = {v, v + 1, pte, epoch_};
    } else if (pte || pages_.leaf(v)) {
      pages_.mut(v) = pte;
    }
  }
  // Sets pages [first, first + n) to pte.
  void set_range(uint64_t first, uint64_t n, uint8_t pte) {
    if (runs_) {
      forget();
      map_.assign(first, first + n, pte);
      if (n) point_ = {first, first + n, pte, epoch_};  // the fault reads its PTE next
    } else {
      for (uint64_t v = first; v < first + n; ++v) set(v, pte);
    }
  }
  // Replaces each non-zero PTE p of [first, last) by f(p).
  template <typename F>
  void transform(uint64_t first, uint64_t last, F&& f) {
    if (last > size_) last = size_;
    if (runs_) {
      forget();
      map_.transform(first, last, f);
      return;
    }
    for_each_page(first, last, [&](uint64_t v, uint8_t p) {
      const uint8_t q = f(p);
      if (q != p) pages_.mut(v) = q;
      return true;
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
    for_each_page(v, limit, [&](uint64_t at, uint8_t) {
      found = at;
      return false;
    });
    return found;
  }

  // Calls f(first, last, pte) for each stretch of equal non-zero PTEs that
  // meets [first, last), clipped to it (pages: one page at a time).
  template <typename F>
  void for_each_set(uint64_t first, uint64_t last, F&& f) const {
    for_each_set_while(first, last, [&f](uint64_t a, uint64_t b, uint8_t p) {
      f(a, b, p);
      return true;
    });
  }

  // The same, stopping after the first call of f that returns false.
  template <typename F>
  void for_each_set_while(uint64_t first, uint64_t last, F&& f) const {
    if (last > size_) last = size_;
    if (runs_) {
      for_each_run_while(first, last, f);
      return;
    }
    for_each_page(first, last, [&](uint64_t v, uint8_t p) { return f(v, v + 1, p); });
  }

  size_t nr_runs() const { return map_.nr_runs(); }

 private:
  // The runs engine asks about the same range several times in a row:
  // reclaim looks at a window's PTEs, frees the folios before its mapped
  // block, looks again at the rest, and unmaps what it frees. The answers
  // to the last two ranges asked are kept until the next change of any PTE,
  // as is the last PTE read or stretch written (point_).
  static constexpr size_t kMemoRuns = 6;
  struct Memo {
    uint64_t first = 0, last = 0;
    size_t n = 0;        // runs found; more than kMemoRuns: not kept
    uint64_t epoch = 0;  // epoch_ when it was complete (0: never)
    struct Run {
      uint64_t first, last;
      uint8_t pte;
    };
    std::array<Run, kMemoRuns> runs{};
  };
  void forget() { ++epoch_; }
  template <typename F>
  void for_each_run_while(uint64_t first, uint64_t last, F&& f) const {
    for (const Memo& m : memo_) {
      if (m.epoch != epoch_ || first < m.first || last > m.last) continue;
      for (size_t i = 0; i < m.n; ++i) {
        const uint64_t a = std::max(m.runs[i].first, first);
        const uint64_t b = std::min(m.runs[i].last, last);
        if (a < b && !f(a, b, m.runs[i].pte)) return;
      }
      return;
    }
    // Kept only once complete, and only if f changed no PTE meanwhile; what
    // f asks meanwhile is answered from the map alone.
    if (filling_) {
      map_.for_each_while(first, last, f);
      return;
    }
    filling_ = true;
    Memo& m = memo_[memo_next_];
    memo_next_ ^= 1;
    m = Memo{first, last, 0, 0};
    const uint64_t epoch = epoch_;
    bool more = true;
    // Once f is done, the walk goes on only while the memo can still hold
    // the whole range.
    map_.for_each_while(first, last, [&](uint64_t a, uint64_t b, uint8_t pte) {
      if (m.n < kMemoRuns) m.runs[m.n] = {a, b, pte};
      ++m.n;
      if (more) more = f(a, b, pte);
      return more || m.n <= kMemoRuns;
    });
    if (m.n <= kMemoRuns && epoch_ == epoch) m.epoch = epoch;
    filling_ = false;
  }

  // f(v, pte) for each non-zero PTE of [first, last) of the per-page array,
  // skipping leaves never written, until f returns false.
  template <typename F>
  void for_each_page(uint64_t first, uint64_t last, F&& f) const {
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
        if (!f(v, p)) return;
      }
    }
  }

  bool runs_ = false;
  uint64_t size_ = 0;
  util::SparseArray<uint8_t, kPmdShift - kPageShift> pages_;
  util::RunMap<uint8_t> map_;
  mutable std::array<Memo, 2> memo_{};
  // The last PTE read, or the last stretch written, while epoch_ has not
  // moved: pages [first, last) hold pte.
  struct Point {
    uint64_t first = 0, last = 0;
    uint8_t pte = 0;
    uint64_t epoch = 0;
  };
  mutable Point point_;
  mutable size_t memo_next_ = 0;  // the one the next new answer replaces
  mutable bool filling_ = false;  // a memo is being written
  uint64_t epoch_ = 1;            // moves on at every change of a PTE
};

}  // namespace faultline::mm
