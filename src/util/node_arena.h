// node_arena.h — the memory of one large index (a B-tree's nodes, the
// chunks of runs), in blocks the kernel may back with transparent huge
// pages.
//
// The runs engine's indexes hold millions of nodes, and a model run looks
// them up at random places: a lookup's cost is then its cache and TLB
// misses, one TLB entry per 4 KiB of nodes when they come from malloc.
// An index's first 2 MiB still comes from malloc (a small index stays
// small, and the heap hands the next model run the same memory without
// faulting it in again); past that its pieces come from blocks of 2 MiB,
// aligned and madvise(MADV_HUGEPAGE)d, so that where THP is enabled for
// madvised memory (the usual setting) one TLB entry covers 2 MiB of nodes.
//
// A piece freed goes on a free list of its size (a B-tree has a few node
// sizes), whether it came from the heap or a block, and is used again by
// the same index: an index that grows and shrinks as a run goes on (the
// PTEs of a scan that reclaim unmaps behind it) does not call malloc and
// free for each node. The heap's pieces go back to it, and the blocks to
// the system, when the arena does. An arena is used by one thread at a
// time, as the index that owns it is.
#pragma once

#include <absl/container/flat_hash_set.h>

#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <vector>

namespace faultline::util {

class NodeArena {
 public:
  static constexpr size_t kHugeBytes = size_t{2} << 20;
  // Every piece is a multiple of this and aligned to it: a node starts on
  // a cache line.
  static constexpr size_t kGrain = 64;

  NodeArena() = default;
  ~NodeArena();
  NodeArena(const NodeArena&) = delete;
  NodeArena& operator=(const NodeArena&) = delete;

  // `bytes` aligned to `align` (a power of two, at most kHugeBytes / 2;
  // kGrain at least).
  void* allocate(size_t bytes, size_t align = kGrain);
  // Gives back what allocate(bytes, align) returned.
  void deallocate(void* p, size_t bytes, size_t align = kGrain) noexcept;
  // The huge blocks taken from the system.
  size_t huge_blocks() const { return blocks_.size(); }

 private:
  static size_t grain(size_t bytes) { return (bytes + kGrain - 1) & ~(kGrain - 1); }
  bool in_block(const void* p) const {
    return frames_.contains(reinterpret_cast<uintptr_t>(p) & ~uintptr_t{kHugeBytes - 1});
  }
  void new_block();

  size_t heap_bytes_ = 0;  // what the index holds from malloc
  struct FreeList {
    size_t bytes;
    void* head;  // each free piece's first word links the next
  };
  std::vector<FreeList> free_;
  std::vector<uintptr_t> blocks_;          // the huge blocks, by address
  absl::flat_hash_set<uintptr_t> frames_;  // the same, to tell a block's piece from malloc's
  uintptr_t cur_ = 0, end_ = 0;            // the unused rest of the newest block
};

// A standard allocator over a NodeArena (the arena outlives everything
// allocated from it). Containers that use it carry the arena's address:
// moving or swapping one moves its allocator with it.
template <typename T>
class ArenaAllocator {
 public:
  using value_type = T;
  using propagate_on_container_move_assignment = std::true_type;
  using propagate_on_container_swap = std::true_type;
  using propagate_on_container_copy_assignment = std::true_type;
  using is_always_equal = std::false_type;

  explicit ArenaAllocator(NodeArena* arena) noexcept : arena_(arena) {}
  template <typename U>
  ArenaAllocator(const ArenaAllocator<U>& o) noexcept : arena_(o.arena()) {}  // NOLINT

  T* allocate(size_t n) { return static_cast<T*>(arena_->allocate(n * sizeof(T), alignof(T))); }
  void deallocate(T* p, size_t n) noexcept { arena_->deallocate(p, n * sizeof(T), alignof(T)); }
  NodeArena* arena() const { return arena_; }

  template <typename U>
  bool operator==(const ArenaAllocator<U>& o) const {
    return arena_ == o.arena();
  }

 private:
  NodeArena* arena_;
};

}  // namespace faultline::util
