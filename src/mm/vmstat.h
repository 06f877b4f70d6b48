// vmstat.h — the model's event counters, named as /proc/vmstat names them.
//
// One X-macro list gives the enum and the printed names. Kernel counters keep
// their kernel names; counters that exist only in the model carry the
// "model." prefix. pgpgin is kept in KiB, as /proc/vmstat prints it.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

namespace faultline::mm {

// X(id, name): kernel counters first, in the kernel's order within a group,
// then the model's. Every entry is reported by every engine.
#define FAULTLINE_VM_EVENTS(X)                                                                   \
  X(pgpgin, "pgpgin")         /* KiB submitted for read (submit_bio) */                          \
  X(pgpgout, "pgpgout")       /* KiB written back */                                             \
  X(pgfault, "pgfault")       /* completed fault attempts (mm_account_fault) */                  \
  X(pgmajfault, "pgmajfault") /* page-cache misses in filemap_fault */                           \
  X(workingset_refault_file, "workingset_refault_file")                                          \
  X(workingset_activate_file, "workingset_activate_file")                                        \
  X(workingset_restore_file, "workingset_restore_file")                                          \
  X(pgactivate, "pgactivate")                                                                    \
  X(pgdeactivate, "pgdeactivate")                                                                \
  X(pgscan_file, "pgscan_file")                                                                  \
  X(pgsteal_file, "pgsteal_file")                                                                \
  X(pgrotated, "pgrotated") /* kept for a second trip (young PTE) */                             \
  X(vma_lock_success, "vma_lock_success")                                                        \
  X(vma_lock_abort, "vma_lock_abort") /* the VMA lock could not be taken */                      \
  X(vma_lock_retry, "vma_lock_retry")                                                            \
  X(vma_lock_miss, "vma_lock_miss") /* no VMA at the address, or it changed */                   \
  X(thp_file_mapped, "thp_file_mapped")                                                          \
  X(ra_readaround, "model.ra_readaround_windows")       /* do_sync_mmap_readahead I/O */         \
  X(ra_sync, "model.ra_sync_windows")                   /* page_cache_sync_ra windows */         \
  X(ra_async, "model.ra_async_windows")                 /* page_cache_async_ra windows */        \
  X(ra_forced, "model.ra_forced")                       /* force_page_cache_ra calls */          \
  X(ra_skipped_mmap_miss, "model.ra_skipped_mmap_miss") /* misses past LOTSAMISS */              \
  /* readahead allocations refused: no room after reclaim (__GFP_NORETRY) */                     \
  X(ra_nomem, "model.ra_nomem")                                                                  \
  X(single_folio_reads, "model.single_folio_reads") /* ->read_folio on a fault */                \
  /* pgpgin split by what read it (KiB; the six sum to pgpgin), docs/causes.md: */               \
  /* do_sync_mmap_readahead: read-around (classic, VM_EXEC, VM_HUGEPAGE) */                      \
  X(pgpgin_readaround, "model.pgpgin_readaround")                                                \
  /* do_sync_mmap_readahead -> page_cache_sync_ra (VM_SEQ_READ) */                               \
  X(pgpgin_sync_ra, "model.pgpgin_sync_ra")                                                      \
  /* do_async_mmap_readahead -> page_cache_async_ra (a fault on PG_readahead) */                 \
  X(pgpgin_async_ra, "model.pgpgin_async_ra")                                                    \
  /* filemap_read -> filemap_get_pages: page_cache_sync_ra and page_cache_async_ra */            \
  X(pgpgin_read_ra, "model.pgpgin_read_ra")                                                      \
  /* one folio: filemap_fault's page_not_uptodate, filemap_read's filemap_create_folio */        \
  X(pgpgin_single, "model.pgpgin_single")                                                        \
  /* force_page_cache_ra of MADV_WILLNEED and POSIX_FADV_WILLNEED */                             \
  X(pgpgin_willneed, "model.pgpgin_willneed")                                                    \
  /* of pgpgin, folios read over a workingset shadow (workingset_refault); overlaps */           \
  X(pgpgin_refault, "model.pgpgin_refault")                                                      \
  /* pages read by a readahead cause (all but single) evicted, never touched */                  \
  X(ra_wasted_evicted, "model.ra_wasted_evicted")                                                \
  /* such pages still cached and never touched when the run ends */                              \
  X(ra_wasted_unused, "model.ra_wasted_unused")                                                  \
  X(pages_touched, "model.pages_touched") /* distinct file pages the workload touched */         \
  X(fault_around_calls, "model.fault_around_calls")                                              \
  X(fault_around_mapped, "model.fault_around_mapped") /* PTEs set by map_pages */                \
  X(mmap_miss_credit, "model.mmap_miss_credit")       /* total subtracted */                     \
  X(fault_attempts, "model.fault_attempts")                                                      \
  X(fault_retries, "model.fault_retries")                                                        \
  X(mmap_lock_faults, "model.mmap_lock_faults") /* attempts under mmap_lock */                   \
  X(accesses, "model.accesses")                                                                  \
  X(pte_hits, "model.pte_hits") /* accesses that did not fault */                                \
  /* exits to a hypervisor shadowing the page tables (cpu.shadow_fault_ns) */                    \
  X(shadow_faults, "model.shadow_faults")                                                        \
  /* TLB flushes at the end of reclaim batches that unmapped folios (cpu.tlb_flush_ns) */        \
  X(reclaim_tlb_flushes, "model.reclaim_tlb_flushes")                                            \
  X(pages_inserted, "model.pages_inserted") /* folios added to page cache */                     \
  X(pages_evicted, "model.pages_evicted")                                                        \
  X(read_bios, "model.read_bios")             /* contiguous read batches */                      \
  X(io_wait_ns, "model.io_wait_ns")           /* synchronous waits, estimated */                 \
  X(kswapd_ns, "model.kswapd_ns")             /* reclaim kswapd did on its own CPU, estimated */ \
  X(reclaim_wait_ns, "model.reclaim_wait_ns") /* waits for kswapd, estimated */                  \
  X(rss_updates, "model.rss_updates")         /* add_mm_counter calls */                         \
  X(rss_folds, "model.rss_folds")             /* percpu_counter folds into the shared count */   \
  X(zaps, "model.zaps")                       /* MADV_DONTNEED calls */                          \
  X(tlb_ipis, "model.tlb_ipis")               /* IPIs sent by TLB flushes */                     \
  X(steps, "model.steps")                     /* steps of the concurrent model's tasks */

enum class VmEvent : uint8_t {
#define FAULTLINE_X(id, name) id,
  FAULTLINE_VM_EVENTS(FAULTLINE_X)
#undef FAULTLINE_X
      kCount
};

inline constexpr size_t kNrVmEvents = static_cast<size_t>(VmEvent::kCount);

std::string_view vm_event_name(VmEvent e);

// Event counts: of the machine, of one CPU or of one task (the concurrent
// model keeps one per task and folds them at the end, as the kernel folds
// its per-CPU vm_event_states). Deltas by operator-, folds by operator+=.
struct VmStat {
  std::array<uint64_t, kNrVmEvents> v{};
  uint64_t& operator[](VmEvent e) { return v[static_cast<size_t>(e)]; }
  uint64_t operator[](VmEvent e) const { return v[static_cast<size_t>(e)]; }
  void inc(VmEvent e, uint64_t n = 1) { v[static_cast<size_t>(e)] += n; }
  VmStat& operator+=(const VmStat& o) {
    for (size_t i = 0; i < kNrVmEvents; ++i) v[i] += o.v[i];
    return *this;
  }
  friend VmStat operator-(VmStat a, const VmStat& b) {
    for (size_t i = 0; i < kNrVmEvents; ++i) a.v[i] -= b.v[i];
    return a;
  }
};
// A model-only counter (reported under "model.").
bool is_model_event(VmEvent e);

}  // namespace faultline::mm
