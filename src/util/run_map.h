// run_map.h — an array of a fixed length kept as runs of equal values.
//
// Reads as a dense array of V whose every element starts as V{}; memory is
// one entry per maximal run of equal non-zero values, so it follows how many
// times the values change along the array, not its length. Adjacent runs
// of one value are always merged, so two maps that hold the same values
// hold the same runs.
//
// V must be equality-comparable and cheap to copy; V{} means "nothing". The
// runs sit in a B-tree (absl::btree_set ordered by start): at millions of
// runs a lookup touches a few nodes, not a cache line per level of a binary
// tree. A run's bounds are changed in place where the order of the runs
// allows it (a run that grows at its end, one cut at its start), so a
// stream that extends a run by a page at a time moves nothing in the tree.
#pragma once

#include <absl/container/btree_set.h>

#include <algorithm>
#include <cstdint>
#include <iterator>

#include "util/check.h"

namespace faultline::util {

template <typename V>
class RunMap {
 public:
  static constexpr uint64_t kEnd = ~uint64_t{0};

  // The value at i.
  V get(uint64_t i) const {
    auto it = runs_.upper_bound(i);
    if (it == runs_.begin()) return V{};
    --it;
    return i < it->end ? it->v : V{};
  }

  // Sets [first, last) to v, in one search: the runs it covers go, a run it
  // joins or cuts is changed in place, and at most two are inserted (the new
  // one when no run can hold it, and what is left of a run it cuts in two).
  // Returns how many of [first, last) held a non-zero value before.
  uint64_t assign(uint64_t first, uint64_t last, V v) {
    if (first >= last) return 0;
    const bool some = !(v == V{});
    uint64_t had = 0;
    auto it = runs_.upper_bound(first);  // the first run starting after first
    auto from = it;                      // the first run to erase
    auto host = runs_.end();             // a run that becomes [.., ne) in place
    uint64_t ne = last;
    bool tail = false;  // the part after last of a run cut in two
    Run tail_run{};
    if (it != runs_.begin()) {
      auto p = std::prev(it);
      if (p->end > first) had += std::min(p->end, last) - first;
      if (some && p->v == v && p->end >= first) {
        host = p;  // joined: it grows
        ne = std::max(ne, p->end);
      } else if (p->end > first) {
        if (p->end > last) {
          tail = true;
          tail_run = Run{last, p->end, p->v};
        }
        if (p->start < first) {
          p->end = first;  // its part before first stays
        } else if (some) {
          host = p;  // wholly covered: it becomes the new run
        } else {
          from = p;  // wholly covered: it goes
        }
      }
    }
    auto to = it;
    for (; to != runs_.end() && to->start < last; ++to) {
      had += std::min(to->end, last) - to->start;
      if (to->end > last) {
        if (!some || !(to->v == v)) {
          to->start = last;  // its part after last stays (no run lies between)
          break;
        }
        ne = std::max(ne, to->end);  // joined: it goes
      }
    }
    if (some && to != runs_.end() && to->start == ne && to->v == v) {
      ne = to->end;  // the run just after, joined
      ++to;
    }
    if (some && host == runs_.end() && from != to) {
      host = from++;  // the first covered run holds the new one
      host->start = first;
    }
    if (some && host != runs_.end()) {
      host->end = ne;
      host->v = v;
    }
    if (from == to && !tail && (!some || host != runs_.end())) return had;
    auto at = runs_.erase(from, to);
    if (some && host == runs_.end()) at = std::next(runs_.insert(at, Run{first, ne, v}));
    if (tail) runs_.insert(at, tail_run);
    return had;
  }
  void set(uint64_t i, V v) { assign(i, i + 1, v); }

  // Replaces each value x of [first, last) by f(x) (f(V{}) is not called:
  // only runs of non-zero values are visited).
  template <typename F>
  void transform(uint64_t first, uint64_t last, F&& f) {
    if (first >= last) return;
    bool changes = false;
    for_each(first, last, [&](uint64_t, uint64_t, V v) { changes |= !(f(v) == v); });
    if (!changes) return;
    split(first);
    split(last);
    for (auto it = runs_.lower_bound(first); it != runs_.end() && it->start < last;) {
      it->v = f(it->v);
      it = it->v == V{} ? runs_.erase(it) : std::next(it);
    }
    merge_around(first, last);
  }

  // The first index at or after i with a non-zero value, or kEnd.
  uint64_t next_set(uint64_t i) const {
    auto it = runs_.upper_bound(i);
    if (it != runs_.begin()) {
      auto prev = std::prev(it);
      if (i < prev->end) return i;
    }
    return it == runs_.end() ? kEnd : it->start;
  }

  // Calls f(start, end, value) for each run meeting [first, last), clipped
  // to it, in index order. f may not change the map.
  template <typename F>
  void for_each(uint64_t first, uint64_t last, F&& f) const {
    auto it = runs_.upper_bound(first);
    if (it != runs_.begin()) --it;
    for (; it != runs_.end() && it->start < last; ++it) {
      const uint64_t s = it->start > first ? it->start : first;
      const uint64_t e = it->end < last ? it->end : last;
      if (s < e) f(s, e, it->v);
    }
  }
  template <typename F>
  void for_each(F&& f) const {
    for (const Run& r : runs_) f(r.start, r.end, r.v);
  }

  void clear() { runs_.clear(); }
  bool empty() const { return runs_.empty(); }
  size_t nr_runs() const { return runs_.size(); }
  // Bytes held: the B-tree's entries (its nodes are at most half empty).
  uint64_t bytes() const { return runs_.size() * sizeof(Run) * 3 / 2; }

 private:
  // A run of the value v over [start, end). The bounds are mutable: they
  // may change in place as long as the runs keep their order.
  struct Run {
    mutable uint64_t start;
    mutable uint64_t end;
    mutable V v;
  };
  struct ByStart {
    using is_transparent = void;
    bool operator()(const Run& a, const Run& b) const { return a.start < b.start; }
    bool operator()(const Run& a, uint64_t b) const { return a.start < b; }
    bool operator()(uint64_t a, const Run& b) const { return a < b.start; }
  };
  using Set = absl::btree_set<Run, ByStart>;

  // Makes `at` the start of a run if a run covers it.
  void split(uint64_t at) {
    auto it = runs_.upper_bound(at);
    if (it == runs_.begin()) return;
    auto p = std::prev(it);
    if (p->start < at && at < p->end) {
      const Run right{at, p->end, p->v};
      p->end = at;
      runs_.insert(it, right);
    }
  }
  // Merges runs of equal values that touch inside [first - 1, last]. (An
  // erase invalidates the B-tree's iterators: the merged run is looked up
  // again.)
  void merge_around(uint64_t first, uint64_t last) {
    auto it = runs_.upper_bound(first > 0 ? first - 1 : 0);
    if (it != runs_.begin()) --it;
    while (it != runs_.end() && it->start <= last) {
      auto next = std::next(it);
      if (next != runs_.end() && it->end == next->start && it->v == next->v) {
        const uint64_t key = it->start;
        it->end = next->end;
        runs_.erase(next);
        it = runs_.find(key);
      } else {
        it = next;
      }
    }
  }

  Set runs_;
};

}  // namespace faultline::util
