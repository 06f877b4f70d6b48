#include "probe/replay_plan.h"

#include <sys/mman.h>

#include <algorithm>

#include "workload/recording.h"

namespace faultline::probe {
namespace {

using workload::Event;
using workload::EventOp;
using workload::kNone32;

struct Proc {
  std::vector<uint32_t> maps;  // by map id: the mapping slot (kNone32: not mapped)
  uint32_t anon_slot = kNone32;
  uint32_t live_tasks = 0;
};

// The mapping a slot was made as, to map it again in a forked child.
struct SlotOf {
  uint32_t open_slot;
  uint32_t file;
  uint64_t pgoff, pages;
  uint32_t arg;
  // The madvise calls that set VMA flags (VM_RAND_READ, VM_SEQ_READ,
  // VM_HUGEPAGE, ...), which dup_mmap() copies into the child with the VMA.
  std::vector<ReplayOp> advice;
  bool dontfork = false;  // MADV_DONTFORK over the whole mapping: not inherited
};

// Advice that changes vm_flags for good (madvise_update_vma()), rather than
// acting once on the pages (MADV_WILLNEED, MADV_DONTNEED, ...).
bool sets_vma_flags(uint32_t advice) {
  switch (advice) {
    case MADV_NORMAL:
    case MADV_RANDOM:
    case MADV_SEQUENTIAL:
    case MADV_HUGEPAGE:
    case MADV_NOHUGEPAGE:
    case MADV_MERGEABLE:
    case MADV_UNMERGEABLE:
    case MADV_DONTDUMP:
    case MADV_DODUMP:
    case MADV_WIPEONFORK:
    case MADV_KEEPONFORK:
      return true;
    default:
      return false;
  }
}

}  // namespace

faultline::Result<ReplayPlan> plan_replay(const std::string& path, bool allow_incomplete) {
  auto reader = workload::RecordingReader::open(path, allow_incomplete);
  if (!reader.ok()) return reader.status();
  const workload::RecordingInfo& info = (*reader)->info();
  if (info.nr_events > kMaxReplayOps) {
    return Status::InvalidArgument(path + ": " + std::to_string(info.nr_events) +
                                   " events; the probe replays at most " +
                                   std::to_string(kMaxReplayOps));
  }
  ReplayPlan plan;
  for (const auto& f : info.files) {
    plan.file_bytes.push_back(f.size);
    plan.file_paths.push_back(f.path);
  }
  for (size_t i = 0;; ++i) {
    const std::string* a = info.condition("argv." + std::to_string(i));
    if (!a) break;
    plan.argv.push_back(*a);
  }
  if (const std::string* c = info.condition("cwd")) plan.cwd = *c;
  std::vector<Proc> procs;
  std::vector<uint32_t> task_proc(info.tasks.size(), kNone32);
  std::vector<SlotOf> slots;
  std::vector<uint32_t> handle_file;  // by handle
  auto proc_of = [&](uint32_t task) -> uint32_t {
    if (task_proc[task] == kNone32) {
      task_proc[task] = static_cast<uint32_t>(procs.size());
      procs.emplace_back();
      procs.back().live_tasks = 1;
    }
    return task_proc[task];
  };
  auto add = [&](ReplayOp op) { plan.ops.push_back(op); };
  auto new_map = [&](Proc& p, uint32_t map, SlotOf s) {
    const uint32_t slot = plan.map_slots++;
    if (p.maps.size() <= map) p.maps.resize(map + 1, kNone32);
    p.maps[map] = slot;
    add({.kind = ReplayOp::Kind::kMmap,
         .slot = slot,
         .other = s.open_slot,
         .file = s.file,
         .arg = s.arg,
         .offset = s.pgoff,
         .length = s.pages});
    for (ReplayOp a : s.advice) {
      a.slot = slot;
      add(a);
    }
    slots.push_back(std::move(s));
  };
  auto slot_of = [&](uint32_t task, uint32_t map) -> uint32_t {
    const Proc& p = procs[proc_of(task)];
    return map < p.maps.size() ? p.maps[map] : kNone32;
  };
  std::vector<Event> batch(4096);
  while (const size_t n = (*reader)->next(batch)) {
    for (size_t i = 0; i < n; ++i) {
      const Event& e = batch[i];
      switch (e.op) {
        case EventOp::kTaskStart: {
          if (task_proc[e.task] != kNone32) break;
          const bool has_parent = e.arg != kNone32 && e.arg != e.task;
          if (e.thread && has_parent) {
            task_proc[e.task] = proc_of(e.arg);
            ++procs[task_proc[e.task]].live_tasks;
            break;
          }
          const uint32_t ci = proc_of(e.task);
          if (!has_parent) break;
          const uint32_t pi = proc_of(e.arg);
          const std::vector<uint32_t> inherited = procs[pi].maps;
          for (uint32_t map = 0; map < inherited.size(); ++map) {
            if (inherited[map] == kNone32 || slots[inherited[map]].dontfork) continue;
            new_map(procs[ci], map, slots[inherited[map]]);
          }
          break;
        }
        case EventOp::kTaskExit: {
          if (task_proc[e.task] == kNone32) break;
          Proc& p = procs[task_proc[e.task]];
          if (p.live_tasks > 0 && --p.live_tasks > 0) break;
          for (uint32_t& slot : p.maps) {
            if (slot == kNone32) continue;
            add({.kind = ReplayOp::Kind::kMunmap,
                 .slot = slot,
                 .offset = 0,
                 .length = slots[slot].pages});
            slot = kNone32;
          }
          if (p.anon_slot != kNone32) {
            add({.kind = ReplayOp::Kind::kAnon, .slot = p.anon_slot, .length = 0});
          }
          break;
        }
        case EventOp::kOpen:
          add({.kind = ReplayOp::Kind::kOpen,
               .write = e.write,
               .slot = plan.open_slots++,
               .file = e.file});
          handle_file.push_back(e.file);
          break;
        case EventOp::kClose:
          add({.kind = ReplayOp::Kind::kClose, .slot = e.handle});
          break;
        case EventOp::kMmap:
          if (e.handle == kNone32 || e.length == 0) break;  // the replay follows file mappings
          new_map(procs[proc_of(e.task)], e.map,
                  {.open_slot = e.handle,
                   .file = handle_file[e.handle],
                   .pgoff = e.offset,
                   .pages = e.length,
                   .arg = e.arg,
                   .advice = {}});
          break;
        case EventOp::kMunmap:
        case EventOp::kMadvise:
        case EventOp::kTouch: {
          const uint32_t slot = slot_of(e.task, e.map);
          if (slot == kNone32) break;
          const auto kind = e.op == EventOp::kMunmap    ? ReplayOp::Kind::kMunmap
                            : e.op == EventOp::kMadvise ? ReplayOp::Kind::kMadvise
                                                        : ReplayOp::Kind::kTouch;
          const ReplayOp op{.kind = kind,
                            .write = e.write,
                            .slot = slot,
                            .arg = e.arg,
                            .offset = e.offset,
                            .length = e.length};
          add(op);
          if (e.op == EventOp::kMadvise) {
            SlotOf& s = slots[slot];
            const bool whole = e.offset == 0 && e.length >= s.pages;
            if (sets_vma_flags(e.arg)) s.advice.push_back(op);
            if (whole && e.arg == MADV_DONTFORK) s.dontfork = true;
            if (whole && e.arg == MADV_DOFORK) s.dontfork = false;
          }
          if (e.op == EventOp::kMunmap && e.offset == 0 && e.length >= slots[slot].pages) {
            procs[proc_of(e.task)].maps[e.map] = kNone32;
          }
          break;
        }
        case EventOp::kFadvise:
          add({.kind = ReplayOp::Kind::kFadvise,
               .slot = e.handle,
               .arg = e.arg,
               .offset = e.offset,
               .length = e.length});
          break;
        case EventOp::kRead:
          add({.kind = ReplayOp::Kind::kRead,
               .slot = e.handle,
               .offset = e.offset,
               .length = e.length});
          plan.largest_read = std::max(plan.largest_read, e.length);
          break;
        case EventOp::kAnon: {
          Proc& p = procs[proc_of(e.task)];
          if (p.anon_slot == kNone32) {
            p.anon_slot = plan.anon_slots++;
            plan.anon_max_pages.push_back(0);
          }
          plan.anon_max_pages[p.anon_slot] = std::max(plan.anon_max_pages[p.anon_slot], e.length);
          add({.kind = ReplayOp::Kind::kAnon, .slot = p.anon_slot, .length = e.length});
          break;
        }
      }
    }
  }
  FAULTLINE_RETURN_IF_ERROR((*reader)->status());
  return plan;
}

}  // namespace faultline::probe
