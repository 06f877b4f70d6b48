#include "mm/vma_lock.h"

#include "util/check.h"
#include "util/mutex.h"

namespace faultline::mm::smp {

// --- mmap_lock ----------------------------------------------------------------

void MmapLock::read_lock(CpuCtx& cpu) {
  for (;;) {
    cpu.write(line_);
    const int64_t c = count_.fetch_add(kReaderBias, std::memory_order_acquire);
    if (!(c & kWriterLocked)) return;
    count_.fetch_sub(kReaderBias, std::memory_order_relaxed);
    while (count_.load(std::memory_order_relaxed) & kWriterLocked) SpinLock::cpu_relax();
  }
}

bool MmapLock::read_trylock(CpuCtx& cpu) {
  cpu.write(line_);
  int64_t c = count_.load(std::memory_order_relaxed);
  while (!(c & kWriterLocked)) {
    if (count_.compare_exchange_weak(c, c + kReaderBias, std::memory_order_acquire)) return true;
  }
  return false;
}

void MmapLock::read_unlock(CpuCtx& cpu) {
  cpu.write(line_);
  count_.fetch_sub(kReaderBias, std::memory_order_release);
}

void MmapLock::write_lock(CpuCtx& cpu) {
  for (;;) {
    cpu.write(line_);
    int64_t expected = 0;
    if (count_.compare_exchange_strong(expected, kWriterLocked, std::memory_order_acquire)) break;
    while (count_.load(std::memory_order_relaxed) != 0) SpinLock::cpu_relax();
  }
  // mm_lock_seqcount_begin()
  mm_lock_seq_.fetch_add(1, std::memory_order_release);
}

void MmapLock::write_unlock(CpuCtx& cpu) {
  cpu.write(line_);
  // vma_end_write_all(): mm_lock_seqcount_end()
  mm_lock_seq_.fetch_add(1, std::memory_order_release);
  count_.store(0, std::memory_order_release);
}

bool MmapLock::is_locked(CpuCtx& cpu) const {
  cpu.read(line_);
  return count_.load(std::memory_order_relaxed) != 0;
}

uint32_t MmapLock::seq(CpuCtx& cpu, std::memory_order order) const {
  cpu.read(line_);
  return mm_lock_seq_.load(order);
}

// --- mm_struct ------------------------------------------------------------------

MmStruct::MmStruct(unsigned nr_cpus, int32_t rss_batch) {
  for (auto& c : rss_stat) c = std::make_unique<PercpuCounter>(nr_cpus, rss_batch);
}

void MmStruct::instrument(CoherenceTracker& coh) {
  vma_lines.resize(vmas.size());
  for (VmaLines& l : vma_lines) {
    l.line0 = coh.add_line("vma.line0");
    l.line1 = coh.add_line("vma.line1");
    l.line2 = coh.add_line("vma.line2");
  }
  mmap_lock.instrument(coh);
  tlb_line = coh.add_line("mm.tlb");
  rss_stat[MM_ANONPAGES]->instrument(coh, "rss.anon", "rss.percpu");
  rss_stat[MM_FILEPAGES]->instrument(coh, "rss.file", "rss.percpu");
}

int MmStruct::find_vma(CpuCtx& cpu, uint64_t addr) const {
  for (size_t i = 0; i < vmas.size(); ++i) {
    if (i < vma_lines.size()) cpu.read(vma_lines[i].line0);
    if (addr < vmas[i]->vm_end) return addr >= vmas[i]->vm_start ? static_cast<int>(i) : -1;
  }
  return -1;
}

// --- per-VMA lock ---------------------------------------------------------------

VmaReadResult vma_start_read(CpuCtx& cpu, MmStruct& mm, VmAreaStruct& vma, const VmaLines& lines) {
  // Check before locking. A race might cause a false "locked" result.
  cpu.read(lines.line0);
  if (vma.vm_lock_seq.load(std::memory_order_relaxed) ==
      mm.mmap_lock.seq(cpu, std::memory_order_relaxed)) {
    return VmaReadResult::kFailed;
  }
  // __refcount_inc_not_zero_limited_acquire(&vma->vm_refcnt, &oldcnt, VM_REFCNT_LIMIT):
  // fails on 0 (detached) or when old + 1 would pass the limit, which the
  // exclude-readers flag always does.
  cpu.write(lines.line2);
  uint32_t old = vma.vm_refcnt.load(std::memory_order_relaxed);
  do {
    if (old == 0) return VmaReadResult::kDetached;
    if (old >= VM_REFCNT_LIMIT) return VmaReadResult::kFailed;
  } while (!vma.vm_refcnt.compare_exchange_weak(old, old + 1, std::memory_order_acquire,
                                                std::memory_order_relaxed));
  // SLAB_TYPESAFE_BY_RCU: the VMA may have been reused by another mm.
  cpu.read(lines.line0);
  if (vma.vm_mm != &mm) {
    vma_end_read(cpu, vma, lines);
    return VmaReadResult::kFailed;
  }
  if (vma.vm_lock_seq.load(std::memory_order_relaxed) ==
      mm.mmap_lock.seq(cpu, std::memory_order_acquire)) {
    vma_end_read(cpu, vma, lines);
    return VmaReadResult::kFailed;
  }
  return VmaReadResult::kLocked;
}

namespace {
// is_vma_writer_only(): the flag is set and at most the writer's own
// reference is left besides it.
bool is_vma_writer_only(uint32_t refcnt) {
  return (refcnt & VM_REFCNT_EXCLUDE_READERS_FLAG) && refcnt <= VM_REFCNT_EXCLUDE_READERS_FLAG + 1;
}
}  // namespace

bool vma_end_read(CpuCtx& cpu, VmAreaStruct& vma, const VmaLines& lines) {
  cpu.read(lines.line0);  // mm = vma->vm_mm, copied before the reference goes
  cpu.write(lines.line2);
  const uint32_t old = vma.vm_refcnt.fetch_sub(1, std::memory_order_release);
  FAULTLINE_DCHECK(old != 0);
  return old != 1 && is_vma_writer_only(old - 1);
}

int lock_vma_under_rcu(CpuCtx& cpu, MmStruct& mm, uint64_t addr, LockVmaStats* stats) {
  for (int walks = 0;; ++walks) {
    FAULTLINE_CHECK(walks < 1000);
    const int i = mm.find_vma(cpu, addr);
    if (i < 0) {
      if (stats) ++stats->abort;
      return -1;
    }
    VmAreaStruct& vma = *mm.vmas[i];
    const VmaLines& lines = mm.vma_lines.empty() ? VmaLines{} : mm.vma_lines[i];
    switch (vma_start_read(cpu, mm, vma, lines)) {
      case VmaReadResult::kDetached:
        if (stats) ++stats->miss;
        continue;
      case VmaReadResult::kFailed:
        if (stats) ++stats->abort;
        return -1;
      case VmaReadResult::kLocked:
        break;
    }
    cpu.read(lines.line0);
    if (addr < vma.vm_start || addr >= vma.vm_end) {
      vma_end_read(cpu, vma, lines);
      if (stats) ++stats->abort;
      return -1;
    }
    return i;
  }
}

bool vma_enter_locked(VmAreaStruct& vma, bool detaching) {
  (void)detaching;
  // refcount_add_not_zero(VM_REFCNT_EXCLUDE_READERS_FLAG, &vma->vm_refcnt)
  uint32_t old = vma.vm_refcnt.load(std::memory_order_relaxed);
  do {
    if (old == 0) return false;
  } while (!vma.vm_refcnt.compare_exchange_weak(old, old + VM_REFCNT_EXCLUDE_READERS_FLAG,
                                                std::memory_order_acquire,
                                                std::memory_order_relaxed));
  return true;
}

bool vma_readers_gone(const VmAreaStruct& vma, bool detaching) {
  const uint32_t target = VM_REFCNT_EXCLUDE_READERS_FLAG + (detaching ? 0 : 1);
  return vma.vm_refcnt.load(std::memory_order_acquire) == target;
}

bool vma_exit_locked(VmAreaStruct& vma) {
  return vma.vm_refcnt.fetch_sub(VM_REFCNT_EXCLUDE_READERS_FLAG, std::memory_order_release) ==
         VM_REFCNT_EXCLUDE_READERS_FLAG;
}

void vma_start_write(CpuCtx& cpu, MmStruct& mm, VmAreaStruct& vma, const VmaLines& lines) {
  const uint32_t seq = mm.mmap_lock.seq(cpu, std::memory_order_relaxed);
  cpu.read(lines.line0);
  if (vma.vm_lock_seq.load(std::memory_order_relaxed) == seq) return;  // already write-locked
  cpu.write(lines.line2);
  const bool locked = vma_enter_locked(vma, false);
  while (locked && !vma_readers_gone(vma, false)) SpinLock::cpu_relax();
  cpu.write(lines.line0);
  vma.vm_lock_seq.store(seq, std::memory_order_relaxed);
  if (locked) {
    const bool detached = vma_exit_locked(vma);
    FAULTLINE_CHECK(!detached);
  }
}

void vma_mark_attached(VmAreaStruct& vma) { vma.vm_refcnt.store(1, std::memory_order_release); }

void vma_mark_detached(VmAreaStruct& vma) {
  // refcount_dec_and_test(): 1 -> 0 unless readers hold transient references.
  if (vma.vm_refcnt.fetch_sub(1, std::memory_order_release) == 1) return;
  if (vma_enter_locked(vma, true)) {
    while (!vma_readers_gone(vma, true)) SpinLock::cpu_relax();
    const bool detached = vma_exit_locked(vma);
    FAULTLINE_CHECK(detached);
  }
}

bool vma_is_attached(CpuCtx& cpu, const VmAreaStruct& vma, const VmaLines& lines) {
  cpu.read(lines.line2);
  return vma.vm_refcnt.load(std::memory_order_relaxed) != 0;
}

}  // namespace faultline::mm::smp
