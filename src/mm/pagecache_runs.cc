#include "mm/pagecache_runs.h"

#include <absl/container/inlined_vector.h>

#include <algorithm>
#include <iterator>

#include "mm/pagecache.h"

namespace faultline::mm {

FolioRuns::~FolioRuns() {
  for (void* chunk : chunks_) chunk_arena_.deallocate(chunk, kRunChunkBytes, kRunChunkBytes);
}

FolioRun* FolioRuns::alloc() {
  if (!free_) {
    void* chunk = chunk_arena_.allocate(kRunChunkBytes, kRunChunkBytes);
    chunks_.push_back(chunk);
    *static_cast<AddressSpace**>(chunk) = owner_;
    auto* runs = static_cast<FolioRun*>(chunk) + 1;
    for (size_t i = kChunk; i-- > 0;) release(new (&runs[i]) FolioRun);
  }
  FolioRun* r = free_;
  free_ = r->newer;
  r->newer = nullptr;
  return r;
}

void FolioRuns::release(FolioRun* r) {
  if (finger_ == r) finger_ = nullptr;
  *r = FolioRun{};
  r->newer = free_;
  free_ = r;
}

FolioRun* FolioRuns::split(FolioRun* r, pgoff_t at) {
  FAULTLINE_DCHECK(at > r->start && at < r->end());
  FAULTLINE_DCHECK(((at - r->start) & (r->folio_pages() - 1)) == 0);
  const auto left = static_cast<uint32_t>((at - r->start) >> r->order);
  const bool mapped = r->maybe_mapped();
  const pgoff_t mapped_first = r->mapped_first(), mapped_last = r->mapped_last();
  FolioRun* right = alloc();
  *right = *r;
  right->start = at;
  right->nr = r->nr - left;
  right->older = right->newer = nullptr;
  r->nr = left;
  if (mapped) {
    r->set_mapped(mapped_first, mapped_last);
    right->set_mapped(mapped_first, mapped_last);
  }
  runs_.insert(RunRef{at, right});
  if (r->flags & kPgLru) RunList::link_after(r, right);
  return right;
}

FolioRun* FolioRuns::isolate(pgoff_t head) {
  FolioRun* r = find(head);
  FAULTLINE_DCHECK(r && r->head_of(head) == head);
  if (head > r->start) r = split(r, head);
  if (r->nr > 1) split(r, head + r->folio_pages());
  return r;
}

bool FolioRuns::mergeable(const FolioRun& a, const FolioRun& b) const {
  if (a.end() != b.start || a.order != b.order || a.flags != b.flags) return false;
  if (uint64_t{a.nr} + b.nr > UINT32_MAX) return false;
  // On a list: b must be the run just newer than a. Off the lists: only
  // tmpfs folios, which never go on one, are merged (a regular file's folio
  // is off the lists only between two steps of a move).
  return (a.flags & kPgLru) ? a.newer == &b : shmem_;
}

// Merges the run at b into a (a's end is b's start), dropping it; returns
// the entry after b's.
FolioRuns::RunIndex::iterator FolioRuns::absorb(FolioRun* a, RunIndex::iterator b) {
  FolioRun* gone = b->run;
  const bool mapped = a->maybe_mapped() || gone->maybe_mapped();
  const pgoff_t first = a->maybe_mapped() ? a->mapped_first() : gone->mapped_first();
  const pgoff_t last = gone->maybe_mapped() ? gone->mapped_last() : a->mapped_last();
  a->nr += gone->nr;
  if (mapped) a->set_mapped(first, last);
  if (gone->flags & kPgLru) RunList::unlink(gone);
  release(gone);
  return runs_.erase(b);
}

FolioRuns::RunIndex::iterator FolioRuns::merge_at(RunIndex::iterator it) {
  FolioRun* r = it->run;
  auto next = std::next(it);
  if (it != runs_.begin()) {
    FolioRun* left = std::prev(it)->run;
    if (mergeable(*left, *r)) {
      next = absorb(left, it);
      r = left;
    }
  }
  if (next != runs_.end() && mergeable(*r, *next->run)) next = absorb(r, next);
  return next;
}

FolioRun* FolioRuns::merge(FolioRun* r) {
  // Off the lists only tmpfs runs merge (mergeable()): a regular file's
  // run there stays as it is, with no search for its neighbours.
  if (!(r->flags & kPgLru) && !shmem_) return r;
  auto it = runs_.find(r->start);
  FAULTLINE_DCHECK(it != runs_.end() && it->run == r);
  return std::prev(merge_at(it))->run;
}

FolioRun* FolioRuns::merge_next(FolioRun* r) {
  auto it = runs_.find(r->start);
  FAULTLINE_DCHECK(it != runs_.end() && it->run == r);
  auto next = merge_at(it);
  return next == runs_.end() ? nullptr : next->run;
}

FolioRun* FolioRuns::insert_newest(RunList& list, pgoff_t start, uint32_t nr, unsigned order,
                                   uint16_t flags) {
  auto it = emplace_run(start, nr, order, flags);
  list.push_newest(it->run);
  // The fault that read the folios looks them up next.
  finger_ = std::prev(merge_at(it))->run;
  return finger_;
}

void FolioRuns::note_mapped(pgoff_t first, pgoff_t last) {
  for (FolioRun* r = next_run(first); r && r->start < last; r = next_run(r->end())) {
    r->note_mapped(first, last);
    if (r->end() >= last) break;
  }
}

FolioRun* FolioRuns::insert(pgoff_t start, uint32_t nr, unsigned order, uint16_t flags) {
  return emplace_run(start, nr, order, flags)->run;
}

FolioRuns::RunIndex::iterator FolioRuns::emplace_run(pgoff_t start, uint32_t nr, unsigned order,
                                                     uint16_t flags) {
  if (flags & kPgReadahead) {
    for (uint32_t j = 0; j < nr; ++j) set_marked(start + (pgoff_t{j} << order), true);
  }
  flags = static_cast<uint16_t>(flags & ~(kPgMapped | kPgReadahead));
  FolioRun* r = alloc();
  r->start = start;
  r->nr = nr;
  r->order = static_cast<uint8_t>(order);
  r->flags = flags;
  auto [it, added] = runs_.insert(RunRef{start, r});
  FAULTLINE_DCHECK(added);
  return it;
}

namespace {

// Counts the pages of kPgRaUnused folios in runs of the index, in order,
// that no kTouchedResident stretch meets; the stretches come in order too.
// After the runs of the index, the first tail_nr folios of `tail`, if given.
template <typename It>
class UnusedPages {
 public:
  UnusedPages(It from, It to, pgoff_t limit, const FolioRun* tail = nullptr, uint64_t tail_nr = 0)
      : it_(from), to_(to), limit_(limit), tail_(tail), tail_nr_(tail_nr) {}

  void used(pgoff_t a, pgoff_t b) {
    while (more() && part().end() <= a) next_run();
    while (more()) {
      const Part r = part();
      if (r.start >= b) break;
      const pgoff_t lo = std::max(a, r.start), hi = std::min(b, r.end());
      const uint64_t fa = std::max<uint64_t>((lo - r.start) >> r.order, next_);
      const uint64_t fb = ((hi - 1 - r.start) >> r.order) + 1;
      if (fb > fa) nused_ += fb - fa;
      next_ = std::max(next_, fb);
      if (b < r.end()) break;  // the next stretch may lie in r too
      next_run();
    }
  }
  uint64_t total() {
    while (more()) next_run();
    return unused_;
  }

 private:
  // The folios of a run that are counted.
  struct Part {
    pgoff_t start;
    uint64_t nr;
    unsigned order;
    uint16_t flags;
    pgoff_t end() const { return start + (nr << order); }
  };
  bool more() const { return it_ != to_ || tail_; }
  Part part() const {
    const FolioRun& r = it_ != to_ ? *it_->run : *tail_;
    return {r.start, it_ != to_ ? r.nr : tail_nr_, r.order, r.flags};
  }
  void next_run() {
    const Part r = part();
    if ((r.flags & kPgRaUnused) && r.start < limit_) {
      uint64_t pages = (r.nr - nused_) << r.order;
      // Only a run's last folio may cross the limit (EOF): counted inside it.
      if (r.end() > limit_ && next_ < r.nr) pages -= r.end() - limit_;
      unused_ += pages;
    }
    nused_ = next_ = 0;
    if (it_ != to_) {
      ++it_;
    } else {
      tail_ = nullptr;
    }
  }

  It it_, to_;
  pgoff_t limit_;
  const FolioRun* tail_;
  uint64_t tail_nr_;
  uint64_t unused_ = 0;
  // The folios of the current run met so far: nused_, all below next_.
  uint64_t nused_ = 0, next_ = 0;
};

template <typename It>
UnusedPages(It, It, pgoff_t) -> UnusedPages<It>;
template <typename It>
UnusedPages(It, It, pgoff_t, const FolioRun*, uint64_t) -> UnusedPages<It>;

}  // namespace

uint64_t FolioRuns::drop_page_bits(pgoff_t start, pgoff_t end, RunIndex::iterator from,
                                   RunIndex::iterator to, const FolioRun* tail, uint64_t tail_nr) {
  UnusedPages count(from, to, nr_pages_, tail, tail_nr);
  page_bits_.transform(
      start, end, [](uint8_t v) { return static_cast<uint8_t>(v & ~(kTouchedResident | kMarked)); },
      [&](uint64_t a, uint64_t b, uint8_t v) {
        if (v & kTouchedResident) count.used(a, b);
      });
  return count.total();
}

uint64_t FolioRuns::erase(FolioRun* r) {
  FAULTLINE_DCHECK(!(r->flags & kPgLru) && !r->older && !r->newer);
  auto it = runs_.find(r->start);
  const uint64_t unused = drop_page_bits(r->start, r->end(), it, std::next(it));
  runs_.erase(it);
  release(r);
  return unused;
}

uint64_t FolioRuns::erase_range(pgoff_t start, pgoff_t end) {
  // One search; the runs that go are stepped over (they are visited below).
  auto from = runs_.lower_bound(start), to = from;
  while (to != runs_.end() && to->start < end) ++to;
  const uint64_t unused = drop_page_bits(start, end, from, to);
  for (auto it = from; it != to; ++it) {
    FAULTLINE_DCHECK(!(it->run->flags & kPgLru) && !it->run->older);
    release(it->run);
  }
  runs_.erase(from, to);
  return unused;
}

uint64_t FolioRuns::erase_front(pgoff_t start, FolioRun* x, pgoff_t cut) {
  FAULTLINE_DCHECK(start <= x->start && cut > x->start && cut < x->end());
  FAULTLINE_DCHECK(((cut - x->start) & (x->folio_pages() - 1)) == 0);
  // The runs before x are the few of one eviction: x's entry is a step or
  // two past the first.
  auto from = runs_.lower_bound(start), xit = from;
  while (xit->run != x) {
    FAULTLINE_DCHECK(xit != runs_.end() && xit->start < x->start);
    ++xit;
  }
  const uint64_t gone = (cut - x->start) >> x->order;
  const uint64_t unused = drop_page_bits(start, cut, from, xit, x, gone);
  for (auto it = from; it != xit; ++it) {
    FAULTLINE_DCHECK(!(it->run->flags & kPgLru) && !it->run->older);
    release(it->run);
  }
  // x keeps its folios from cut on, and its place on its list; its entry
  // moves up to cut, past nothing (the entries before it go).
  const bool mapped = x->maybe_mapped();
  const pgoff_t mapped_first = x->mapped_first(), mapped_last = x->mapped_last();
  x->start = cut;
  x->nr = static_cast<uint32_t>(x->nr - gone);
  if (mapped) x->set_mapped(mapped_first, mapped_last);
  xit->start = cut;
  runs_.erase(from, xit);
  return unused;
}

uint64_t FolioRuns::touch_cached(pgoff_t first, pgoff_t last) {
  constexpr uint8_t kUsed = kTouched | kTouchedResident;
  uint64_t before = 0;   // pages touched already
  uint64_t settled = 0;  // pages that hold kUsed already
  absl::InlinedVector<std::pair<pgoff_t, pgoff_t>, 4> marked;
  page_bits_.for_each(first, last, [&](uint64_t a, uint64_t b, uint8_t v) {
    FAULTLINE_DCHECK(find(a) && find(b - 1));
    if (v & kTouched) before += b - a;
    if ((v & kUsed) == kUsed) settled += b - a;
    if (v & kMarked) marked.emplace_back(a, b);
  });
  if (settled < last - first) {
    // Every page becomes kUsed, keeping its marker.
    page_bits_.assign(first, last, kUsed);
    for (const auto& [a, b] : marked) page_bits_.assign(a, b, kUsed | kMarked);
  }
  return (last - first) - before;
}

bool FolioRuns::used(pgoff_t first, pgoff_t last) const {
  bool any = false;
  page_bits_.for_each(first, last,
                      [&](uint64_t, uint64_t, uint8_t v) { any |= (v & kTouchedResident) != 0; });
  return any;
}

void FolioRuns::forget_use(pgoff_t first, pgoff_t last) {
  page_bits_.transform(first, last,
                       [](uint8_t v) { return static_cast<uint8_t>(v & ~kTouchedResident); });
}

void FolioRuns::reset_touches() {
  page_bits_.transform(0, util::RunMap<uint8_t>::kLimit,
                       [](uint8_t v) { return static_cast<uint8_t>(v & kMarked); });
  for (auto& [s, r] : runs_) r->flags = static_cast<uint16_t>(r->flags & ~kPgRaUnused);
}

uint64_t FolioRuns::nr_ra_unused_pages(pgoff_t limit) const {
  UnusedPages count(runs_.begin(), runs_.end(), limit);
  page_bits_.for_each(0, limit, [&](uint64_t a, uint64_t b, uint8_t v) {
    if (v & kTouchedResident) count.used(a, b);
  });
  return count.total();
}

bool FolioRuns::shadow_at(pgoff_t i, uint32_t* age, bool* ws) const {
  auto it = shadows_.upper_bound(i);
  if (it == shadows_.begin()) return false;
  --it;
  if (i >= it->end()) return false;
  *age = it->age(i);
  *ws = it->ws();
  return true;
}

void FolioRuns::add_shadows(pgoff_t start, pgoff_t end, unsigned order, uint32_t base,
                            uint32_t stride, bool ws) {
  if (start >= end) return;
  ShadowRun n = ShadowRun::make(start, end, base, stride, 0, order, ws);
  // Joined to the run before it and the run after it where the ages go on,
  // in place: the entries keep their order.
  auto next = shadows_.lower_bound(start);
  FAULTLINE_DCHECK(next == shadows_.end() || next->start >= end);
  const bool join_next = next != shadows_.end() && shadows_continue(n, *next);
  if (join_next) n.set_end(next->end());
  if (next != shadows_.begin()) {
    const ShadowRun& prev = *std::prev(next);
    FAULTLINE_DCHECK(prev.end() <= start);
    if (shadows_continue(prev, n)) {
      prev.set_end(n.end());
      if (join_next) shadows_.erase(next);
      return;
    }
  }
  if (join_next) {
    next->assign(n);  // it now starts at start, still after prev
    return;
  }
  shadows_.insert(next, n);
}

bool FolioRuns::take_shadows(pgoff_t first, pgoff_t last, uint32_t* age, bool* ws) {
  auto it = shadows_.upper_bound(first);
  if (it != shadows_.begin()) {
    auto prev = std::prev(it);
    if (prev->end() > first) it = prev;
  }
  if (it == shadows_.end() || it->start >= last) return false;
  *age = it->age(std::max(it->start, first));
  *ws = it->ws();
  // The runs that meet the range go; their parts before and after it stay,
  // cut in place (the entries keep their order).
  if (it->start < first) {
    const ShadowRun s = *it;
    it->set_end(first);
    if (s.end() > last) {  // it held the whole range: its part after it is a run of its own
      shadows_.insert(std::next(it), s.from(last));
      return true;
    }
    ++it;
  }
  auto to = it;
  for (; to != shadows_.end() && to->start < last; ++to) {
    if (to->end() > last) {
      to->assign(to->from(last));
      break;
    }
  }
  shadows_.erase(it, to);
  return true;
}

}  // namespace faultline::mm
