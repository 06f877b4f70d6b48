#include "util/node_arena.h"

#include <sanitizer/asan_interface.h>
#include <sys/mman.h>

#include <algorithm>
#include <new>

namespace faultline::util {

// Under AddressSanitizer the parts of a block not handed out are poisoned,
// as malloc's free memory is: a node read after it was freed, or past its
// end into the next free piece, is reported. (The macros do nothing in
// other builds.)
NodeArena::~NodeArena() {
  // The free pieces from the heap go back to it; those of blocks go with
  // their blocks.
  for (FreeList& f : free_) {
    for (void* p = f.head; p;) {
      ASAN_UNPOISON_MEMORY_REGION(p, f.bytes);
      void* next = *static_cast<void**>(p);
      if (!in_block(p)) ::operator delete (p, std::align_val_t{kGrain});
      p = next;
    }
  }
  for (const uintptr_t b : blocks_) {
    // The address range may be mapped again, by anyone: clean shadow first.
    ASAN_UNPOISON_MEMORY_REGION(reinterpret_cast<void*>(b), kHugeBytes);
    munmap(reinterpret_cast<void*>(b), kHugeBytes);
  }
}

void NodeArena::new_block() {
  // A huge page more than needed, both ends trimmed to alignment.
  const size_t span = 2 * kHugeBytes;
  void* raw = mmap(nullptr, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) throw std::bad_alloc();
  const auto lo = reinterpret_cast<uintptr_t>(raw);
  const uintptr_t at = (lo + kHugeBytes - 1) & ~uintptr_t{kHugeBytes - 1};
  if (at > lo) munmap(raw, at - lo);
  if (lo + span > at + kHugeBytes) {
    munmap(reinterpret_cast<void*>(at + kHugeBytes), lo + span - at - kHugeBytes);
  }
  // Advice only: without THP (or with it off) the block is plain pages.
  madvise(reinterpret_cast<void*>(at), kHugeBytes, MADV_HUGEPAGE);
  ASAN_POISON_MEMORY_REGION(reinterpret_cast<void*>(at), kHugeBytes);
  blocks_.push_back(at);
  frames_.insert(at);
  cur_ = at;
  end_ = at + kHugeBytes;
}

void* NodeArena::allocate(size_t bytes, size_t align) {
  bytes = grain(bytes);
  if (align <= kGrain) {
    for (FreeList& f : free_) {
      if (f.bytes != bytes || !f.head) continue;
      void* p = f.head;
      ASAN_UNPOISON_MEMORY_REGION(p, bytes);
      f.head = *static_cast<void**>(p);
      return p;
    }
  }
  if (heap_bytes_ + bytes <= kHugeBytes) {
    heap_bytes_ += bytes;
    return ::operator new (bytes, std::align_val_t{std::max(align, kGrain)});
  }
  uintptr_t at = (cur_ + align - 1) & ~uintptr_t{align - 1};
  if (cur_ == 0 || at + bytes > end_) {
    new_block();
    at = (cur_ + align - 1) & ~uintptr_t{align - 1};
  }
  cur_ = at + bytes;
  ASAN_UNPOISON_MEMORY_REGION(reinterpret_cast<void*>(at), bytes);
  return reinterpret_cast<void*>(at);
}

void NodeArena::deallocate(void* p, size_t bytes, size_t align) noexcept {
  bytes = grain(bytes);
  if (align > kGrain && !in_block(p)) {
    heap_bytes_ -= bytes;
    ::operator delete (p, std::align_val_t{align});
    return;
  }
  auto it =
      std::find_if(free_.begin(), free_.end(), [&](const FreeList& f) { return f.bytes == bytes; });
  if (it == free_.end()) {
    free_.push_back(FreeList{bytes, nullptr});  // a B-tree has a few node sizes
    it = std::prev(free_.end());
  }
  *static_cast<void**>(p) = it->head;
  it->head = p;
  ASAN_POISON_MEMORY_REGION(p, bytes);
}

}  // namespace faultline::util
