#include "mm/pagecache.h"

#include <algorithm>

#include "mm/mm.h"

namespace faultline::mm {

AddressSpace::AddressSpace(uint32_t ino, uint64_t size_bytes, bool shmem, unsigned max_order,
                           ModelEngine engine)
    : ino_(ino),
      size_(size_bytes),
      shmem_(shmem),
      max_order_(max_order),
      nr_pages_((size_bytes + kPageSize - 1) >> kPageShift),
      slots_(engine == ModelEngine::kPages ? nr_pages_ : 0) {
  FAULTLINE_CHECK(size_bytes <= kMaxFileBytes);
  if (engine == ModelEngine::kRuns) runs_ = std::make_unique<FolioRuns>(this, nr_pages_, shmem);
}

bool AddressSpace::has_shadow(pgoff_t i) const {
  if (runs_) {
    uint32_t age;
    bool ws;
    return runs_->shadow_at(i, &age, &ws);
  }
  return slots_[i].flags & kPgShadow;
}

bool AddressSpace::any_shadow() const {
  if (runs_) return runs_->nr_shadow_runs() > 0;
  bool any = false;
  slots_.for_each_leaf([&](pgoff_t, const Slot* leaf, uint64_t n) {
    for (uint64_t j = 0; j < n; ++j) any |= (leaf[j].flags & kPgShadow) != 0;
  });
  return any;
}

uint32_t AddressSpace::shadow_age(pgoff_t i) const {
  if (runs_) {
    uint32_t age = 0;
    bool ws;
    runs_->shadow_at(i, &age, &ws);
    return age;
  }
  return slots_[i].shadow;
}

const FolioRun* AddressSpace::find_run(pgoff_t i) const { return runs_->find(i); }

uint16_t AddressSpace::folio_flags_runs(pgoff_t head, uint16_t want) const {
  const FolioRun* r = runs_->find(head);
  if (!r) return 0;
  uint16_t flags = r->flags;
  if ((want & kPgRaUnused) && (flags & kPgRaUnused) && runs_->used(head, head + r->folio_pages())) {
    flags &= ~kPgRaUnused;
  }
  if ((want & kPgReadahead) && runs_->marked(head)) flags |= kPgReadahead;
  return flags;
}

void AddressSpace::mark_mapped(pgoff_t first, pgoff_t last) {
  if (runs_) {
    runs_->note_mapped(first, last);
    return;
  }
  for (pgoff_t p = first; p < last;) {
    const pgoff_t h = head(p);
    set(h, kPgMapped);
    p = h + folio_nr_pages(h);
  }
}

bool AddressSpace::mapped_runs(pgoff_t first, pgoff_t last) const {
  // Only the run's mapped stretch can be (a folio lies in one run).
  if (const FolioRun* r = runs_->find(first)) {
    first = std::max(first, r->mapped_first());
    last = std::min(last, r->mapped_last());
    if (first >= last) return false;
  }
  for (const Vma* vma : i_mmap_) {
    const pgoff_t lo = std::max(first, vma->vm_pgoff);
    const pgoff_t hi = std::min(last, vma->vm_pgoff + vma->nr_pages());
    if (lo >= hi) continue;
    bool mapped = false;
    vma->ptes.for_each_set(lo - vma->vm_pgoff, hi - vma->vm_pgoff,
                           [&](uint64_t, uint64_t, uint8_t pte) {
                             mapped |= (pte & kPtePresent) && !(pte & kPteAnon);
                           });
    if (mapped) return true;
  }
  return false;
}

void AddressSpace::set_runs(pgoff_t head, uint16_t bit, bool on) {
  // PG_mapped is the page tables' to say; PG_readahead lives beside the
  // runs. A folio made kPgRaUnused is unused whatever touched it before.
  bit = static_cast<uint16_t>(bit & ~kPgMapped);
  if ((bit & kPgRaUnused) && on) runs_->forget_use(head, head + folio_nr_pages(head));
  if (bit & kPgReadahead) {
    runs_->set_marked(head, on);
    bit = static_cast<uint16_t>(bit & ~kPgReadahead);
  }
  if (!bit) return;
  FolioRun* r = runs_->find(head);
  FAULTLINE_DCHECK(r && r->head_of(head) == head);
  const uint16_t flags =
      on ? static_cast<uint16_t>(r->flags | bit) : static_cast<uint16_t>(r->flags & ~bit);
  if (flags == r->flags) return;
  r = runs_->isolate(head);
  r->flags = flags;
  runs_->merge(r);
}

void AddressSpace::clear_range(pgoff_t start, pgoff_t end, uint16_t bit) {
  if (!runs_) {
    for (pgoff_t i = start; i < end; i += folio_nr_pages(i)) clear(i, bit);
    return;
  }
  for (FolioRun* r = runs_->next_run(start); r && r->start < end;) {
    if (!(r->flags & bit)) {
      r = runs_->next_run_after(r);
      continue;
    }
    if (r->start < start) r = runs_->split(r, start);
    if (r->end() > end) runs_->split(r, end);
    r->flags = static_cast<uint16_t>(r->flags & ~bit);
    r = runs_->merge_next(r);
  }
}

void AddressSpace::set_range(pgoff_t start, pgoff_t end, uint16_t bit) {
  FAULTLINE_DCHECK(!(bit & kPgRaUnused));  // would leave touches behind (set_runs)
  if (!runs_) {
    for (pgoff_t i = next_present(start, end - 1); i != kNoIndex;) {
      const pgoff_t h = head(i);
      set(h, bit);
      i = h + folio_nr_pages(h) < end ? next_present(h + folio_nr_pages(h), end - 1) : kNoIndex;
    }
    return;
  }
  for (FolioRun* r = runs_->next_run(start); r && r->start < end;) {
    if (r->flags & bit) {
      r = runs_->next_run_after(r);
      continue;
    }
    const pgoff_t a = r->head_of(std::max(start, r->start));
    const pgoff_t b = std::min(r->end(), r->head_of(end - 1) + r->folio_pages());
    if (a > r->start) r = runs_->split(r, a);
    if (b < r->end()) runs_->split(r, b);
    r->flags = static_cast<uint16_t>(r->flags | bit);
    r = runs_->merge_next(r);
  }
}

bool AddressSpace::touch_runs(pgoff_t i) { return runs_->touch(i); }

uint64_t AddressSpace::touch_cached(pgoff_t first, pgoff_t last) {
  if (runs_) return runs_->touch_cached(first, last);
  uint64_t first_touches = 0;
  for (pgoff_t i = first; i < last; ++i) first_touches += touch(i);
  return first_touches;
}

// Windows of at most a few thousand pages: slots never written read as
// zeros, and whole leaves never written are skipped.
pgoff_t AddressSpace::next_present(pgoff_t index, pgoff_t end) const {
  if (end >= nr_pages_) end = nr_pages_ - 1;
  if (nr_pages_ == 0 || index > end) return kNoIndex;
  if (runs_) {
    const FolioRun* r = const_cast<FolioRuns*>(runs_.get())->next_run(index);
    if (!r) return kNoIndex;
    const pgoff_t i = std::max(r->start, index);
    return i <= end ? i : kNoIndex;
  }
  for (pgoff_t i = index; i <= end;) {
    const pgoff_t w = slots_.next_written(i);
    if (w != i) {
      i = w;
      continue;
    }
    const pgoff_t leaf_end = std::min<pgoff_t>(slots_.next_leaf(i), end + 1);
    const Slot* leaf = slots_.leaf(i);
    for (; i < leaf_end; ++i) {
      if (leaf[i & Slots::kLeafMask].flags & kPgPresent) return i;
    }
  }
  return kNoIndex;
}

pgoff_t AddressSpace::next_absent(pgoff_t index, pgoff_t end) const {
  if (runs_) {
    // Runs that touch end to end are all cached.
    for (const FolioRun* r = runs_->find(index); r && index <= end; r = runs_->find(index)) {
      index = r->end();
    }
    return std::min(index, end + 1);
  }
  if (nr_pages_ == 0) return std::min(index, end + 1);
  end = std::min(end, nr_pages_ - 1);
  while (index <= end) {
    const Slot* leaf = slots_.leaf(index);
    if (!leaf) break;  // nothing cached in it
    const pgoff_t leaf_end = std::min<pgoff_t>(slots_.next_leaf(index), end + 1);
    for (; index < leaf_end; ++index) {
      if (!(leaf[index & Slots::kLeafMask].flags & kPgPresent)) return index;
    }
  }
  return std::min(index, end + 1);
}

bool AddressSpace::any_present(pgoff_t index, uint64_t nr) const {
  if (runs_) return nr && next_present(index, index + nr - 1) != kNoIndex;
  for (pgoff_t i = index; i < index + nr && i < nr_pages_; ++i) {
    if (slots_[i].flags & kPgPresent) return true;
  }
  return false;
}

bool AddressSpace::install(pgoff_t index, unsigned order, uint32_t* shadow_age, bool* shadow_ws) {
  const uint64_t nr = uint64_t{1} << order;
  FAULTLINE_DCHECK(index % nr == 0);
  FAULTLINE_DCHECK(index + nr <= round_up(nr_pages_, nr));
  FAULTLINE_DCHECK(order <= kPmdShift - kPageShift);  // within one leaf of slots_
  // A large folio may extend past EOF (its tail slots are beyond nr_pages_);
  // only the in-file part is tracked, and counted.
  nr_cached_ += in_file(index, nr);
  if (runs_) {
    FAULTLINE_DCHECK(!any_present(index, nr));
    const bool found =
        runs_->take_shadows(index, std::min(index + nr, nr_pages_), shadow_age, shadow_ws);
    runs_->insert(index, 1, order, kPgPresent);
    return found;
  }
  bool found = false;
  (void)slots_.mut(index);  // the folio's leaf, written from here on
  for (pgoff_t i = index; i < index + nr && i < nr_pages_; ++i) {
    Slot& s = slots_.in_written(i);
    FAULTLINE_DCHECK(!(s.flags & kPgPresent));
    if (!found && (s.flags & kPgShadow)) {
      found = true;
      *shadow_age = s.shadow;
      *shadow_ws = s.flags & kPgShadowWs;
    }
    s.flags = kPgPresent;
    s.order = static_cast<uint8_t>(order);
  }
  return found;
}

void AddressSpace::remove(pgoff_t head, bool shadow, uint32_t age, bool workingset) {
  const uint64_t nr = folio_nr_pages(head);
  nr_cached_ -= in_file(head, nr);
  if (runs_) {
    FolioRun* r = runs_->isolate(head);
    const unsigned order = r->order;
    runs_->erase(r);
    if (shadow) {
      runs_->add_shadows(head, std::min(head + nr, nr_pages_), order, age,
                         static_cast<uint32_t>(nr), workingset);
    }
    return;
  }
  const uint16_t sh =
      shadow ? static_cast<uint16_t>(kPgShadow | (workingset ? kPgShadowWs : 0)) : uint16_t{0};
  for (pgoff_t i = head; i < head + nr && i < nr_pages_; ++i) {
    Slot& s = slots_.in_written(i);
    s = Slot{sh, 0, s.touched, age, 0};
  }
}

void AddressSpace::reset_touches() {
  if (runs_) {
    runs_->reset_touches();
    return;
  }
  slots_.for_each_leaf([](pgoff_t, Slot* leaf, uint64_t n) {
    for (uint64_t j = 0; j < n; ++j) {
      leaf[j].touched = 0;
      leaf[j].flags = static_cast<uint16_t>(leaf[j].flags & ~kPgRaUnused);
    }
  });
}

uint64_t AddressSpace::nr_ra_unused_pages() const {
  if (runs_) return runs_->nr_ra_unused_pages(nr_pages_);
  uint64_t n = 0;
  for_each_folio([&](pgoff_t head, unsigned order, uint16_t flags) {
    if (flags & kPgRaUnused) n += in_file(head, uint64_t{1} << order);
  });
  return n;
}

}  // namespace faultline::mm
