// profile.h — the kernel being modelled: behaviour switches and tunables.
//
// A profile is a named set of switches for one kernel release. Where two
// releases differ in a way that changes counters, the difference is a switch
// here and a row in docs/model_fidelity.md. The seed patches are switches too,
// so a variant is the same input run under another set of switches.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace faultline::mm {

enum class LruPolicy : uint8_t { kClassic };

struct KernelProfile {
  std::string name = "6.18";

  // --- mm/filemap.c -----------------------------------------------------
  // filemap_map_pages does not credit mmap_miss for PG_workingset folios (6.10+).
  bool map_pages_workingset_exclusion = true;
  // Fault-around maps a whole large folio that lies inside the VMA, one page
  // table and EOF (6.18+, "map entire large folio faultaround").
  bool map_pages_whole_folio = true;
  // do_async_mmap_readahead credits mmap_miss only for unlocked folios.
  bool async_credit_unlocked_only = true;
  // ≤6.15: page_cache_ra_order adds 2 to the order it is asked for, so
  // read-around allocates order-2 folios and async windows ramp from the
  // marked folio's order. ≥6.16: callers set ra->order; async adds 2.
  bool ra_order_plus2 = false;
  // ≤6.18: MADV_HUGEPAGE read-around runs before (and so outside) the
  // mmap_miss accounting; 6.19+ counts it and can switch it off.
  bool thp_ra_before_mmap_miss = true;
  // seed 1, patch 1: filemap_map_pages credits 1 iff it mapped the faulting address.
  bool mmap_miss_p1 = false;
  // seed 1, patch 2: filemap_map_pages credits nothing on a FAULT_FLAG_TRIED attempt.
  bool mmap_miss_p2 = false;

  // --- mm/memory.c, arch/x86/mm/fault.c -------------------------------------
  uint32_t fault_around_bytes = 65536;  // /sys/kernel/debug/fault_around_bytes
  bool per_vma_lock = true;             // CONFIG_PER_VMA_LOCK
  bool tried_after_major = true;        // 46e714c729c8 (Jan 2024)
  // seed 3: one RSS update per filemap_map_pages call instead of one per folio.
  bool batched_rss = true;
  // Prefaulted PTEs are young (x86); arm64 with hardware AF makes them old.
  bool prefault_young = true;
  // File folios of PMD order are mapped with one PMD (do_set_pmd).
  bool file_pmd_mapping = true;

  // --- per-VMA locks, anonymous rmap (mm/mmap_lock.c, mm/rmap.c, mm/vma.h) ---
  // 7.4-rc1 anon pgoff series: linear_anon_page_index() reads
  // __vm_anon_pgoff_hi, the u32 next to vm_refcnt on the VMA's third line.
  bool anon_pgoff_hi = false;
  // 7.4-rc1: vma_has_anon_rmap() runs vma_is_attached() and
  // vma_assert_stabilised() (loads of vm_refcnt and the mmap_lock count) on
  // every anonymous fault, also with CONFIG_DEBUG_VM=n.
  bool anon_rmap_assert = false;
  // seed 2, patch 1: the anonymous page index from vm_pgoff (line 1).
  bool vma_refcnt_p1 = false;
  // seed 2, patch 2: that assertion only with CONFIG_DEBUG_VM.
  bool vma_refcnt_p2 = false;
  bool debug_vm = false;  // CONFIG_DEBUG_VM
  // MADV_DONTNEED zaps under the per-VMA read lock (6.16+), not mmap_lock.
  bool madvise_vma_lock = true;

  // --- file systems ----------------------------------------------------------
  // ext4 allocates large folios in the page cache (6.16+); xfs has since 5.18.
  bool ext4_large_folios = true;

  // --- mm/shmem.c -----------------------------------------------------------
  // seed 4: shmem_vm_ops has .map_pages = filemap_map_pages (3.15+).
  bool shmem_fault_around = true;

  // --- mm/vmscan.c, mm/workingset.c -----------------------------------------
  LruPolicy lru = LruPolicy::kClassic;

  uint32_t fault_around_pages() const;
  // The seed 2 reads of vm_refcnt's line an anonymous fault makes.
  bool reads_anon_pgoff_hi() const { return anon_pgoff_hi && !vma_refcnt_p1; }
  bool asserts_vma_stable() const { return anon_rmap_assert && (!vma_refcnt_p2 || debug_vm); }
};

// Names accepted by kernel.profile, in a stable order.
const std::vector<std::string_view>& profile_names();
// Fills *out with the named profile; false if the name is unknown.
bool lookup_profile(std::string_view name, KernelProfile* out);

}  // namespace faultline::mm
