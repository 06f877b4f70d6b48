#include "mm/mm.h"

#include <algorithm>
#include <cmath>

namespace faultline::mm {

Kernel::Kernel(const KernelProfile& profile, uint64_t capacity_pages, const BackingDev& bdi,
               const CpuCosts& cpu, ModelEngine engine)
    : profile_(profile),
      engine_(engine),
      fault_around_pages_(profile.fault_around_pages()),
      capacity_pages_(capacity_pages),
      bdi_(bdi),
      cpu_(cpu),
      cpu_ps_(cpu),
      latency_ps_(std::llround(bdi.latency_ns * 1e3)),
      request_ps_(std::llround(bdi.request_ns * 1e3)) {}

AddressSpace* Kernel::new_address_space(uint64_t size_bytes, bool shmem, unsigned max_order) {
  const auto ino = static_cast<uint32_t>(spaces_.size());
  FAULTLINE_CHECK(ino < kMaxInodes);
  spaces_.push_back(std::make_unique<AddressSpace>(ino, size_bytes, shmem, max_order, engine_));
  return spaces_.back().get();
}

File* Kernel::open(AddressSpace* mapping) {
  auto f = std::make_unique<File>();
  f->mapping = mapping;
  // file_ra_state_init(): ra_pages from the bdi; tmpfs has no readahead.
  f->f_ra.ra_pages = mapping->shmem() ? 0 : bdi_.ra_pages;
  f->f_ra.prev_pos = -1;
  files_.push_back(std::move(f));
  return files_.back().get();
}

Vma* Kernel::mmap(Mm* mm, File* file, pgoff_t pgoff, uint64_t nr_pages, vm_flags_t flags,
                  uint64_t align_offset_pages) {
  auto vma = std::make_unique<Vma>();
  vma->vm_mm = mm;
  // Large mappings are placed on a 2 MiB boundary (thp_get_unmapped_area).
  constexpr uint64_t kPmdSize = uint64_t{1} << kPmdShift;
  vma->vm_start = round_up(mm->mmap_base, kPmdSize) + (align_offset_pages << kPageShift);
  vma->vm_end = vma->vm_start + (nr_pages << kPageShift);
  mm->mmap_base = vma->vm_end + kPmdSize;  // a guard gap between mappings
  vma->vm_pgoff = pgoff;
  vma->vm_flags = flags;
  vma->vm_file = file;
  vma->shmem_ops = file && file->mapping->shmem();
  vma->ptes = PteTable(nr_pages, engine_);
  const uint64_t slots = vma->pmd_slot(nr_pages - 1) + 1;
  vma->pte_table = util::SparseArray<uint8_t>(slots);
  vma->pmd_mapped = util::SparseArray<uint8_t>(slots);
  Vma* raw = vma.get();
  mm->vmas.push_back(std::move(vma));
  if (file) file->mapping->i_mmap().push_back(raw);
  return raw;
}

void Kernel::submit_read(uint32_t ino, pgoff_t index, uint64_t nr_pages, bool sync) {
  // The device serves requests in order; the pages of each are ready when
  // it completes. With shared_batches the requests of the batch are served
  // together, as one piece of the queue that completes as a whole.
  const uint64_t per_request = bdi_.io_pages ? bdi_.io_pages : nr_pages;
  const uint64_t piece = bdi_.shared_batches ? nr_pages : per_request;
  int64_t wait_until = now_ps_;
  for (pgoff_t at = index; at < index + nr_pages; at += piece) {
    const uint64_t n = std::min<uint64_t>(piece, index + nr_pages - at);
    const auto requests = static_cast<int64_t>((n + per_request - 1) / per_request);
    int64_t start = std::max(now_ps_, dev_free_at_ps_);
    if (bdi_.queue_depth && queued_done_ps_.size() >= bdi_.queue_depth) {
      start = std::max(start, queued_done_ps_.front());
      queued_done_ps_.pop_front();
    }
    dev_free_at_ps_ =
        start + request_ps_ * requests +
        std::llround(static_cast<double>(n * kPageSize) / bdi_.bandwidth_bytes_per_s * 1e12);
    const int64_t done = dev_free_at_ps_ + latency_ps_;
    if (bdi_.queue_depth) queued_done_ps_.push_back(done);
    if (sync) {
      wait_until = std::max(wait_until, done);
    } else {
      inflight_.push_back({ino, at, at + n, done});
    }
  }
  if (sync) {
    vmstat_.inc(VmEvent::io_wait_ns, static_cast<uint64_t>((wait_until - now_ps_) / 1000));
    now_ps_ = wait_until;
  }
}

void Kernel::settle_reclaim_slow() {
  const int64_t start = std::max(access_start_ps_, kswapd_free_at_ps_);
  kswapd_free_at_ps_ = start + kswapd_pending_ps_;
  vmstat_.inc(VmEvent::kswapd_ns, static_cast<uint64_t>(kswapd_pending_ps_ / 1000));
  // How long kswapd takes to free the gap, at this work's cost per page.
  const auto pages = static_cast<int64_t>(kswapd_pending_pages_);
  const auto gap = static_cast<int64_t>(kswapd_gap_pages_);
  const int64_t lag =
      pages == 0 ? 0 : kswapd_pending_ps_ / pages * gap + kswapd_pending_ps_ % pages * gap / pages;
  const int64_t until = kswapd_free_at_ps_ - lag;
  if (until > now_ps_) {
    vmstat_.inc(VmEvent::reclaim_wait_ns, static_cast<uint64_t>((until - now_ps_) / 1000));
    now_ps_ = until;
  }
  kswapd_pending_ps_ = 0;
  kswapd_pending_pages_ = 0;
}

void Kernel::wait_on_read_slow(uint32_t ino, pgoff_t index, uint64_t nr) {
  while (!inflight_.empty() && inflight_.front().done_ps <= now_ps_) inflight_.pop_front();
  int64_t until = now_ps_;
  for (const InflightRead& r : inflight_) {
    if (r.ino == ino && r.start < index + nr && index < r.end) until = std::max(until, r.done_ps);
  }
  if (until > now_ps_) {
    vmstat_.inc(VmEvent::io_wait_ns, static_cast<uint64_t>((until - now_ps_) / 1000));
    now_ps_ = until;
  }
}

}  // namespace faultline::mm
