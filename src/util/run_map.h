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

  // Sets [first, last) to v.
  void assign(uint64_t first, uint64_t last, V v) {
    if (first >= last) return;
    split(first);
    split(last);
    auto it = runs_.lower_bound(first);
    while (it != runs_.end() && it->first < last) it = runs_.erase(it);
    if (!(v == V{})) runs_.emplace(first, Run{last, v});
    merge_around(first, last);
  }
  void set(uint64_t i, V v) { assign(i, i + 1, v); }

  // Replaces each value x of [first, last) by f(x) (f(V{}) is not called:
  // only runs of non-zero values are visited).
  template <typename F>
  void transform(uint64_t first, uint64_t last, F&& f) {
    if (first >= last) return;
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
    --it;
    if (it->first < at && at < it->second.end) {
      const Run right{it->second.end, it->second.v};
      it->second.end = at;
      runs_.emplace(at, right);
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
