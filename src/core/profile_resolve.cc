#include "core/profile_resolve.h"

namespace faultline {

mm::KernelProfile resolve_profile(const KernelConfig& kc) {
  mm::KernelProfile p;
  mm::lookup_profile(kc.profile, &p);  // validated when the key was set
  if (kc.fault_around_bytes) p.fault_around_bytes = *kc.fault_around_bytes;
  if (kc.mmap_miss_p1) p.mmap_miss_p1 = *kc.mmap_miss_p1;
  if (kc.mmap_miss_p2) p.mmap_miss_p2 = *kc.mmap_miss_p2;
  if (kc.shmem_fault_around) p.shmem_fault_around = *kc.shmem_fault_around;
  if (kc.batched_rss) p.batched_rss = *kc.batched_rss;
  if (kc.per_vma_lock) p.per_vma_lock = *kc.per_vma_lock;
  if (kc.tried_after_major) p.tried_after_major = *kc.tried_after_major;
  if (kc.workingset_exclusion) p.map_pages_workingset_exclusion = *kc.workingset_exclusion;
  if (kc.whole_folio_fault_around) p.map_pages_whole_folio = *kc.whole_folio_fault_around;
  if (kc.file_pmd_mapping) p.file_pmd_mapping = *kc.file_pmd_mapping;
  if (kc.prefault_young) p.prefault_young = *kc.prefault_young;
  if (kc.anon_pgoff_hi) p.anon_pgoff_hi = *kc.anon_pgoff_hi;
  if (kc.anon_rmap_assert) p.anon_rmap_assert = *kc.anon_rmap_assert;
  if (kc.vma_refcnt_p1) p.vma_refcnt_p1 = *kc.vma_refcnt_p1;
  if (kc.vma_refcnt_p2) p.vma_refcnt_p2 = *kc.vma_refcnt_p2;
  if (kc.debug_vm) p.debug_vm = *kc.debug_vm;
  if (kc.madvise_vma_lock) p.madvise_vma_lock = *kc.madvise_vma_lock;
  return p;
}

}  // namespace faultline
