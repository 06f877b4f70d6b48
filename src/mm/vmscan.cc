#include "mm/vmscan.h"

#include <cmath>

#include "mm/memory.h"

namespace faultline::mm {
namespace {

// The runs engine's list of a folio run.
RunList& run_list(Lruvec& lv, bool active) { return active ? lv.active_runs : lv.inactive_runs; }

void lru_push_head(Kernel& k, AddressSpace& as, pgoff_t head, bool active) {
  Lruvec& lv = k.lruvec();
  const uint64_t nr = as.folio_nr_pages(head);
  if (FolioRuns* runs = as.runs()) {
    FolioRun* r = runs->isolate(head);
    FAULTLINE_DCHECK(!(r->flags & kPgLru));
    r->flags = static_cast<uint16_t>((r->flags & ~kPgActive) | kPgLru | (active ? kPgActive : 0));
    run_list(lv, active).push_newest(r);
    (active ? lv.nr_active : lv.nr_inactive) += nr;
    runs->merge(r);
    return;
  }
  LruList& list = active ? lv.active : lv.inactive;
  as.set_lru_seq(head, list.push_front(as.ino(), head, as.order(head)));
  if (active) {
    lv.nr_active += nr;
    as.set(head, kPgActive);
  } else {
    lv.nr_inactive += nr;
    as.clear(head, kPgActive);
  }
  as.set(head, kPgLru);
}

void lru_del(Kernel& k, AddressSpace& as, pgoff_t head) {
  Lruvec& lv = k.lruvec();
  const uint64_t nr = as.folio_nr_pages(head);
  if (FolioRuns* runs = as.runs()) {
    FolioRun* r = runs->isolate(head);
    FAULTLINE_DCHECK(r->flags & kPgLru);
    (r->flags & kPgActive ? lv.nr_active : lv.nr_inactive) -= nr;
    RunList::unlink(r);
    r->flags = static_cast<uint16_t>(r->flags & ~kPgLru);
    return;
  }
  if (as.test(head, kPgActive)) {
    lv.nr_active -= nr;
  } else {
    lv.nr_inactive -= nr;
  }
  as.clear(head, kPgLru);
  as.set_lru_seq(head, 0);  // the list entry goes stale
}

// Pops the tail of a list, skipping stale entries. Returns false if empty.
// (The runs engine's tail folio stays linked until lru_del, which every
// caller calls next.)
bool lru_pop_tail(Kernel& k, bool active, AddressSpace** as, pgoff_t* head) {
  Lruvec& lv = k.lruvec();
  if (k.runs()) {
    FolioRun* r = run_list(lv, active).oldest();
    if (!r) return false;
    *as = r->as;
    *head = r->start;
    return true;
  }
  LruList& list = active ? lv.active : lv.inactive;
  LruEntry e;
  while (list.pop_back(&e)) {
    AddressSpace* s = k.address_space(e.ino);
    if (lru_entry_live(*s, e)) {
      *as = s;
      *head = e.index;
      return true;
    }
  }
  return false;
}

// folio_referenced(): counts the VMAs (with recency) in which a PTE or PMD
// mapping the folio is young, clearing those bits. Also reports VM_EXEC.
int folio_referenced(AddressSpace& as, pgoff_t head, bool* exec) {
  const uint64_t nr = as.folio_nr_pages(head);
  int referenced = 0;
  for (Vma* vma : as.i_mmap()) {
    if (!vma->has_recency()) continue;  // invalid_folio_referenced_vma()
    const pgoff_t first = std::max(head, vma->vm_pgoff);
    const pgoff_t last = std::min(head + nr, vma->vm_pgoff + vma->nr_pages());
    bool young = false;
    if (first < last) {
      vma->ptes.transform(first - vma->vm_pgoff, last - vma->vm_pgoff, [&](uint8_t pte) {
        if ((pte & (kPtePresent | kPteYoung | kPteAnon)) != (kPtePresent | kPteYoung)) return pte;
        young = true;
        return static_cast<uint8_t>(pte & ~kPteYoung);
      });
    }
    if (young) {
      ++referenced;
      if (vma->vm_flags & VM_EXEC) *exec = true;
    }
  }
  return referenced;
}

// inactive_is_low() for the file LRU: the inactive list should hold at least
// 1/(1 + int_sqrt(10 x GiB)) of the file pages. The square root is cached
// per size in GiB: reclaim asks for every folio it scans.
bool inactive_is_low(Lruvec& lv) {
  if (lv.nr_active == 0) return false;
  const uint64_t gb = (lv.nr_inactive + lv.nr_active) >> (30 - kPageShift);
  if (gb != lv.ratio_gb) {
    lv.ratio_gb = gb;
    lv.inactive_ratio = gb ? static_cast<uint64_t>(std::sqrt(static_cast<double>(10 * gb))) : 1;
  }
  return lv.nr_inactive * lv.inactive_ratio < lv.nr_active;
}

// shrink_active_list(): deactivates up to nr_to_scan pages from the active tail.
void shrink_active_list(Kernel& k, uint64_t nr_to_scan) {
  Lruvec& lv = k.lruvec();
  uint64_t scanned = 0;
  AddressSpace* as;
  pgoff_t head;
  while (scanned < nr_to_scan && lru_pop_tail(k, /*active=*/true, &as, &head)) {
    const uint64_t nr = as->folio_nr_pages(head);
    scanned += nr;
    bool exec = false;
    const int referenced = as->test(head, kPgMapped) ? folio_referenced(*as, head, &exec) : 0;
    lru_del(k, *as, head);
    if (referenced && exec) {
      lru_push_head(k, *as, head, /*active=*/true);  // executable code stays active
      continue;
    }
    as->set(head, kPgWorkingset);
    lru_push_head(k, *as, head, /*active=*/false);
    k.vmstat().inc(VmEvent::pgdeactivate, nr);
  }
}

// workingset_eviction(): the shadow's timestamp; the clock ages by nr.
uint32_t workingset_eviction(Kernel& k, uint64_t nr) {
  Lruvec& lv = k.lruvec();
  const uint32_t age = lv.nonresident_age;
  lv.nonresident_age += static_cast<uint32_t>(nr);
  return age;
}

// One pass of shrink_inactive_list over the tail folio. Returns pages freed.
uint64_t shrink_one_inactive(Kernel& k, uint64_t* scanned) {
  Lruvec& lv = k.lruvec();
  AddressSpace* as;
  pgoff_t head;
  if (!lru_pop_tail(k, /*active=*/false, &as, &head)) return 0;
  const uint64_t nr = as->folio_nr_pages(head);
  *scanned = nr;
  k.vmstat().inc(VmEvent::pgscan_file, nr);
  if (as->test(head, kPgLocked | kPgRefHeld)) {
    // folio_trylock() fails (its read is not submitted yet), or
    // __remove_mapping() cannot freeze the references a fault holds. Keep it.
    lru_del(k, *as, head);
    lru_push_head(k, *as, head, /*active=*/false);
    return 0;
  }
  // folio_check_references()
  bool exec = false;
  // Only a mapped folio has PTEs to look at (folio_mapped()).
  const int referenced_ptes = as->test(head, kPgMapped) ? folio_referenced(*as, head, &exec) : 0;
  const bool referenced_folio = as->test_and_clear(head, kPgReferenced);
  lru_del(k, *as, head);
  if (referenced_ptes) {
    if (referenced_folio || referenced_ptes > 1 || exec) {
      lru_push_head(k, *as, head, /*active=*/true);  // FOLIOREF_ACTIVATE
      k.vmstat().inc(VmEvent::pgactivate, nr);
      return 0;
    }
    as->set(head, kPgReferenced);  // FOLIOREF_KEEP: a second trip
    lru_push_head(k, *as, head, /*active=*/false);
    k.vmstat().inc(VmEvent::pgrotated, nr);
    return 0;
  }
  // FOLIOREF_RECLAIM_CLEAN / FOLIOREF_RECLAIM
  k.vmstat().inc(VmEvent::pgsteal_file, nr);
  return evict_folio(k, *as, head, /*shadow=*/true);
}

}  // namespace

bool Vma::has_recency() const {
  if (vm_flags & (VM_SEQ_READ | VM_RAND_READ)) return false;
  if (vm_file && (vm_file->f_mode & FMODE_NOREUSE)) return false;
  return true;
}

void folio_add_lru(Kernel& k, AddressSpace& as, pgoff_t head) {
  if (as.shmem()) return;  // swap-backed and no swap: never reclaimed (anon LRU unscanned)
  lru_push_head(k, as, head, as.test(head, kPgActive));
}

void folio_mark_accessed(Kernel& k, AddressSpace& as, pgoff_t head) {
  if (!as.test(head, kPgReferenced)) {
    as.set(head, kPgReferenced);
    return;
  }
  if (as.test(head, kPgActive) || !as.test(head, kPgLru)) {
    return;  // active & referenced: nothing more to record
  }
  // inactive & referenced: folio_activate() + workingset_activation()
  lru_del(k, as, head);
  as.clear(head, kPgReferenced);
  lru_push_head(k, as, head, /*active=*/true);
  const uint64_t nr = as.folio_nr_pages(head);
  k.vmstat().inc(VmEvent::pgactivate, nr);
  k.lruvec().nonresident_age += static_cast<uint32_t>(nr);
}

void workingset_refault(Kernel& k, AddressSpace& as, pgoff_t head, uint32_t shadow_age,
                        bool shadow_ws) {
  Lruvec& lv = k.lruvec();
  const uint64_t nr = as.folio_nr_pages(head);
  k.vmstat().inc(VmEvent::workingset_refault_file, nr);
  // workingset_test_recent(): no swap, so the workingset is the active file list.
  const uint32_t refault_distance = lv.nonresident_age - shadow_age;
  if (refault_distance > lv.nr_active) return;
  as.set(head, kPgActive);
  lv.nonresident_age += static_cast<uint32_t>(nr);
  k.vmstat().inc(VmEvent::workingset_activate_file, nr);
  if (shadow_ws) {
    as.set(head, kPgWorkingset);
    k.vmstat().inc(VmEvent::workingset_restore_file, nr);
  }
}

uint64_t evict_folio(Kernel& k, AddressSpace& as, pgoff_t head, bool shadow) {
  const uint64_t nr = as.folio_nr_pages(head);
  const uint64_t in_file = std::min<uint64_t>(nr, as.nr_pages() - head);
  if (as.test(head, kPgMapped)) unmap_folio(k, as, head);  // try_to_unmap()
  if (as.test(head, kPgDirty)) {
    k.vmstat().inc(VmEvent::pgpgout, in_file * (kPageSize / 1024));  // pageout()
  }
  if (as.test(head, kPgLru)) lru_del(k, as, head);
  // Read ahead and never touched: the read was for nothing (model only).
  if (as.test(head, kPgRaUnused)) k.vmstat().inc(VmEvent::ra_wasted_evicted, in_file);
  const bool ws = as.test(head, kPgWorkingset);
  const uint32_t age = shadow && !as.shmem() ? workingset_eviction(k, nr) : 0;
  if (k.tracing())
    k.trace({.kind = TraceKind::kDeleteFromPageCache,
             .ino = as.ino(),
             .index = head,
             .order = as.order(head)});
  as.remove(head, shadow && !as.shmem(), age, ws);
  k.charge(-static_cast<int64_t>(in_file));
  k.vmstat().inc(VmEvent::pages_evicted, in_file);
  k.cpu_work(CpuCost::evict_folio_ns);
  return in_file;
}

bool invalidate_folio(Kernel& k, AddressSpace& as, pgoff_t head) {
  for (const Vma* vma : as.i_mmap()) {
    const uint64_t nr = as.folio_nr_pages(head);
    const pgoff_t first = std::max(head, vma->vm_pgoff);
    const pgoff_t last = std::min(head + nr, vma->vm_pgoff + vma->nr_pages());
    bool mapped = false;
    if (first < last) {
      vma->ptes.for_each_set(first - vma->vm_pgoff, last - vma->vm_pgoff,
                             [&](uint64_t, uint64_t, uint8_t pte) {
                               mapped |= (pte & kPtePresent) && !(pte & kPteAnon);
                             });
    }
    if (mapped) return false;  // mapped: skipped
  }
  evict_folio(k, as, head, /*shadow=*/false);
  return true;
}

void reclaim_for(Kernel& k, uint64_t nr) {
  Lruvec& lv = k.lruvec();
  uint64_t futile = 0;  // pages scanned since the last one was freed
  while (k.nr_charged() + nr > k.capacity_pages()) {
    if (inactive_is_low(lv)) shrink_active_list(k, kSwapClusterMax);
    if (lv.nr_inactive == 0) {
      if (lv.nr_active == 0) break;  // nothing reclaimable: shmem/anon only
      shrink_active_list(k, kSwapClusterMax);
      continue;
    }
    uint64_t scanned = 0;
    if (shrink_one_inactive(k, &scanned)) {
      futile = 0;
    } else if ((futile += scanned) > 2 * (lv.nr_inactive + lv.nr_active) + kSwapClusterMax) {
      break;  // everything left is locked or keeps being referenced
    }
  }
  k.set_reclaim_gave_up(k.nr_charged() + nr > k.capacity_pages());
}

}  // namespace faultline::mm
