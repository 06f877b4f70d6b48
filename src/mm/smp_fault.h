// smp_fault.h — the fault path as many CPUs run it at once: anonymous write
// faults (do_anonymous_page), read faults on a file mapping with
// fault-around (filemap_map_pages), and MADV_DONTNEED zaps, against shared
// structures laid out as the kernel's (vma_lock.h, percpu_counter.h).
//
// A World holds the modelled mm(s), VMA(s), page tables and file; a Task is
// one logical CPU running one program (pft: fault every page of its slice,
// zap the slice, repeat; lat_pagefault: fault every fault-around window of
// its slice of a cached file, zap, repeat). Each operation is cut into
// steps at the points where the kernel's code moves from one structure to
// the next; step() runs one step and returns its modelled cost in ns, the
// coherence misses of the step included. No step holds a lock when it
// returns except the per-VMA read lock or mmap_lock, which never block a
// reader, so any interleaving of steps is a valid execution: the engine may
// run tasks on real threads (step after step) or interleave the steps of
// all tasks on one thread in a deterministic order. This file creates no
// threads.
//
// Simplified (docs/concurrency.md): page tables exist beforehand (no
// pte_alloc), order-0 folios only, page allocation, memcg charging and the
// LRU add are private per-CPU work with a fixed cost, no THP, no swap.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "mm/coherence.h"
#include "mm/costs.h"
#include "mm/profile.h"
#include "mm/smp_costs.h"
#include "mm/vma_lock.h"
#include "mm/vmstat.h"
#include "util/mutex.h"
#include "util/thread_annotations.h"

namespace faultline::mm::smp {

enum class SmpWorkload : uint8_t { kPft, kLatPagefault };
// Who shares what: threads of one process on one VMA, threads each with
// its own VMA (same mm), or processes (nothing shared).
enum class SmpSharing : uint8_t { kThreads, kThreadsVmaEach, kProcesses };

struct WorldSpec {
  SmpWorkload workload = SmpWorkload::kPft;
  SmpSharing sharing = SmpSharing::kThreads;
  unsigned nr_cpus = 1;  // tasks, one per logical CPU
  // The cache domain of each task's CPU (empty: all in one); transfers
  // between domains cost costs.line_far_ns.
  std::vector<uint32_t> domains;
  uint64_t slice_pages = 512;  // pages each task faults per pass
  uint64_t passes = 1;
  bool zap = true;    // MADV_DONTNEED after each pass; false: one pass, then done
  bool write = true;  // pft: write faults (new pages); false: zero-page reads
  KernelProfile prof;
  SmpCosts costs;
  uint64_t seed = 1;        // access.seed: the draws of costs.line_spread
  bool track_lines = true;  // count coherence outcomes
  bool real_work = false;   // really clear a page per anonymous fault
  int32_t rss_batch = 32;   // percpu_counter_batch
  // A load through a present PTE (cpu.access_ns): lat_pagefault touches
  // every page, and only the first of a fault-around window faults.
  double access_ns = CpuCosts{}.access_ns;
};

// PTE bits of the concurrent model.
enum SmpPteBits : uint8_t { kSmpPresent = 1, kSmpWrite = 2, kSmpAnon = 4 };

// struct ptdesc of one PTE table: the split PTE lock (ALLOC_SPLIT_PTLOCKS
// off: the spinlock is inside the 64-byte struct page of the table).
struct alignas(64) PtDesc {
  SpinLock ptl;
};

// The PTE tables of one mm over [first_vpn, first_vpn + nr_pages).
class PageTables {
 public:
  PageTables(uint64_t first_vpn, uint64_t nr_pages);
  void instrument(CoherenceTracker& coh);
  uint64_t table(uint64_t vpn) const { return (vpn >> 9) - first_table_; }
  SpinLock& ptl(uint64_t vpn) { return descs_[table(vpn)].ptl; }
  LineId ptl_line(uint64_t vpn) const { return lines_.empty() ? kNoLine : lines_[table(vpn)]; }
  // The PTE of vpn. REQUIRES: ptl(vpn) held.
  uint8_t& pte(uint64_t vpn) { return ptes_[vpn - (first_table_ << 9)]; }

 private:
  uint64_t first_table_;
  size_t nr_tables_;
  std::unique_ptr<PtDesc[]> descs_;
  std::vector<uint8_t> ptes_;  // each guarded by the ptl of its table
  std::vector<LineId> lines_;
};

// A cached file (lat_pagefault): uptodate order-0 folios and the struct
// file whose f_ra.mmap_miss filemap_map_pages rewrites on every call.
struct SmpFile {
  struct alignas(64) Page {  // struct page: 64 bytes
    std::atomic<int32_t> refcount{1};
    std::atomic<int32_t> mapcount{-1};
  };
  struct alignas(64) FileStruct {
    std::atomic<uint32_t> mmap_miss{0};  // f_ra.mmap_miss
  };
  explicit SmpFile(uint64_t n) : nr_pages(n), pages(new Page[n]) {}
  uint64_t nr_pages;
  std::unique_ptr<Page[]> pages;
};

enum class SmpStep : uint8_t {
  kIdle,
  kFaultLock,     // lock_vma_under_rcu, or mmap_read_lock + find_vma
  kFaultHandle,   // handle_mm_fault: vma flags, __vmf_anon_prepare
  kFaultAlloc,    // alloc_anon_folio (private work)
  kFaultMap,      // PTE lock: rmap, set_ptes, add_mm_counter
  kFileMapPages,  // do_fault_around -> filemap_map_pages
  kFaultAccount,  // mm_account_fault
  kFaultUnlock,   // vma_end_read / mmap_read_unlock, return to user
  kUserLoads,     // lat_pagefault: the program's loads of the other pages fault-around mapped
  kZapLock,       // madvise: lock, tlb_gather_mmu
  kZapTable,      // zap_pte_range of one PTE table
  kZapFlush,      // tlb_finish_mmu: flush, IPIs
  kZapUnlock,
  kDone,  // the task's program is finished
};

// One per CPU; cache-line aligned so tasks on real threads share no line
// the kernel would not share.
struct alignas(64) Task {
  CpuCtx cpu;
  MmStruct* mm = nullptr;
  PageTables* pt = nullptr;
  SmpFile::FileStruct* file = nullptr;
  LineId file_line = kNoLine;
  uint64_t slice_first = 0;  // vpn
  uint64_t slice_pages = 0;
  std::vector<Task*> mm_peers;  // other tasks of the same mm (IPI targets)
  std::atomic<uint32_t> pending_ipis{0};

  // The program.
  uint64_t pass = 0;
  uint64_t next_page = 0;  // index in the slice of the next fault
  // The operation in progress.
  SmpStep step = SmpStep::kIdle;
  uint64_t vpn = 0;
  int vma = -1;
  bool vma_locked = false;
  bool mmap_locked = false;
  bool no_vma_lock = false;  // retrying under mmap_lock
  uint64_t zap_next = 0, zap_end = 0;

  // Its CPU's vm events and the task's own fault count (mm_account_fault
  // counts both); private to the task, folded by World::vm_events().
  VmStat vm_events;
  uint64_t min_flt = 0;
  std::unique_ptr<std::byte[]> scratch;  // pages "cleared" by real_work
  uint64_t scratch_next = 0;
};

class World {
 public:
  explicit World(const WorldSpec& spec);
  World(const World&) = delete;
  World& operator=(const World&) = delete;

  unsigned nr_tasks() const { return static_cast<unsigned>(tasks_.size()); }
  Task& task(unsigned i) { return *tasks_[i]; }
  const WorldSpec& spec() const { return spec_; }
  CoherenceTracker* coherence() { return coh_.get(); }

  // Runs the next step of task t, starting its next operation if it is
  // idle. Returns the step's modelled cost (ns); t.step == kDone when its
  // program has finished. Steps of different tasks may run concurrently.
  // With now_ns (the task's clock; deterministic interleavings only), the
  // step's transfers queue behind other CPUs' transfers of the same lines.
  double step(Task& t, std::optional<double> now_ns = std::nullopt);
  bool done(const Task& t) const { return t.step == SmpStep::kDone; }

  // The modelled time of one fault without contention (the timed
  // interleaving staggers the tasks by fractions of it).
  double nominal_fault_ns() const;

  // Results, once no task runs: every task's events folded, and the tasks'
  // minor faults (rusage; the concurrent model has no major faults).
  VmStat vm_events() const;
  uint64_t min_flt() const;
  int64_t rss_sum(MmCounter c) const;  // exact, over every mm

 private:
  bool begin_next_op(Task& t);
  // mmap_lock may be taken in one step and dropped in a later one (the
  // Task records it), which the static analysis cannot follow.
  double fault_lock(Task& t) NO_THREAD_SAFETY_ANALYSIS;
  double fault_handle(Task& t) NO_THREAD_SAFETY_ANALYSIS;
  double fault_alloc(Task& t);
  double fault_map(Task& t);
  double file_map_pages(Task& t);
  double fault_account(Task& t);
  double fault_unlock(Task& t) NO_THREAD_SAFETY_ANALYSIS;
  double user_loads(Task& t);
  double zap_lock(Task& t) NO_THREAD_SAFETY_ANALYSIS;
  double zap_table(Task& t);
  double zap_flush(Task& t);
  double zap_unlock(Task& t) NO_THREAD_SAFETY_ANALYSIS;
  double rss_add(Task& t, MmCounter c, int64_t n);
  VmAreaStruct& vma_of(Task& t) { return *t.mm->vmas[t.vma]; }
  const VmaLines& lines_of(Task& t) {
    static const VmaLines kNone;
    return t.mm->vma_lines.empty() ? kNone : t.mm->vma_lines[t.vma];
  }

  WorldSpec spec_;
  std::unique_ptr<CoherenceTracker> coh_;
  std::vector<std::unique_ptr<MmStruct>> mms_;
  std::vector<std::unique_ptr<VmAreaStruct>> vmas_;
  std::vector<std::unique_ptr<PageTables>> pts_;
  std::unique_ptr<SmpFile> file_;
  std::vector<std::unique_ptr<SmpFile::FileStruct>> files_;
  std::vector<std::unique_ptr<Task>> tasks_;
  AnonVma anon_vma_;  // the one anon_vma every VMA's first fault installs
  uint32_t fault_around_pages_;
};

}  // namespace faultline::mm::smp
