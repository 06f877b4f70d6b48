#include "mm/pagecache_runs.h"

#include <algorithm>
#include <iterator>

#include "mm/pagecache.h"

namespace faultline::mm {

FolioRun* FolioRuns::split(FolioRun* r, pgoff_t at) {
  FAULTLINE_DCHECK(at > r->start && at < r->end());
  FAULTLINE_DCHECK(((at - r->start) & (r->folio_pages() - 1)) == 0);
  const auto left = static_cast<uint32_t>((at - r->start) >> r->order);
  FolioRun n = *r;
  n.start = at;
  n.nr = r->nr - left;
  n.older = n.newer = nullptr;
  r->nr = left;
  auto it = runs_.emplace_hint(std::next(runs_.find(r->start)), at, n);
  FolioRun* right = &it->second;
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

FolioRun* FolioRuns::merge(FolioRun* r) {
  auto it = runs_.find(r->start);
  if (it != runs_.begin()) {
    FolioRun* left = &std::prev(it)->second;
    if (mergeable(*left, *r)) {
      left->nr += r->nr;
      if (r->flags & kPgLru) RunList::unlink(r);
      runs_.erase(it);
      r = left;
      it = runs_.find(r->start);
    }
  }
  auto next = std::next(it);
  if (next != runs_.end() && mergeable(*r, next->second)) {
    FolioRun* right = &next->second;
    r->nr += right->nr;
    if (right->flags & kPgLru) RunList::unlink(right);
    runs_.erase(next);
  }
  return r;
}

FolioRun* FolioRuns::insert(pgoff_t start, uint32_t nr, unsigned order, uint16_t flags) {
  FolioRun n;
  n.start = start;
  n.nr = nr;
  n.order = static_cast<uint8_t>(order);
  n.flags = flags;
  n.as = owner_;
  auto [it, added] = runs_.emplace(start, n);
  FAULTLINE_DCHECK(added);
  return &it->second;
}

void FolioRuns::erase(FolioRun* r) {
  FAULTLINE_DCHECK(!(r->flags & kPgLru) && !r->older && !r->newer);
  runs_.erase(r->start);
}

bool FolioRuns::shadow_at(pgoff_t i, uint32_t* age, bool* ws) const {
  auto it = shadows_.upper_bound(i);
  if (it == shadows_.begin()) return false;
  --it;
  if (i >= it->second.end) return false;
  *age = it->second.age(i);
  *ws = it->second.ws;
  return true;
}

const FolioRuns::ShadowRun* FolioRuns::next_shadow(pgoff_t i, pgoff_t end) const {
  auto it = shadows_.upper_bound(i);
  if (it != shadows_.begin()) {
    auto prev = std::prev(it);
    if (prev->second.end > i) it = prev;
  }
  if (it == shadows_.end() || it->first >= end) return nullptr;
  return &it->second;
}

void FolioRuns::add_shadows(pgoff_t start, pgoff_t end, unsigned order, uint32_t base,
                            uint32_t stride, bool ws) {
  if (start >= end) return;
  ShadowRun n{start, end, start, base, stride, static_cast<uint8_t>(order), ws};
  auto it = shadows_.lower_bound(start);
  FAULTLINE_DCHECK(it == shadows_.end() || it->first >= end);
  if (it != shadows_.begin()) {
    auto prev = std::prev(it);
    FAULTLINE_DCHECK(prev->second.end <= start);
    if (shadows_continue(prev->second, n)) {
      prev->second.end = end;
      if (it != shadows_.end() && shadows_continue(prev->second, it->second)) {
        prev->second.end = it->second.end;
        shadows_.erase(it);
      }
      return;
    }
  }
  if (it != shadows_.end() && shadows_continue(n, it->second)) {
    n.end = it->second.end;
    it = shadows_.erase(it);
  }
  shadows_.emplace_hint(it, start, n);
}

bool FolioRuns::take_shadows(pgoff_t first, pgoff_t last, uint32_t* age, bool* ws) {
  auto it = shadows_.upper_bound(first);
  if (it != shadows_.begin()) {
    auto prev = std::prev(it);
    if (prev->second.end > first) it = prev;
  }
  bool found = false;
  while (it != shadows_.end() && it->first < last) {
    ShadowRun& s = it->second;
    if (!found) {
      found = true;
      *age = s.age(std::max(s.start, first));
      *ws = s.ws;
    }
    if (s.end > last) {
      // The part after the range stays.
      ShadowRun after = s;
      after.start = last;
      shadows_.emplace_hint(std::next(it), last, after);
    }
    if (s.start < first) {
      s.end = first;  // the part before the range stays
      ++it;
    } else {
      it = shadows_.erase(it);
    }
  }
  return found;
}

uint64_t FolioRuns::bytes() const {
  constexpr uint64_t kNode = 32;  // a tree node's colour and three pointers
  return runs_.size() * (sizeof(std::pair<pgoff_t, FolioRun>) + kNode) +
         shadows_.size() * (sizeof(std::pair<pgoff_t, ShadowRun>) + kNode) + touched_.bytes();
}

}  // namespace faultline::mm
