// btree.h — absl's B-tree containers with a chosen node size, and the order
// of entries that carry their own start index.
//
// absl::btree_set and absl::btree_map fix their nodes at 256 bytes. The
// runs engine's indexes hold millions of small entries looked up at random
// places: nodes of 1 KiB hold four times as many, so a lookup passes
// through fewer levels and the nodes' own headers and half-empty tails
// take a smaller share of the memory.
#pragma once

#include <absl/container/btree_map.h>
#include <absl/container/btree_set.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <type_traits>
#include <utility>

namespace faultline::util {

inline constexpr size_t kBtreeNodeBytes = 1024;

template <typename Key, typename Compare = std::less<Key>, typename Alloc = std::allocator<Key>>
using BtreeSet = absl::container_internal::btree_set_container<absl::container_internal::btree<
    absl::container_internal::set_params<Key, Compare, Alloc, kBtreeNodeBytes, /*IsMulti=*/false>>>;

template <typename Key, typename Value, typename Compare = std::less<Key>>
using BtreeMap = absl::container_internal::btree_map_container<
    absl::container_internal::btree<absl::container_internal::map_params<
        Key, Value, Compare, std::allocator<std::pair<const Key, Value>>, kBtreeNodeBytes,
        /*IsMulti=*/false>>>;

// Orders entries that carry their own key, a `start` index, by it, and
// finds them by an index alone (heterogeneous lookup).
template <typename T>
struct ByStart {
  using is_transparent = void;
  // A node's entries are scanned in order, not bisected: the compare is one
  // integer, and a scan's branches are predicted where a bisection's are
  // not.
  using absl_btree_prefer_linear_node_search = std::true_type;
  bool operator()(const T& a, const T& b) const { return a.start < b.start; }
  bool operator()(const T& a, uint64_t b) const { return a.start < b; }
  bool operator()(uint64_t a, const T& b) const { return a < b.start; }
};

}  // namespace faultline::util
