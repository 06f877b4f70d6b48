// memory.h — models mm/memory.c and the x86 fault entry
// (arch/x86/mm/fault.c: do_user_addr_fault): the attempt structure of a
// fault, fault-around, finish_fault, COW and anonymous faults, and the
// accounting of each completed fault (mm_account_fault).
#pragma once

#include "mm/mm.h"

namespace faultline::mm {

// struct vm_fault: one attempt at one address.
struct VmFault {
  Vma* vma;
  uint64_t vpage;  // page index inside the VMA
  pgoff_t pgoff;   // file page (vm_pgoff + vpage)
  fault_flags_t flags;
  pgoff_t folio = kNoIndex;  // head of the folio ->fault returned locked
};

// A load (write=false) or store by the task at page vpage of vma: nothing if
// the PTE allows it, otherwise the fault path until the access can complete.
void handle_access(Kernel& k, Vma& vma, uint64_t vpage, bool write);

// handle_access() of up to n accesses to pages vpage, vpage + 1, ... in
// turn, as long as each finds its PTE present (and writable for a store):
// the runs engine's PTE hits, a stretch of PTEs at a time. Returns how many
// it handled, 0 if the first would fault. No tracepoint fires on a hit.
uint64_t handle_pte_hits(Kernel& k, Vma& vma, uint64_t vpage, uint64_t n, bool write);

// do_user_addr_fault(): the per-VMA-lock attempt, then mmap_lock attempts
// with FAULT_FLAG_TRIED as the kernel sets it. Returns the final result.
vm_fault_t do_user_addr_fault(Kernel& k, Vma& vma, uint64_t vpage, bool write);

// handle_mm_fault(): one attempt, accounted unless it returns VM_FAULT_RETRY.
vm_fault_t handle_mm_fault(Kernel& k, VmFault& vmf);

// set_pte_range(): maps nr pages of the file starting at pgoff into the
// VMA. The faulting page is always young; prefaulted ones per profile.
// Returns the number of PTEs set (already-present ones are skipped); with
// fault_set, also whether the faulting page was among them.
uint64_t set_pte_range(Kernel& k, VmFault& vmf, pgoff_t pgoff, uint64_t nr, bool writable,
                       bool* fault_set = nullptr);

// do_set_pmd(): maps a PMD-order file folio with one PMD if its 2 MiB are
// PMD-aligned inside the VMA (thp_vma_suitable_order). THP's enabled= and
// MADV_HUGEPAGE are not consulted: they govern allocation, not mapping.
bool do_set_pmd(Kernel& k, VmFault& vmf, pgoff_t head);

// try_to_unmap(): removes every PTE mapping the folio, adjusting RSS.
// Returns whether there was one.
bool unmap_folio(Kernel& k, AddressSpace& as, pgoff_t head);
// unmap_folio() of `folios` folios of `order` from start, about to be freed
// (their flags are left as they are); PTEs map none of their pages outside
// [mapped_first, mapped_last), a stretch the caller knows. Returns how many
// of them a dirty PTE made dirty; *mapped_folios: how many had a PTE.
uint64_t unmap_folios(Kernel& k, AddressSpace& as, pgoff_t start, uint64_t folios, unsigned order,
                      pgoff_t mapped_first, pgoff_t mapped_last, uint64_t* mapped_folios);

// zap_page_range_single() for MADV_DONTNEED / munmap: clears the PTEs of
// [first, first + nr) pages of the VMA; young PTEs of a VMA with recency mark
// the folio accessed. Private anonymous pages are freed.
void zap_page_range(Kernel& k, Vma& vma, uint64_t first, uint64_t nr);

// munmap() of a whole VMA (do_vmi_munmap): its pages are zapped, it leaves
// its mm and its file's i_mmap, and it is freed.
void do_munmap(Kernel& k, Vma& vma);

}  // namespace faultline::mm
