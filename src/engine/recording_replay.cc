#include "engine/recording_replay.h"

#include <algorithm>
#include <array>
#include <memory>
#include <optional>
#include <vector>

#include "engine/counters.h"
#include "engine/invariant_check.h"
#include "engine/machine.h"
#include "engine/timeline.h"
#include "mm/filemap.h"
#include "mm/madvise.h"
#include "mm/memory.h"
#include "mm/vmscan.h"
#include "workload/recording.h"

namespace faultline::engine {
namespace {

using workload::Event;
using workload::EventOp;
using workload::kNone32;

constexpr uint32_t kProtWrite = 2;
constexpr uint32_t kProtExec = 4;

struct Process {
  std::unique_ptr<mm::Mm> mm = std::make_unique<mm::Mm>();
  std::vector<mm::Vma*> maps;  // by map id; null: not mapped in this process
  uint64_t anon_pages = 0;     // charged to the page cache's capacity
  uint32_t live_tasks = 0;
};

// A file's share of the counters: what its events caused.
struct FileShare {
  mm::VmStat events;
  uint64_t min_flt = 0, maj_flt = 0;
};

class Replay {
 public:
  Replay(const Config& cfg, mm::Kernel& k, const workload::RecordingInfo& info)
      : cfg_(cfg), k_(k), shares_(info.files.size()) {
    for (const workload::RecordedFile& f : info.files) files_.push_back(make_file(k, cfg, f.size));
    task_proc_.assign(info.tasks.size(), kNone32);
  }

  // Counters from here on are the run's.
  void start() {
    snap_ = k_.vmstat();
    snap_min_ = snap_maj_ = 0;
  }

  void apply(const Event& e) {
    switch_to(file_of(e));
    switch (e.op) {
      case EventOp::kTaskStart:
        task_start(e);
        break;
      case EventOp::kTaskExit:
        task_exit(e);
        break;
      case EventOp::kOpen: {
        mm::File* f = k_.open(files_[e.file]);
        handles_.push_back(f);
        handle_file_.push_back(e.file);
        if (cfg_.file.fadvise != mm::Fadvise::kNormal) {
          mm::do_fadvise(k_, *f, 0, f->mapping->nr_pages(), cfg_.file.fadvise);
        }
        break;
      }
      case EventOp::kClose:
        break;  // the struct file outlives its last descriptor only in mappings; nothing to do
      case EventOp::kMmap:
        mmap(e);
        break;
      case EventOp::kMunmap:
        munmap(e);
        break;
      case EventOp::kMadvise: {
        mm::Vma* vma = vma_of(e);
        const auto advice = advice_of<mm::Madvise>(e.arg);
        if (!vma || !advice) {
          ++skipped_;
          break;
        }
        if (e.offset < vma->nr_pages()) {
          mm::do_madvise(k_, *vma, e.offset, std::min(e.length, vma->nr_pages() - e.offset),
                         *advice);
        }
        break;
      }
      case EventOp::kFadvise: {
        const auto advice = advice_of<mm::Fadvise>(e.arg);
        if (!advice) {
          ++skipped_;
          break;
        }
        mm::File& f = *handles_[e.handle];
        const uint64_t pages = f.mapping->nr_pages();
        const uint64_t first = e.offset >> mm::kPageShift;
        const uint64_t end =
            e.length ? std::min(pages,
                                mm::round_up(e.offset + e.length, mm::kPageSize) >> mm::kPageShift)
                     : pages;
        if (first < end) mm::do_fadvise(k_, f, first, end - first, *advice);
        break;
      }
      case EventOp::kRead:
        mm::filemap_read(k_, *handles_[e.handle], e.offset, e.length);
        break;
      case EventOp::kTouch: {
        mm::Vma* vma = nullptr;
        if (!touchable(e, &vma)) {
          ++skipped_;  // the program would have had SIGSEGV or SIGBUS
          break;
        }
        mm::handle_access(k_, *vma, e.offset, e.write);
        break;
      }
      case EventOp::kAnon: {
        Process& p = process_of(e.task);
        k_.charge(static_cast<int64_t>(e.length) - static_cast<int64_t>(p.anon_pages));
        // The new anonymous pages are charged as faulted: reclaim makes room.
        if (e.length > p.anon_pages) mm::reclaim_if_needed(k_);
        p.anon_pages = e.length;
        break;
      }
    }
  }

  // Touches of n consecutive pages of one mapping by one task, the first
  // being e (the caller has checked the rest), taken as PTE hits as long
  // as they hit (mm::handle_pte_hits): how many were. 0: e is replayed alone.
  uint64_t touch_hits(const Event& e, uint64_t n) {
    mm::Vma* vma = nullptr;
    const uint64_t room = touchable(e, &vma);
    if (!room) return 0;
    switch_to(file_of(e));
    return mm::handle_pte_hits(k_, *vma, e.offset, std::min(n, room), e.write);
  }

  // The last flush, then the readahead each file still holds untouched at
  // the end (model.ra_wasted_unused), in its share and in the run's.
  void finish() {
    flush();
    for (size_t f = 0; f < files_.size(); ++f) {
      const uint64_t unused = files_[f]->nr_ra_unused_pages();
      shares_[f].events.inc(mm::VmEvent::ra_wasted_unused, unused);
      k_.vmstat().inc(mm::VmEvent::ra_wasted_unused, unused);
    }
  }

  uint64_t skipped() const { return skipped_; }
  const std::vector<FileShare>& shares() const { return shares_; }
  const std::vector<mm::AddressSpace*>& files() const { return files_; }
  // Every process's address space.
  std::vector<const mm::Mm*> mms() const {
    std::vector<const mm::Mm*> out;
    for (const Process& p : procs_) out.push_back(p.mm.get());
    return out;
  }

  TaskCounters task_counters() const {
    TaskCounters t;
    for (const Process& p : procs_) {
      t.min_flt += p.mm->min_flt;
      t.maj_flt += p.mm->maj_flt;
      for (int c = 0; c < mm::NR_MM_COUNTERS; ++c) t.rss[c] += p.mm->rss[c];
    }
    return t;
  }

 private:
  // The file an event is about (kNone32: none).
  uint32_t file_of(const Event& e) const {
    switch (e.op) {
      case EventOp::kOpen:
        return e.file;
      case EventOp::kRead:
      case EventOp::kFadvise:
        return handle_file_[e.handle];
      case EventOp::kMmap:
        return e.handle == kNone32 ? kNone32 : handle_file_[e.handle];
      case EventOp::kMunmap:
      case EventOp::kMadvise:
      case EventOp::kTouch:
        return e.map < map_file_.size() ? map_file_[e.map] : kNone32;
      default:
        return current_;  // no file of its own: stays with the one before
    }
  }

  template <typename A>
  static std::optional<A> advice_of(uint32_t uapi) {
    for (const auto& n : enum_names(A{})) {
      if (static_cast<uint32_t>(n.value) == uapi) return n.value;
    }
    return std::nullopt;
  }

  uint64_t faults(bool major) const {
    uint64_t n = 0;
    for (const Process& p : procs_) n += major ? p.mm->maj_flt : p.mm->min_flt;
    return n;
  }

  // The pages from a touch's page on that lie inside both its mapping (*vma)
  // and its file; 0: the touch itself is outside one of them.
  uint64_t touchable(const Event& e, mm::Vma** vma) {
    *vma = vma_of(e);
    if (!*vma || e.offset >= (*vma)->nr_pages()) return 0;
    uint64_t room = (*vma)->nr_pages() - e.offset;
    if ((*vma)->vm_file) {
      const uint64_t pages = (*vma)->vm_file->mapping->nr_pages();
      const uint64_t at = (*vma)->vm_pgoff + e.offset;
      room = at < pages ? std::min(room, pages - at) : 0;
    }
    return room;
  }

  // Counters from here on go to `file`'s share.
  void switch_to(uint32_t file) {
    if (file == current_) return;
    flush();
    current_ = file;
  }

  void flush() {
    const uint64_t min = faults(false), maj = faults(true);
    if (current_ != kNone32) {
      FileShare& s = shares_[current_];
      s.events += k_.vmstat() - snap_;
      s.min_flt += min - snap_min_;
      s.maj_flt += maj - snap_maj_;
    }
    snap_ = k_.vmstat();
    snap_min_ = min;
    snap_maj_ = maj;
  }

  // The index of the task's process; a task seen before its start is a
  // process of its own.
  uint32_t process_index(uint32_t task) {
    if (task_proc_[task] == kNone32) {
      task_proc_[task] = static_cast<uint32_t>(procs_.size());
      procs_.emplace_back();
      procs_.back().live_tasks = 1;
    }
    return task_proc_[task];
  }
  Process& process_of(uint32_t task) { return procs_[process_index(task)]; }

  mm::Vma* vma_of(const Event& e) {
    Process& p = process_of(e.task);
    return e.map < p.maps.size() ? p.maps[e.map] : nullptr;
  }

  void task_start(const Event& e) {
    if (task_proc_[e.task] != kNone32) return;  // seen already
    const bool has_parent = e.arg != kNone32 && e.arg < task_proc_.size() && e.arg != e.task;
    if (e.thread && has_parent) {
      const uint32_t pi = process_index(e.arg);
      task_proc_[e.task] = pi;
      ++procs_[pi].live_tasks;
      return;
    }
    const uint32_t ci = process_index(e.task);
    if (!has_parent) return;
    // fork(): the parent's mappings, none of their PTEs.
    const uint32_t pi = process_index(e.arg);
    Process& c = procs_[ci];
    const Process& parent = procs_[pi];
    c.maps.assign(parent.maps.size(), nullptr);
    for (size_t id = 0; id < parent.maps.size(); ++id) {
      const mm::Vma* v = parent.maps[id];
      if (!v) continue;
      c.maps[id] = k_.mmap(c.mm.get(), v->vm_file, v->vm_pgoff, v->nr_pages(), v->vm_flags,
                           (v->vm_start >> mm::kPageShift) & (mm::kPtrsPerPte - 1));
    }
  }

  void task_exit(const Event& e) {
    if (task_proc_[e.task] == kNone32) return;
    Process& p = procs_[task_proc_[e.task]];
    if (p.live_tasks > 0 && --p.live_tasks > 0) return;
    // exit_mmap(): every mapping goes, and the anonymous memory.
    for (mm::Vma*& v : p.maps) {
      if (v) mm::do_munmap(k_, *v);
      v = nullptr;
    }
    k_.charge(-static_cast<int64_t>(p.anon_pages));
    p.anon_pages = 0;
  }

  void mmap(const Event& e) {
    Process& p = process_of(e.task);
    mm::File* f = e.handle == kNone32 ? nullptr : handles_[e.handle];
    mm::vm_flags_t flags = mm::VM_READ;
    if (e.arg & kProtWrite) flags |= mm::VM_WRITE;
    if (e.arg & kProtExec) flags |= mm::VM_EXEC;
    if (e.arg & workload::kMapShared) flags |= mm::VM_SHARED;
    if (p.maps.size() <= e.map) p.maps.resize(e.map + 1, nullptr);
    if (map_file_.size() <= e.map) map_file_.resize(e.map + 1, kNone32);
    map_file_[e.map] = e.handle == kNone32 ? kNone32 : handle_file_[e.handle];
    if (e.length == 0) return;
    mm::Vma* vma =
        k_.mmap(p.mm.get(), f, e.offset, e.length, flags, workload::map_align_pages(e.arg));
    p.maps[e.map] = vma;
    if (cfg_.mapping.madvise != mm::Madvise::kNormal) {
      mm::do_madvise(k_, *vma, 0, vma->nr_pages(), cfg_.mapping.madvise);
    }
  }

  void munmap(const Event& e) {
    Process& p = process_of(e.task);
    mm::Vma* vma = vma_of(e);
    if (!vma) {
      ++skipped_;
      return;
    }
    if (e.offset == 0 && e.length >= vma->nr_pages()) {
      mm::do_munmap(k_, *vma);
      p.maps[e.map] = nullptr;
    } else if (e.offset < vma->nr_pages()) {
      mm::zap_page_range(k_, *vma, e.offset, std::min(e.length, vma->nr_pages() - e.offset));
    }
  }

  const Config& cfg_;
  mm::Kernel& k_;
  std::vector<mm::AddressSpace*> files_;  // by file index
  std::vector<mm::File*> handles_;        // by handle id
  std::vector<uint32_t> handle_file_;     // by handle id
  std::vector<uint32_t> map_file_;        // by map id
  std::vector<Process> procs_;
  std::vector<uint32_t> task_proc_;  // by task; kNone32: not started
  std::vector<FileShare> shares_;
  uint32_t current_ = kNone32;  // the file the counters since snap_ belong to
  mm::VmStat snap_;
  uint64_t snap_min_ = 0, snap_maj_ = 0;
  uint64_t skipped_ = 0;
};

}  // namespace

Result<RunResult> replay_recording(const Config& cfg, mm::Tracer* tracer,
                                   const RunProgress& progress) {
  auto reader = workload::RecordingReader::open(cfg.access.trace, cfg.access.allow_incomplete);
  if (!reader.ok()) return reader.status();
  const workload::RecordingInfo& info = (*reader)->info();
  const std::unique_ptr<mm::Kernel> kernel = make_kernel(cfg);
  mm::Kernel& k = *kernel;
  Replay replay(cfg, k, info);

  k.settle_reclaim();  // the preparation's reclaim is not the workload's
  const mm::VmStat before = k.vmstat();
  const double t0 = k.now_ns();
  replay.start();
  TimelineSampler timeline(cfg.model, k, before, t0, [&replay] {
    const TaskCounters t = replay.task_counters();
    return std::pair<uint64_t, uint64_t>{t.min_flt, t.maj_flt};
  });
  InvariantCheck invariants(cfg.model.invariants, k, [&replay] { return replay.mms(); });
  k.set_tracer(tracer);
  // As in the serial engine, the runs engine takes a stretch of touches of
  // consecutive pages that hit present PTEs as one step.
  const bool batch_hits = k.runs() && !timeline.on();
  auto continues = [](const Event& a, const Event& b) {
    return b.op == EventOp::kTouch && b.task == a.task && b.map == a.map && b.write == a.write &&
           b.offset == a.offset + 1;
  };
  std::vector<Event> batch(4096);
  uint64_t done = 0;
  while (const size_t n = (*reader)->next(batch)) {
    size_t stretch_end = 0;  // batch[i, stretch_end) continue each other
    for (size_t i = 0; i < n; ++i) {
      if (batch_hits && batch[i].op == EventOp::kTouch) {
        if (i >= stretch_end) {
          stretch_end = i + 1;
          while (stretch_end < n && continues(batch[stretch_end - 1], batch[stretch_end])) {
            ++stretch_end;
          }
        }
        const uint64_t m = std::min<uint64_t>(stretch_end - i, invariants.until_due(done + i));
        const uint64_t h = m > 1 ? replay.touch_hits(batch[i], m) : 0;
        if (h) {
          k.settle_reclaim();
          invariants.after_access(done + i + h);
          i += h - 1;
          continue;
        }
      }
      k.set_access_seq(done + i);
      replay.apply(batch[i]);
      k.settle_reclaim();
      timeline.after_access(done + i + 1);
      invariants.after_access(done + i + 1);
    }
    done += n;
    if (progress) progress(done, info.nr_events);
  }
  k.set_tracer(nullptr);
  FAULTLINE_RETURN_IF_ERROR((*reader)->status());
  replay.finish();
  FAULTLINE_RETURN_IF_ERROR(invariants.finish(done));

  k.settle_reclaim();  // the last access's
  RunResult r;
  r.config = effective_keys(cfg);
  r.timeline = timeline.finish(done);
  report_counters(k.vmstat() - before, replay.task_counters(), (k.now_ns() - t0) / 1e9, &r);
  uint64_t cached = 0;
  for (const mm::AddressSpace* as : replay.files()) cached += as->nr_cached_pages();
  auto add = [&](const char* name, double v) { r.counters.push_back({name, v}); };
  add("model.mmap_miss_max", k.mmap_miss_peak());
  add("model.cache_capacity_pages", static_cast<double>(k.capacity_pages()));
  add("model.page_cache_pages", static_cast<double>(cached));
  add("model.replay_events", static_cast<double>(done));
  add("model.replay_skipped", static_cast<double>(replay.skipped()));
  for (size_t f = 0; f < info.files.size(); ++f) {
    FileResult fr;
    fr.path = info.files[f].path;
    const FileShare& s = replay.shares()[f];
    report_file_counters(s.events, s.min_flt, s.maj_flt, &fr.counters);
    fr.counters.push_back(
        {"model.page_cache_pages", static_cast<double>(replay.files()[f]->nr_cached_pages())});
    r.files.push_back(std::move(fr));
  }
  return r;
}

}  // namespace faultline::engine
