#include "mm/memory.h"

#include <absl/container/inlined_vector.h>

#include <algorithm>
#include <array>
#include <utility>
#include <vector>

#include "mm/filemap.h"
#include "mm/shmem.h"
#include "mm/vmscan.h"

namespace faultline::mm {
namespace {

MmCounter mm_counter_file(const AddressSpace& as) {
  return as.shmem() ? MM_SHMEMPAGES : MM_FILEPAGES;
}

// mm_account_fault(): completed attempts only; major if the attempt found
// the page missing or the fault had been retried with FAULT_FLAG_TRIED.
void mm_account_fault(Kernel& k, Mm& mm, fault_flags_t flags, vm_fault_t ret) {
  if (ret & VM_FAULT_RETRY) return;  // counted when it completes
  k.vmstat().inc(VmEvent::pgfault);  // errors included
  if (ret & VM_FAULT_ERROR) return;
  const bool major = (ret & VM_FAULT_MAJOR) || (flags & FAULT_FLAG_TRIED);
  if (major) {
    ++mm.maj_flt;
  } else {
    ++mm.min_flt;
  }
}

bool vma_has_map_pages(const Kernel& k, const Vma& vma) {
  if (!vma.vm_file) return false;
  return vma.shmem_ops ? k.profile().shmem_fault_around : true;
}

// do_fault_around(): the fault_around_pages-aligned block of virtual
// addresses around the fault, clipped to the VMA and to one page table.
vm_fault_t do_fault_around(Kernel& k, VmFault& vmf) {
  const Vma& vma = *vmf.vma;
  const uint64_t nr_pages = k.fault_around_pages();
  const uint64_t pte_off = vma.vpn(vmf.vpage) & (kPtrsPerPte - 1);
  const uint64_t vma_off = vmf.vpage;
  const uint64_t from_pte =
      std::max(round_down(pte_off, nr_pages), pte_off - std::min(pte_off, vma_off));
  const uint64_t to_pte =
      std::min({from_pte + nr_pages, uint64_t{kPtrsPerPte}, pte_off + vma.nr_pages() - vma_off}) -
      1;
  const pgoff_t start = vmf.pgoff - (pte_off - from_pte);
  const pgoff_t end = vmf.pgoff + (to_pte - pte_off);
  return filemap_map_pages(k, vmf, start, end);
}

// set_pte_range() of the runs engine: the pages without a PTE in the range
// get theirs as stretches (whether a folio is mapped, the runs engine reads
// off the page tables).
uint64_t set_pte_range_runs(Kernel& k, VmFault& vmf, pgoff_t pgoff, uint64_t nr, bool writable,
                            bool* fault_set) {
  Vma& vma = *vmf.vma;
  const uint64_t first = pgoff - vma.vm_pgoff, last = first + nr;
  uint8_t base = kPtePresent;
  if (writable) base |= kPteWrite | kPteDirty;
  const uint8_t prefault = k.profile().prefault_young ? base | kPteYoung : base;
  const uint8_t faulting = base | kPteYoung;
  const uint64_t fault_at = vmf.pgoff - vma.vm_pgoff;
  // The stretches without a present PTE.
  absl::InlinedVector<std::pair<uint64_t, uint64_t>, 4> gaps;
  uint64_t at = first;
  // Under an empty PMD there is nothing to look for.
  if (!vma.pmd_none(first) || vma.pmd_slot(first) != vma.pmd_slot(last - 1)) {
    vma.ptes.for_each_set(first, last, [&](uint64_t s, uint64_t e, uint8_t pte) {
      if (!(pte & kPtePresent)) return;
      if (s > at) gaps.emplace_back(at, s);
      at = e;
    });
  }
  if (at < last) gaps.emplace_back(at, last);
  uint64_t set = 0;
  for (const auto& [s, e] : gaps) {
    vma.ptes.set_range(s, e - s, prefault);
    if (fault_at >= s && fault_at < e) {
      if (faulting != prefault) vma.ptes.set(fault_at, faulting);
      if (fault_set) *fault_set = true;
    }
    for (uint64_t slot = vma.pmd_slot(s); slot <= vma.pmd_slot(e - 1); ++slot) {
      vma.pte_table.mut(slot) = 1;
    }
    set += e - s;
  }
  if (set) {
    vma.vm_file->mapping->mark_mapped(vma.vm_pgoff + gaps.front().first,
                                      vma.vm_pgoff + gaps.back().second);
  }
  k.cpu_work(CpuCost::map_page_ns, set);
  return set;
}

// finish_fault(): maps the folio ->fault returned: with one PMD if it is of
// PMD order and the page table is not there yet; whole if it is large, inside
// EOF (shmem excepted), inside the VMA and one page table, and none of its
// PTEs is set; otherwise only the faulting page.
vm_fault_t finish_fault(Kernel& k, VmFault& vmf) {
  Vma& vma = *vmf.vma;
  AddressSpace& as = *vma.vm_file->mapping;
  const pgoff_t head = vmf.folio;
  const uint64_t nr = as.folio_nr_pages(head);
  const bool write = vmf.flags & FAULT_FLAG_WRITE;
  const bool writable = write && (vma.vm_flags & VM_SHARED);
  const MmCounter counter = mm_counter_file(as);
  if (nr == kHpagePmdNr && vma.pmd_none(vmf.vpage) && do_set_pmd(k, vmf, head)) {
    if (writable) as.set(head, kPgDirty);
    return 0;
  }
  uint64_t first = vmf.pgoff, count = 1;
  if (nr > 1) {
    const uint64_t idx = vmf.pgoff - head;
    const uint64_t pte_off = vma.vpn(vmf.vpage) & (kPtrsPerPte - 1);
    const bool eof_fallback = !as.shmem() && as.nr_pages() < head + nr;
    const bool fits = vmf.vpage >= idx && vmf.vpage + (nr - idx) <= vma.nr_pages() &&
                      pte_off >= idx && pte_off + (nr - idx) <= kPtrsPerPte;
    bool none = !eof_fallback && fits;
    for (uint64_t i = 0; none && i < nr; ++i) {
      // !pte_range_none(): part of the folio is mapped; fall back to one PTE.
      if (vma.ptes[vmf.vpage - idx + i] & kPtePresent) none = false;
    }
    if (none) {
      first = head;
      count = nr;
    }
  }
  const uint64_t n = set_pte_range(k, vmf, first, count, writable);
  if (n) k.add_mm_counter(*vma.vm_mm, counter, static_cast<int64_t>(n));
  k.cpu_work(CpuCost::map_folio_ns);
  if (writable) as.set(head, kPgDirty);
  return 0;
}

// __do_fault(): the VMA's ->fault, shmem_fault for tmpfs and shared anonymous
// memory, filemap_fault for files.
vm_fault_t __do_fault(Kernel& k, VmFault& vmf) {
  return vmf.vma->shmem_ops ? shmem_fault(k, vmf) : filemap_fault(k, vmf);
}

// do_read_fault()
vm_fault_t do_read_fault(Kernel& k, VmFault& vmf) {
  const Vma& vma = *vmf.vma;
  // Let's call ->map_pages() first and use ->fault() as fallback if the
  // page isn't in the page cache yet.
  if (vma_has_map_pages(k, vma) && k.fault_around_pages() > 1) {
    const vm_fault_t ret = do_fault_around(k, vmf);
    if (ret) return ret;
  }
  // vmf_can_call_fault(): without ->map_pages, ->fault is not called under
  // the VMA lock; retry under mmap_lock.
  if (!vma_has_map_pages(k, vma) && (vmf.flags & FAULT_FLAG_VMA_LOCK)) return VM_FAULT_RETRY;
  vm_fault_t ret = __do_fault(k, vmf);
  if (ret & (VM_FAULT_ERROR | VM_FAULT_NOPAGE | VM_FAULT_RETRY)) return ret;
  ret |= finish_fault(k, vmf);
  return ret;
}

// do_cow_fault(): a write to a private file mapping; ->fault (with its
// readahead) then a private copy mapped in place. No fault-around.
vm_fault_t do_cow_fault(Kernel& k, VmFault& vmf) {
  Vma& vma = *vmf.vma;
  vm_fault_t ret = __do_fault(k, vmf);
  if (ret & (VM_FAULT_ERROR | VM_FAULT_NOPAGE | VM_FAULT_RETRY)) return ret;
  touch_pages(k, *vma.vm_file->mapping, vmf.pgoff, 1);  // the copy reads the file page
  vma.ptes.set(vmf.vpage, kPtePresent | kPteYoung | kPteWrite | kPteDirty | kPteAnon);
  vma.pte_table.mut(vma.pmd_slot(vmf.vpage)) = 1;
  k.add_mm_counter(*vma.vm_mm, MM_ANONPAGES, 1);
  k.charge(1);
  k.cpu_work(CpuCost::map_page_ns);
  reclaim_if_needed(k);
  return ret;
}

// do_shared_fault(): a write to a shared file mapping; the page is dirtied.
vm_fault_t do_shared_fault(Kernel& k, VmFault& vmf) {
  vm_fault_t ret = __do_fault(k, vmf);
  if (ret & (VM_FAULT_ERROR | VM_FAULT_NOPAGE | VM_FAULT_RETRY)) return ret;
  ret |= finish_fault(k, vmf);
  return ret;
}

// do_wp_page(): a write to a present, read-only PTE.
vm_fault_t do_wp_page(Kernel& k, VmFault& vmf) {
  Vma& vma = *vmf.vma;
  const uint8_t pte = vma.ptes[vmf.vpage];
  if (!vma.vm_file) {
    // The shared zero page: wp_page_copy() allocates the task's own page.
    vma.ptes.set(vmf.vpage, kPtePresent | kPteYoung | kPteWrite | kPteDirty | kPteAnon);
    k.add_mm_counter(*vma.vm_mm, MM_ANONPAGES, 1);
    k.charge(1);
    reclaim_if_needed(k);
    return 0;
  }
  AddressSpace& as = *vma.vm_file->mapping;
  if (vma.vm_flags & VM_SHARED) {
    // wp_page_shared(): ->page_mkwrite, then the PTE becomes writable and dirty.
    vma.ptes.set(vmf.vpage,
                 static_cast<uint8_t>((pte & ~kPteShadowed) | kPteYoung | kPteWrite | kPteDirty));
    as.set(as.head(vmf.pgoff), kPgDirty);
    return 0;
  }
  // wp_page_copy(): the file page is replaced by a private copy.
  touch_pages(k, as, vmf.pgoff, 1);
  vma.ptes.set(vmf.vpage, kPtePresent | kPteYoung | kPteWrite | kPteDirty | kPteAnon);
  k.add_mm_counter(*vma.vm_mm, mm_counter_file(as), -1);
  k.add_mm_counter(*vma.vm_mm, MM_ANONPAGES, 1);
  k.charge(1);
  reclaim_if_needed(k);
  return 0;
}

// do_anonymous_page(): the zero page on a read, a new zeroed page on a write.
vm_fault_t do_anonymous_page(Kernel& k, VmFault& vmf) {
  Vma& vma = *vmf.vma;
  if (vma.vm_flags & VM_SHARED) return VM_FAULT_SIGBUS;
  vma.pte_table.mut(vma.pmd_slot(vmf.vpage)) = 1;
  if (!(vmf.flags & FAULT_FLAG_WRITE)) {
    vma.ptes.set(vmf.vpage, kPtePresent | kPteYoung);  // special zero-page PTE
    return 0;
  }
  vma.ptes.set(vmf.vpage, kPtePresent | kPteYoung | kPteWrite | kPteDirty | kPteAnon);
  k.add_mm_counter(*vma.vm_mm, MM_ANONPAGES, 1);
  k.charge(1);
  reclaim_if_needed(k);
  return 0;
}

}  // namespace

bool do_set_pmd(Kernel& k, VmFault& vmf, pgoff_t head) {
  Vma& vma = *vmf.vma;
  AddressSpace& as = *vma.vm_file->mapping;
  if (!k.profile().file_pmd_mapping || as.order(head) != kHpagePmdOrder) return false;
  if (head < vma.vm_pgoff) return false;
  const uint64_t vpage = head - vma.vm_pgoff;
  if (vma.vpn(vpage) % kHpagePmdNr != 0 || vpage + kHpagePmdNr > vma.nr_pages()) {
    return false;  // thp_vma_suitable_order()
  }
  if (head + kHpagePmdNr > as.nr_pages() && !as.shmem()) return false;
  vma.ptes.set_range(vpage, kHpagePmdNr, kPtePresent | kPteYoung);
  vma.pmd_mapped.mut(vma.pmd_slot(vpage)) = 1;
  as.mark_mapped(head, head + kHpagePmdNr);
  k.add_mm_counter(*vma.vm_mm, mm_counter_file(as), kHpagePmdNr);
  k.vmstat().inc(VmEvent::thp_file_mapped);
  k.cpu_work(CpuCost::map_folio_ns);
  k.cpu_work(CpuCost::map_page_ns, 8);
  return true;
}

uint64_t set_pte_range(Kernel& k, VmFault& vmf, pgoff_t pgoff, uint64_t nr, bool writable,
                       bool* fault_set) {
  Vma& vma = *vmf.vma;
  if (k.runs() && nr > 1) return set_pte_range_runs(k, vmf, pgoff, nr, writable, fault_set);
  uint64_t set = 0;
  for (uint64_t i = 0; i < nr; ++i) {
    const pgoff_t p = pgoff + i;
    const uint64_t vpage = p - vma.vm_pgoff;
    if (vma.ptes[vpage] & kPtePresent) continue;
    const bool prefault = p != vmf.pgoff;
    uint8_t v = kPtePresent;
    if (!prefault || k.profile().prefault_young) v |= kPteYoung;
    if (writable) v |= kPteWrite | kPteDirty;
    vma.ptes.set(vpage, v);
    if (fault_set && !prefault) *fault_set = true;
    if (vma.vm_file) vma.vm_file->mapping->mark_mapped(p, p + 1);
    vma.pte_table.mut(vma.pmd_slot(vpage)) = 1;
    ++set;
  }
  k.cpu_work(CpuCost::map_page_ns, set);
  return set;
}

bool unmap_folio(Kernel& k, AddressSpace& as, pgoff_t head) {
  const uint64_t nr = as.folio_nr_pages(head);
  bool any = false;
  for (Vma* vma : as.i_mmap()) {
    const pgoff_t first = std::max(head, vma->vm_pgoff);
    const pgoff_t last = std::min(head + nr, vma->vm_pgoff + vma->nr_pages());
    int64_t cleared = 0;
    if (first < last) {
      bool dirty = false;
      vma->ptes.for_each_set(first - vma->vm_pgoff, last - vma->vm_pgoff,
                             [&](uint64_t s, uint64_t e, uint8_t pte) {
                               if ((pte & kPtePresent) && !(pte & kPteAnon)) {
                                 dirty |= (pte & kPteDirty) != 0;
                                 cleared += static_cast<int64_t>(e - s);
                               }
                             });
      if (cleared) {
        if (dirty) as.set(head, kPgDirty);
        vma->ptes.transform(first - vma->vm_pgoff, last - vma->vm_pgoff, [](uint8_t pte) {
          return (pte & kPtePresent) && !(pte & kPteAnon) ? uint8_t{0} : pte;
        });
      }
    }
    if (first < last && as.order(head) == kHpagePmdOrder) {
      const uint64_t slot = vma->pmd_slot(first - vma->vm_pgoff);
      if (vma->pmd_mapped[slot]) vma->pmd_mapped.in_written(slot) = 0;
    }
    if (cleared) {
      k.add_mm_counter(*vma->vm_mm, mm_counter_file(as), -cleared);
      any = true;
    }
  }
  as.clear(head, kPgMapped);
  return any;
}

namespace {

// The folios of the folio numbers in `ranges` ([a, b) pairs), counting a
// folio in several once.
uint64_t folios_in(absl::InlinedVector<std::pair<uint64_t, uint64_t>, 4>& ranges) {
  std::sort(ranges.begin(), ranges.end());
  uint64_t n = 0, upto = 0;
  for (const auto& [a, b] : ranges) {
    if (b > std::max(a, upto)) n += b - std::max(a, upto);
    upto = std::max(upto, b);
  }
  return n;
}

}  // namespace

uint64_t unmap_folios(Kernel& k, AddressSpace& as, pgoff_t start, uint64_t folios, unsigned order,
                      pgoff_t mapped_first, pgoff_t mapped_last, uint64_t* mapped_folios) {
  const uint64_t nr = uint64_t{1} << order;
  const pgoff_t end = start + folios * nr;
  // Folio numbers [a, b) with a dirty PTE, and (where several VMAs map the
  // file) with any PTE.
  absl::InlinedVector<std::pair<uint64_t, uint64_t>, 4> dirty, mapped;
  const bool several = as.i_mmap().size() > 1;
  uint64_t mapped_one = 0;  // folios with a PTE, where one VMA maps the file
  for (Vma* vma : as.i_mmap()) {
    if (std::max(start, vma->vm_pgoff) >= std::min(end, vma->vm_pgoff + vma->nr_pages())) {
      continue;
    }
    const pgoff_t first = std::max({start, vma->vm_pgoff, mapped_first});
    const pgoff_t last = std::min({end, vma->vm_pgoff + vma->nr_pages(), mapped_last});
    int64_t cleared = 0;
    uint64_t calls = 0;       // folios with a PTE here: one add_mm_counter each
    uint64_t next_folio = 0;  // folios below this are counted
    if (first < last) {
      vma->ptes.for_each_set(first - vma->vm_pgoff, last - vma->vm_pgoff,
                             [&](uint64_t s, uint64_t e, uint8_t pte) {
                               if (!(pte & kPtePresent) || (pte & kPteAnon)) return;
                               cleared += static_cast<int64_t>(e - s);
                               const uint64_t fa = (vma->vm_pgoff + s - start) >> order;
                               const uint64_t fb = ((vma->vm_pgoff + e - 1 - start) >> order) + 1;
                               calls += fb - std::max(fa, next_folio);
                               next_folio = fb;
                               if (pte & kPteDirty) dirty.emplace_back(fa, fb);
                               if (several) mapped.emplace_back(fa, fb);
                             });
    }
    if (cleared) {
      mapped_one = calls;
      vma->ptes.transform(first - vma->vm_pgoff, last - vma->vm_pgoff, [](uint8_t pte) {
        return (pte & kPtePresent) && !(pte & kPteAnon) ? uint8_t{0} : pte;
      });
      vma->vm_mm->add_rss(mm_counter_file(as), -cleared);
      k.vmstat().inc(VmEvent::rss_updates, calls);
    }
    if (order == kHpagePmdOrder) {
      for (pgoff_t h = start; h < end; h += nr) {
        const pgoff_t f = std::max(h, vma->vm_pgoff);
        if (f >= std::min(h + nr, vma->vm_pgoff + vma->nr_pages())) continue;
        const uint64_t slot = vma->pmd_slot(f - vma->vm_pgoff);
        if (vma->pmd_mapped[slot]) vma->pmd_mapped.in_written(slot) = 0;
      }
    }
  }
  // Over all VMAs: the folios any PTE mapped, and those a dirty one made
  // dirty.
  *mapped_folios = several ? folios_in(mapped) : mapped_one;
  return folios_in(dirty);
}

void zap_page_range(Kernel& k, Vma& vma, uint64_t first, uint64_t nr) {
  int64_t file_pages = 0, anon_pages = 0;
  AddressSpace* as = vma.vm_file ? vma.vm_file->mapping : nullptr;
  // Pages with no PTE are skipped (next_set).
  const uint64_t end = std::min(first + nr, vma.nr_pages());
  for (uint64_t v = vma.ptes.next_set(first, end); v < end; v = vma.ptes.next_set(v + 1, end)) {
    const uint8_t pte = vma.ptes[v];
    if (!(pte & kPtePresent)) continue;
    if (pte & kPteAnon) {
      ++anon_pages;
    } else if (as) {
      const pgoff_t head = as->head(vma.vm_pgoff + v);
      if (pte & kPteDirty) as->set(head, kPgDirty);
      if ((pte & kPteYoung) && vma.has_recency()) folio_mark_accessed(k, *as, head);
      ++file_pages;
    }
    vma.ptes.set(v, 0);
  }
  const uint64_t last_slot = vma.pmd_slot(std::min(first + nr, vma.nr_pages()) - 1);
  for (uint64_t s = vma.pmd_mapped.next_written(vma.pmd_slot(first));
       s <= last_slot && s < vma.pmd_mapped.size(); s = vma.pmd_mapped.next_written(s + 1)) {
    if (vma.pmd_mapped[s]) vma.pmd_mapped.in_written(s) = 0;
  }
  if (file_pages) k.add_mm_counter(*vma.vm_mm, mm_counter_file(*as), -file_pages);
  if (anon_pages) {
    k.add_mm_counter(*vma.vm_mm, MM_ANONPAGES, -anon_pages);
    k.charge(-anon_pages);
  }
}

void do_munmap(Kernel& k, Vma& vma) {
  zap_page_range(k, vma, 0, vma.nr_pages());
  if (vma.vm_file) {
    std::vector<Vma*>& i_mmap = vma.vm_file->mapping->i_mmap();
    i_mmap.erase(std::remove(i_mmap.begin(), i_mmap.end(), &vma), i_mmap.end());
  }
  std::vector<std::unique_ptr<Vma>>& vmas = vma.vm_mm->vmas;
  vmas.erase(std::remove_if(vmas.begin(), vmas.end(),
                            [&vma](const std::unique_ptr<Vma>& v) { return v.get() == &vma; }),
             vmas.end());
}

vm_fault_t handle_mm_fault(Kernel& k, VmFault& vmf) {
  Vma& vma = *vmf.vma;
  k.vmstat().inc(VmEvent::fault_attempts);
  k.cpu_work(CpuCost::fault_ns);
  vm_fault_t ret;
  const uint8_t pte = vma.walk_pte(vmf.vpage);
  const bool write = vmf.flags & FAULT_FLAG_WRITE;
  if (pte & kPtePresent) {
    ret = write ? do_wp_page(k, vmf) : 0;  // spurious: the PTE is already there
  } else if (!vma.vm_file) {
    ret = do_anonymous_page(k, vmf);
  } else if (!write) {
    ret = do_read_fault(k, vmf);
  } else if (!(vma.vm_flags & VM_SHARED)) {
    ret = do_cow_fault(k, vmf);
  } else {
    ret = do_shared_fault(k, vmf);
  }
  mm_account_fault(k, *vma.vm_mm, vmf.flags, ret);
  return ret;
}

vm_fault_t do_user_addr_fault(Kernel& k, Vma& vma, uint64_t vpage, bool write) {
  const KernelProfile& prof = k.profile();
  fault_flags_t flags = FAULT_FLAG_DEFAULT | FAULT_FLAG_USER;
  if (write) flags |= FAULT_FLAG_WRITE;
  bool vma_lock = prof.per_vma_lock;
  for (int attempt = 0;; ++attempt) {
    FAULTLINE_CHECK(attempt < 8);
    VmFault vmf{&vma, vpage, vma.vm_pgoff + vpage, flags | (vma_lock ? FAULT_FLAG_VMA_LOCK : 0)};
    if (!vma_lock) k.vmstat().inc(VmEvent::mmap_lock_faults);
    const vm_fault_t ret = handle_mm_fault(k, vmf);
    if (!(ret & VM_FAULT_RETRY)) {
      if (vma_lock) k.vmstat().inc(VmEvent::vma_lock_success);
      return ret;
    }
    k.vmstat().inc(VmEvent::fault_retries);
    if (vma_lock) {
      k.vmstat().inc(VmEvent::vma_lock_retry);
      // Since 46e714c729c8 a major VMA-lock attempt marks the retry TRIED.
      if ((ret & VM_FAULT_MAJOR) && prof.tried_after_major) flags |= FAULT_FLAG_TRIED;
      vma_lock = false;
      continue;
    }
    flags |= FAULT_FLAG_TRIED;
  }
}

namespace {

// A hypervisor that shadows the guest's page tables (KVM's shadow MMU: a
// guest without EPT or NPT, or one run by PVM) maps a guest PTE in tables
// of its own only when the CPU first goes through it. That load or store
// exits to the hypervisor (FNAME(page_fault)), which maps the PTE and then,
// in FNAME(pte_prefetch), the other PTEs of its aligned group of
// PTE_PREFETCH_NUM, in order: it skips those it maps already and stops at
// the first that is not both present and young (prefetch_invalid_gpte).
// One exit maps a PMD mapping whole. So the first loads of a populated
// range take an exit every 8 pages, and a fault-around of 16 PTEs loaded
// in order takes two: one on the faulting load's retry, for its own group,
// and one for the other group. Any write of a PTE by the kernel drops its
// shadow (the new value lacks kPteShadowed).
constexpr uint64_t kShadowPrefetch = 8;  // PTE_PREFETCH_NUM

// ORs kPteShadowed into the present PTEs of vma pages [first, last).
void mark_shadowed(Vma& vma, uint64_t first, uint64_t last) {
  vma.ptes.transform(first, last, [](uint8_t p) {
    return (p & kPtePresent) ? static_cast<uint8_t>(p | kPteShadowed) : p;
  });
}

// Loads or stores to pages [first, last) of vma, one after another, each
// through a present PTE that gains `bits` (young, dirty) as it is loaded
// through; called before the table has those bits. Marks what the
// hypervisor maps, and counts and charges its exits.
void shadow_faults(Kernel& k, Vma& vma, uint64_t first, uint64_t last, uint8_t bits) {
  constexpr uint8_t kValid = kPtePresent | kPteYoung;
  uint64_t exits = 0;
  for (uint64_t v = first; v < last;) {
    if (vma.pmd_mapped[vma.pmd_slot(v)]) {
      // One exit for the PMD: the loads after the first in its span hit.
      const uint64_t lo = v - (vma.vpn(v) & (kHpagePmdNr - 1));
      const uint64_t hi = std::min(lo + kHpagePmdNr, vma.nr_pages());
      if (!(vma.ptes[v] & kPteShadowed)) {
        mark_shadowed(vma, lo, hi);
        ++exits;
      }
      v = std::min(hi, last);
      continue;
    }
    const uint64_t off = vma.vpn(v) & (kShadowPrefetch - 1);
    const uint64_t g0 = v - off;  // may lie before the VMA: no PTEs there
    const uint64_t lo = v >= off ? g0 : 0;
    const uint64_t hi = std::min(g0 + kShadowPrefetch, vma.nr_pages());
    const uint64_t b = std::min(last, hi);
    std::array<uint8_t, kShadowPrefetch> vals{};
    vma.ptes.for_each_set(lo, hi, [&](uint64_t s, uint64_t e, uint8_t pte) {
      for (uint64_t i = s; i < e; ++i) vals[i - g0] = pte;
    });
    uint32_t mapped = 0;  // bit i: the hypervisor maps entry i now
    for (uint64_t p = v; p < b; ++p) {
      const uint64_t at = p - g0;
      const bool hit = (vals[at] & kPteShadowed) || (mapped & (1u << at));
      vals[at] |= bits;
      if (hit) continue;
      ++exits;
      mapped |= 1u << at;
      for (uint64_t i = 0; i < kShadowPrefetch; ++i) {
        if (i == at || (mapped & (1u << i)) || (vals[i] & kPteShadowed)) continue;
        if ((vals[i] & kValid) != kValid) break;
        mapped |= 1u << i;
      }
    }
    for (uint64_t i = 0; i < kShadowPrefetch;) {
      if (!(mapped & (1u << i))) {
        ++i;
        continue;
      }
      uint64_t j = i;
      while (j < kShadowPrefetch && (mapped & (1u << j))) ++j;
      mark_shadowed(vma, g0 + i, g0 + j);
      i = j;
    }
    v = b;
  }
  k.vmstat().inc(VmEvent::shadow_faults, exits);
  k.cpu_work(CpuCost::shadow_fault_ns, exits);
}

}  // namespace

uint64_t handle_pte_hits(Kernel& k, Vma& vma, uint64_t vpage, uint64_t n, bool write) {
  struct Stretch {
    uint64_t first, last;
    uint8_t pte;
  };
  absl::InlinedVector<Stretch, 8> hits;
  const uint64_t end = std::min(vpage + n, vma.ptes.size());
  uint64_t next = vpage;  // the first page not yet known to hit
  vma.ptes.for_each_set_while(vpage, end, [&](uint64_t a, uint64_t b, uint8_t pte) {
    if (a != next || !(pte & kPtePresent) || (write && !(pte & kPteWrite))) return false;
    hits.push_back({a, b, pte});
    next = b;
    return true;
  });
  // The page walk stops at an empty PMD: no page table, no PTE.
  for (uint64_t v = vpage; v < next; v = (vma.vpn(v) | (kPtrsPerPte - 1)) + 1 - vma.vpn(0)) {
    if (vma.pmd_none(v)) {
      next = v;
      break;
    }
  }
  if (next == vpage) return 0;
  const uint8_t bits = static_cast<uint8_t>(kPteYoung | (write ? kPteDirty : 0));
  uint64_t first_touches = 0;
  const bool shadowed = k.shadow_paging();
  // A load's exit comes before its wait for a read in flight and after the
  // loads before it (handle_access): with reads in flight, one at a time.
  const bool one_by_one = shadowed && vma.vm_file && k.reads_in_flight();
  const auto add_bits = [bits](uint8_t p) { return static_cast<uint8_t>(p | bits); };
  for (const Stretch& h : hits) {
    const uint64_t last = std::min(h.last, next);
    if (h.first >= last) break;
    if (one_by_one) {
      for (uint64_t p = h.first; p < last; ++p) {
        if (!(vma.ptes[p] & kPteShadowed)) shadow_faults(k, vma, p, p + 1, bits);
        vma.ptes.transform(p, p + 1, add_bits);
        k.access_pages(vma.vm_file->mapping->ino(), vma.vm_pgoff + p, 1);
      }
    } else if (shadowed) {
      // In order: a stretch's loads may exit, and map PTEs of the next.
      if (!(h.pte & kPteShadowed)) shadow_faults(k, vma, h.first, last, bits);
      vma.ptes.transform(h.first, last, add_bits);
    } else if ((h.pte | bits) != h.pte) {
      vma.ptes.set_range(h.first, last - h.first, h.pte | bits);
    }
    if (vma.vm_file && !(h.pte & kPteAnon)) {
      first_touches +=
          vma.vm_file->mapping->touch_cached(vma.vm_pgoff + h.first, vma.vm_pgoff + last);
    }
  }
  const uint64_t done = next - vpage;
  k.vmstat().inc(VmEvent::accesses, done);
  k.vmstat().inc(VmEvent::pte_hits, done);
  if (first_touches) k.vmstat().inc(VmEvent::pages_touched, first_touches);
  if (!vma.vm_file) {
    k.cpu_work(CpuCost::access_ns, done);
  } else if (!one_by_one) {  // (one_by_one made them above)
    k.access_pages(vma.vm_file->mapping->ino(), vma.vm_pgoff + vpage, done);
  }
  return done;
}

void handle_access(Kernel& k, Vma& vma, uint64_t vpage, bool write) {
  k.vmstat().inc(VmEvent::accesses);
  for (int round = 0;; ++round) {
    uint8_t pte = vma.walk_pte(vpage);
    const bool ok = (pte & kPtePresent) && (!write || (pte & kPteWrite));
    if (ok) {
      const auto bits = static_cast<uint8_t>(kPteYoung | (write ? kPteDirty : 0));
      if (k.shadow_paging() && !(pte & kPteShadowed)) {
        shadow_faults(k, vma, vpage, vpage + 1, bits);
        pte = vma.ptes[vpage];
      }
      const auto now = static_cast<uint8_t>(pte | bits);
      if (now != pte) vma.ptes.set(vpage, now);
      if (round == 0) k.vmstat().inc(VmEvent::pte_hits);
      // The access touches the file page, unless the PTE maps a private copy.
      if (vma.vm_file && !(pte & kPteAnon)) {
        touch_pages(k, *vma.vm_file->mapping, vma.vm_pgoff + vpage, 1);
      }
      // The load waits for a readahead folio whose read is in flight (the
      // fault slept on its lock; fault-around mapped it early).
      if (vma.vm_file) k.wait_on_read(vma.vm_file->mapping->ino(), vma.vm_pgoff + vpage);
      k.cpu_work(CpuCost::access_ns);
      return;
    }
    // The instruction faults; after the fault it is executed again. A fault
    // that returned without mapping the page (NOPAGE after a race, or an
    // eviction between attempts) simply faults again.
    FAULTLINE_CHECK(round < 16);
    const vm_fault_t ret = do_user_addr_fault(k, vma, vpage, write);
    if (ret & VM_FAULT_ERROR) return;  // SIGBUS/OOM: the access is abandoned
  }
}

}  // namespace faultline::mm
