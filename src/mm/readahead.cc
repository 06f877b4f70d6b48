#include "mm/readahead.h"

#include <absl/container/inlined_vector.h>

#include <algorithm>
#include <vector>

#include "mm/vmscan.h"

namespace faultline::mm {
namespace {

// A contiguous run of folios allocated by one readahead call, waiting for
// read_pages() to submit it as one batch.
// Its folios stay locked until then, so reclaim cannot take them.
struct Batch {
  pgoff_t start = 0;
  uint64_t nr_pages = 0;
  void add(pgoff_t index, uint64_t nr) {
    if (nr_pages == 0) start = index;
    nr_pages += nr;
  }
};

// read_pages(): hands the batch to ->readahead; one bio stream, counted at
// submit_bio in pgpgin. Nobody waits here: a window cut by cached folios is
// read in several batches, each submitted in turn, and a synchronous reader
// sleeps on the lock of the folio it wants once the window is read
// (filemap_fault, filemap_read).
void read_pages(Kernel& k, const ReadaheadControl& rac, Batch& b) {
  if (b.nr_pages == 0) return;
  AddressSpace& as = *rac.mapping;
  as.clear_range(b.start, b.start + b.nr_pages, kPgLocked);  // the reads complete (folio_end_read)
  count_read(k, rac.cause, b.nr_pages);
  k.vmstat().inc(VmEvent::read_bios);
  k.submit_read(as.ino(), b.start, b.nr_pages, /*sync=*/false);
  b.nr_pages = 0;
}

// A folio read by readahead carries kPgRaUnused until the workload touches
// it; one read only because it was needed never counts as waste.
uint16_t ra_unused_flag(const ReadaheadControl& rac) {
  return rac.cause == ReadCause::kSingle ? uint16_t{0} : uint16_t{kPgRaUnused};
}

uint64_t ractl_max_pages(const Kernel& k, const FileRaState& ra, uint64_t req_count) {
  uint64_t max_pages = ra.ra_pages;
  // Within the limits of the device, a large request is read in one go.
  if (req_count > max_pages && k.bdi().io_pages > max_pages) {
    max_pages = std::min<uint64_t>(req_count, k.bdi().io_pages);
  }
  return max_pages;
}

// page_cache_prev_miss(): the last index at or before `index` with no folio,
// scanning back at most max_scan slots; kNoIndex if the scan passed index 0.
// If no hole is found in max_scan slots the last index scanned is returned
// (so the caller sees a run of max_scan - 1 cached pages), as 6.18 does.
pgoff_t page_cache_prev_miss(const AddressSpace& as, pgoff_t index, uint64_t max_scan) {
  pgoff_t i = index;
  for (uint64_t n = 0; n < max_scan; ++n) {
    i = index - n;
    if (!as.present(i)) return i;
    if (i == 0) return kNoIndex;
  }
  return i;
}

// page_cache_next_miss(): the first index at or after `index` with no folio.
pgoff_t page_cache_next_miss(const AddressSpace& as, pgoff_t index, uint64_t max_scan) {
  for (uint64_t n = 0; n < max_scan; ++n, ++index) {
    if (index >= as.nr_pages() || !as.present(index)) return index;
  }
  return kNoIndex;
}

void trace_ra(Kernel& k, TraceKind kind, const ReadaheadControl& rac, uint64_t req) {
  const FileRaState& ra = *rac.ra;
  if (k.tracing())
    k.trace({.kind = kind,
             .ino = rac.mapping->ino(),
             .index = rac.index,
             .req_count = static_cast<uint32_t>(req),
             .ra_start = ra.start,
             .ra_size = ra.size,
             .ra_async_size = ra.async_size,
             .ra_pages = ra.ra_pages,
             .mmap_miss = ra.mmap_miss});
}

}  // namespace

VmEvent read_cause_event(ReadCause c) {
  switch (c) {
    case ReadCause::kReadaround:
      return VmEvent::pgpgin_readaround;
    case ReadCause::kSyncRa:
      return VmEvent::pgpgin_sync_ra;
    case ReadCause::kAsyncRa:
      return VmEvent::pgpgin_async_ra;
    case ReadCause::kReadRa:
      return VmEvent::pgpgin_read_ra;
    case ReadCause::kSingle:
      return VmEvent::pgpgin_single;
    case ReadCause::kWillneed:
      return VmEvent::pgpgin_willneed;
  }
  return VmEvent::pgpgin_single;
}

void count_read(Kernel& k, ReadCause cause, uint64_t nr_pages) {
  const uint64_t kb = nr_pages * (kPageSize / 1024);
  k.vmstat().inc(VmEvent::pgpgin, kb);
  k.vmstat().inc(read_cause_event(cause), kb);
}

AddFolio filemap_add_folio(Kernel& k, AddressSpace& as, pgoff_t index, unsigned order,
                           uint16_t extra_flags, bool gfp_write, bool gfp_noretry) {
  const uint64_t nr = uint64_t{1} << order;
  if (as.any_present(index, nr)) return AddFolio::kExists;
  const uint64_t in_file = std::min<uint64_t>(nr, as.nr_pages() - index);
  // mem_cgroup_charge() before the folio is in the page cache or on the
  // LRU: reclaim makes room first, so it never takes the folio being added.
  reclaim_for(k, in_file);
  if (gfp_noretry && k.nr_charged() + in_file > k.capacity_pages()) {
    k.vmstat().inc(VmEvent::ra_nomem);
    return AddFolio::kNoMem;
  }
  uint32_t shadow_age = 0;
  bool shadow_ws = false;
  const bool had_shadow = as.install(index, order, &shadow_age, &shadow_ws);
  as.set(index, static_cast<uint16_t>(kPgUptodate | extra_flags));
  if (as.shmem()) as.set(index, kPgSwapBacked);
  k.charge(static_cast<int64_t>(in_file));
  k.vmstat().inc(VmEvent::pages_inserted, in_file);
  k.cpu_work(CpuCost::add_folio_ns);
  if (k.tracing())
    k.trace({.kind = TraceKind::kAddToPageCache, .ino = as.ino(), .index = index, .order = order});
  // Write insertions (__GFP_WRITE) do not count as refaults.
  if (had_shadow && !as.shmem() && !gfp_write) {
    workingset_refault(k, as, index, shadow_age, shadow_ws);
    // Every insertion but a write's is read in the same call (read_pages or
    // the one-folio read), so this is the refault part of that read's pgpgin.
    k.vmstat().inc(VmEvent::pgpgin_refault, in_file * (kPageSize / 1024));
  }
  folio_add_lru(k, as, index);
  return AddFolio::kAdded;
}

namespace {

// The runs engine's insertion of many folios at once (add_folios_bulk).
//
// Insertion j (from 0) of m folios of nr pages at index + j x nr is, one
// folio at a time: reclaim_for (evictions from the inactive tail run, the
// BulkReclaim plan), install (the first shadow in the folio's pages),
// workingset_refault (activation when the refault distance is at most the
// active list), folio_add_lru. With D_j the distance of folio j's shadow
// from the clock before the first insertion, the clock at insertion j has
// moved by the e pages of each folio evicted so far and by the nr pages of
// each folio activated so far; the active list has grown by the latter
// too, so they cancel: folio j is activated exactly when
// D_j + e x evictions(j) <= nr_active at the start. Along a shadow run D_j
// falls and evictions(j) rises, so bounds on a range of folios settle it for
// the whole range, or split it in two.
struct InsertGroup {
  uint64_t first, last;  // insertions [first, last)
  bool shadow;           // their folios had shadow entries (refaults)
  bool activated;        // ...close enough to be activated
  bool ws;               // ...with the workingset bit
};

class BulkInsert {
 public:
  BulkInsert(const Kernel& k, const BulkReclaim& plan, pgoff_t index, unsigned order)
      : plan_(plan),
        index_(index),
        order_(order),
        nr_(uint64_t{1} << order),
        clock_(k.lruvec().nonresident_age),
        active_(k.lruvec().nr_active) {}

  // Starts again, the plan and the lists having changed (reclaim_for).
  void restart(const Kernel& k) {
    clock_ = k.lruvec().nonresident_age;
    active_ = k.lruvec().nr_active;
    groups_.clear();
    shadows_ = false;
  }

  // Evictions before insertion j (from 0) is charged.
  uint64_t before(uint64_t j) const { return plan_.evictions(j + 1); }

  // Sorts the m insertions into groups; returns how many it could (the
  // rest needs the per-folio path: a clock that could wrap).
  uint64_t classify(const FolioRuns& runs, uint64_t m) {
    const pgoff_t end = index_ + m * nr_;
    uint64_t done = 0;  // insertions classified
    bool wraps = false;
    runs.for_each_shadow(index_, end, [&](const FolioRuns::ShadowRun& s) {
      shadows_ = true;
      if (done >= m) return false;
      // The insertions whose first shadow lies in s.
      const uint64_t ja = std::max<uint64_t>(done, (std::max(s.start, index_) - index_) >> order_);
      const uint64_t jb = std::min<uint64_t>(m, (s.end() - index_ + nr_ - 1) >> order_);
      if (ja >= jb) return true;
      if (ja > done) add({done, ja, false, false, false});
      const uint64_t d_first = distance(s, ja);
      const uint64_t span =
          static_cast<uint64_t>(s.folio_no(page(s, jb - 1)) - s.folio_no(page(s, ja))) * s.stride;
      // The distances must not wrap, within the run or as the clock moves.
      if (span > d_first ||
          d_first + before(m - 1) * plan_.folio_pages + m * nr_ >= (uint64_t{1} << 32)) {
        wraps = true;
        return false;
      }
      decide(s, ja, jb);
      done = jb;
      return true;
    });
    if (wraps) return done;
    if (done < m) add({done, m, false, false, false});
    return m;
  }

  const absl::InlinedVector<InsertGroup, 4>& groups() const { return groups_; }
  // Whether classify() met a shadow entry in the insertions' range.
  bool met_shadows() const { return shadows_; }
  // Drops the insertions from m on.
  void truncate(uint64_t m) {
    while (!groups_.empty() && groups_.back().first >= m) groups_.pop_back();
    if (!groups_.empty()) groups_.back().last = std::min(groups_.back().last, m);
  }
  uint64_t activated() const {
    uint64_t n = 0;
    for (const InsertGroup& g : groups_) n += g.activated ? g.last - g.first : 0;
    return n;
  }

 private:
  // The first page of insertion j's folio that s holds.
  pgoff_t page(const FolioRuns::ShadowRun& s, uint64_t j) const {
    return std::max(s.start, index_ + j * nr_);
  }
  uint64_t distance(const FolioRuns::ShadowRun& s, uint64_t j) const {
    return static_cast<uint32_t>(clock_ - s.age(page(s, j)));
  }
  void decide(const FolioRuns::ShadowRun& s, uint64_t ja, uint64_t jb) {
    const uint64_t e = plan_.folio_pages;
    const uint64_t lo = distance(s, jb - 1) + e * before(ja);
    const uint64_t hi = distance(s, ja) + e * before(jb - 1);
    if (hi <= active_ || lo > active_ || jb - ja == 1) {
      add({ja, jb, true, hi <= active_, s.ws()});
      return;
    }
    const uint64_t mid = ja + (jb - ja) / 2;
    decide(s, ja, mid);
    decide(s, mid, jb);
  }
  void add(InsertGroup g) {
    if (!groups_.empty()) {
      InsertGroup& b = groups_.back();
      if (b.last == g.first && b.shadow == g.shadow && b.activated == g.activated && b.ws == g.ws) {
        b.last = g.last;
        return;
      }
    }
    groups_.push_back(g);
  }

  const BulkReclaim& plan_;
  pgoff_t index_;
  unsigned order_;
  uint64_t nr_;
  uint32_t clock_;
  uint64_t active_;
  absl::InlinedVector<InsertGroup, 4> groups_;
  bool shadows_ = false;
};

// The evictions of a BulkReclaim plan, run by run: eviction k (from 0)
// frees the folio at segment(k).start + (k - segment(k).first) x e.
struct EvictedRuns {
  struct Segment {
    FolioRuns* runs;
    AddressSpace* as;
    pgoff_t start;
    uint64_t first, end;  // evictions [first, end)
    unsigned order;
    bool ws;
  };
  absl::InlinedVector<Segment, 4> segments;
  uint64_t e = 1;

  EvictedRuns(const Lruvec& lv, FolioRun* tail, uint64_t folios, uint64_t folio_pages)
      : e(folio_pages) {
    uint64_t k = 0;
    for (FolioRun* r = tail; r && k < folios;
         r = const_cast<RunList&>(lv.inactive_runs).newer_than(r)) {
      const uint64_t n = std::min<uint64_t>(r->nr, folios - k);
      segments.push_back({r->as()->runs(), r->as(), r->start, k, k + n, r->order,
                          (r->flags & kPgWorkingset) != 0});
      k += n;
    }
  }
  const Segment& of(uint64_t k) const {
    size_t i = 0;
    while (segments[i].end <= k) ++i;
    return segments[i];
  }
  pgoff_t page(uint64_t k) const {
    const Segment& g = of(k);
    return g.start + (k - g.first) * e;
  }
};

// The shadows of evictions [ka, kb), the first with age `age`, each next
// `step` later, gathered into as few shadow runs as the ages allow.
class ShadowWriter {
 public:
  explicit ShadowWriter(const EvictedRuns& ev) : ev_(ev) {}
  ~ShadowWriter() { flush(); }

  void add(uint64_t ka, uint64_t kb, uint32_t age, uint32_t step) {
    for (const EvictedRuns::Segment& g : ev_.segments) {
      const uint64_t a = std::max(ka, g.first), b = std::min(kb, g.end);
      if (a < b) add_piece(&g, a, b, static_cast<uint32_t>(age + (a - ka) * step), step);
    }
  }
  void flush() {
    if (k1_ > k0_) {
      seg_->runs->add_shadows(seg_->start + (k0_ - seg_->first) * ev_.e,
                              seg_->start + (k1_ - seg_->first) * ev_.e, seg_->order, base_,
                              stride_, seg_->ws);
    }
    k0_ = k1_ = 0;
  }

 private:
  void add_piece(const EvictedRuns::Segment* g, uint64_t ka, uint64_t kb, uint32_t age,
                 uint32_t step) {
    const uint64_t have = k1_ - k0_, more = kb - ka;
    // One eviction has no step of its own: it is e, however it came.
    if (more == 1) step = static_cast<uint32_t>(ev_.e);
    if (have && g == seg_ && ka == k1_) {
      // One stride for both, fixed by whichever holds two or more.
      const uint32_t st = have >= 2   ? stride_
                          : more >= 2 ? step
                                      : static_cast<uint32_t>(age - base_);
      if ((more < 2 || step == st) && static_cast<uint32_t>(base_ + have * st) == age) {
        stride_ = st;
        k1_ = kb;
        return;
      }
    }
    flush();
    seg_ = g;
    k0_ = ka;
    k1_ = kb;
    base_ = age;
    stride_ = step;
  }

  const EvictedRuns& ev_;
  // The pending run: evictions [k0_, k1_) of segment seg_, the first with
  // age base_, each next stride_ later.
  const EvictedRuns::Segment* seg_ = nullptr;
  uint64_t k0_ = 0, k1_ = 0;
  uint32_t base_ = 0, stride_ = 0;
};

// The runs engine: adds up to `count` folios of `order` from `index` at once
// (none of them cached, all inside EOF), exactly as `count` calls of
// filemap_add_folio(..., flags, gfp_noretry) would one after another, as
// far as each one's reclaim evicts only whole folios of the inactive tail
// runs (BulkReclaim) and inactive_is_low() stays false; when the next
// one's reclaim is more than that, it makes that reclaim first. Returns how
// many it added (0: the next one must go through filemap_add_folio); *stop
// is kNoMem where that reclaim could not make room. `uncached`: the caller
// knows that no page of the folios is cached.
uint64_t add_folios_bulk(Kernel& k, AddressSpace& as, pgoff_t index, unsigned order, uint64_t count,
                         uint16_t flags, pgoff_t marker, AddFolio* stop, bool uncached) {
  FolioRuns& runs = *as.runs();
  const uint64_t nr = uint64_t{1} << order;
  count = std::min<uint64_t>(count, index < as.nr_pages() ? (as.nr_pages() - index) >> order : 0);
  if (count == 0 || as.shmem()) return 0;
  FAULTLINE_DCHECK(!uncached || as.next_present(index, index + count * nr - 1) == kNoIndex);
  if (!uncached) {
    const pgoff_t cached = as.next_present(index, index + count * nr - 1);
    if (cached != kNoIndex) count = (cached - index) >> order;  // the folios before it
  }
  if (count == 0) return 0;
  BulkReclaim plan;
  uint64_t m = plan_bulk_reclaim(k, nr, count, &plan);
  // The next insertion's reclaim is more than evictions from the tail, or
  // may find the inactive list low (and deactivate): it is made as
  // reclaim_for makes it (the readahead charge's __GFP_NORETRY failing as
  // filemap_add_folio's does), then the folio is added alone, reclaim
  // having made room.
  auto reclaim_alone = [&] {
    reclaim_for(k, nr);
    if (k.nr_charged() + nr > k.capacity_pages()) {
      k.vmstat().inc(VmEvent::ra_nomem);
      *stop = AddFolio::kNoMem;
      return false;
    }
    m = plan_bulk_reclaim(k, nr, 1, &plan);
    FAULTLINE_DCHECK(m == 1 && plan.evictions(1) == 0);
    return true;
  };
  bool alone = m == 0;
  if (alone && !reclaim_alone()) return 0;
  BulkInsert insert(k, plan, index, order);
  for (;;) {
    m = insert.classify(runs, m);
    insert.truncate(m);
    if (m == 0) return 0;  // a clock that could wrap: filemap_add_folio's
    while (m && !bulk_reclaim_keeps_balance(k, plan, m, insert.activated())) {
      m /= 2;
      insert.truncate(m);
    }
    // Without evictions (alone) the balance holds.
    if (m || alone) break;
    alone = true;
    if (!reclaim_alone()) return 0;
    insert.restart(k);
  }
  FAULTLINE_DCHECK(m > 0);

  Lruvec& lv = k.lruvec();
  const uint64_t evicted = plan.evictions(m);
  const uint64_t e = plan.folio_pages;
  const EvictedRuns victims(lv, plan.tail, evicted, e);
  if (k.tracing()) {
    // The kernel's order: each insertion's reclaim, then the insertion.
    for (uint64_t j = 0, ev = 0; j < m; ++j) {
      for (; ev < insert.before(j); ++ev) {
        const EvictedRuns::Segment& g = victims.of(ev);
        k.trace({.kind = TraceKind::kDeleteFromPageCache,
                 .ino = g.as->ino(),
                 .index = g.start + (ev - g.first) * e,
                 .order = g.order});
      }
      k.trace({.kind = TraceKind::kAddToPageCache,
               .ino = as.ino(),
               .index = index + j * nr,
               .order = order});
    }
  }
  // The evictions, with the clock as it stood at each: moved on by e per
  // eviction and by nr per activation before it.
  const uint32_t clock = lv.nonresident_age;
  uint64_t moved = 0;  // pages activated so far
  if (evicted) {
    ShadowWriter sw(victims);
    for (const InsertGroup& g : insert.groups()) {
      const uint64_t ka = g.first ? insert.before(g.first - 1) : 0;
      const uint64_t kb = insert.before(g.last - 1);
      if (!g.activated) {
        sw.add(ka, kb, static_cast<uint32_t>(clock + ka * e + moved), static_cast<uint32_t>(e));
      } else {
        // Each insertion's evictions, then its activation moves the clock.
        for (uint64_t j = g.first; j < g.last;) {
          const uint64_t ja = j ? insert.before(j - 1) : 0;
          const uint64_t jb = insert.before(j);
          sw.add(ja, jb, static_cast<uint32_t>(clock + ja * e + moved), static_cast<uint32_t>(e));
          moved += nr;
          ++j;
          if (nr == e && jb - ja == 1 && j < g.last) {
            // Over the limit, with folios of one size: each insertion from
            // here evicts one folio, and its activation moves the clock by
            // nr before the next eviction. The ages step by e + nr.
            const uint64_t n = g.last - j;
            FAULTLINE_DCHECK(insert.before(g.last - 1) == jb + n);
            sw.add(jb, jb + n, static_cast<uint32_t>(clock + jb * e + moved),
                   static_cast<uint32_t>(e + nr));
            moved += n * nr;
            j = g.last;
          }
        }
        continue;
      }
    }
    sw.flush();
    bulk_evict(k, plan.tail, evicted);
  }
  k.set_reclaim_gave_up(false);
  // The insertions: refaults counted, each group onto its list.
  // Their shadow entries go. Eviction frees cached folios only and left
  // none among these: where classify() met none, there are none.
  FAULTLINE_DCHECK(insert.met_shadows() || [&] {
    bool none = true;
    runs.for_each_shadow(index, index + m * nr,
                         [&](const FolioRuns::ShadowRun&) { return none = false; });
    return none;
  }());
  if (insert.met_shadows()) {
    uint32_t age;
    bool ws;
    runs.take_shadows(index, index + m * nr, &age, &ws);
  }
  uint64_t refaulted = 0, activated = 0, restored = 0;
  for (const InsertGroup& g : insert.groups()) {
    const uint64_t folios = g.last - g.first;
    if (g.shadow) refaulted += folios;
    uint16_t f = static_cast<uint16_t>(kPgPresent | kPgUptodate | flags | kPgLru);
    if (g.activated) {
      activated += folios;
      f |= kPgActive;
      if (g.ws) {
        f |= kPgWorkingset;
        restored += folios;
      }
    }
    runs.insert_newest(g.activated ? lv.active_runs : lv.inactive_runs, index + g.first * nr,
                       static_cast<uint32_t>(folios), order, f);
    (g.activated ? lv.nr_active : lv.nr_inactive) += folios * nr;
  }
  if (marker >= index && marker < index + m * nr) runs.set_marked(marker, true);
  lv.nonresident_age = static_cast<uint32_t>(clock + evicted * e + activated * nr);
  const uint64_t pages = m * nr;
  as.add_cached(static_cast<int64_t>(pages));
  k.charge(static_cast<int64_t>(pages));
  k.vmstat().inc(VmEvent::pages_inserted, pages);
  k.cpu_work(CpuCost::add_folio_ns, m);
  k.vmstat().inc(VmEvent::workingset_refault_file, refaulted * nr);
  k.vmstat().inc(VmEvent::pgpgin_refault, refaulted * nr * (kPageSize / 1024));
  k.vmstat().inc(VmEvent::workingset_activate_file, activated * nr);
  k.vmstat().inc(VmEvent::workingset_restore_file, restored * nr);
  return m;
}

}  // namespace

uint64_t add_readahead_folios(Kernel& k, AddressSpace& as, pgoff_t index, unsigned order,
                              uint64_t count, uint16_t flags, pgoff_t marker, AddFolio* stop,
                              bool uncached) {
  uint64_t added = 0;
  while (added < count) {
    const pgoff_t at = index + (added << order);
    if (as.runs()) {
      // What lies past `at` stays uncached: only these insertions add pages.
      AddFolio st = AddFolio::kAdded;
      const uint64_t n =
          add_folios_bulk(k, as, at, order, count - added, flags, marker, &st, uncached);
      added += n;
      if (st != AddFolio::kAdded) {
        *stop = st;
        return added;
      }
      if (n) continue;
    }
    const AddFolio r =
        filemap_add_folio(k, as, at, order, flags | (at == marker ? kPgReadahead : 0), false,
                          /*gfp_noretry=*/true);
    if (r != AddFolio::kAdded) {
      *stop = r;
      return added;
    }
    ++added;
  }
  *stop = AddFolio::kAdded;
  return added;
}

uint64_t get_init_ra_size(uint64_t size, uint64_t max) {
  uint64_t newsize = roundup_pow_of_two(size);
  if (newsize <= max / 32) {
    newsize *= 4;
  } else if (newsize <= max / 4) {
    newsize *= 2;
  } else {
    newsize = max;
  }
  return newsize;
}

uint64_t get_next_ra_size(const FileRaState& ra, uint64_t max) {
  const uint64_t cur = ra.size;
  if (cur < max / 16) return 4 * cur;
  if (cur <= max / 2) return 2 * cur;
  return max;
}

void page_cache_ra_unbounded(Kernel& k, ReadaheadControl& rac, uint64_t nr_to_read,
                             uint64_t lookahead_size) {
  AddressSpace& as = *rac.mapping;
  const pgoff_t index = rac.index;
  if (k.tracing())
    k.trace({.kind = TraceKind::kPageCacheRaUnbounded,
             .ino = as.ino(),
             .index = index,
             .end = nr_to_read,
             .req_count = static_cast<uint32_t>(lookahead_size),
             .mmap_miss = rac.ra->mmap_miss});
  // The marker goes on the first page of the lookahead part.
  const uint64_t mark = lookahead_size <= nr_to_read ? nr_to_read - lookahead_size : kNoIndex;
  Batch batch;
  for (uint64_t i = 0; i < nr_to_read;) {
    const pgoff_t idx = index + i;
    if (as.present(idx)) {
      read_pages(k, rac, batch);  // already cached: submit what we have, skip it
      i = as.next_absent(idx, index + nr_to_read - 1) - index;
      continue;
    }
    // The pages up to the next cached one, each added as one folio (the
    // one at the marker with PG_readahead).
    uint64_t n = nr_to_read - i;
    const pgoff_t cached = as.next_present(idx, idx + n - 1);
    if (cached != kNoIndex) n = cached - idx;
    const pgoff_t marker = mark >= i && mark < i + n ? index + mark : kNoIndex;
    AddFolio stop;
    const uint64_t added = add_readahead_folios(k, as, idx, 0, n, kPgLocked | ra_unused_flag(rac),
                                                marker, &stop, /*uncached=*/true);
    if (added) batch.add(idx, added);
    i += added;
    if (stop == AddFolio::kNoMem) break;  // read what is allocated, stop there
    if (stop == AddFolio::kExists) {
      read_pages(k, rac, batch);
      ++i;
    }
  }
  read_pages(k, rac, batch);
}

void do_page_cache_ra(Kernel& k, ReadaheadControl& rac, uint64_t nr_to_read,
                      uint64_t lookahead_size) {
  const AddressSpace& as = *rac.mapping;
  if (as.i_size() == 0) return;
  const pgoff_t end_index = as.nr_pages() - 1;
  if (rac.index > end_index) return;
  // Don't read past the page containing the last byte of the file.
  if (nr_to_read > end_index - rac.index) nr_to_read = end_index - rac.index + 1;
  page_cache_ra_unbounded(k, rac, nr_to_read, lookahead_size);
}

void force_page_cache_ra(Kernel& k, ReadaheadControl& rac, uint64_t nr_to_read) {
  const FileRaState& ra = *rac.ra;
  const uint64_t max_pages = std::max<uint64_t>(k.bdi().io_pages, ra.ra_pages);
  nr_to_read = std::min(nr_to_read, max_pages);
  k.vmstat().inc(VmEvent::ra_forced);
  while (nr_to_read) {
    const uint64_t this_chunk = std::min<uint64_t>((2u << 20) / kPageSize, nr_to_read);
    do_page_cache_ra(k, rac, this_chunk, 0);
    rac.index += this_chunk;
    nr_to_read -= this_chunk;
  }
}

void page_cache_ra_order(Kernel& k, ReadaheadControl& rac, FileRaState& ra) {
  AddressSpace& as = *rac.mapping;
  const pgoff_t start = rac.index;
  pgoff_t index = start;
  if (!as.large_folio_support()) {
    ra.order = 0;
    if (k.tracing())
      k.trace({.kind = TraceKind::kPageCacheRaOrder,
               .ino = as.ino(),
               .index = index,
               .order = 0,
               .ra_start = ra.start,
               .ra_size = ra.size,
               .ra_async_size = ra.async_size,
               .ra_pages = ra.ra_pages,
               .mmap_miss = ra.mmap_miss});
    do_page_cache_ra(k, rac, ra.size, ra.async_size);
    return;
  }
  if (as.nr_pages() == 0) return;
  const pgoff_t limit = std::min<pgoff_t>(as.nr_pages() - 1, index + ra.size - 1);
  const pgoff_t mark = index + ra.size - ra.async_size;
  unsigned new_order = ra.order;
  if (k.profile().ra_order_plus2 && new_order < as.max_order()) new_order += 2;
  new_order = std::min<unsigned>(as.max_order(), new_order);
  new_order = std::min(new_order, ilog2(ra.size));
  ra.order = static_cast<uint16_t>(new_order);
  if (k.tracing())
    k.trace({.kind = TraceKind::kPageCacheRaOrder,
             .ino = as.ino(),
             .index = index,
             .order = new_order,
             .ra_start = ra.start,
             .ra_size = ra.size,
             .ra_async_size = ra.async_size,
             .ra_pages = ra.ra_pages,
             .mmap_miss = ra.mmap_miss});
  Batch batch;
  bool failed = false;
  while (index <= limit) {
    unsigned order = new_order;
    // Align with smaller pages if needed.
    if (index & ((uint64_t{1} << order) - 1)) order = static_cast<unsigned>(__builtin_ctzll(index));
    // Don't allocate pages past EOF.
    while (order > 0 && index + (uint64_t{1} << order) - 1 > limit) --order;
    // The folios of this order up to the limit, when each of them gets this
    // order as the loop would give it (an aligned index keeps new_order);
    // otherwise this one folio. The one at the marker gets PG_readahead.
    const uint64_t n = order == new_order ? (limit + 1 - index) >> order : 1;
    AddFolio stop;
    const uint64_t added =
        add_readahead_folios(k, as, index, order, n, kPgLocked | ra_unused_flag(rac),
                             round_down(mark, uint64_t{1} << order), &stop);
    // Every folio added lies inside the limit, so inside EOF.
    if (added) batch.add(index, added << order);
    index += added << order;
    if (stop != AddFolio::kAdded) {
      failed = true;
      break;
    }
  }
  read_pages(k, rac, batch);
  // If there were already pages in the page cache, fall back to order-0
  // readahead for the rest of the window.
  if (failed) {
    rac.index = index;
    do_page_cache_ra(k, rac, ra.size - (index - start), ra.async_size);
  }
}

void page_cache_sync_ra(Kernel& k, ReadaheadControl& rac, uint64_t req_count) {
  FileRaState& ra = *rac.ra;
  const pgoff_t index = rac.index;
  trace_ra(k, TraceKind::kPageCacheSyncRa, rac, req_count);  // the state before the call
  bool do_forced_ra = rac.file && (rac.file->f_mode & FMODE_RANDOM);
  if (ra.ra_pages == 0) {
    // Readahead is off: the read is limited to the one page the caller
    // needs (read(2) of one folio without readahead).
    req_count = 1;
    do_forced_ra = true;
    rac.cause = ReadCause::kSingle;
  }
  if (do_forced_ra) {
    force_page_cache_ra(k, rac, req_count);
    return;
  }
  const uint64_t max_pages = ractl_max_pages(k, ra, req_count);
  const uint64_t prev_index = static_cast<uint64_t>(ra.prev_pos) >> kPageShift;
  // Start of file, oversized read, or sequential cache miss: trivial case.
  if (index == 0 || req_count > max_pages || index - prev_index <= 1) {
    ra.start = index;
    ra.size = static_cast<uint32_t>(get_init_ra_size(req_count, max_pages));
    ra.async_size = static_cast<uint32_t>(ra.size > req_count ? ra.size - req_count : ra.size >> 1);
  } else {
    // Query the page cache and look for the traces (cached history pages)
    // that a sequential stream would leave behind.
    const pgoff_t miss = page_cache_prev_miss(*rac.mapping, index - 1, max_pages);
    uint64_t contig_count = miss == kNoIndex ? index : index - miss - 1;
    // Standalone, small random read: read as is, and do not pollute the
    // readahead state.
    if (contig_count <= req_count) {
      do_page_cache_ra(k, rac, req_count, 0);
      return;
    }
    // File cached from the beginning: it is a strong indication of
    // long-run stream (or whole-file read).
    if (miss == kNoIndex) contig_count *= 2;
    ra.start = index;
    ra.size = static_cast<uint32_t>(std::min(contig_count + req_count, max_pages));
    ra.async_size = 1;
  }
  ra.order = 0;
  k.vmstat().inc(VmEvent::ra_sync);
  rac.index = ra.start;
  page_cache_ra_order(k, rac, ra);
}

void page_cache_async_ra(Kernel& k, ReadaheadControl& rac, pgoff_t folio_head, uint64_t req_count) {
  FileRaState& ra = *rac.ra;
  AddressSpace& as = *rac.mapping;
  if (ra.ra_pages == 0) return;
  trace_ra(k, TraceKind::kPageCacheAsyncRa, rac, req_count);  // the state before the call
  // Same bit is used for PG_readahead and PG_reclaim: a folio under
  // writeback keeps it. The model has no writeback in flight.
  as.clear(folio_head, kPgReadahead);
  const uint64_t max_pages = ractl_max_pages(k, ra, req_count);
  const pgoff_t index = rac.index;
  const pgoff_t expected =
      round_down(ra.start + ra.size - ra.async_size, as.folio_nr_pages(folio_head));
  if (index == expected) {
    // It's the expected callback index: assume sequential access and ramp up.
    ra.start += ra.size;
    // In the case of MADV_HUGEPAGE, the actual size might exceed the readahead window.
    ra.size = static_cast<uint32_t>(std::max<uint64_t>(ra.size, get_next_ra_size(ra, max_pages)));
  } else {
    // Hit a marked folio without valid readahead state, e.g. interleaved
    // reads: query the page cache and look for the first hole.
    const pgoff_t start = page_cache_next_miss(as, index + 1, max_pages);
    if (start == kNoIndex || start - index > max_pages) return;
    ra.start = start;
    ra.size = static_cast<uint32_t>(start - index);  // old async_size
    ra.size += static_cast<uint32_t>(req_count);
    ra.size = static_cast<uint32_t>(get_next_ra_size(ra, max_pages));
  }
  if (k.profile().ra_order_plus2) {
    ra.order = static_cast<uint16_t>(as.order(folio_head));  // ra_order adds the 2
  } else {
    ra.order = static_cast<uint16_t>(ra.order + 2);
  }
  // End the window on a natural boundary of the folio order, if that keeps it non-empty.
  const unsigned align_order =
      std::min<unsigned>(ra.order, static_cast<unsigned>(__builtin_ctzll(max_pages)));
  const uint64_t align = uint64_t{1} << align_order;
  const uint64_t end = ra.start + ra.size;
  const uint64_t aligned_end = round_down(end, align);
  if (aligned_end > ra.start) ra.size -= static_cast<uint32_t>(end - aligned_end);
  ra.async_size = ra.size;
  k.vmstat().inc(VmEvent::ra_async);
  rac.index = ra.start;
  page_cache_ra_order(k, rac, ra);
}

}  // namespace faultline::mm
