// run_map.h — an array of a fixed length kept as runs of equal values.
//
// Reads as a dense array of V whose every element starts as V{}; memory is
// one entry per maximal run of equal non-zero values, so it follows how many
// times the values change along the array, not its length. Adjacent runs
// of one value are always merged, so two maps that hold the same values
// hold the same runs.
//
// V is a one-byte value (a flag set, PTE bits); V{} means "nothing". A run
// is 16 bytes: its start, and its end and value packed in one word, so ends
// go up to 2^56 (pages: far past the model's largest file). The runs sit in
// a B-tree ordered by start (util/btree.h, 1 KiB nodes of 64 runs): at
// millions of runs a lookup touches three or four nodes, not a cache line
// per level of a binary tree. A run's bounds are changed in place where
// the order of the runs allows it (a run that grows at its end, one cut at
// its start), so a stream that extends a run by a page at a time moves
// nothing in the tree.
#pragma once

#include <absl/container/inlined_vector.h>

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <memory>
#include <type_traits>

#include "util/btree.h"
#include "util/check.h"
#include "util/node_arena.h"

namespace faultline::util {

template <typename V>
class RunMap {
  static_assert(sizeof(V) == 1 && std::is_trivially_copyable_v<V>);

  // A run of the value v over [start, end): the end and the value share a
  // word. The bounds are mutable: they may change in place as long as the
  // runs keep their order.
  struct Run {
    mutable uint64_t start;
    mutable uint64_t end_v;  // end << 8 | value

    static Run of(uint64_t start, uint64_t end, V v) {
      FAULTLINE_DCHECK(end < kLimit);
      return Run{start, end << 8 | static_cast<uint8_t>(v)};
    }
    uint64_t end() const { return end_v >> 8; }
    V v() const { return static_cast<V>(end_v & 0xff); }
    void set_end(uint64_t end) const {
      FAULTLINE_DCHECK(end < kLimit);
      end_v = end << 8 | (end_v & 0xff);
    }
    void set_v(V v) const { end_v = (end_v & ~uint64_t{0xff}) | static_cast<uint8_t>(v); }
  };
  static_assert(sizeof(Run) == 16);
  using Alloc = ArenaAllocator<Run>;
  using Set = BtreeSet<Run, ByStart<Run>, Alloc>;

  using Iter = typename Set::const_iterator;

 public:
  static constexpr uint64_t kEnd = ~uint64_t{0};
  // Indices are below this.
  static constexpr uint64_t kLimit = uint64_t{1} << 56;

  RunMap() : arena_(std::make_unique<NodeArena>()), runs_(ByStart<Run>(), Alloc(arena_.get())) {}
  RunMap(RunMap&& o) : RunMap() { swap(o); }
  RunMap& operator=(RunMap&& o) noexcept {
    swap(o);
    return *this;
  }
  RunMap(const RunMap& o) : RunMap() { runs_.insert(o.runs_.begin(), o.runs_.end()); }
  RunMap& operator=(const RunMap& o) {
    if (this != &o) {
      RunMap copy(o);
      swap(copy);
    }
    return *this;
  }
  // Exchanges the runs, with the arenas that hold them.
  void swap(RunMap& o) noexcept {
    arena_.swap(o.arena_);
    runs_.swap(o.runs_);
  }

  // The value at i.
  V get(uint64_t i) const {
    auto it = runs_.upper_bound(i);
    if (it == runs_.begin()) return V{};
    --it;
    return i < it->end() ? it->v() : V{};
  }

  // Sets [first, last) to v, in one search: the runs it covers go, a run it
  // joins or cuts is changed in place, and at most two are inserted (the new
  // one when no run can hold it, and what is left of a run it cuts in two).
  // Returns how many of [first, last) held a non-zero value before.
  uint64_t assign(uint64_t first, uint64_t last, V v) {
    if (first >= last) return 0;
    return assign_at(runs_.upper_bound(first), first, last, v);
  }
  void set(uint64_t i, V v) { assign(i, i + 1, v); }

  // Replaces the value x at i by f(x) (f(V{}) too), in one search; returns
  // x. What get() and then set() do, without searching twice.
  template <typename F>
  V update(uint64_t i, F&& f) {
    Iter it = runs_.upper_bound(i);
    V x{};
    if (it != runs_.begin()) {
      auto p = std::prev(it);
      if (i < p->end()) x = p->v();
    }
    const V now = f(x);
    if (!(now == x)) assign_at(it, i, i + 1, now);
    return x;
  }

 private:
  // assign(first, last, v), it being the first run starting after first.
  uint64_t assign_at(Iter it, uint64_t first, uint64_t last, V v) {
    const bool some = !(v == V{});
    uint64_t had = 0;
    Iter from = it;           // the first run to erase
    Iter host = runs_.end();  // a run that becomes [.., ne) in place
    uint64_t ne = last;
    bool tail = false;  // the part after last of a run cut in two
    Run tail_run{};
    if (it != runs_.begin()) {
      auto p = std::prev(it);
      if (p->end() > first) had += std::min(p->end(), last) - first;
      if (some && p->v() == v && p->end() >= first) {
        host = p;  // joined: it grows
        ne = std::max(ne, p->end());
      } else if (p->end() > first) {
        if (p->end() > last) {
          tail = true;
          tail_run = Run::of(last, p->end(), p->v());
        }
        if (p->start < first) {
          p->set_end(first);  // its part before first stays
        } else if (some) {
          // Wholly covered: it becomes the new run, unless the run just
          // before it ends at first with the value v and takes it in.
          auto q = p;
          if (p != runs_.begin() && (--q)->end() == first && q->v() == v) {
            host = q;
            from = p;
          } else {
            host = p;
          }
        } else {
          from = p;  // wholly covered: it goes
        }
      }
    }
    auto to = it;
    for (; to != runs_.end() && to->start < last; ++to) {
      had += std::min(to->end(), last) - to->start;
      if (to->end() > last) {
        if (!some || !(to->v() == v)) {
          to->start = last;  // its part after last stays (no run lies between)
          break;
        }
        ne = std::max(ne, to->end());  // joined: it goes
      }
    }
    if (some && to != runs_.end() && to->start == ne && to->v() == v) {
      ne = to->end();  // the run just after, joined
      ++to;
    }
    if (some && host == runs_.end() && from != to) {
      host = from++;  // the first covered run holds the new one
      host->start = first;
    }
    if (some && host != runs_.end()) {
      host->set_end(ne);
      host->set_v(v);
    }
    if (from == to && !tail && (!some || host != runs_.end())) return had;
    Iter at = runs_.erase(from, to);
    if (some && host == runs_.end()) at = std::next(runs_.insert(at, Run::of(first, ne, v)));
    if (tail) runs_.insert(at, tail_run);
    return had;
  }

 public:
  // Replaces each value x of [first, last) by f(x) (f(V{}) is not called:
  // only runs of non-zero values are visited). One search: the runs that
  // meet the range, and those touching it that a new value may join, are
  // rewritten as a whole.
  template <typename F>
  void transform(uint64_t first, uint64_t last, F&& f) {
    transform(first, last, f, [](uint64_t, uint64_t, V) {});
  }
  // The same, calling seen(start, end, x) first for each run of a non-zero
  // value x that meets [first, last), clipped to it, in index order (what
  // the range held before).
  template <typename F, typename G>
  void transform(uint64_t first, uint64_t last, F&& f, G&& seen) {
    if (first >= last) return;
    // From the run that holds first, or the one before it if that ends at
    // first (a new value may join it).
    Iter lo = runs_.upper_bound(first);
    while (lo != runs_.begin() && std::prev(lo)->end() >= first) --lo;
    bool changes = false;
    auto hi = lo;  // the first run starting after last
    for (; hi != runs_.end() && hi->start <= last; ++hi) {
      if (hi->start < last && hi->end() > first) {
        seen(std::max(hi->start, first), std::min(hi->end(), last), hi->v());
        changes |= !(f(hi->v()) == hi->v());
      }
    }
    if (!changes) return;
    absl::InlinedVector<Run, 8> out;
    auto push = [&out](uint64_t s, uint64_t e, V v) {
      if (s >= e || v == V{}) return;
      if (!out.empty() && out.back().end() == s && out.back().v() == v) {
        out.back().set_end(e);
      } else {
        out.push_back(Run::of(s, e, v));
      }
    };
    for (auto it = lo; it != hi; ++it) {
      const uint64_t s = it->start, e = it->end();
      const V v = it->v();
      push(s, std::min(e, first), v);
      if (s < last && e > first) push(std::max(s, first), std::min(e, last), f(v));
      push(std::max(s, last), e, v);
    }
    Iter at = runs_.erase(lo, hi);
    for (const Run& r : out) at = std::next(runs_.insert(at, r));
  }

  // The first index at or after i with a non-zero value, or kEnd.
  uint64_t next_set(uint64_t i) const {
    auto it = runs_.upper_bound(i);
    if (it != runs_.begin()) {
      auto prev = std::prev(it);
      if (i < prev->end()) return i;
    }
    return it == runs_.end() ? kEnd : it->start;
  }

  // The first index of [first, last) whose value satisfies pred (called on
  // non-zero values only), or kEnd. One search, then a step per run.
  template <typename P>
  uint64_t find_first(uint64_t first, uint64_t last, P&& pred) const {
    auto it = runs_.upper_bound(first);
    if (it != runs_.begin()) --it;
    for (; it != runs_.end() && it->start < last; ++it) {
      if (it->end() > first && pred(it->v())) return it->start > first ? it->start : first;
    }
    return kEnd;
  }

  // Calls f(start, end, value) for each run meeting [first, last), clipped
  // to it, in index order. f may not change the map.
  template <typename F>
  void for_each(uint64_t first, uint64_t last, F&& f) const {
    for_each_while(first, last, [&f](uint64_t s, uint64_t e, V v) {
      f(s, e, v);
      return true;
    });
  }
  // The same, stopping after the first call of f that returns false.
  template <typename F>
  void for_each_while(uint64_t first, uint64_t last, F&& f) const {
    auto it = runs_.upper_bound(first);
    if (it != runs_.begin()) --it;
    for (; it != runs_.end() && it->start < last; ++it) {
      const uint64_t s = it->start > first ? it->start : first;
      const uint64_t e = it->end() < last ? it->end() : last;
      if (s < e && !f(s, e, it->v())) return;
    }
  }
  template <typename F>
  void for_each(F&& f) const {
    for (const Run& r : runs_) f(r.start, r.end(), r.v());
  }

  void clear() { runs_.clear(); }
  bool empty() const { return runs_.empty(); }
  size_t nr_runs() const { return runs_.size(); }

 private:
  std::unique_ptr<NodeArena> arena_;  // the nodes of runs_
  Set runs_;
};

}  // namespace faultline::util
