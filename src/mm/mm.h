// mm.h — the modelled kernel's objects: open files, VMAs, address spaces of
// processes (mm_struct), the LRU, and the Kernel that owns them.
//
// Simplified (docs/model_fidelity.md): one node, one zone, one memory
// capacity shared by the page cache and anonymous memory (the machine's
// memory less what the kernel keeps, or a cgroup limit); I/O completes when
// it is submitted, so no folio is ever seen locked or !uptodate by a fault.
#pragma once

#include <algorithm>
#include <cstdint>
#include <deque>
#include <memory>
#include <vector>

#include "mm/costs.h"
#include "mm/pagecache.h"
#include "mm/pgtable.h"
#include "mm/profile.h"
#include "mm/trace.h"
#include "mm/types.h"
#include "mm/vmstat.h"
#include "util/sparse_array.h"

namespace faultline::mm {

// struct file_ra_state (include/linux/fs.h).
//
//   start                 marker                      start + size
//   |=====================#===========================|
//                         |<-------- async_size ----->|
struct FileRaState {
  pgoff_t start = 0;
  uint32_t size = 0;        // pages
  uint32_t async_size = 0;  // pages; the first of them carries PG_readahead
  uint32_t ra_pages = 32;   // max window, copied from the bdi at open()
  uint16_t order = 0;       // preferred folio order of the last window
  uint16_t mmap_miss = 0;   // mmap miss balance (do_sync_mmap_readahead)
  int64_t prev_pos = -1;    // byte after the last read(2); never set by faults
};

// fmode bits of struct file the model reads.
inline constexpr uint32_t FMODE_RANDOM = 1u << 0;
inline constexpr uint32_t FMODE_NOREUSE = 1u << 1;

// An open file description (struct file).
struct File {
  AddressSpace* mapping = nullptr;
  FileRaState f_ra;
  uint32_t f_mode = 0;
};

struct Mm;

// struct vm_area_struct: a file mapping (file != nullptr) or anonymous memory.
struct Vma {
  Mm* vm_mm = nullptr;
  uint64_t vm_start = 0;  // address of the first byte (page aligned)
  uint64_t vm_end = 0;    // address past the last byte (page aligned)
  pgoff_t vm_pgoff = 0;   // file page mapped at vm_start
  vm_flags_t vm_flags = VM_READ;
  File* vm_file = nullptr;
  bool shmem_ops = false;  // vm_ops are shmem_vm_ops (tmpfs, MAP_SHARED|MAP_ANONYMOUS)
  // PteBits per page of the VMA.
  PteTable ptes;
  // Per 2 MiB span (pmd_slot): 1 if its PTE table exists; 1 if one PMD maps it.
  util::SparseArray<uint8_t> pte_table;
  util::SparseArray<uint8_t> pmd_mapped;

  uint64_t nr_pages() const { return (vm_end - vm_start) >> kPageShift; }
  bool has_recency() const;  // vma_has_recency()
  // The virtual page number (address >> PAGE_SHIFT) of page vpage of the VMA.
  uint64_t vpn(uint64_t vpage) const { return (vm_start >> kPageShift) + vpage; }
  // PMD slot (2 MiB span) of a VMA page, counted from the span holding vm_start.
  uint64_t pmd_slot(uint64_t vpage) const {
    return (vpn(vpage) >> (kPmdShift - kPageShift)) - (vm_start >> kPmdShift);
  }
  // pmd_none(): the PMD over page vpage holds neither a PTE table nor a
  // mapping of its own, so no PTE maps a page of its 2 MiB span.
  bool pmd_none(uint64_t vpage) const {
    const uint64_t slot = pmd_slot(vpage);
    return !pte_table[slot] && !pmd_mapped[slot];
  }
  // The PTE the page walk finds for page vpage (pte_offset_map()): none
  // under an empty PMD, whose span no PTE maps, so the PTEs are not asked.
  uint8_t walk_pte(uint64_t vpage) const { return pmd_none(vpage) ? uint8_t{0} : ptes[vpage]; }
};

// RSS counter index (enum mm counters, include/linux/mm_types_task.h).
enum MmCounter : uint8_t { MM_FILEPAGES, MM_ANONPAGES, MM_SWAPENTS, MM_SHMEMPAGES, NR_MM_COUNTERS };

// struct mm_struct plus the fault counters of the task using it.
struct Mm {
  std::vector<std::unique_ptr<Vma>> vmas;
  int64_t rss[NR_MM_COUNTERS] = {};
  uint64_t rss_hiwater = 0;
  uint64_t min_flt = 0;
  uint64_t maj_flt = 0;
  uint64_t mmap_base = 0;  // where the next mmap() is placed (bytes; a bump allocator)

  // The counter change of add_mm_counter (Kernel::add_mm_counter counts the call).
  void add_rss(MmCounter c, int64_t n) {
    rss[c] += n;
    const int64_t total = rss[MM_FILEPAGES] + rss[MM_ANONPAGES] + rss[MM_SHMEMPAGES];
    if (total > 0 && static_cast<uint64_t>(total) > rss_hiwater) rss_hiwater = total;
  }
};

// One folio's place on an LRU list. The lists are FIFOs with lazy
// deletion: an entry is live only while its sequence number still equals
// the folio's, so moving a folio is one push and never a search.
struct LruEntry {
  uint32_t ino;
  pgoff_t index;
  uint32_t seq;
};

// The entry still stands for its folio: a folio heads there and carries
// the entry's sequence number (else the folio left the list or moved since).
inline bool lru_entry_live(const AddressSpace& as, const LruEntry& e) {
  return e.index < as.nr_pages() && as.present(e.index) && as.head(e.index) == e.index &&
         as.lru_seq(e.index) == e.seq;
}

// One LRU list (the folios of struct lruvec's lists[lru]), kept as runs: a
// run is folios of one inode and one order pushed one after another at
// consecutive indices with consecutive sequence numbers, as a readahead
// window's folios are added to the LRU. A push that continues the head run
// extends it; popping the tail takes the oldest folio of the tail run. So
// the list holds one entry per run, not per folio, and pops what a list of
// one entry per folio would pop (lru_test.cc checks the two against each
// other).
//
// Each list numbers its pushes in a sequence space of its own parity
// (first_seq 1 or 2, then every other number), so pushes to the other list
// do not break a run, and an entry left stale on one list never matches a
// number the other gave.
class LruList {
 public:
  explicit LruList(uint32_t first_seq) : next_seq_(first_seq) {}

  bool empty() const { return runs_.empty(); }
  // Runs held, live or stale (model memory).
  size_t nr_runs() const { return runs_.size(); }
  // The sequence number the next push gets.
  uint32_t next_seq() const { return next_seq_; }

  // Adds the folio of `order` at index of inode ino at the head (newest
  // end); returns its sequence number.
  uint32_t push_front(uint32_t ino, pgoff_t index, unsigned order) {
    const uint32_t seq = next_seq_;
    next_seq_ += 2;
    if (next_seq_ == 0) next_seq_ = 2;  // 0 marks a folio off the lists
    if (!runs_.empty()) {
      Run& r = runs_.front();
      if (r.ino() == ino && r.order == order && r.count < kMaxCount &&
          r.index() + (static_cast<pgoff_t>(r.count) << order) == index &&
          r.seq + 2 * r.count == seq) {
        ++r.count;
        return seq;
      }
    }
    runs_.push_front(Run(ino, index, order, seq));
    return seq;
  }
  // Removes the tail (oldest) folio's entry, live or stale; false if empty.
  bool pop_back(LruEntry* e) {
    if (runs_.empty()) return false;
    Run& r = runs_.back();
    *e = {r.ino(), r.index(), r.seq};
    if (--r.count == 0) {
      runs_.pop_back();
    } else {
      r.set_index(r.index() + (pgoff_t{1} << r.order));
      r.seq += 2;
    }
    return true;
  }
  // Every entry, live or stale, from the head to the tail.
  template <typename Fn>
  void for_each(Fn&& fn) const {
    for (const Run& r : runs_) {
      for (uint32_t j = r.count; j-- > 0;) {
        fn(LruEntry{r.ino(), r.index() + (static_cast<pgoff_t>(j) << r.order), r.seq + 2 * j});
      }
    }
  }

 private:
  static constexpr uint32_t kMaxCount = (1u << 24) - 1;
  static uint32_t pack_hi(uint32_t ino, pgoff_t index) {
    return ino | static_cast<uint32_t>(index >> 32) << 24;
  }
  // Sixteen bytes: the inode (24 bits) and the first (oldest) folio's index
  // (40 bits) packed in two words, its sequence number, the folio order
  // and the number of folios.
  struct Run {
    Run(uint32_t inode, pgoff_t first, unsigned folio_order, uint32_t sequence)
        : ino_index_hi(pack_hi(inode, first)),
          index_lo(static_cast<uint32_t>(first)),
          seq(sequence),
          order(static_cast<uint8_t>(folio_order)),
          count(1) {}
    uint32_t ino() const { return ino_index_hi & (kMaxInodes - 1); }
    pgoff_t index() const { return pgoff_t{ino_index_hi >> 24} << 32 | index_lo; }
    void set_index(pgoff_t i) {
      ino_index_hi = pack_hi(ino(), i);
      index_lo = static_cast<uint32_t>(i);
    }
    uint32_t ino_index_hi;
    uint32_t index_lo;
    uint32_t seq;
    uint32_t order : 8;
    uint32_t count : 24;
  };
  static_assert(sizeof(Run) == 16);
  static_assert(kLruIndexBits == 32 + 8 && kMaxInodes == 1u << 24);
  std::deque<Run> runs_;  // front = head (newest), back = tail
  uint32_t next_seq_;
};

// The two file LRU lists of the one lruvec (classic LRU, CONFIG_LRU_GEN off):
// entries per folio (model.engine=pages) or runs of folios (runs).
struct Lruvec {
  LruList inactive{1};  // odd sequence numbers
  LruList active{2};    // even
  RunList inactive_runs;
  RunList active_runs;
  uint64_t nr_inactive = 0;      // pages
  uint64_t nr_active = 0;        // pages
  uint32_t nonresident_age = 0;  // workingset clock (lruvec->nonresident_age)
  uint64_t ratio_gb = 0;         // inactive_is_low() cache: size in GiB ...
  uint64_t inactive_ratio = 1;   // ... and int_sqrt(10 x GiB) for it
};

// Device behind the file system: the bdi's readahead limits, and the
// request model of the elapsed-time estimate. A read batch reaches the
// device as requests of at most io_pages (the block layer splits bios at
// max_sectors_kb); the device serves them in order, one at a time, each for
// request_ns and its transfer at the bandwidth; each completes latency_ns
// after that, and at most queue_depth of them are in flight (0: no limit).
// The latency of one request overlaps the service of the next; the service
// does not, so request_ns bounds the rate of small requests however many are
// in flight.
struct BackingDev {
  uint32_t ra_pages = 32;   // read_ahead_kb / 4
  uint32_t io_pages = 256;  // max_sectors_kb / 4
  double bandwidth_bytes_per_s = 2.0e9;
  double latency_ns = 100e3;  // per request, after its transfer
  double request_ns = 0;      // per request, the device busy besides the transfer
  uint32_t queue_depth = 0;
  // The requests of one batch are served at once, sharing the bandwidth:
  // each completes when the whole batch's service and one latency are done.
  bool shared_batches = false;
};

class Kernel {
 public:
  Kernel(const KernelProfile& profile, uint64_t capacity_pages, const BackingDev& bdi,
         const CpuCosts& cpu, ModelEngine engine = ModelEngine::kPages);

  // How the page cache, the LRU and the page tables are held.
  ModelEngine engine() const { return engine_; }
  bool runs() const { return engine_ == ModelEngine::kRuns; }

  const KernelProfile& profile() const { return profile_; }
  VmStat& vmstat() { return vmstat_; }
  const VmStat& vmstat() const { return vmstat_; }
  Lruvec& lruvec() { return lruvec_; }
  const Lruvec& lruvec() const { return lruvec_; }
  const BackingDev& bdi() const { return bdi_; }
  const CpuCosts& cpu() const { return cpu_; }

  // Creates an inode's page cache; the Kernel owns it.
  AddressSpace* new_address_space(uint64_t size_bytes, bool shmem, unsigned max_order);
  AddressSpace* address_space(uint32_t ino) { return spaces_[ino].get(); }
  // Every inode's page cache and every open file, for the model's gauges.
  const std::vector<std::unique_ptr<AddressSpace>>& address_spaces() const { return spaces_; }
  const std::vector<std::unique_ptr<File>>& files() const { return files_; }
  // open(): a struct file with f_ra initialised from the bdi (file_ra_state_init).
  File* open(AddressSpace* mapping);
  // mmap(): a VMA of nr_pages at a 2 MiB-aligned address plus align_offset
  // pages, mapping the file from pgoff (file == nullptr: anonymous).
  Vma* mmap(Mm* mm, File* file, pgoff_t pgoff, uint64_t nr_pages, vm_flags_t flags,
            uint64_t align_offset_pages);

  // Memory accounting: pages charged (page cache + anon) against capacity.
  uint64_t capacity_pages() const { return capacity_pages_; }
  uint64_t nr_charged() const { return nr_charged_; }
  void charge(int64_t nr) {
    nr_charged_ = static_cast<uint64_t>(static_cast<int64_t>(nr_charged_) + nr);
  }
  // The last reclaim stopped short of room for its charge (nothing left it
  // could free): where the kernel would OOM-kill, the model goes over.
  bool reclaim_gave_up() const { return reclaim_gave_up_; }
  void set_reclaim_gave_up(bool v) { reclaim_gave_up_ = v; }

  // Estimated time: the CPU timeline and the device queue, counted in
  // whole picoseconds (so that sums do not depend on how steps are grouped).
  int64_t now_ps() const { return now_ps_; }
  double now_ns() const { return static_cast<double>(now_ps_) / 1e3; }
  // n steps of one of the fault path's CPU costs.
  void cpu_work(CpuCost c, uint64_t n = 1) { now_ps_ += cpu_ps_[c] * static_cast<int64_t>(n); }
  // Whether a hypervisor shadows the page tables (cpu.shadow_fault_ns set):
  // only then do the PTEs carry kPteShadowed.
  bool shadow_paging() const { return cpu_ps_[CpuCost::shadow_fault_ns] > 0; }
  // Reclaim of `folios` folios of `order` (`pages` pages), `mapped` of them
  // with PTEs that reclaim cleared, for the task's charges: evict_folio_ns
  // each, and tlb_flush_ns for each TLB flush. Reclaim flushes once at the
  // end of a batch in which it unmapped something (try_to_unmap_flush()),
  // and a batch frees at least SWAP_CLUSTER_MAX pages, a folio at a time
  // (try_to_free_mem_cgroup_pages() asks for no less): one flush per mapped
  // folio of SWAP_CLUSTER_MAX pages or more, one per SWAP_CLUSTER_MAX
  // pages of smaller mapped folios. Without kswapd (one CPU, or a memory
  // cgroup's limit, which is always reclaimed directly) the task does it.
  // With kswapd the work is set aside for settle_reclaim.
  void reclaim_work(uint64_t folios, uint64_t pages, uint64_t mapped, unsigned order) {
    int64_t ps = cpu_ps_[CpuCost::evict_folio_ns] * static_cast<int64_t>(folios);
    if (mapped) {
      uint64_t flushes = mapped;
      if ((uint64_t{1} << order) < kSwapClusterMax) {
        unflushed_pages_ += mapped << order;
        flushes = unflushed_pages_ / kSwapClusterMax;
        unflushed_pages_ %= kSwapClusterMax;
      }
      vmstat_.inc(VmEvent::reclaim_tlb_flushes, flushes);
      ps += cpu_ps_[CpuCost::tlb_flush_ns] * static_cast<int64_t>(flushes);
    }
    if (kswapd_gap_pages_ == 0) {
      now_ps_ += ps;
      return;
    }
    kswapd_pending_ps_ += ps;
    kswapd_pending_pages_ += pages;
  }
  // kswapd on a CPU of its own (balance_pgdat): woken when free memory falls
  // below the low watermark, it frees what the task's allocations use while
  // the task runs on, as long as it is no more than the low - min gap
  // behind (gap_pages); past that, allocations wait for free pages (direct
  // reclaim, throttling). 0: no kswapd.
  void set_kswapd(uint64_t gap_pages) { kswapd_gap_pages_ = gap_pages; }
  // Charges an access's reclaim, set aside by reclaim_work, to kswapd: it
  // takes it up from the access's start or when it is done with the work
  // it has, and the task waits only for what puts kswapd more than the gap
  // behind. The engines settle after each access (and before the first),
  // so the result does not depend on how the evictions were grouped (the
  // runs engine evicts in bulk).
  void settle_reclaim() {
    if (kswapd_pending_ps_ > 0) [[unlikely]]
      settle_reclaim_slow();
    access_start_ps_ = now_ps_;
  }
  // The copy of `bytes` by read(2) (copy_page_ns per 4 KiB).
  void cpu_copy(uint64_t bytes) {
    now_ps_ += cpu_ps_[CpuCost::copy_page_ns] * static_cast<int64_t>(bytes) /
               static_cast<int64_t>(kPageSize);
  }
  // Submits a read of pages [index, index + nr_pages) of inode ino to the
  // device queue; sync: the caller waits for all of it (a read of one
  // folio). Otherwise the read is remembered until the device has served
  // it: the page cache holds its folios at once (the counters do not
  // wait), but the first access to one of them waits for the read
  // (folio_wait_locked), in time only. Readahead submits every batch so,
  // synchronous windows too: their reader then sleeps on the folio it
  // wants (wait_on_read), not on the window's other requests.
  void submit_read(uint32_t ino, pgoff_t index, uint64_t nr_pages, bool sync);
  // An access to pages [index, index + nr) of inode ino: waits for any
  // asynchronous read of them still in flight.
  void wait_on_read(uint32_t ino, pgoff_t index, uint64_t nr = 1) {
    if (!inflight_.empty()) [[unlikely]]
      wait_on_read_slow(ino, index, nr);
  }

  // Whether some asynchronous read is still in flight (an access may wait).
  bool reads_in_flight() const { return !inflight_.empty(); }
  // nr loads or stores through present PTEs, one after another, to pages
  // [index, index + nr) of inode ino: each waits for its page's read if
  // that is still in flight, then takes access_ns.
  void access_pages(uint32_t ino, pgoff_t index, uint64_t nr) {
    uint64_t i = 0;
    for (; i < nr && !inflight_.empty(); ++i) {
      wait_on_read_slow(ino, index + i, 1);
      now_ps_ += cpu_ps_[CpuCost::access_ns];
    }
    now_ps_ += cpu_ps_[CpuCost::access_ns] * static_cast<int64_t>(nr - i);
  }

  void set_tracer(Tracer* t) { tracer_ = t; }
  Tracer* tracer() const { return tracer_; }
  bool tracing() const { return tracer_ != nullptr; }
  void trace(TraceEvent e) {
    if (tracer_) [[unlikely]] {
      e.seq = access_seq_;
      tracer_->event(e);
    }
  }
  void set_access_seq(uint64_t seq) { access_seq_ = seq; }

  // fault-around window size in pages (fault_around_pages).
  uint32_t fault_around_pages() const { return fault_around_pages_; }

  // The highest f_ra.mmap_miss any file has reached (a model gauge).
  uint32_t mmap_miss_peak() const { return mmap_miss_peak_; }
  void note_mmap_miss(uint32_t v) { mmap_miss_peak_ = std::max(mmap_miss_peak_, v); }

  // add_mm_counter(): an RSS counter of mm changes by n pages.
  void add_mm_counter(Mm& mm, MmCounter c, int64_t n) {
    mm.add_rss(c, n);
    vmstat_.inc(VmEvent::rss_updates);
  }

 private:
  KernelProfile profile_;
  ModelEngine engine_;
  uint32_t fault_around_pages_;
  uint64_t capacity_pages_;
  BackingDev bdi_;
  CpuCosts cpu_;
  CpuCostsPs cpu_ps_;
  VmStat vmstat_;
  Lruvec lruvec_;
  uint64_t nr_charged_ = 0;
  bool reclaim_gave_up_ = false;
  int64_t now_ps_ = 0;
  // kswapd: the gap it may lag (pages; 0: none), the access's reclaim not
  // yet charged to it, when that access started, when kswapd is next idle.
  uint64_t kswapd_gap_pages_ = 0;
  int64_t kswapd_pending_ps_ = 0;
  uint64_t kswapd_pending_pages_ = 0;
  int64_t access_start_ps_ = 0;
  int64_t kswapd_free_at_ps_ = 0;
  // Pages of mapped folios smaller than SWAP_CLUSTER_MAX reclaimed since
  // the last TLB flush counted for them (reclaim_work).
  uint64_t unflushed_pages_ = 0;
  int64_t dev_free_at_ps_ = 0;
  int64_t latency_ps_;
  int64_t request_ps_;
  // Asynchronous reads the device has not finished, in submission order
  // (the device serves them in order, so their completion times rise).
  struct InflightRead {
    uint32_t ino;
    pgoff_t start, end;
    int64_t done_ps;
  };
  std::deque<InflightRead> inflight_;
  // Completion times of the last queue_depth requests (a new one starts no
  // earlier than the oldest of them completes).
  std::deque<int64_t> queued_done_ps_;
  void wait_on_read_slow(uint32_t ino, pgoff_t index, uint64_t nr);
  void settle_reclaim_slow();
  Tracer* tracer_ = nullptr;
  uint64_t access_seq_ = 0;
  uint32_t mmap_miss_peak_ = 0;
  std::vector<std::unique_ptr<AddressSpace>> spaces_;
  std::vector<std::unique_ptr<File>> files_;
};

}  // namespace faultline::mm
