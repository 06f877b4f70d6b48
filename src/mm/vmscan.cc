#include "mm/vmscan.h"

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

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
    *as = r->as();
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
//
bool inactive_is_low_at(uint64_t inactive, uint64_t active) {
  if (active == 0) return false;
  const uint64_t gb = (inactive + active) >> (30 - kPageShift);
  const uint64_t ratio = gb ? static_cast<uint64_t>(std::sqrt(static_cast<double>(10 * gb))) : 1;
  return inactive * ratio < active;
}

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
  uint64_t scanned = 0;
  AddressSpace* as;
  pgoff_t head;
  while (scanned < nr_to_scan && lru_pop_tail(k, /*active=*/true, &as, &head)) {
    const uint64_t nr = as->folio_nr_pages(head);
    scanned += nr;
    bool exec = false;
    const int referenced = as->folio_mapped(head) ? folio_referenced(*as, head, &exec) : 0;
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
  const int referenced_ptes = as->folio_mapped(head) ? folio_referenced(*as, head, &exec) : 0;
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
  const unsigned order = as->order(head);
  bool unmapped = false;
  const uint64_t freed = evict_folio(k, *as, head, /*shadow=*/true, &unmapped);
  k.reclaim_work(1, freed, unmapped ? 1 : 0, order);
  return freed;
}

// ---------------------------------------------------------------------------
// The runs engine's reclaim: the same loops as above, a stretch of folios
// at a time. A stretch is the oldest folios of a list's tail run that the
// per-folio loop would treat alike, one after another, with nothing else
// happening in between; it is moved, aged or freed at once.

// What reclaim does with a folio at a list's tail.
enum class Fate : uint8_t {
  kRotate,      // inactive, locked or held: back to the inactive head
  kKeep,        // inactive, young in one VMA: PG_referenced, a second trip
  kActivate,    // inactive, young and referenced before, in two VMAs or exec
  kEvict,       // inactive, not young: reclaimed
  kStayActive,  // active, young and exec: back to the active head
  kDeactivate,  // active: to the inactive list
};

struct Stretch {
  FolioRun* run;    // the list's oldest run
  uint64_t folios;  // its oldest folios the fate holds for (0: go folio by folio)
  Fate fate;
};

// folio_referenced() of the leading folios of r, before it clears anything:
// the VMAs (with recency) in which the first folio is young, and whether
// one of them is VM_EXEC. Returns how many leading folios, at most max,
// have the same.
uint64_t referenced_stretch(const FolioRun& r, uint64_t max, int* refs, bool* exec) {
  const unsigned order = r.order;
  const uint64_t e = r.folio_pages();
  uint64_t limit = max;
  *refs = 0;
  *exec = false;
  if (!r.maybe_mapped()) return limit;
  for (const Vma* vma : r.as()->i_mmap()) {
    if (!vma->has_recency()) continue;  // invalid_folio_referenced_vma()
    // Outside the run's mapped stretch no PTE maps its pages.
    const pgoff_t lo = std::max({r.start, vma->vm_pgoff, r.mapped_first()});
    const pgoff_t hi =
        std::min({r.start + limit * e, vma->vm_pgoff + vma->nr_pages(), r.mapped_last()});
    if (lo >= hi) continue;
    // The young PTEs come in index order: the first folio is young when
    // the first of them lies in it, and then the young folios run on from
    // it as far as they touch. The walk stops where that is settled.
    constexpr uint64_t kNone = ~uint64_t{0};
    uint64_t first = kNone, covered = 0;
    vma->ptes.for_each_set_while(
        lo - vma->vm_pgoff, hi - vma->vm_pgoff, [&](uint64_t a, uint64_t b, uint8_t pte) {
          if ((pte & (kPtePresent | kPteYoung | kPteAnon)) != (kPtePresent | kPteYoung)) {
            return true;
          }
          const uint64_t fa = (vma->vm_pgoff + a - r.start) >> order;
          const uint64_t fb = ((vma->vm_pgoff + b - 1 - r.start) >> order) + 1;
          if (first == kNone) first = fa;
          if (first != 0 || fa > covered) return false;
          covered = std::max(covered, fb);
          return true;
        });
    const bool young0 = first == 0;
    // The first folio whose youngness here differs from the first folio's.
    limit = std::min(limit, young0 ? covered : first);
    if (young0) {
      ++*refs;
      if (vma->vm_flags & VM_EXEC) *exec = true;
    }
  }
  return limit;
}

// folio_referenced()'s clearing of the young bits of the first `folios`
// folios of r.
void clear_young(const FolioRun& r, uint64_t folios) {
  if (!r.maybe_mapped()) return;
  const pgoff_t end = std::min(r.start + folios * r.folio_pages(), r.mapped_last());
  for (Vma* vma : r.as()->i_mmap()) {
    if (!vma->has_recency()) continue;
    const pgoff_t lo = std::max({r.start, vma->vm_pgoff, r.mapped_first()});
    const pgoff_t hi = std::min(end, vma->vm_pgoff + vma->nr_pages());
    if (lo >= hi) continue;
    vma->ptes.transform(lo - vma->vm_pgoff, hi - vma->vm_pgoff, [](uint8_t pte) {
      if ((pte & (kPtePresent | kPteYoung | kPteAnon)) != (kPtePresent | kPteYoung)) return pte;
      return static_cast<uint8_t>(pte & ~kPteYoung);
    });
  }
}

// The stretch at the inactive tail (shrink_one_inactive and
// folio_check_references).
// The folios of run r, from its first, that reclaim frees one after
// another as it frees the first: none locked, held or young, not the one at
// EOF (which frees fewer pages than a folio).
uint64_t evictable(const FolioRun& r) {
  uint64_t n = r.nr;
  if (r.end() > r.as()->nr_pages()) --n;
  if (n == 0 || (r.flags & (kPgLocked | kPgRefHeld))) return 0;
  int refs;
  bool exec;
  n = referenced_stretch(r, n, &refs, &exec);
  return refs == 0 ? n : 0;
}

// The stretch at the inactive tail. One that frees its folios goes on
// through the runs after the tail run while they too are freed as they
// come, with folios of the same size, up to `stop` (the newest run, which
// insertions may join) or `max` folios.
Stretch inactive_stretch(Lruvec& lv, const FolioRun* stop = nullptr, uint64_t max = ~uint64_t{0}) {
  FolioRun* r = lv.inactive_runs.oldest();
  uint64_t n = r->nr;
  if (r->end() > r->as()->nr_pages()) --n;  // the folio at EOF goes on its own
  if (n == 0) return {r, 0, Fate::kEvict};
  if (r->flags & (kPgLocked | kPgRefHeld)) return {r, n, Fate::kRotate};
  int refs;
  bool exec;
  n = referenced_stretch(*r, n, &refs, &exec);
  if (refs == 0) {
    for (FolioRun* x = n == r->nr ? lv.inactive_runs.newer_than(r) : nullptr;
         x && x != stop && x->order == r->order && n < max; x = lv.inactive_runs.newer_than(x)) {
      const uint64_t more = evictable(*x);
      n += more;
      if (more < x->nr) break;
    }
    return {r, n, Fate::kEvict};
  }
  if ((r->flags & kPgReferenced) || refs > 1 || exec) return {r, n, Fate::kActivate};
  return {r, n, Fate::kKeep};
}

// The stretch at the active tail (shrink_active_list).
Stretch active_stretch(Lruvec& lv) {
  FolioRun* r = lv.active_runs.oldest();
  int refs;
  bool exec;
  const uint64_t n = referenced_stretch(*r, r->nr, &refs, &exec);
  return {r, n, refs && exec ? Fate::kStayActive : Fate::kDeactivate};
}

// The first `folios` folios of r as a run of their own.
FolioRun* take_front(FolioRun* r, uint64_t folios) {
  if (folios < r->nr) r->as()->runs()->split(r, r->start + folios * r->folio_pages());
  return r;
}

// r, off its list, to the head of the list its flags name.
void move_to_head(Lruvec& lv, FolioRun* r, uint16_t flags) {
  const uint64_t pages = r->nr_pages();
  (r->flags & kPgActive ? lv.nr_active : lv.nr_inactive) -= pages;
  RunList::unlink(r);
  r->flags = flags;
  (flags & kPgActive ? lv.nr_active : lv.nr_inactive) += pages;
  run_list(lv, flags & kPgActive).push_newest(r);
  r->as()->runs()->merge(r);
}

// evict_folio() of `folios` folios from run r on, run after run towards
// the head of the list (reclaim frees them one after another from the
// tail), as shrink_one_inactive counts them (scanned, stolen): unmapped,
// written if dirty, counted as wasted readahead if untouched, dropped.
// With `shadows`, each leaves its shadow entry at the workingset clock,
// which moves on by its pages; without, the caller writes them. Runs that
// also follow each other in the file go together. Returns the pages freed.
uint64_t evict_runs(Kernel& k, FolioRun* r, uint64_t folios, bool shadows) {
  Lruvec& lv = k.lruvec();
  uint64_t freed = 0;
  while (folios) {
    // A group: runs that follow each other on the list and in the file,
    // with folios of one order and the same dirty and workingset state.
    AddressSpace& as = *r->as();
    const unsigned order = r->order;
    const uint64_t e = r->folio_pages();
    const uint16_t same = r->flags & (kPgDirty | kPgWorkingset);
    const pgoff_t start = r->start;
    pgoff_t end = start;
    uint64_t n = 0;  // folios of the group
    // The group's mapped stretches, joined: no PTE maps a page outside.
    pgoff_t mapped_first = ~pgoff_t{0}, mapped_last = 0;
    FolioRun* partial = nullptr;  // a run whose front ends the group: it stays
    FolioRun* x = r;
    while (x && folios) {
      const uint64_t take = std::min<uint64_t>(folios, x->nr);
      FolioRun* next = lv.inactive_runs.newer_than(x);
      if (take < x->nr) {
        // Its first `take` folios go; x keeps the rest, in its place.
        partial = x;
        end = x->start + take * e;
        if (x->maybe_mapped() && x->mapped_first() < end) {
          mapped_first = std::min(mapped_first, x->mapped_first());
          mapped_last = std::max(mapped_last, std::min(x->mapped_last(), end));
        }
        n += take;
        folios = 0;
        break;
      }
      if (x->maybe_mapped()) {
        mapped_first = std::min(mapped_first, x->mapped_first());
        mapped_last = std::max(mapped_last, x->mapped_last());
      }
      RunList::unlink(x);
      x->flags = static_cast<uint16_t>(x->flags & ~kPgLru);
      end = x->end();
      n += take;
      folios -= take;
      x = next;
      if (!x || x->as() != &as || x->start != end || x->order != order ||
          (x->flags & (kPgDirty | kPgWorkingset)) != same) {
        break;
      }
    }
    const uint64_t pages = n * e;
    if (k.tracing()) {
      for (pgoff_t h = start; h < end; h += e) {
        k.trace(
            {.kind = TraceKind::kDeleteFromPageCache, .ino = as.ino(), .index = h, .order = order});
      }
    }
    k.vmstat().inc(VmEvent::pgscan_file, pages);
    k.vmstat().inc(VmEvent::pgsteal_file, pages);
    uint64_t mapped = 0;
    const uint64_t dirtied =
        unmap_folios(k, as, start, n, order, mapped_first, mapped_last, &mapped);
    const uint64_t written = (same & kPgDirty) ? pages : dirtied * e;
    if (written) k.vmstat().inc(VmEvent::pgpgout, written * (kPageSize / 1024));
    lv.nr_inactive -= pages;
    k.vmstat().inc(VmEvent::ra_wasted_evicted, partial ? as.runs()->erase_front(start, partial, end)
                                                       : as.runs()->erase_range(start, end));
    if (shadows) {
      as.runs()->add_shadows(start, end, order, lv.nonresident_age, static_cast<uint32_t>(e),
                             same & kPgWorkingset);
      lv.nonresident_age += static_cast<uint32_t>(pages);
    }
    as.add_cached(-static_cast<int64_t>(pages));
    k.charge(-static_cast<int64_t>(pages));
    k.vmstat().inc(VmEvent::pages_evicted, pages);
    k.reclaim_work(n, pages, mapped, order);
    freed += pages;
    r = x;
  }
  return freed;
}

// Does to the first q folios of the stretch what the per-folio loop does
// to each of them in turn. Returns the pages freed.
uint64_t apply(Kernel& k, const Stretch& st, uint64_t q) {
  Lruvec& lv = k.lruvec();
  if (st.fate == Fate::kEvict) return evict_runs(k, st.run, q, /*shadows=*/true);
  FolioRun* r = take_front(st.run, q);
  const uint64_t pages = r->nr_pages();
  const uint16_t f = r->flags;
  auto with = [f](uint16_t set, uint16_t clear) {
    return static_cast<uint16_t>((f & ~clear) | set);
  };
  if (st.fate != Fate::kStayActive && st.fate != Fate::kDeactivate) {
    k.vmstat().inc(VmEvent::pgscan_file, pages);
  }
  if (st.fate != Fate::kRotate) clear_young(*r, q);
  switch (st.fate) {
    case Fate::kRotate:
      move_to_head(lv, r, f);
      return 0;
    case Fate::kKeep:
      move_to_head(lv, r, with(kPgReferenced, 0));
      k.vmstat().inc(VmEvent::pgrotated, pages);
      return 0;
    case Fate::kActivate:
      move_to_head(lv, r, with(kPgActive, kPgReferenced));
      k.vmstat().inc(VmEvent::pgactivate, pages);
      return 0;
    case Fate::kEvict:
      return 0;  // above
    case Fate::kStayActive:
      move_to_head(lv, r, f);
      return 0;
    case Fate::kDeactivate:
      move_to_head(lv, r, with(kPgWorkingset, kPgActive));
      k.vmstat().inc(VmEvent::pgdeactivate, pages);
      return 0;
  }
  return 0;
}

// The most folios of a stretch, at most q, that the loop takes one after
// another before inactive_is_low() is true at the top of an iteration
// (the first folio's check is behind: the caller made it): each evicted
// folio takes e pages off the inactive list, each activated one moves them
// to the active list, a rotated one changes neither. inactive_is_low()
// only grows truer as they do.
uint64_t balanced_steps(const Lruvec& lv, uint64_t e, uint64_t q, Fate fate) {
  const uint64_t off = fate == Fate::kEvict || fate == Fate::kActivate ? e : 0;
  const uint64_t on = fate == Fate::kActivate ? e : 0;
  auto low_after = [&](uint64_t i) {
    return inactive_is_low_at(lv.nr_inactive - i * off, lv.nr_active + i * on);
  };
  if (q <= 1 || !low_after(q - 1)) return q;
  uint64_t ok = 0, bad = q - 1;  // low_after(ok) is false, low_after(bad) true
  while (bad - ok > 1) {
    const uint64_t mid = ok + (bad - ok) / 2;
    (low_after(mid) ? bad : ok) = mid;
  }
  return bad;
}

void shrink_active_list_runs(Kernel& k, uint64_t nr_to_scan) {
  Lruvec& lv = k.lruvec();
  uint64_t scanned = 0;
  while (scanned < nr_to_scan && !lv.active_runs.empty()) {
    const Stretch st = active_stretch(lv);
    const uint64_t e = st.run->folio_pages();
    const uint64_t q = std::min(st.folios, (nr_to_scan - scanned + e - 1) / e);
    apply(k, st, q);
    scanned += q * e;
  }
}

void reclaim_for_runs(Kernel& k, uint64_t nr) {
  Lruvec& lv = k.lruvec();
  uint64_t futile = 0;  // pages scanned since the last one was freed
  while (k.nr_charged() + nr > k.capacity_pages()) {
    if (inactive_is_low(lv)) shrink_active_list_runs(k, kSwapClusterMax);
    if (lv.nr_inactive == 0) {
      if (lv.nr_active == 0) break;  // nothing reclaimable: shmem/anon only
      shrink_active_list_runs(k, kSwapClusterMax);
      continue;
    }
    const uint64_t limit = 2 * (lv.nr_inactive + lv.nr_active) + kSwapClusterMax;
    const Stretch st = inactive_stretch(lv);
    if (st.folios == 0) {  // the folio at EOF, as the per-folio loop takes it
      uint64_t scanned = 0;
      if (shrink_one_inactive(k, &scanned)) {
        futile = 0;
      } else if ((futile += scanned) > limit) {
        break;
      }
      continue;
    }
    const uint64_t e = st.run->folio_pages();
    uint64_t q = st.folios;
    if (st.fate == Fate::kEvict) {
      const uint64_t over = k.nr_charged() + nr - k.capacity_pages();
      q = balanced_steps(lv, e, std::min(q, (over + e - 1) / e), st.fate);
      apply(k, st, q);
      futile = 0;
      continue;
    }
    // Nothing freed: the loop gives up once the futile scans pass the limit
    // (the lists' total does not change as these folios move).
    q = balanced_steps(lv, e, std::min(q, (limit - futile) / e + 1), st.fate);
    apply(k, st, q);
    if ((futile += q * e) > limit) break;
  }
  k.set_reclaim_gave_up(k.nr_charged() + nr > k.capacity_pages());
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

uint64_t evict_folio(Kernel& k, AddressSpace& as, pgoff_t head, bool shadow, bool* unmapped) {
  const uint64_t nr = as.folio_nr_pages(head);
  const uint64_t in_file = std::min<uint64_t>(nr, as.nr_pages() - head);
  // try_to_unmap()
  const bool had_ptes = as.folio_mapped(head) && unmap_folio(k, as, head);
  if (unmapped) *unmapped = had_ptes;
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
  return in_file;
}

uint64_t plan_bulk_reclaim(Kernel& k, uint64_t nr, uint64_t count, BulkReclaim* plan) {
  *plan = BulkReclaim{};
  plan->nr = nr;
  plan->excess = static_cast<int64_t>(k.nr_charged()) - static_cast<int64_t>(k.capacity_pages());
  if (plan->excess + static_cast<int64_t>(count * nr) <= 0) return count;  // no reclaim at all
  // The insertions that fit without reclaim.
  const uint64_t free_inserts = plan->excess < 0 ? static_cast<uint64_t>(-plan->excess) / nr : 0;
  Lruvec& lv = k.lruvec();
  // The tail run must be one the loop frees folio after folio, and not the
  // list's newest (the insertions could merge into it).
  if (lv.inactive_runs.empty() || lv.inactive_runs.oldest() == lv.inactive_runs.newest()) {
    return free_inserts;
  }
  const uint64_t needed = (static_cast<uint64_t>(plan->excess + static_cast<int64_t>(count * nr)));
  const Stretch st = inactive_stretch(lv, lv.inactive_runs.newest(), needed);
  if (st.fate != Fate::kEvict || st.folios == 0) return free_inserts;
  plan->tail = st.run;
  plan->folio_pages = st.run->folio_pages();
  // The most insertions whose evictions the stretch holds.
  const int64_t room = static_cast<int64_t>(st.folios * plan->folio_pages) - plan->excess;
  if (room <= 0) return free_inserts;
  return std::max(free_inserts, std::min<uint64_t>(count, static_cast<uint64_t>(room) / nr));
}

bool bulk_reclaim_keeps_balance(const Kernel& k, const BulkReclaim& plan, uint64_t m,
                                uint64_t activated) {
  if (plan.evictions(m) == 0) return true;  // reclaim never looks
  const Lruvec& lv = k.lruvec();
  const uint64_t active_max = lv.nr_active + activated * plan.nr;
  if (active_max == 0) return true;
  // Before each eviction the inactive list holds more than
  // inactive + capacity - charged - nr - (pages activated) pages: the
  // insertions so far that stayed inactive are on it, the evictions so far
  // off it. The active list holds at most active_max, and inactive_is_low()
  // is false while inactive x ratio >= active (the ratio only grows).
  const int64_t low_bound = static_cast<int64_t>(lv.nr_inactive) - plan.excess -
                            static_cast<int64_t>(plan.nr + activated * plan.nr);
  if (low_bound <= 0) return false;
  const uint64_t inactive = static_cast<uint64_t>(low_bound);
  const uint64_t gb = (inactive + lv.nr_active) >> (30 - kPageShift);
  const uint64_t ratio = gb ? static_cast<uint64_t>(std::sqrt(static_cast<double>(10 * gb))) : 1;
  return inactive * ratio >= active_max;
}

void bulk_evict(Kernel& k, FolioRun* r, uint64_t folios) {
  // The tracepoints come from the caller, in order with its insertions.
  Tracer* tracer = k.tracer();
  k.set_tracer(nullptr);
  evict_runs(k, r, folios, /*shadows=*/false);
  k.set_tracer(tracer);
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
  k.cpu_work(CpuCost::evict_folio_ns);  // the task's own: fadvise, madvise, truncate
  return true;
}

void reclaim_for(Kernel& k, uint64_t nr) {
  if (k.runs()) return reclaim_for_runs(k, nr);
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
