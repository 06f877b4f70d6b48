// vma_lock.h — models the per-VMA lock of mm/mmap_lock.c and
// include/linux/mmap_lock.h (6.15+, 7.x names): vm_refcnt, vma_start_read,
// vma_end_read, lock_vma_under_rcu, the writer's exclusion of readers, and
// the mmap_lock (an rw_semaphore) with mm_lock_seq.
//
// The structures are laid out as the kernel lays them out on x86-64
// (docs/fault-path.md, 'The layout of vm_area_struct'), with real atomics
// where the kernel uses atomics, so which fields share vm_refcnt's cache line
// is a fact of this code, checked by static_asserts, and real threads running
// it move the same lines between CPUs that the kernel's do. Fields the model
// never uses keep their place as padding of the right size.
//
// vm_refcnt (include/linux/mm_types.h):
//   0                 detached; readers can never raise it
//   1                 attached, not read-locked (write lock: vm_lock_seq == mm_lock_seq)
//   2 .. FLAG-1       attached + (value - 1) readers
//   FLAG              detached, waiting for the last transient reader
//   FLAG+1            writer excluding readers, none left
//   > FLAG+1          writer waiting for readers to leave
//
// Lock ordering, outer first:
//   mmap_lock | per-VMA read lock (vm_refcnt)
//     split PTE lock (ptdesc ptl)
//       percpu_counter lock
//
// Context: none of this sleeps; a writer waiting for readers spins (the
// kernel sleeps on mm->vma_writer_wait; the difference is only time).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "mm/coherence.h"
#include "mm/mm.h"
#include "mm/percpu_counter.h"
#include "mm/types.h"
#include "util/thread_annotations.h"

namespace faultline::mm::smp {

inline constexpr unsigned VM_REFCNT_EXCLUDE_READERS_BIT = 30;
inline constexpr uint32_t VM_REFCNT_EXCLUDE_READERS_FLAG = 1u << VM_REFCNT_EXCLUDE_READERS_BIT;
inline constexpr uint32_t VM_REFCNT_LIMIT = VM_REFCNT_EXCLUDE_READERS_FLAG - 1;

struct MmStruct;
struct AnonVma {
  uint64_t dummy = 0;
};

// struct vm_area_struct (7.x, x86-64, PER_VMA_LOCK, SWAP, NUMA,
// NUMA_BALANCING, ANON_VMA_NAME, USERFAULTFD, PFNMAP tracking; no lockdep,
// no RANDSTRUCT), plus __vm_anon_pgoff_hi in the padding after vm_refcnt
// (the 7.4-rc1 anon pgoff series, seed 2). 192 bytes, 3 cache lines.
struct alignas(64) VmAreaStruct {
  // --- line 0: the maple-tree walk and vma_start_read's sequence checks ---
  uint64_t vm_start = 0;  // byte address
  uint64_t vm_end = 0;
  MmStruct* vm_mm = nullptr;
  uint64_t vm_page_prot = 0;
  uint64_t vm_flags = 0;                   // vma_flags_t
  std::atomic<uint32_t> vm_lock_seq{~0u};  // == mm_lock_seq: write-locked
  uint32_t pad0_ = 0;
  uint64_t anon_vma_chain_[2] = {};  // struct list_head
  // --- line 1 ---
  std::atomic<AnonVma*> anon_vma{nullptr};  // set once, by the first fault
  const void* vm_ops = nullptr;             // null: anonymous
  uint64_t vm_pgoff = 0;                    // page offset (file page, or vm_start >> PAGE_SHIFT)
  void* vm_file = nullptr;
  void* vm_private_data = nullptr;
  uint64_t swap_readahead_info = 0;
  void* vm_policy = nullptr;
  void* numab_state = nullptr;
  // --- line 2: ____cacheline_aligned_in_smp, with the lesser-used members ---
  alignas(64) std::atomic<uint32_t> vm_refcnt{0};  // refcount_t
  // __vm_anon_pgoff_hi: upper bits of an anonymous VMA's page offset, read
  // by linear_anon_page_index() in 7.4-rc1 (seed 2 patch 1 stops that).
  std::atomic<uint32_t> vm_anon_pgoff_hi{0};
  uint64_t shared_rb_[3] = {};  // i_mmap interval tree node
  uint64_t shared_rb_subtree_last = 0;
  void* anon_name = nullptr;
  void* vm_userfaultfd_ctx = nullptr;
  void* pfnmap_track_ctx = nullptr;

  bool is_anonymous() const { return vm_ops == nullptr; }
};

static_assert(sizeof(VmAreaStruct) == 192, "vm_area_struct is 3 cache lines");
static_assert(offsetof(VmAreaStruct, vm_start) == 0);
static_assert(offsetof(VmAreaStruct, vm_end) == 8);
static_assert(offsetof(VmAreaStruct, vm_mm) == 16);
static_assert(offsetof(VmAreaStruct, vm_flags) == 32);
static_assert(offsetof(VmAreaStruct, vm_lock_seq) == 40);
static_assert(offsetof(VmAreaStruct, anon_vma) == 64);
static_assert(offsetof(VmAreaStruct, vm_ops) == 72);
static_assert(offsetof(VmAreaStruct, vm_pgoff) == 80);
static_assert(offsetof(VmAreaStruct, vm_file) == 88);
static_assert(offsetof(VmAreaStruct, vm_refcnt) == 128);
static_assert(offsetof(VmAreaStruct, vm_anon_pgoff_hi) == 132);
static_assert(offsetof(VmAreaStruct, anon_name) == 168);
static_assert(offsetof(VmAreaStruct, pfnmap_track_ctx) == 184);

// The model's names for a VMA's three cache lines.
struct VmaLines {
  LineId line0 = kNoLine;  // vm_start .. anon_vma_chain
  LineId line1 = kNoLine;  // anon_vma .. numab_state
  LineId line2 = kNoLine;  // vm_refcnt, __vm_anon_pgoff_hi, shared.rb, anon_name, ...
};

// mm->mmap_lock (struct rw_semaphore) and mm->mm_lock_seq, on one line.
// count: RWSEM_WRITER_LOCKED (bit 0) | readers x RWSEM_READER_BIAS.
class CAPABILITY("mmap_lock") MmapLock {
 public:
  static constexpr int64_t kWriterLocked = 1;
  static constexpr int64_t kReaderBias = int64_t{1} << 8;

  void read_lock(CpuCtx& cpu) ACQUIRE_SHARED();
  bool read_trylock(CpuCtx& cpu) TRY_ACQUIRE_SHARED(true);
  void read_unlock(CpuCtx& cpu) RELEASE_SHARED();
  // mmap_write_lock(): the rwsem, then mm_lock_seq becomes odd.
  void write_lock(CpuCtx& cpu) ACQUIRE();
  // mmap_write_unlock(): vma_end_write_all() (mm_lock_seq even again: every
  // VMA write lock of this cycle is released at once), then the rwsem.
  void write_unlock(CpuCtx& cpu) RELEASE();
  // rwsem_is_locked() (what vma_assert_stabilised reads).
  bool is_locked(CpuCtx& cpu) const;
  uint32_t seq(CpuCtx& cpu, std::memory_order order) const;

  void instrument(CoherenceTracker& coh) { line_ = coh.add_line("mm.mmap_lock"); }
  LineId line() const { return line_; }

 private:
  std::atomic<int64_t> count_{0};
  std::atomic<uint32_t> mm_lock_seq_{0};  // seqcount_t: odd while write-locked
  LineId line_ = kNoLine;
};

// The pieces of struct mm_struct the concurrent model uses.
struct MmStruct {
  MmStruct(unsigned nr_cpus, int32_t rss_batch);

  alignas(64) MmapLock mmap_lock;
  // The TLB-flush state a zap writes: tlb_flush_pending and, on x86,
  // context.tlb_gen (one line in the model).
  struct alignas(64) {
    std::atomic<int32_t> tlb_flush_pending{0};
    std::atomic<uint64_t> tlb_gen{0};
  } tlb;
  // rss_stat[NR_MM_COUNTERS]: percpu counters (index: MM_FILEPAGES, ...).
  // Simplified: each counter's shared part on its own line (the kernel
  // packs the four 40-byte structs together).
  std::unique_ptr<PercpuCounter> rss_stat[NR_MM_COUNTERS];
  // The VMA tree (a sorted array; the model never changes it while faults run).
  std::vector<VmAreaStruct*> vmas;
  std::vector<VmaLines> vma_lines;  // parallel to vmas
  LineId tlb_line = kNoLine;

  void instrument(CoherenceTracker& coh);
  // find_vma(): the index of the VMA holding addr, or -1. Reads line 0 of the
  // VMAs it passes (the maple-tree walk proper is read-only and not tracked).
  int find_vma(CpuCtx& cpu, uint64_t addr) const;
};

enum class VmaReadResult : uint8_t {
  kLocked,    // the reference is held: read lock taken
  kFailed,    // NULL: write-locked, exclusion pending, limit, wrong mm
  kDetached,  // ERR_PTR(-EAGAIN): detached under us, re-walk
};

// vma_start_read(): the lockless read lock (called under RCU in the kernel).
VmaReadResult vma_start_read(CpuCtx& cpu, MmStruct& mm, VmAreaStruct& vma, const VmaLines& lines);
// vma_end_read() = vma_refcount_put(): drops the reference; returns true if
// that left only a waiting writer (the kernel wakes mm->vma_writer_wait).
bool vma_end_read(CpuCtx& cpu, VmAreaStruct& vma, const VmaLines& lines);

struct LockVmaStats {
  uint64_t abort = 0;  // vma_lock_abort
  uint64_t miss = 0;   // vma_lock_miss
};
// lock_vma_under_rcu(): walk, vma_start_read, re-walk on -EAGAIN, range
// check. Returns the VMA index, read-locked, or -1 (fall back to mmap_lock).
int lock_vma_under_rcu(CpuCtx& cpu, MmStruct& mm, uint64_t addr, LockVmaStats* stats);

// Writer side (REQUIRES: mmap_lock held for write).
// __vma_enter_locked(): adds the exclude-readers flag; false if detached.
bool vma_enter_locked(VmAreaStruct& vma, bool detaching);
// True once only the writer's contribution is left (rcuwait condition).
bool vma_readers_gone(const VmAreaStruct& vma, bool detaching);
// __vma_exit_locked(): removes the flag; returns true if that detached the VMA.
bool vma_exit_locked(VmAreaStruct& vma);
// vma_start_write(): exclude readers (spinning until they leave), then
// vm_lock_seq = mm_lock_seq. The lock is held until mmap_write_unlock.
void vma_start_write(CpuCtx& cpu, MmStruct& mm, VmAreaStruct& vma, const VmaLines& lines);
// vma_mark_attached() / vma_mark_detached().
void vma_mark_attached(VmAreaStruct& vma);
void vma_mark_detached(VmAreaStruct& vma);
// vma_is_attached() (reads vm_refcnt).
bool vma_is_attached(CpuCtx& cpu, const VmAreaStruct& vma, const VmaLines& lines);

}  // namespace faultline::mm::smp
