// mm_model.h — a small modelled machine for the mm/ unit tests.
//
// One Kernel, one file (its AddressSpace and one open struct file), one
// process (Mm) and one VMA mapping the file, built from a ModelSetup whose
// defaults are the kernel's. Helpers let a test body read like the
// behaviour it checks: touch pages, put pages in the page cache, read
// counters, look at PTEs and folio flags.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "mm/filemap.h"
#include "mm/madvise.h"
#include "mm/memory.h"
#include "mm/mm.h"
#include "mm/readahead.h"
#include "mm/shmem.h"
#include "mm/trace.h"
#include "mm/vmscan.h"
#include "util/check.h"

namespace faultline::mmtest {

using namespace faultline::mm;  // NOLINT: the fixture speaks the model's vocabulary

// The engine the tests run on: FAULTLINE_MODEL_ENGINE=runs runs every
// test of the model on the runs engine too (ctest registers both).
inline ModelEngine engine() {
  const char* e = std::getenv("FAULTLINE_MODEL_ENGINE");
  return e && std::string_view(e) == "runs" ? ModelEngine::kRuns : ModelEngine::kPages;
}

inline constexpr uint64_t kGiB = uint64_t{1} << 30;
inline constexpr uint64_t kMiB = uint64_t{1} << 20;

struct ModelSetup {
  Release release = Release::k7_1;
  // Applied to the named profile before the Kernel is built.
  std::function<void(KernelProfile&)> tweak;
  uint64_t file_bytes = 64 * kMiB;  // i_size
  bool shmem = false;
  unsigned max_order = 0;                       // 0: no large folios
  uint32_t ra_pages = 32;                       // BackingDev.ra_pages (read_ahead_kb / 4)
  uint32_t io_pages = 256;                      // BackingDev.io_pages
  uint64_t capacity_pages = uint64_t{1} << 23;  // 32 GiB: nothing is evicted
  CpuCosts cpu;                                 // the time estimate's CPU costs
  // The mapping: [map_pgoff, map_pgoff + map_pages) of the file at a 2 MiB
  // boundary plus align_offset pages. map_pages 0: to the end of the file.
  pgoff_t map_pgoff = 0;
  uint64_t map_pages = 0;
  uint64_t align_offset = 0;
  vm_flags_t vm_flags = VM_READ | VM_SHARED;
  bool map = true;  // false: no VMA (read(2)-only tests)

  // Fluent setters, so a test names only what it changes:
  //   Model m(ModelSetup().ra(2048).align(100));
  ModelSetup& with(std::function<void(KernelProfile&)> fn) {
    if (tweak) {
      tweak = [a = tweak, b = std::move(fn)](KernelProfile& p) {
        a(p);
        b(p);
      };
    } else {
      tweak = std::move(fn);
    }
    return *this;
  }
  ModelSetup& kernel(Release r) {
    release = r;
    return *this;
  }
  ModelSetup& bytes(uint64_t v) {
    file_bytes = v;
    return *this;
  }
  ModelSetup& pages(uint64_t v) {
    file_bytes = v * kPageSize;
    return *this;
  }
  ModelSetup& tmpfs() {
    shmem = true;
    return *this;
  }
  ModelSetup& order(unsigned v) {
    max_order = v;
    return *this;
  }
  ModelSetup& costs(const CpuCosts& c) {
    cpu = c;
    return *this;
  }
  ModelSetup& ra(uint32_t v) {
    ra_pages = v;
    return *this;
  }
  ModelSetup& io(uint32_t v) {
    io_pages = v;
    return *this;
  }
  ModelSetup& capacity(uint64_t v) {
    capacity_pages = v;
    return *this;
  }
  ModelSetup& pgoff(pgoff_t v) {
    map_pgoff = v;
    return *this;
  }
  ModelSetup& vma_pages(uint64_t v) {
    map_pages = v;
    return *this;
  }
  ModelSetup& align(uint64_t v) {
    align_offset = v;
    return *this;
  }
  ModelSetup& flags(vm_flags_t v) {
    vm_flags = v;
    return *this;
  }
  ModelSetup& unmapped() {
    map = false;
    return *this;
  }
};

// Records the tracepoints a test wants to look at.
class RecordingTracer final : public Tracer {
 public:
  void event(const TraceEvent& e) override { events.push_back(e); }
  std::vector<TraceEvent> of(TraceKind kind) const {
    std::vector<TraceEvent> out;
    for (const TraceEvent& e : events) {
      if (e.kind == kind) out.push_back(e);
    }
    return out;
  }
  void clear() { events.clear(); }
  std::vector<TraceEvent> events;
};

class Model {
 public:
  explicit Model(const ModelSetup& s = {}) : setup_(s) {
    KernelProfile prof = kernel_profile(s.release);
    if (s.tweak) s.tweak(prof);
    BackingDev bdi;
    bdi.ra_pages = s.ra_pages;
    bdi.io_pages = s.io_pages;
    k_ = std::make_unique<Kernel>(prof, s.capacity_pages, bdi, s.cpu, engine());
    as_ = k_->new_address_space(s.file_bytes, s.shmem, s.max_order);
    file_ = k_->open(as_);
    if (s.map) {
      const uint64_t pages = s.map_pages ? s.map_pages : as_->nr_pages() - s.map_pgoff;
      vma_ = k_->mmap(&mm_, file_, s.map_pgoff, pages, s.vm_flags, s.align_offset);
    }
  }

  Model(const Model&) = delete;
  Model& operator=(const Model&) = delete;

  Kernel& k() { return *k_; }
  AddressSpace& as() { return *as_; }
  File& file() { return *file_; }
  FileRaState& ra() { return file_->f_ra; }
  Mm& mm() { return mm_; }
  Vma& vma() { return *vma_; }

  // A one-byte load (or store) at page `vpage` of the VMA.
  void touch(uint64_t vpage) { handle_access(*k_, *vma_, vpage, /*write=*/false); }
  void write(uint64_t vpage) { handle_access(*k_, *vma_, vpage, /*write=*/true); }
  void touch_range(uint64_t first, uint64_t last) {
    for (uint64_t p = first; p <= last; ++p) touch(p);
  }
  // read(2) of `pages` pages at page `index`.
  void read_pages(pgoff_t index, uint64_t pages) {
    filemap_read(*k_, *file_, index * kPageSize, pages * kPageSize);
  }
  void madvise(Madvise advice) { do_madvise(*k_, *vma_, 0, vma_->nr_pages(), advice); }

  // Puts order-0 folios for [first, last] in the page cache as a finished
  // read would leave them: uptodate, no marker, on the inactive LRU.
  void cache(pgoff_t first, pgoff_t last) {
    for (pgoff_t p = first; p <= last; ++p)
      FAULTLINE_CHECK(filemap_add_folio(*k_, *as_, p, 0, 0) == mm::AddFolio::kAdded);
  }
  void cache_folio(pgoff_t head, unsigned order) {
    FAULTLINE_CHECK(filemap_add_folio(*k_, *as_, head, order, 0) == mm::AddFolio::kAdded);
  }

  uint64_t count(VmEvent e) const { return k_->vmstat()[e]; }
  uint64_t pgfault() const { return count(VmEvent::pgfault); }
  uint64_t pgmajfault() const { return count(VmEvent::pgmajfault); }
  uint64_t pgpgin_kb() const { return count(VmEvent::pgpgin); }
  uint64_t attempts() const { return count(VmEvent::fault_attempts); }
  uint64_t min_flt() const { return mm_.min_flt; }
  uint64_t maj_flt() const { return mm_.maj_flt; }
  int64_t rss_file() const { return mm_.rss[MM_FILEPAGES]; }
  int64_t rss_shmem() const { return mm_.rss[MM_SHMEMPAGES]; }
  int64_t rss_anon() const { return mm_.rss[MM_ANONPAGES]; }
  uint32_t mmap_miss() const { return file_->f_ra.mmap_miss; }
  void set_mmap_miss(uint32_t v) { file_->f_ra.mmap_miss = static_cast<uint16_t>(v); }

  bool cached(pgoff_t p) const { return as_->present(p); }
  bool mapped(uint64_t vpage) const { return vma_->ptes[vpage] & kPtePresent; }
  bool young(uint64_t vpage) const { return vma_->ptes[vpage] & kPteYoung; }
  bool folio_has(pgoff_t p, uint16_t bit) const {
    return as_->present(p) && as_->test(as_->head(p), bit);
  }
  bool marked(pgoff_t p) const { return folio_has(p, kPgReadahead); }
  uint64_t nr_cached() const { return as_->nr_cached_pages(); }
  // Indices in [first, last] whose folio carries PG_readahead.
  std::vector<pgoff_t> marks(pgoff_t first, pgoff_t last) const {
    std::vector<pgoff_t> out;
    for (pgoff_t p = first; p <= last && p < as_->nr_pages(); ++p) {
      if (as_->present(p) && as_->head(p) == p && as_->test(p, kPgReadahead)) out.push_back(p);
    }
    return out;
  }
  // Number of present pages in [first, last].
  uint64_t cached_in(pgoff_t first, pgoff_t last) const {
    uint64_t n = 0;
    for (pgoff_t p = first; p <= last && p < as_->nr_pages(); ++p) n += as_->present(p);
    return n;
  }
  uint64_t mapped_in(uint64_t first, uint64_t last) const {
    uint64_t n = 0;
    for (uint64_t v = first; v <= last && v < vma_->nr_pages(); ++v) n += mapped(v);
    return n;
  }

 private:
  ModelSetup setup_;
  std::unique_ptr<Kernel> k_;
  AddressSpace* as_ = nullptr;
  File* file_ = nullptr;
  Mm mm_;
  Vma* vma_ = nullptr;
};

// Profile tweaks, composable: ModelSetup().with(p1_p2).with(fault_around_off).
inline void p1_p2(KernelProfile& p) {
  p.mmap_miss_p1 = true;
  p.mmap_miss_p2 = true;
}
inline void fault_around_off(KernelProfile& p) { p.fault_around_bytes = 4096; }

}  // namespace faultline::mmtest
