// pagecache_runs.h — the page cache of one inode as runs of folios
// (model.engine=runs).
//
// A run is a maximal-enough range of folios of one order at consecutive
// indices whose head-page flags are equal and which, when on an LRU list,
// sit there one after another, the lowest index the oldest: exactly how a
// readahead window enters the inactive list. Anything the kernel does to
// one folio of a run (a flag set, a move on the LRU, an eviction) first
// splits the run around that folio, and runs are merged again where the
// result holds the same folios in the same order with the same state. The
// folios a run stands for therefore behave exactly as the per-page
// representation's would; a run only lets the code that knows it do the
// same thing to all of them at once.
//
// Beside the folios: workingset shadow entries as runs whose ages step by
// the folio size (consecutive evictions leave consecutive ages), and the
// bits of single pages (touched, PG_readahead), as runs of equal bits.
#pragma once

#include <cstdint>
#include <iterator>
#include <memory>
#include <new>
#include <utility>
#include <vector>

#include "mm/page_flags.h"
#include "mm/types.h"
#include "util/btree.h"
#include "util/check.h"
#include "util/node_arena.h"
#include "util/run_map.h"

namespace faultline::mm {

class AddressSpace;

// Runs live in chunks of kRunChunkBytes aligned to their size, one address
// space's runs to a chunk, whose first slot holds that address space: a
// run finds its file from its own address, as the kernel finds a page's
// slab from the page (FolioRun::as()), and does not spend a pointer on it.
inline constexpr size_t kRunChunkBytes = 32 * 1024;

// nr folios of 2^order pages from `start`, with the same flags (PageBits of
// each head page, but for kPgMapped, which the runs engine reads off the
// page tables, and kPgReadahead, kept in FolioRuns::marked(); kPgRaUnused
// here says the folios were read ahead, and a folio of them is still unused
// while FolioRuns::page_bits() has no kTouchedResident page in it);
// older/newer link it on an LRU list (PG_lru in flags).
//
// [mapped_first(), mapped_last()) bounds the pages of the run that a PTE
// of the file's own page (not a private copy) may map: none outside it
// does. It grows where set_pte_range() and do_set_pmd() map pages, a split
// cuts it with the run, a merge joins the two; unmapping leaves it as it
// was. Reclaim asks the page tables about that stretch only, so a run read
// ahead and never mapped costs no page-table search at all.
struct FolioRun {
  pgoff_t start = 0;
  uint32_t nr = 0;
  uint8_t order = 0;
  uint16_t flags = 0;
  uint32_t map_lo = 0, map_hi = 0;  // the mapped stretch, in pages from start
  FolioRun* older = nullptr;
  FolioRun* newer = nullptr;

  // map_hi for "to the run's end" (an offset that does not fit 32 bits).
  static constexpr uint32_t kToEnd = UINT32_MAX;

  // The address space whose chunk holds this run (not a list's sentinel).
  AddressSpace* as() const {
    const auto chunk = reinterpret_cast<uintptr_t>(this) & ~uintptr_t{kRunChunkBytes - 1};
    return *reinterpret_cast<AddressSpace* const*>(chunk);
  }
  uint64_t folio_pages() const { return uint64_t{1} << order; }
  uint64_t nr_pages() const { return uint64_t{nr} << order; }
  pgoff_t end() const { return start + nr_pages(); }
  // The head of the folio holding index i (start <= i < end()).
  pgoff_t head_of(pgoff_t i) const { return start + ((i - start) >> order << order); }

  bool maybe_mapped() const { return map_hi > map_lo; }
  pgoff_t mapped_first() const { return start + map_lo; }
  pgoff_t mapped_last() const { return map_hi == kToEnd ? end() : start + map_hi; }
  // The mapped stretch becomes [lo, hi) clipped to the run (empty if that
  // is); bounds past 32 bits widen it.
  void set_mapped(pgoff_t lo, pgoff_t hi) {
    lo = lo > start ? lo : start;
    hi = hi < end() ? hi : end();
    if (lo >= hi) {
      map_lo = map_hi = 0;
      return;
    }
    map_lo = lo - start < kToEnd ? static_cast<uint32_t>(lo - start) : kToEnd - 1;
    map_hi = hi - start < kToEnd ? static_cast<uint32_t>(hi - start) : kToEnd;
  }
  // Widens the mapped stretch to hold [lo, hi) (clipped to the run).
  void note_mapped(pgoff_t lo, pgoff_t hi) {
    if (maybe_mapped()) {
      lo = lo < mapped_first() ? lo : mapped_first();
      hi = hi > mapped_last() ? hi : mapped_last();
    }
    set_mapped(lo, hi);
  }
};
static_assert(sizeof(FolioRun) == 40);

// One LRU list of runs, circular through a sentinel so that a run can be
// linked and unlinked without knowing which list it is on. sentinel.newer
// is the oldest run (the tail), sentinel.older the newest (the head).
class RunList {
 public:
  RunList() { s_.older = s_.newer = &s_; }
  RunList(const RunList&) = delete;
  RunList& operator=(const RunList&) = delete;

  bool empty() const { return s_.newer == &s_; }
  FolioRun* oldest() { return empty() ? nullptr : s_.newer; }
  FolioRun* newest() { return empty() ? nullptr : s_.older; }
  // The run after r towards the head, or nullptr.
  FolioRun* newer_than(FolioRun* r) { return r->newer == &s_ ? nullptr : r->newer; }
  const FolioRun* sentinel() const { return &s_; }

  void push_newest(FolioRun* r) { link_after(s_.older, r); }
  // Links r directly newer than pos.
  static void link_after(FolioRun* pos, FolioRun* r) {
    r->older = pos;
    r->newer = pos->newer;
    pos->newer->older = r;
    pos->newer = r;
  }
  static void unlink(FolioRun* r) {
    r->older->newer = r->newer;
    r->newer->older = r->older;
    r->older = r->newer = nullptr;
  }
  // Calls f(run) from the head to the tail.
  template <typename F>
  void for_each(F&& f) const {
    for (const FolioRun* r = s_.older; r != &s_; r = r->older) f(*r);
  }

 private:
  FolioRun s_;
};

class FolioRuns {
 public:
  FolioRuns(AddressSpace* owner, pgoff_t nr_pages, bool shmem)
      : owner_(owner),
        nr_pages_(nr_pages),
        shmem_(shmem),
        runs_(util::ByStart<RunRef>(), util::ArenaAllocator<RunRef>(&arena_)),
        shadows_(util::ByStart<ShadowRun>(), util::ArenaAllocator<ShadowRun>(&arena_)) {}
  ~FolioRuns();
  FolioRuns(const FolioRuns&) = delete;
  FolioRuns& operator=(const FolioRuns&) = delete;

  // The run holding index i, or nullptr. The fault path asks about the
  // same run many times in a row: the last one found is tried first.
  FolioRun* find(pgoff_t i) {
    if (finger_ && i >= finger_->start && i < finger_->end()) return finger_;
    auto it = runs_.upper_bound(i);
    if (it == runs_.begin()) return nullptr;
    --it;
    if (i >= it->run->end()) return nullptr;
    finger_ = it->run;
    return finger_;
  }
  const FolioRun* find(pgoff_t i) const { return const_cast<FolioRuns*>(this)->find(i); }
  // The first run ending after i (holding i or wholly after it), or nullptr.
  FolioRun* next_run(pgoff_t i) {
    if (finger_ && i >= finger_->start && i < finger_->end()) return finger_;
    auto it = runs_.upper_bound(i);
    if (it != runs_.begin()) {
      auto prev = std::prev(it);
      if (i < prev->run->end()) return prev->run;
    }
    return it == runs_.end() ? nullptr : it->run;
  }
  FolioRun* next_run_after(const FolioRun* r) {
    auto it = runs_.upper_bound(r->start);
    return it == runs_.end() ? nullptr : it->run;
  }
  FolioRun* prev_run_before(const FolioRun* r) {
    auto it = runs_.find(r->start);
    return it == runs_.begin() ? nullptr : std::prev(it)->run;
  }

  // Splits r so that the folio boundary `at` (inside r) starts a run of its
  // own; returns that run. On an LRU list the new run is linked newer than r.
  FolioRun* split(FolioRun* r, pgoff_t at);
  // The folio at head alone in its run.
  FolioRun* isolate(pgoff_t head);
  // Merges r with the runs beside it in file order where that keeps every
  // folio's state and LRU position; returns the run now holding r's folios.
  FolioRun* merge(FolioRun* r);
  // The same, returning the run after the merged one in file order, or
  // nullptr (a walk along the file that changes runs as it goes).
  FolioRun* merge_next(FolioRun* r);
  // Pages [first, last) are mapped by PTEs from now on: the runs holding
  // them widen their mapped stretches.
  void note_mapped(pgoff_t first, pgoff_t last);

  // A new run (not on any list).
  FolioRun* insert(pgoff_t start, uint32_t nr, unsigned order, uint16_t flags);
  // A new run made the newest of `list` and merged; returns the run now
  // holding its folios.
  FolioRun* insert_newest(RunList& list, pgoff_t start, uint32_t nr, unsigned order,
                          uint16_t flags);
  // Removes r, which is on no list; returns the pages of its folios that
  // were kPgRaUnused.
  uint64_t erase(FolioRun* r);
  // Removes every run of [start, end), all on no list, at once; returns the
  // pages of their folios that were kPgRaUnused.
  uint64_t erase_range(pgoff_t start, pgoff_t end);
  // The same for [start, cut), where cut is a folio boundary inside run x
  // (which starts at or after start): the runs before x go, and x keeps
  // its folios from cut on, its place on its list and its entry. What
  // erase_range(start, cut) does after split(x, cut), without making a run
  // of the part that goes.
  uint64_t erase_front(pgoff_t start, FolioRun* x, pgoff_t cut);

  // Calls f(run) for every run in index order; f may not add or remove runs.
  template <typename F>
  void for_each(F&& f) {
    for (auto& [s, r] : runs_) f(*r);
  }
  template <typename F>
  void for_each(F&& f) const {
    for (const auto& [s, r] : runs_) f(std::as_const(*r));
  }
  size_t nr_runs() const { return runs_.size(); }

  // Workingset shadow entries, as runs: page p of [start, end) holds the
  // age base + stride x (the folios between start's and p's), where the
  // folios are those of `order` evicted from the run, start lying `phase`
  // pages into the first (a run cut later keeps the folios it had). Folios
  // evicted one after another from a run leave one shadow run whose ages
  // step by the folio size, or by more when each eviction waited for an
  // insertion that moved the workingset clock too. 24 bytes: the length,
  // phase, order and workingset bit share a word. An entry may change in
  // place, its start too, as long as the entries keep their order.
  struct ShadowRun {
    static constexpr unsigned kLengthBits = 40, kPhaseBits = 18;
    static constexpr uint64_t kLengthMask = (uint64_t{1} << kLengthBits) - 1;
    mutable pgoff_t start;
    mutable uint64_t bits;  // length | phase << 40 | order << 58 | ws << 63
    mutable uint32_t base;
    mutable uint32_t stride;

    // Becomes o, in place.
    void assign(const ShadowRun& o) const {
      start = o.start;
      bits = o.bits;
      base = o.base;
      stride = o.stride;
    }

    static ShadowRun make(pgoff_t start, pgoff_t end, uint32_t base, uint32_t stride,
                          uint32_t phase, unsigned order, bool ws) {
      FAULTLINE_DCHECK(end > start && end - start <= kLengthMask);
      FAULTLINE_DCHECK(order < kPhaseBits && phase < (uint32_t{1} << order));
      return ShadowRun{start,
                       (end - start) | uint64_t{phase} << kLengthBits |
                           uint64_t{order} << (kLengthBits + kPhaseBits) | uint64_t{ws} << 63,
                       base, stride};
    }
    pgoff_t end() const { return start + (bits & kLengthMask); }
    void set_end(pgoff_t end) const {
      FAULTLINE_DCHECK(end > start && end - start <= kLengthMask);
      bits = (bits & ~kLengthMask) | (end - start);
    }
    uint32_t phase() const {
      return static_cast<uint32_t>(bits >> kLengthBits) & ((uint32_t{1} << kPhaseBits) - 1);
    }
    unsigned order() const {
      return static_cast<unsigned>(bits >> (kLengthBits + kPhaseBits)) & 31;
    }
    bool ws() const { return (bits >> 63) != 0; }
    uint64_t folio_no(pgoff_t p) const { return (p - start + phase()) >> order(); }
    uint32_t age(pgoff_t p) const { return base + static_cast<uint32_t>(folio_no(p) * stride); }
    // The same shadows from `at` (start <= at < end) on.
    ShadowRun from(pgoff_t at) const {
      const uint64_t off = at - start + phase();
      return make(at, end(), base + static_cast<uint32_t>((off >> order()) * stride), stride,
                  static_cast<uint32_t>(off & ((uint64_t{1} << order()) - 1)), order(), ws());
    }
  };
  static_assert(sizeof(ShadowRun) == 24);
  static_assert(kMaxPagecacheOrder < ShadowRun::kPhaseBits, "a phase fits its bits");
  bool shadow_at(pgoff_t i, uint32_t* age, bool* ws) const;
  // Calls f(run) for each shadow run holding an index in [i, end), in
  // index order, while f returns true: one search, then a step per run.
  // f may not change the shadows.
  template <typename F>
  void for_each_shadow(pgoff_t i, pgoff_t end, F&& f) const {
    auto it = shadows_.upper_bound(i);
    if (it != shadows_.begin() && std::prev(it)->end() > i) --it;
    for (; it != shadows_.end() && it->start < end; ++it) {
      if (!f(*it)) return;
    }
  }
  // Shadows on pages [start, end) of folios of `order` evicted one after
  // another from `start`, the first with age base, each next `stride` later.
  void add_shadows(pgoff_t start, pgoff_t end, unsigned order, uint32_t base, uint32_t stride,
                   bool ws);
  // Removes the shadows in [first, last); returns true and the first one's
  // age if there were any.
  bool take_shadows(pgoff_t first, pgoff_t last, uint32_t* age, bool* ws);
  size_t nr_shadow_runs() const { return shadows_.size(); }

  // Facts about single pages kept beside the runs, as runs of bits, so that
  // none of them splits a folio run: kTouched once the workload touched the
  // page at all; kTouchedResident too while the folio that was touched
  // stays cached (the bit goes when it is evicted); kMarked on the head of
  // a folio that carries PG_readahead. A folio of a kPgRaUnused run is
  // unused while none of its pages has kTouchedResident: a touch does not
  // split the run of the window the folio was read with, and reading a
  // window ahead writes nothing here but its marker. One map for all three:
  // a window's marker and the page its fault touches lie side by side, and
  // an eviction clears both with one search.
  static constexpr uint8_t kTouched = 1, kTouchedResident = 2, kMarked = 4;
  const util::RunMap<uint8_t>& page_bits() const { return page_bits_; }
  // Page i touched (resident or not); true if for the first time.
  bool touch(pgoff_t i) {
    const uint8_t resident = find(i) ? kTouchedResident : 0;
    const uint8_t v = page_bits_.update(i, [resident](uint8_t x) {
      return static_cast<uint8_t>((x & kMarked) | kTouched | resident);
    });
    return !(v & kTouched);
  }
  // touch() of every page of [first, last), all of them cached (mapped by
  // PTEs): one pass over the bits' runs. Returns the pages touched for the
  // first time.
  uint64_t touch_cached(pgoff_t first, pgoff_t last);
  // Whether a page of [first, last), all cached, was touched since it was.
  bool used(pgoff_t first, pgoff_t last) const;
  // Forgets the touches of cached pages [first, last): their folios count
  // as unused again where their runs say kPgRaUnused.
  void forget_use(pgoff_t first, pgoff_t last);
  // Forgets every touch and every kPgRaUnused.
  void reset_touches();
  // Pages below `limit` of folios that are kPgRaUnused.
  uint64_t nr_ra_unused_pages(pgoff_t limit) const;
  // The heads of the folios that carry PG_readahead: the marker of a
  // window does not split the window's run.
  bool marked(pgoff_t head) const { return (page_bits_.get(head) & kMarked) != 0; }
  void set_marked(pgoff_t head, bool on) {
    page_bits_.update(
        head, [on](uint8_t x) { return static_cast<uint8_t>(on ? x | kMarked : x & ~kMarked); });
  }
  // In [i, end), order-0 folios: the first not marked (or end), and the
  // first marked one after it (or end). One search.
  std::pair<pgoff_t, pgoff_t> next_unmarked(pgoff_t i, pgoff_t end) const {
    pgoff_t first = i, next = end;
    bool found = false;
    page_bits_.for_each_while(i, end, [&](uint64_t s, uint64_t e, uint8_t v) {
      const bool mark = (v & kMarked) != 0;
      if (!found) {
        if (s == first && mark) {
          first = e;  // marked from first on: look after it
          return true;
        }
        found = true;  // first lies in a gap or in a run without the mark
      }
      if (mark) {
        next = s;
        return false;
      }
      return true;
    });
    return {std::min(first, end), next};
  }
  // The first marked head in [i, end), or end.
  pgoff_t next_marked(pgoff_t i, pgoff_t end) const {
    const uint64_t at = page_bits_.find_first(i, end, [](uint8_t v) { return (v & kMarked) != 0; });
    return at == util::RunMap<uint8_t>::kEnd ? end : at;
  }

 private:
  bool mergeable(const FolioRun& a, const FolioRun& b) const;

  static bool shadows_continue(const ShadowRun& a, const ShadowRun& b) {
    return a.end() == b.start && a.order() == b.order() && a.ws() == b.ws() &&
           a.stride == b.stride &&
           ((b.start - b.phase() - a.start + a.phase()) & ((uint64_t{1} << a.order()) - 1)) == 0 &&
           a.age(b.start) == b.age(b.start);
  }

  AddressSpace* owner_;
  pgoff_t nr_pages_;
  bool shmem_;
  // The run index's and the shadows' nodes; the chunks of runs (apart,
  // so that aligning a chunk leaves no gap among nodes).
  util::NodeArena arena_, chunk_arena_;
  FolioRun* alloc();
  void release(FolioRun* r);

  // The runs by start. The runs themselves live in chunks that never
  // move, so the LRU lists can link them. An entry's start may change in
  // place where the order of the entries stays.
  struct RunRef {
    mutable pgoff_t start;
    FolioRun* run;
  };
  using RunIndex = util::BtreeSet<RunRef, util::ByStart<RunRef>, util::ArenaAllocator<RunRef>>;
  RunIndex::iterator absorb(FolioRun* a, RunIndex::iterator b);
  // Merges the run at it with its neighbours (merge()); returns the entry
  // after the merged run.
  RunIndex::iterator merge_at(RunIndex::iterator it);
  RunIndex::iterator emplace_run(pgoff_t start, uint32_t nr, unsigned order, uint16_t flags);
  RunIndex runs_;
  // The runs of a chunk (taken from chunk_arena_, kept until the end): its
  // first slot is the owner's address.
  static constexpr size_t kChunk = kRunChunkBytes / sizeof(FolioRun) - 1;
  std::vector<void*> chunks_;
  FolioRun* free_ = nullptr;    // the unused runs, linked through `newer`
  FolioRun* finger_ = nullptr;  // the run found or inserted last (or nullptr)
  util::BtreeSet<ShadowRun, util::ByStart<ShadowRun>, util::ArenaAllocator<ShadowRun>> shadows_;
  // Clears kTouchedResident and kMarked on [start, end), whose folios (the
  // runs [from, to)) go; returns the pages below nr_pages_ of those that
  // were kPgRaUnused.
  // After the runs [from, to), the first tail_nr folios of tail go too.
  uint64_t drop_page_bits(pgoff_t start, pgoff_t end, RunIndex::iterator from,
                          RunIndex::iterator to, const FolioRun* tail = nullptr,
                          uint64_t tail_nr = 0);
  util::RunMap<uint8_t> page_bits_;
};

}  // namespace faultline::mm
