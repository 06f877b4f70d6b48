#include "mm/invariants.h"

#include <string>
#include <unordered_set>

namespace faultline::mm {
namespace {

constexpr size_t kMaxReported = 8;  // the first few say what went wrong

struct Report {
  std::vector<std::string> out;
  void add(std::string s) {
    if (out.size() < kMaxReported) out.push_back(std::move(s));
  }
};

std::string at(const AddressSpace& as, pgoff_t i) {
  return "ino " + std::to_string(as.ino()) + " index " + std::to_string(i);
}

// Folios are naturally aligned and cover whole ranges of one order; a slot
// holds a folio or a shadow, never both; tmpfs keeps no shadows; the
// cached count is the folios' pages. Returns the resident folios' heads.
std::vector<pgoff_t> check_folios(const AddressSpace& as, Report& r) {
  std::vector<pgoff_t> heads;
  uint64_t cached = 0;
  pgoff_t next = 0;  // the first index after the previous folio
  as.for_each_folio([&](pgoff_t h, unsigned order, uint16_t) {
    const uint64_t nr = uint64_t{1} << order;
    if (h % nr != 0)
      r.add(at(as, h) + ": a folio of order " + std::to_string(order) + " not aligned");
    if (h < next) r.add(at(as, h) + ": overlaps the folio before it");
    next = h + nr;
    for (pgoff_t j = h; j < h + nr && j < as.nr_pages(); ++j) {
      if (!as.present(j) || as.head(j) != h || as.order(j) != order) {
        r.add(at(as, j) + ": inside the folio at " + std::to_string(h) + " but not part of it");
      }
      if (as.has_shadow(j)) r.add(at(as, j) + ": a folio and a shadow entry in one slot");
      ++cached;
    }
    heads.push_back(h);
  });
  if (as.shmem() && as.any_shadow())
    r.add("ino " + std::to_string(as.ino()) + ": a shadow entry in tmpfs");
  if (cached != as.nr_cached_pages()) {
    r.add("ino " + std::to_string(as.ino()) + ": " + std::to_string(cached) +
          " pages in folios, nr_cached_pages says " + std::to_string(as.nr_cached_pages()));
  }
  return heads;
}

// The runs engine's own structure: runs in index order, none empty, each
// on the list its flags name and linked both ways.
void check_runs(const AddressSpace& as, Report& r) {
  const FolioRuns* runs = as.runs();
  if (!runs) return;
  pgoff_t next = 0;
  runs->for_each([&](const FolioRun& f) {
    if (f.nr == 0) r.add(at(as, f.start) + ": an empty run");
    if (f.start < next) r.add(at(as, f.start) + ": a run overlaps the run before it");
    next = f.end();
    if (f.as() != &as) r.add(at(as, f.start) + ": a run that names another inode");
    const bool linked = f.older && f.newer;
    if (((f.flags & kPgLru) != 0) != linked) {
      r.add(at(as, f.start) + ": a run whose PG_lru disagrees with its list links");
    }
    if (linked && (f.older->newer != &f || f.newer->older != &f)) {
      r.add(at(as, f.start) + ": a run whose list neighbours do not link back to it");
    }
  });
  runs->page_bits().for_each([&](uint64_t first, uint64_t last, uint8_t v) {
    // PG_readahead lies on the head of a cached folio.
    if (v & FolioRuns::kMarked) {
      for (pgoff_t p = first; p < last; ++p) {
        const FolioRun* f = runs->find(p);
        if (!f || f->head_of(p) != p) {
          r.add(at(as, p) + ": PG_readahead on a page that is no cached folio's head");
          break;
        }
      }
    }
    // A touch stays marked resident only while its page is cached.
    if (!(v & FolioRuns::kTouchedResident)) return;
    for (pgoff_t p = first; p < last;) {
      const FolioRun* f = runs->find(p);
      if (!f) {
        r.add(at(as, p) + ": a touch marked resident on a page not cached");
        break;
      }
      p = f->end();
    }
  });
}

uint64_t key(uint32_t ino, pgoff_t index) { return (uint64_t{ino} << 40) | index; }

}  // namespace

std::vector<std::string> check_invariants(const Kernel& k, const std::vector<const Mm*>& mms) {
  Report r;
  // The LRU lists: the live entries (lru_pop_tail's test) are exactly the
  // folios flagged PG_lru, each once, on the list PG_active names; the
  // lists' page counts are their live folios' pages.
  std::unordered_set<uint64_t> on_lru;
  const Lruvec& lv = k.lruvec();
  for (const bool active : {false, true}) {
    uint64_t pages = 0;
    (active ? lv.active_runs : lv.inactive_runs).for_each([&](const FolioRun& f) {
      const AddressSpace& as = *f.as();
      for (pgoff_t h = f.start; h < f.end(); h += f.folio_pages()) {
        if (!on_lru.insert(key(as.ino(), h)).second) r.add(at(as, h) + ": on the LRU lists twice");
      }
      if (!(f.flags & kPgLru)) r.add(at(as, f.start) + ": on an LRU list without PG_lru");
      if (((f.flags & kPgActive) != 0) != active) {
        r.add(at(as, f.start) + ": PG_active disagrees with the list it is on");
      }
      pages += f.nr_pages();
    });
    (active ? lv.active : lv.inactive).for_each([&](const LruEntry& e) {
      const AddressSpace* as =
          e.ino < k.address_spaces().size() ? k.address_spaces()[e.ino].get() : nullptr;
      if (!as) {
        r.add("an LRU entry of ino " + std::to_string(e.ino) + ", which does not exist");
        return;
      }
      if (!lru_entry_live(*as, e)) return;  // stale
      if (!on_lru.insert(key(e.ino, e.index)).second) {
        r.add(at(*as, e.index) + ": on the LRU lists twice");
      }
      if (!as->test(e.index, kPgLru)) r.add(at(*as, e.index) + ": on an LRU list without PG_lru");
      if (as->test(e.index, kPgActive) != active) {
        r.add(at(*as, e.index) + ": PG_active disagrees with the list it is on");
      }
      pages += as->folio_nr_pages(e.index);
    });
    if (pages != (active ? lv.nr_active : lv.nr_inactive)) {
      r.add(std::string(active ? "active" : "inactive") + " list: " + std::to_string(pages) +
            " pages in live entries, the count says " +
            std::to_string(active ? lv.nr_active : lv.nr_inactive));
    }
  }
  uint64_t cached = 0;
  uint64_t reclaimable = 0;  // unlocked page-cache pages of regular files
  for (const auto& as : k.address_spaces()) {
    if (!as) continue;
    check_runs(*as, r);
    for (const pgoff_t h : check_folios(*as, r)) {
      const uint64_t in_file = std::min<uint64_t>(as->folio_nr_pages(h), as->nr_pages() - h);
      cached += in_file;
      if (!as->shmem() && !as->test(h, kPgLocked)) reclaimable += in_file;
      const bool listed = on_lru.count(key(as->ino(), h)) > 0;
      if (as->test(h, kPgLru) && !listed) r.add(at(*as, h) + ": PG_lru but on no list");
      // tmpfs folios are swap-backed: the kernel keeps them on the anon
      // LRU, which the model (no swap) does not keep.
      if (!as->shmem() && !as->test(h, kPgLru) && !as->test(h, kPgLocked)) {
        r.add(at(*as, h) + ": resident, unlocked and on no LRU list");
      }
    }
  }
  // The charge covers the page cache.
  if (cached > k.nr_charged()) {
    r.add(std::to_string(cached) + " pages cached but only " + std::to_string(k.nr_charged()) +
          " charged");
  }
  // Every charge is followed by reclaim, which fits it in the capacity
  // (readahead stops when it cannot: __GFP_NORETRY) unless nothing is left
  // that it could free (locked under I/O, tmpfs, anonymous).
  if (k.nr_charged() > k.capacity_pages() && !k.reclaim_gave_up()) {
    r.add(std::to_string(k.nr_charged()) + " pages charged above the capacity of " +
          std::to_string(k.capacity_pages()) + " (" + std::to_string(reclaimable) +
          " reclaimable file pages cached) and reclaim did not run or did not give up");
  }
  // mmap_miss stays within [0, MMAP_LOTSAMISS * 10] (do_sync_mmap_readahead).
  for (const auto& f : k.files()) {
    if (f && f->f_ra.mmap_miss > kMmapLotsamiss * 10) {
      r.add("mmap_miss " + std::to_string(f->f_ra.mmap_miss) + " above MMAP_LOTSAMISS * 10");
    }
  }
  // Page tables: a present PTE of a file mapping that is not a private copy
  // maps a resident page of the file; the RSS counters are the present
  // PTEs by type (file, shmem, anon).
  for (const Mm* mm : mms) {
    int64_t rss[NR_MM_COUNTERS] = {};
    for (const auto& vma : mm->vmas) {
      const AddressSpace* as = vma->vm_file ? vma->vm_file->mapping : nullptr;
      vma->ptes.for_each_set(0, vma->ptes.size(), [&](uint64_t first, uint64_t last, uint8_t pte) {
        for (uint64_t v = first; v < last; ++v) {
          if (vma->pmd_none(v)) {
            r.add("a PTE at page " + std::to_string(v) +
                  " of a VMA whose 2 MiB span has neither a page table nor a PMD mapping");
          }
          if (!(pte & kPtePresent)) continue;
          if (!as || (pte & kPteAnon)) {
            ++rss[MM_ANONPAGES];
            continue;
          }
          const pgoff_t p = vma->vm_pgoff + v;
          if (p >= as->nr_pages() || !as->present(p)) {
            r.add("a present PTE at page " + std::to_string(v) + " of a mapping of ino " +
                  std::to_string(as->ino()) + " maps index " + std::to_string(p) +
                  ", which is not resident");
          } else if (!as->folio_mapped(as->head(p))) {
            r.add(at(*as, as->head(p)) + ": mapped by a PTE but not marked mapped");
          } else if (const FolioRuns* runs = as->runs()) {
            const FolioRun* f = runs->find(p);
            if (p < f->mapped_first() || p >= f->mapped_last()) {
              r.add(at(*as, p) + ": mapped by a PTE outside its run's mapped stretch");
            }
          }
          ++rss[as->shmem() ? MM_SHMEMPAGES : MM_FILEPAGES];
        }
      });
    }
    for (const MmCounter c : {MM_FILEPAGES, MM_ANONPAGES, MM_SHMEMPAGES}) {
      if (rss[c] != mm->rss[c]) {
        r.add("RSS counter " + std::to_string(c) + " is " + std::to_string(mm->rss[c]) +
              ", the page tables map " + std::to_string(rss[c]));
      }
    }
  }
  return r.out;
}

}  // namespace faultline::mm
