// profile.h — the kernel being modelled: behaviour switches and tunables.
//
// A profile is one kernel release's value of every switch. Where two
// releases differ in a way that changes counters, the difference is a switch
// here; the seed patches are switches too, so a variant is the same input
// run under another set of switches. FAULTLINE_KERNEL_SWITCHES is the one
// list: the KernelProfile fields, each release's values, the kernel.* keys
// and their overrides (config/), `faultline keys` and the profile table of
// docs/model_fidelity.md (`faultline profiles`) all come from it. A new
// switch is one entry here plus the code that reads it.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

#include "util/enum_names.h"

namespace faultline::mm {

// Releases a profile exists for: X(id, kernel.profile name, what it is).
#define FAULTLINE_KERNEL_RELEASES(X)                                                       \
  X(k6_9, "6.9", "Linux 6.9: no workingset exclusion, unbatched RSS, order-0 ext4 folios") \
  X(k6_15, "6.15", "Linux 6.15: read-around asks for order 2, ext4 without large folios")  \
  X(k6_18, "6.18", "Linux 6.18.x, the kernel of the machine faultline is developed on")    \
  X(k7_1, "7.1", "Linux 7.1.5: seed 1's series (mmap_miss_p1, _p2) applies on top")        \
  X(k7_4, "7.4", "mainline after v7.4-rc1 (d48723711bae): the base of seed 2's series")
FAULTLINE_NAMED_ENUM(Release, FAULTLINE_KERNEL_RELEASES)

inline constexpr Release kDefaultRelease = Release::k6_18;
inline constexpr size_t kNrReleases = enum_count<Release>();

// One value per release, in FAULTLINE_KERNEL_RELEASES order.
template <typename T, typename... V>
constexpr std::array<T, kNrReleases> per_release(V... v) {
  static_assert(sizeof...(V) == kNrReleases, "a switch needs one value per release");
  return {static_cast<T>(v)...};
}

// X(type, name, (6.9, 6.15, 6.18, 7.1, 7.4), meaning). The key is
// kernel.<name>; the order is the order of the keys.
// clang-format off
#define FAULTLINE_KERNEL_SWITCHES(X)                                                              \
  /* mm/memory.c, arch/x86/mm/fault.c */                                                           \
  X(uint32_t, fault_around_bytes,        (65536, 65536, 65536, 65536, 65536),                      \
    "fault_around_bytes (4096 disables fault-around)")                                             \
  /* seed 1: filemap_map_pages credits 1 iff it mapped the faulting address */                     \
  X(bool,     mmap_miss_p1,              (false, false, false, false, false),                      \
    "seed 1 patch 1: credit only the faulting address")                                            \
  /* seed 1: filemap_map_pages credits nothing on a FAULT_FLAG_TRIED attempt */                    \
  X(bool,     mmap_miss_p2,              (false, false, false, false, false),                      \
    "seed 1 patch 2: no credit on FAULT_FLAG_TRIED retries")                                       \
  /* seed 4: shmem_vm_ops has .map_pages = filemap_map_pages (3.15+) */                            \
  X(bool,     shmem_fault_around,        (true,  true,  true,  true,  true),                       \
    "seed 4: shmem maps pages around the fault")                                                   \
  /* seed 3: one add_mm_counter per filemap_map_pages call instead of one per folio */             \
  X(bool,     batched_rss,               (false, true,  true,  true,  true),                       \
    "seed 3: one RSS update per filemap_map_pages call")                                           \
  /* CONFIG_PER_VMA_LOCK: lock_vma_under_rcu before mmap_lock */                                   \
  X(bool,     per_vma_lock,              (true,  true,  true,  true,  true),                       \
    "faults try the per-VMA lock first")                                                           \
  /* 46e714c729c8 (Jan 2024): a VM_FAULT_MAJOR retry carries FAULT_FLAG_TRIED */                   \
  X(bool,     tried_after_major,         (true,  true,  true,  true,  true),                       \
    "a major VMA-lock attempt retries with TRIED")                                                 \
  /* filemap_map_pages gives no mmap_miss credit for PG_workingset folios (6.10+) */               \
  X(bool,     workingset_exclusion,      (false, true,  true,  true,  true),                       \
    "no mmap_miss credit for PG_workingset folios")                                                \
  /* "map entire large folio faultaround" (6.18): inside the VMA, one page table and EOF */        \
  X(bool,     whole_folio_fault_around,  (false, false, true,  true,  true),                       \
    "fault-around maps whole large folios")                                                        \
  /* do_set_pmd: a PMD-order file folio mapped by one PMD */                                       \
  X(bool,     file_pmd_mapping,          (true,  true,  true,  true,  true),                       \
    "PMD-order file folios are mapped with one PMD")                                               \
  /* x86 sets the Accessed bit of prefaulted PTEs; arm64 with hardware AF does not */              \
  X(bool,     prefault_young,            (true,  true,  true,  true,  true),                       \
    "PTEs set by fault-around are young (x86)")                                                    \
  /* 7.4-rc1 anon pgoff series: linear_anon_page_index() reads __vm_anon_pgoff_hi, the u32 */      \
  /* next to vm_refcnt on the VMA's third line */                                                  \
  X(bool,     anon_pgoff_hi,             (false, false, false, false, true),                       \
    "7.4-rc1: the anonymous page index reads __vm_anon_pgoff_hi, next to vm_refcnt")               \
  /* 7.4-rc1: vma_has_anon_rmap() runs vma_is_attached() and vma_assert_stabilised() on every */   \
  /* anonymous fault, also with CONFIG_DEBUG_VM=n */                                               \
  X(bool,     anon_rmap_assert,          (false, false, false, false, true),                       \
    "7.4-rc1: vma_has_anon_rmap() loads vm_refcnt to assert VMA stability")                        \
  /* seed 2 patch 1: the anonymous page index from vm_pgoff (line 1) */                            \
  X(bool,     vma_refcnt_p1,             (false, false, false, false, false),                      \
    "seed 2 patch 1: anonymous page index from vm_pgoff")                                          \
  /* seed 2 patch 2: that assertion only with CONFIG_DEBUG_VM */                                   \
  X(bool,     vma_refcnt_p2,             (false, false, false, false, false),                      \
    "seed 2 patch 2: the VMA stability assertion only with DEBUG_VM")                              \
  X(bool,     debug_vm,                  (false, false, false, false, false),                      \
    "CONFIG_DEBUG_VM")                                                                             \
  /* madvise_dontneed_free under the per-VMA read lock (6.16+), not mmap_lock */                   \
  X(bool,     madvise_vma_lock,          (false, false, true,  true,  true),                       \
    "MADV_DONTNEED under the per-VMA lock (6.16+)")                                                \
  /* do_async_mmap_readahead credits mmap_miss only for folios that are not locked (6.10+) */      \
  X(bool,     async_credit_unlocked_only, (false, true,  true,  true,  true),                      \
    "do_async_mmap_readahead credits mmap_miss only for unlocked folios")                          \
  /* <=6.15 page_cache_ra_order adds 2 to the order it is asked for, so read-around allocates */   \
  /* order-2 folios and async windows ramp from the marked folio's order; >=6.16 the callers */    \
  /* set ra->order and page_cache_async_ra adds 2 */                                               \
  X(bool,     ra_order_plus2,            (true,  true,  false, false, false),                      \
    "page_cache_ra_order adds 2 to the order it is asked for (6.15 and older)")                    \
  /* <=6.18 the VM_HUGEPAGE branch of do_sync_mmap_readahead runs before the mmap_miss */          \
  /* accounting, so MMAP_LOTSAMISS never switches it off; 6.19+ counts it */                       \
  X(bool,     thp_ra_before_mmap_miss,   (true,  true,  true,  false, false),                      \
    "MADV_HUGEPAGE read-around runs before the mmap_miss accounting (6.18 and older)")             \
  /* ext4 allocates large folios in the page cache from 6.16; xfs has since 5.18 */                \
  X(bool,     ext4_large_folios,         (false, false, true,  true,  true),                       \
    "ext4 uses large folios in the page cache (6.16+)")
// clang-format on

struct KernelProfile {
  Release release = kDefaultRelease;
#define FAULTLINE_X(type, name, by_release, doc) \
  type name = per_release<type> by_release[enum_index(kDefaultRelease)];
  FAULTLINE_KERNEL_SWITCHES(FAULTLINE_X)
#undef FAULTLINE_X

  std::string_view name() const { return enum_name(release); }
  // fault_around_bytes_set(): at least one page, rounded down to a power of two.
  uint32_t fault_around_pages() const;
  // The seed 2 reads of vm_refcnt's line an anonymous fault makes.
  bool reads_anon_pgoff_hi() const { return anon_pgoff_hi && !vma_refcnt_p1; }
  bool asserts_vma_stable() const { return anon_rmap_assert && (!vma_refcnt_p2 || debug_vm); }
};

// The release's value of every switch.
KernelProfile kernel_profile(Release r);

}  // namespace faultline::mm
