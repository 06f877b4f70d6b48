#include "mm/smp_fault.h"

#include <algorithm>
#include <cstring>

#include "util/check.h"

namespace faultline::mm::smp {
namespace {

// Where the modelled region starts: vpn 1 << 24 (64 GiB), 2 MiB aligned.
constexpr uint64_t kRegionBaseVpn = uint64_t{1} << 24;
constexpr unsigned kScratchPages = 16;
// The random streams of smp.line_spread, one per CPU from this one on
// (util/random.h: a stream is a generator of its own for the run's seed).
constexpr uint64_t kLineSpreadStream = 0x5350'0000;
// Stands for generic_file_vm_ops (a file VMA with ->map_pages).
constexpr int kFileVmOps = 0;

}  // namespace

// --- page tables ------------------------------------------------------------------

PageTables::PageTables(uint64_t first_vpn, uint64_t nr_pages)
    : first_table_(first_vpn >> 9),
      nr_tables_(static_cast<size_t>(((first_vpn + nr_pages + 511) >> 9) - (first_vpn >> 9))),
      descs_(std::make_unique<PtDesc[]>(nr_tables_)),
      ptes_(nr_tables_ << 9, 0) {}

void PageTables::instrument(CoherenceTracker& coh) {
  lines_.resize(nr_tables_);
  for (LineId& l : lines_) l = coh.add_line("pte.ptl");
}

// --- the world --------------------------------------------------------------------

World::World(const WorldSpec& spec)
    : spec_(spec), fault_around_pages_(spec.prof.fault_around_pages()) {
  const unsigned n = spec.nr_cpus;
  FAULTLINE_CHECK(n >= 1 && n <= kMaxCoherenceCpus);
  FAULTLINE_CHECK(spec.slice_pages >= 1);
  FAULTLINE_CHECK(spec.domains.empty() || spec.domains.size() == n);
  if (spec.track_lines) coh_ = std::make_unique<CoherenceTracker>(n, spec.domains);

  const bool one_vma = spec.sharing == SmpSharing::kThreads;
  const bool processes = spec.sharing == SmpSharing::kProcesses;
  const bool file = spec.workload == SmpWorkload::kLatPagefault;
  // Slices of one VMA are adjacent; separate VMAs start on their own PTE
  // table with a table's gap between them (they do not merge).
  const uint64_t stride = one_vma ? spec.slice_pages : round_up(spec.slice_pages, 512) + 512;
  const uint64_t span = stride * n + 512;

  for (unsigned m = 0; m < (processes ? n : 1u); ++m) {
    mms_.push_back(std::make_unique<MmStruct>(n, spec.rss_batch));
    pts_.push_back(std::make_unique<PageTables>(kRegionBaseVpn, span));
  }
  if (file) {
    file_ = std::make_unique<SmpFile>(spec.slice_pages * n);
    for (unsigned f = 0; f < (processes ? n : 1u); ++f) {
      files_.push_back(std::make_unique<SmpFile::FileStruct>());
    }
  }
  const unsigned nr_vmas = one_vma ? 1 : n;
  for (unsigned v = 0; v < nr_vmas; ++v) {
    auto vma = std::make_unique<VmAreaStruct>();
    MmStruct& mm = *mms_[processes ? v : 0];
    const uint64_t first = kRegionBaseVpn + v * stride;
    const uint64_t pages = one_vma ? spec.slice_pages * n : spec.slice_pages;
    vma->vm_start = first << kPageShift;
    vma->vm_end = (first + pages) << kPageShift;
    vma->vm_mm = &mm;
    if (file) {
      vma->vm_flags = VM_READ | VM_SHARED;
      vma->vm_ops = &kFileVmOps;
      vma->vm_file = files_[processes ? v : 0].get();
      vma->vm_pgoff = one_vma ? 0 : v * spec.slice_pages;
    } else {
      vma->vm_flags = VM_READ | VM_WRITE;
      vma->vm_pgoff = first;  // anonymous: vm_start >> PAGE_SHIFT
      vma->vm_anon_pgoff_hi.store(static_cast<uint32_t>(first >> 32), std::memory_order_relaxed);
    }
    vma_mark_attached(*vma);
    mm.vmas.push_back(vma.get());
    vmas_.push_back(std::move(vma));
  }
  std::vector<LineId> file_lines;
  if (coh_) {
    for (auto& mm : mms_) mm->instrument(*coh_);
    for (auto& pt : pts_) pt->instrument(*coh_);
    for (size_t f = 0; f < files_.size(); ++f) file_lines.push_back(coh_->add_line("file.f_ra"));
  }

  for (unsigned t = 0; t < n; ++t) {
    auto task = std::make_unique<Task>();
    task->cpu.cpu = t;
    task->cpu.coh = coh_.get();
    task->cpu.near_ns = spec.costs.line_near_ns;
    task->cpu.far_ns = spec.costs.line_far_ns;
    task->cpu.read_hold = spec.costs.line_read_hold;
    task->cpu.spread = spec.costs.line_spread;
    task->cpu.rng = Rng(spec.seed, kLineSpreadStream + t);  // one stream per CPU
    task->mm = mms_[processes ? t : 0].get();
    task->pt = pts_[processes ? t : 0].get();
    task->slice_first = kRegionBaseVpn + (one_vma ? t * spec.slice_pages : t * stride);
    task->slice_pages = spec.slice_pages;
    if (file) {
      const size_t f = processes ? t : 0;
      task->file = files_[f].get();
      if (coh_) task->file_line = file_lines[f];
    }
    if (spec.real_work) {
      task->scratch = std::make_unique<std::byte[]>(kScratchPages * kPageSize);
    }
    tasks_.push_back(std::move(task));
  }
  for (auto& t : tasks_) {
    for (auto& o : tasks_) {
      if (o != t && o->mm == t->mm) t->mm_peers.push_back(o.get());
    }
  }
}

double World::nominal_fault_ns() const {
  const SmpCosts& c = spec_.costs;
  double ns = c.lock_vma_ns + c.handle_ns + c.map_pte_ns + c.rss_add_ns + c.account_ns +
              c.end_read_ns + c.return_ns;
  if (spec_.workload == SmpWorkload::kPft) {
    ns += spec_.write ? c.alloc_zero_ns : 0;
  } else {
    ns += c.map_page_ns * fault_around_pages_;
  }
  return ns;
}

bool World::begin_next_op(Task& t) {
  if (t.pass >= spec_.passes) {
    t.step = SmpStep::kDone;
    return false;
  }
  const uint64_t per_fault = spec_.workload == SmpWorkload::kPft ? 1 : fault_around_pages_;
  t.vma = -1;
  t.vma_locked = t.mmap_locked = t.no_vma_lock = false;
  if (t.next_page < t.slice_pages) {
    t.vpn = t.slice_first + t.next_page;
    t.next_page += per_fault;
    t.step = SmpStep::kFaultLock;
    return true;
  }
  // MADV_DONTNEED of the whole slice, then the next pass; without the zap
  // the slice stays mapped and the next pass (the end: one pass) follows.
  t.next_page = 0;
  ++t.pass;
  if (!spec_.zap) return begin_next_op(t);
  t.zap_next = t.slice_first;
  t.zap_end = t.slice_first + t.slice_pages;
  t.step = SmpStep::kZapLock;
  return true;
}

double World::step(Task& t, std::optional<double> now_ns) {
  if (t.step == SmpStep::kIdle && !begin_next_op(t)) return 0;
  if (t.step == SmpStep::kDone) return 0;
  t.cpu.timed = now_ns.has_value();
  t.cpu.begin_step(now_ns.value_or(0));
  double ns = 0;
  // A TLB-flush IPI from another CPU of this mm interrupts this one; the
  // handler reads the mm's tlb_gen.
  if (const uint32_t ipis = t.pending_ipis.exchange(0, std::memory_order_relaxed)) {
    t.cpu.read(t.mm->tlb_line);
    ns += spec_.costs.ipi_recv_ns * ipis;
  }
  switch (t.step) {
    case SmpStep::kFaultLock:
      ns += fault_lock(t);
      break;
    case SmpStep::kFaultHandle:
      ns += fault_handle(t);
      break;
    case SmpStep::kFaultAlloc:
      ns += fault_alloc(t);
      break;
    case SmpStep::kFaultMap:
      ns += fault_map(t);
      break;
    case SmpStep::kFileMapPages:
      ns += file_map_pages(t);
      break;
    case SmpStep::kFaultAccount:
      ns += fault_account(t);
      break;
    case SmpStep::kFaultUnlock:
      ns += fault_unlock(t);
      break;
    case SmpStep::kUserLoads:
      ns += user_loads(t);
      break;
    case SmpStep::kZapLock:
      ns += zap_lock(t);
      break;
    case SmpStep::kZapTable:
      ns += zap_table(t);
      break;
    case SmpStep::kZapFlush:
      ns += zap_flush(t);
      break;
    case SmpStep::kZapUnlock:
      ns += zap_unlock(t);
      break;
    case SmpStep::kIdle:
    case SmpStep::kDone:
      break;
  }
  t.vm_events.inc(VmEvent::steps);
  return ns + t.cpu.step_transfer_ns;
}

double World::rss_add(Task& t, MmCounter c, int64_t n) {
  t.vm_events.inc(VmEvent::rss_updates);
  const bool folded = t.mm->rss_stat[c]->add(t.cpu, n);
  if (folded) t.vm_events.inc(VmEvent::rss_folds);
  return spec_.costs.rss_add_ns + (folded ? spec_.costs.rss_fold_ns : 0);
}

// do_user_addr_fault(): lock_vma_under_rcu(), else lock_mm_and_find_vma().
double World::fault_lock(Task& t) {
  const uint64_t addr = t.vpn << kPageShift;
  if (spec_.prof.per_vma_lock && !t.no_vma_lock) {
    LockVmaStats st;
    const int i = lock_vma_under_rcu(t.cpu, *t.mm, addr, &st);
    t.vm_events.inc(VmEvent::vma_lock_abort, st.abort);
    t.vm_events.inc(VmEvent::vma_lock_miss, st.miss);
    if (i >= 0) {
      t.vma = i;
      t.vma_locked = true;
      t.step = SmpStep::kFaultHandle;
      return spec_.costs.lock_vma_ns;
    }
  }
  t.mm->mmap_lock.read_lock(t.cpu);
  t.mmap_locked = true;
  t.vma = t.mm->find_vma(t.cpu, addr);
  FAULTLINE_CHECK(t.vma >= 0);
  t.vm_events.inc(VmEvent::mmap_lock_faults);
  t.step = SmpStep::kFaultHandle;
  return spec_.costs.lock_vma_ns + spec_.costs.mmap_lock_ns;
}

// handle_mm_fault() down to the allocation: the VMA's flags and ops, then
// for an anonymous write __vmf_anon_prepare().
double World::fault_handle(Task& t) {
  VmAreaStruct& vma = vma_of(t);
  const VmaLines& l = lines_of(t);
  t.cpu.read(l.line0);  // vm_flags
  t.cpu.read(l.line1);  // vm_ops: vma_is_anonymous()
  if (!vma.is_anonymous()) {
    t.step = SmpStep::kFileMapPages;
    return spec_.costs.handle_ns;
  }
  if (!spec_.write) {
    t.step = SmpStep::kFaultMap;  // the zero page: no folio, no anon_vma
    return spec_.costs.handle_ns;
  }
  // vma_has_anon_rmap(), 7.4-rc1: VM_WARN_ON_ONCE(!vma_is_attached(vma)) and
  // vma_assert_stabilised() load vm_refcnt and the mmap_lock count even
  // with CONFIG_DEBUG_VM=n (seed 2 patch 2 keeps them for DEBUG_VM only).
  if (spec_.prof.asserts_vma_stable()) {
    const bool attached = vma_is_attached(t.cpu, vma, l);
    t.cpu.read(l.line2);
    const bool stable =
        vma.vm_refcnt.load(std::memory_order_relaxed) > 1 || t.mm->mmap_lock.is_locked(t.cpu);
    FAULTLINE_DCHECK(attached && stable);
    (void)attached;
    (void)stable;
  }
  t.cpu.read(l.line1);  // vma->anon_vma
  if (!vma.anon_vma.load(std::memory_order_acquire)) {
    if (t.vma_locked && !t.mm->mmap_lock.read_trylock(t.cpu)) {
      // VM_FAULT_RETRY: the VMA lock is dropped, the fault is retried
      // under mmap_lock.
      vma_end_read(t.cpu, vma, l);
      t.vma_locked = false;
      t.no_vma_lock = true;
      t.vm_events.inc(VmEvent::vma_lock_retry);
      t.step = SmpStep::kFaultLock;
      return spec_.costs.handle_ns;
    }
    // __anon_vma_prepare(): under mm->page_table_lock in the kernel; the
    // first CPU to get there installs it.
    AnonVma* expected = nullptr;
    t.cpu.write(l.line1);
    vma.anon_vma.compare_exchange_strong(expected, &anon_vma_, std::memory_order_acq_rel);
    if (t.vma_locked) t.mm->mmap_lock.read_unlock(t.cpu);
  }
  t.step = SmpStep::kFaultAlloc;
  return spec_.costs.handle_ns;
}

// alloc_anon_folio(): an order-0 page from this CPU's lists, charged and
// cleared. Private to the CPU; with real_work the clearing is real.
double World::fault_alloc(Task& t) {
  if (t.scratch) {
    std::memset(t.scratch.get() + (t.scratch_next++ % kScratchPages) * kPageSize, 0, kPageSize);
  }
  t.step = SmpStep::kFaultMap;
  return spec_.costs.alloc_zero_ns;
}

// do_anonymous_page() under the PTE lock: map_anon_folio_pte_pf().
double World::fault_map(Task& t) {
  VmAreaStruct& vma = vma_of(t);
  const VmaLines& l = lines_of(t);
  PageTables& pt = *t.pt;
  double ns = spec_.costs.map_pte_ns;
  t.cpu.write(pt.ptl_line(t.vpn));
  {
    SpinLockGuard ptl(&pt.ptl(t.vpn));  // pte_offset_map_lock()
    uint8_t& pte = pt.pte(t.vpn);
    if (!(pte & kSmpPresent)) {  // vmf_pte_changed()
      if (spec_.write) {
        // folio_add_new_anon_rmap() -> __folio_set_anon(): folio->mapping =
        // anon_vma, folio->index = linear_page_index(vma, addr).
        t.cpu.read(l.line1);  // anon_vma
        t.cpu.read(l.line0);  // vm_start
        const uint64_t off = t.vpn - (vma.vm_start >> kPageShift);
        uint64_t index;
        if (spec_.prof.reads_anon_pgoff_hi()) {
          // linear_anon_page_index(), 7.4-rc1: the high half from the
          // field next to vm_refcnt.
          t.cpu.read(l.line2);
          t.cpu.read(l.line1);
          index = ((uint64_t{vma.vm_anon_pgoff_hi.load(std::memory_order_relaxed)} << 32) |
                   (vma.vm_pgoff & 0xffffffffu)) +
                  off;
        } else {
          t.cpu.read(l.line1);  // vm_pgoff (seed 2 patch 1, and kernels before the series)
          index = vma.vm_pgoff + off;
        }
        FAULTLINE_DCHECK(index == t.vpn);
        (void)index;
        pte = kSmpPresent | kSmpWrite | kSmpAnon;
        ns += rss_add(t, MM_ANONPAGES, 1);  // add_mm_counter(MM_ANONPAGES, 1)
      } else {
        pte = kSmpPresent;  // special PTE of the shared zero page
      }
    }
    t.cpu.write(pt.ptl_line(t.vpn));  // pte_unmap_unlock()
  }
  t.step = SmpStep::kFaultAccount;
  return ns;
}

// do_read_fault() -> do_fault_around() -> filemap_map_pages(): every
// uptodate folio of the fault-around window, clipped to the VMA and the
// PTE table, is mapped under one PTE lock. Seed 3: one add_mm_counter per
// call (batched_rss, 6.10+) or one per folio.
double World::file_map_pages(Task& t) {
  VmAreaStruct& vma = vma_of(t);
  PageTables& pt = *t.pt;
  const uint64_t vstart = vma.vm_start >> kPageShift;
  const uint64_t vend = vma.vm_end >> kPageShift;
  const uint64_t fa = fault_around_pages_;
  const uint64_t table = round_down(t.vpn, kPtrsPerPte);
  const uint64_t from = std::max({round_down(t.vpn, fa), vstart, table});
  const uint64_t to = std::min({round_down(t.vpn, fa) + fa, vend, table + kPtrsPerPte});
  const bool batched = spec_.prof.batched_rss;
  t.cpu.read(t.file_line);  // mmap_miss_saved = READ_ONCE(file->f_ra.mmap_miss)
  double ns = spec_.costs.map_pte_ns;
  uint64_t mapped = 0;
  t.cpu.write(pt.ptl_line(t.vpn));
  {
    SpinLockGuard ptl(&pt.ptl(t.vpn));
    for (uint64_t v = from; v < to; ++v) {
      uint8_t& pte = pt.pte(v);
      if (pte & kSmpPresent) continue;
      SmpFile::Page& page = file_->pages[vma.vm_pgoff + (v - vstart)];
      page.refcount.fetch_add(1, std::memory_order_relaxed);  // folio_ref_inc()
      page.mapcount.fetch_add(1, std::memory_order_relaxed);  // folio_add_file_rmap_ptes()
      pte = kSmpPresent;
      ++mapped;
      if (!batched) ns += rss_add(t, MM_FILEPAGES, 1);
    }
    if (batched && mapped) ns += rss_add(t, MM_FILEPAGES, static_cast<int64_t>(mapped));
    t.cpu.write(pt.ptl_line(t.vpn));
  }
  // Every page found was a hit: WRITE_ONCE(file->f_ra.mmap_miss, 0).
  t.cpu.write(t.file_line);
  t.file->mmap_miss.store(0, std::memory_order_relaxed);
  t.step = SmpStep::kFaultAccount;
  return ns + spec_.costs.map_page_ns * static_cast<double>(mapped);
}

// mm_account_fault(): count_vm_event(PGFAULT) and current->min_flt are per CPU / per task.
double World::fault_account(Task& t) {
  t.vm_events.inc(VmEvent::pgfault);
  ++t.min_flt;
  t.step = SmpStep::kFaultUnlock;
  return spec_.costs.account_ns;
}

double World::fault_unlock(Task& t) {
  if (t.vma_locked) {
    vma_end_read(t.cpu, vma_of(t), lines_of(t));
    t.vm_events.inc(VmEvent::vma_lock_success);
  } else if (t.mmap_locked) {
    t.mm->mmap_lock.read_unlock(t.cpu);
  }
  t.vma_locked = t.mmap_locked = false;
  t.step = spec_.workload == SmpWorkload::kLatPagefault ? SmpStep::kUserLoads : SmpStep::kIdle;
  return spec_.costs.end_read_ns + spec_.costs.return_ns;
}

// Back in lat_pagefault's loop: it loads a byte of every page, so the rest
// of the faulting page's fault-around window is read through the PTEs the
// fault set, without a fault (touching no line the model tracks).
double World::user_loads(Task& t) {
  const uint64_t end = std::min(t.vpn + fault_around_pages_, t.slice_first + t.slice_pages);
  uint64_t hits = 0;
  for (uint64_t v = t.vpn + 1; v < end; ++v) hits += (t.pt->pte(v) & kSmpPresent) != 0;
  t.vm_events.inc(VmEvent::pte_hits, hits);
  t.step = SmpStep::kIdle;
  return spec_.access_ns * static_cast<double>(hits);
}

// madvise(MADV_DONTNEED): the VMA read lock (6.16+) or mmap_lock, then
// tlb_gather_mmu(): inc_tlb_flush_pending().
double World::zap_lock(Task& t) {
  const uint64_t addr = t.zap_next << kPageShift;
  double ns = spec_.costs.zap_syscall_ns;
  if (spec_.prof.per_vma_lock && spec_.prof.madvise_vma_lock) {
    const int i = lock_vma_under_rcu(t.cpu, *t.mm, addr, nullptr);
    if (i >= 0) {
      t.vma = i;
      t.vma_locked = true;
    }
  }
  if (!t.vma_locked) {
    t.mm->mmap_lock.read_lock(t.cpu);
    t.mmap_locked = true;
    t.vma = t.mm->find_vma(t.cpu, addr);
    FAULTLINE_CHECK(t.vma >= 0);
    ns += spec_.costs.mmap_lock_ns;
  }
  t.cpu.write(t.mm->tlb_line);
  t.mm->tlb.tlb_flush_pending.fetch_add(1, std::memory_order_relaxed);
  t.step = SmpStep::kZapTable;
  return ns;
}

// zap_pte_range() over one PTE table, then add_mm_rss_vec().
double World::zap_table(Task& t) {
  VmAreaStruct& vma = vma_of(t);
  t.cpu.read(lines_of(t).line0);  // vm_start, vm_end, vm_flags
  PageTables& pt = *t.pt;
  const uint64_t end = std::min(t.zap_end, round_down(t.zap_next, kPtrsPerPte) + kPtrsPerPte);
  int64_t anon = 0, file = 0;
  t.cpu.write(pt.ptl_line(t.zap_next));
  {
    SpinLockGuard ptl(&pt.ptl(t.zap_next));
    for (uint64_t v = t.zap_next; v < end; ++v) {
      uint8_t& pte = pt.pte(v);
      if (!(pte & kSmpPresent)) continue;
      if (pte & kSmpAnon) {
        ++anon;
      } else if (!vma.is_anonymous()) {
        SmpFile::Page& page = file_->pages[vma.vm_pgoff + (v - (vma.vm_start >> kPageShift))];
        page.mapcount.fetch_sub(1, std::memory_order_relaxed);
        page.refcount.fetch_sub(1, std::memory_order_relaxed);
        ++file;
      }
      pte = 0;
    }
    t.cpu.write(pt.ptl_line(t.zap_next));
  }
  double ns = spec_.costs.zap_table_ns + spec_.costs.zap_page_ns * static_cast<double>(anon + file);
  if (anon) ns += rss_add(t, MM_ANONPAGES, -anon);
  if (file) ns += rss_add(t, MM_FILEPAGES, -file);
  t.zap_next = end;
  if (t.zap_next >= t.zap_end) t.step = SmpStep::kZapFlush;
  return ns;
}

// tlb_finish_mmu() -> flush_tlb_mm_range(): inc_mm_tlb_gen(), an IPI to
// every other CPU running this mm, then dec_tlb_flush_pending().
double World::zap_flush(Task& t) {
  t.cpu.write(t.mm->tlb_line);
  t.mm->tlb.tlb_gen.fetch_add(1, std::memory_order_relaxed);
  for (Task* p : t.mm_peers) p->pending_ipis.fetch_add(1, std::memory_order_relaxed);
  const uint64_t ipis = t.mm_peers.size();
  t.vm_events.inc(VmEvent::tlb_ipis, ipis);
  t.cpu.write(t.mm->tlb_line);
  t.mm->tlb.tlb_flush_pending.fetch_sub(1, std::memory_order_relaxed);
  t.step = SmpStep::kZapUnlock;
  return spec_.costs.tlb_flush_ns + (ipis ? spec_.costs.ipi_send_ns : 0);
}

double World::zap_unlock(Task& t) {
  if (t.vma_locked) {
    vma_end_read(t.cpu, vma_of(t), lines_of(t));
  } else if (t.mmap_locked) {
    t.mm->mmap_lock.read_unlock(t.cpu);
  }
  t.vma_locked = t.mmap_locked = false;
  t.vm_events.inc(VmEvent::zaps);
  t.step = SmpStep::kIdle;
  return spec_.costs.end_read_ns + spec_.costs.return_ns;
}

VmStat World::vm_events() const {
  VmStat s;
  for (const auto& t : tasks_) s += t->vm_events;
  return s;
}

uint64_t World::min_flt() const {
  uint64_t n = 0;
  for (const auto& t : tasks_) n += t->min_flt;
  return n;
}

int64_t World::rss_sum(MmCounter c) const {
  int64_t s = 0;
  for (const auto& mm : mms_) s += mm->rss_stat[c]->sum();
  return s;
}

}  // namespace faultline::mm::smp
