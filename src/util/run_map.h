// run_map.h — an array of a fixed length kept as runs of equal values.
//
// Reads as a dense array of V whose every element starts as V{}; memory is
// one entry per maximal run of equal non-zero values, so it follows how many
// times the values change along the array, not its length. Adjacent runs
// of one value are always merged, so two maps that hold the same values
// hold the same runs.
//
// V must be equality-comparable and cheap to copy; V{} means "nothing". The
// runs sit in a B-tree (absl::btree_map): at millions of runs a lookup
// touches a few nodes, not a cache line per level of a binary tree.
#pragma once

#include <absl/container/btree_map.h>

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
    return i < it->second.end ? it->second.v : V{};
  }

  // Sets [first, last) to v: one search, then the runs it covers go and at
  // most three take their place (the new one, joined to neighbours of the
  // same value, and what is left of runs it cuts on either side). Returns
  // how many of [first, last) held a non-zero value before.
  uint64_t assign(uint64_t first, uint64_t last, V v) {
    if (first >= last) return 0;
    uint64_t had = 0;
    const bool some = !(v == V{});
    auto it = runs_.upper_bound(first);
    auto from = it;  // the first run to erase
    uint64_t ns = first, ne = last;
    bool tail = false;  // a part of a cut run of another value, after last
    Run tail_run{};
    if (it != runs_.begin()) {
      auto p = std::prev(it);
      Run& pr = p->second;
      if (pr.end > first) had += std::min(pr.end, last) - first;
      if (some && pr.v == v && pr.end >= first) {
        ns = p->first;  // joined
        ne = std::max(ne, pr.end);
        from = p;
      } else if (pr.end > first) {
        if (pr.end > last) {
          tail = true;
          tail_run = pr;
        }
        if (p->first < first) {
          pr.end = first;  // its part before first stays where it is
        } else {
          from = p;
        }
      }
    }
    auto to = it;
    for (; to != runs_.end() && to->first < last; ++to) {
      had += std::min(to->second.end, last) - to->first;
      if (to->second.end > last) {
        if (some && to->second.v == v) {
          ne = std::max(ne, to->second.end);
        } else {
          tail = true;
          tail_run = to->second;
        }
      }
    }
    if (some && !tail && to != runs_.end() && to->first == ne && to->second.v == v) {
      ne = to->second.end;  // the run just after, joined
      ++to;
    }
    if (from == to && !some && !tail) return had;  // nothing there to clear
    auto at = runs_.erase(from, to);
    if (some) at = std::next(runs_.emplace_hint(at, ns, Run{ne, v}));
    if (tail) runs_.emplace_hint(at, last, tail_run);
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
    for (auto it = runs_.lower_bound(first); it != runs_.end() && it->first < last;) {
      it->second.v = f(it->second.v);
      it = it->second.v == V{} ? runs_.erase(it) : std::next(it);
    }
    merge_around(first, last);
  }

  // The first index at or after i with a non-zero value, or kEnd.
  uint64_t next_set(uint64_t i) const {
    auto it = runs_.upper_bound(i);
    if (it != runs_.begin()) {
      auto prev = std::prev(it);
      if (i < prev->second.end) return i;
    }
    return it == runs_.end() ? kEnd : it->first;
  }

  // Calls f(start, end, value) for each run meeting [first, last), clipped
  // to it, in index order. f may not change the map.
  template <typename F>
  void for_each(uint64_t first, uint64_t last, F&& f) const {
    auto it = runs_.upper_bound(first);
    if (it != runs_.begin()) --it;
    for (; it != runs_.end() && it->first < last; ++it) {
      const uint64_t s = it->first > first ? it->first : first;
      const uint64_t e = it->second.end < last ? it->second.end : last;
      if (s < e) f(s, e, it->second.v);
    }
  }
  template <typename F>
  void for_each(F&& f) const {
    for (const auto& [s, r] : runs_) f(s, r.end, r.v);
  }

  void clear() { runs_.clear(); }
  bool empty() const { return runs_.empty(); }
  size_t nr_runs() const { return runs_.size(); }
  // Bytes held: the B-tree's entries (its nodes are at most half empty).
  uint64_t bytes() const { return runs_.size() * sizeof(typename Map::value_type) * 3 / 2; }

 private:
  struct Run {
    uint64_t end;
    V v;
  };
  using Map = absl::btree_map<uint64_t, Run>;

  // Makes `at` the start of a run if a run covers it.
  void split(uint64_t at) {
    auto it = runs_.upper_bound(at);
    if (it == runs_.begin()) return;
    auto p = std::prev(it);
    if (p->first < at && at < p->second.end) {
      const Run right{p->second.end, p->second.v};
      p->second.end = at;
      runs_.emplace_hint(it, at, right);
    }
  }
  // Merges runs of equal values that touch inside [first - 1, last]. (An
  // erase invalidates the B-tree's iterators: the merged run is looked up
  // again.)
  void merge_around(uint64_t first, uint64_t last) {
    auto it = runs_.upper_bound(first > 0 ? first - 1 : 0);
    if (it != runs_.begin()) --it;
    while (it != runs_.end() && it->first <= last) {
      auto next = std::next(it);
      if (next != runs_.end() && it->second.end == next->first && it->second.v == next->second.v) {
        const uint64_t key = it->first;
        it->second.end = next->second.end;
        runs_.erase(next);
        it = runs_.find(key);
      } else {
        it = next;
      }
    }
  }

  Map runs_;  // start -> run
};

}  // namespace faultline::util
