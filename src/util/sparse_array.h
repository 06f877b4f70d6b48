// sparse_array.h — an array of a fixed length whose memory exists only
// where something was written.
//
// The values sit in one anonymous mapping reserved at the array's full
// length (MAP_NORESERVE): the kernel gives a page of it memory on its first
// write, so indexing costs a dense array's and a bit test while the
// resident memory follows the pages written. T must be trivially copyable
// with T{} all zero bytes. Beside the values, one bit per leaf of
// 2^kLeafShift values records which leaves were written, so walks over the
// whole array (for_each_leaf, next_written) skip the rest without touching
// it. A 1 TiB file's page cache thus costs nothing before its first page is
// read, instead of 12 bytes per page.
//
// A read of a leaf never written does not touch the mapping, and a leaf's
// first write writes the whole leaf: were a read to map the kernel's zero
// page first, the write after it would be a copy-on-write fault
// (do_wp_page), which flushes the TLB of every other CPU the process has
// run on, an IPI each, as soon as a second thread (-j) exists.
//
// The reservation is address space only; where the kernel refuses
// overcommit (vm.overcommit_memory=2) an array larger than the commit
// limit cannot be made.
#pragma once

#include <sys/mman.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <utility>
#include <vector>

#include "util/check.h"

namespace faultline::util {

template <typename T, unsigned kLeafShift = 9>
class SparseArray {
  static_assert(std::is_trivially_copyable_v<T>, "values are zero pages of a mapping");

 public:
  static constexpr uint64_t kLeafSize = uint64_t{1} << kLeafShift;
  static constexpr uint64_t kLeafMask = kLeafSize - 1;

  explicit SparseArray(uint64_t size = 0)
      : size_(size), written_((((size + kLeafSize - 1) >> kLeafShift) + 63) / 64) {
    if (size == 0) return;
    map_bytes_ = size * sizeof(T);
    void* p = ::mmap(nullptr, map_bytes_, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    FAULTLINE_CHECK(p != MAP_FAILED);  // address space or overcommit refused
    data_ = static_cast<T*>(p);
  }
  SparseArray(const SparseArray&) = delete;
  SparseArray& operator=(const SparseArray&) = delete;
  SparseArray(SparseArray&& o) noexcept { *this = std::move(o); }
  SparseArray& operator=(SparseArray&& o) noexcept {
    if (this != &o) {
      release();
      size_ = std::exchange(o.size_, 0);
      map_bytes_ = std::exchange(o.map_bytes_, 0);
      data_ = std::exchange(o.data_, nullptr);
      written_ = std::move(o.written_);
      o.written_.clear();
    }
    return *this;
  }
  ~SparseArray() { release(); }

  uint64_t size() const { return size_; }

  // The value at i (i < size()): T{} if never written.
  [[gnu::always_inline]] const T& operator[](uint64_t i) const {
    FAULTLINE_DCHECK(i < size_);
    return written(i >> kLeafShift) ? data_[i] : kZero;
  }

  // The value at i for writing.
  T& mut(uint64_t i) {
    FAULTLINE_DCHECK(i < size_);
    const uint64_t leaf = i >> kLeafShift;
    uint64_t& word = written_[leaf >> 6];
    const uint64_t bit = uint64_t{1} << (leaf & 63);
    if (!(word & bit)) {
      word |= bit;
      const uint64_t first = leaf << kLeafShift;
      std::memset(static_cast<void*>(data_ + first), 0,
                  std::min(kLeafSize, size_ - first) * sizeof(T));
    }
    return data_[i];
  }

  // The value at i for writing, in a leaf already written (mut() was
  // called for an index of it): no bookkeeping.
  T& in_written(uint64_t i) {
    FAULTLINE_DCHECK(i < size_ && written(i >> kLeafShift));
    return data_[i];
  }

  // The value at i, in a leaf already written: no check (the values of
  // resident folios, read on every access).
  [[gnu::always_inline]] const T& in_written(uint64_t i) const {
    FAULTLINE_DCHECK(i < size_ && written(i >> kLeafShift));
    return data_[i];
  }

  // The values of the leaf holding i, indexed by i & kLeafMask, or nullptr
  // if none of them was ever written (all T{}).
  const T* leaf(uint64_t i) const {
    return written(i >> kLeafShift) ? data_ + (i & ~kLeafMask) : nullptr;
  }

  // The first index of the leaf after the one holding i.
  static uint64_t next_leaf(uint64_t i) { return (i | kLeafMask) + 1; }

  // i if its leaf was written, else the first index of the next written
  // leaf, else size(): everything in between reads T{}.
  uint64_t next_written(uint64_t i) const {
    uint64_t leaf = i >> kLeafShift;
    for (uint64_t w = leaf >> 6; w < written_.size(); ++w) {
      uint64_t bits = written_[w];
      if (w == leaf >> 6) bits &= ~uint64_t{0} << (leaf & 63);
      if (bits) {
        leaf = (w << 6) + static_cast<uint64_t>(std::countr_zero(bits));
        return std::min(size_, std::max(i, leaf << kLeafShift));
      }
    }
    return size_;
  }

  // Calls f(first_index, values, count) for each written leaf, in index
  // order; count is the leaf's values inside size().
  template <typename F>
  void for_each_leaf(F&& f) {
    for (uint64_t i = next_written(0); i < size_; i = next_written(next_leaf(i))) {
      const uint64_t first = i & ~kLeafMask;
      f(first, data_ + first, std::min(kLeafSize, size_ - first));
    }
  }
  template <typename F>
  void for_each_leaf(F&& f) const {
    for (uint64_t i = next_written(0); i < size_; i = next_written(next_leaf(i))) {
      const uint64_t first = i & ~kLeafMask;
      f(first, static_cast<const T*>(data_ + first), std::min(kLeafSize, size_ - first));
    }
  }

  // Leaves written, and the bytes they and the bitmap hold (the kernel
  // gives memory to the pages of those leaves only).
  uint64_t nr_leaves() const {
    uint64_t n = 0;
    for (const uint64_t w : written_) n += static_cast<uint64_t>(std::popcount(w));
    return n;
  }
  uint64_t bytes() const { return written_.size() * 8 + nr_leaves() * kLeafSize * sizeof(T); }

 private:
  static constexpr T kZero{};
  bool written(uint64_t leaf) const { return (written_[leaf >> 6] >> (leaf & 63)) & 1; }
  void release() {
    if (data_) ::munmap(data_, map_bytes_);
    data_ = nullptr;
  }

  uint64_t size_ = 0;
  uint64_t map_bytes_ = 0;
  T* data_ = nullptr;
  std::vector<uint64_t> written_;  // a bit per leaf
};

}  // namespace faultline::util
