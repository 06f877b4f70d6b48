#include "record/assemble.h"

#include <sys/stat.h>

#include <algorithm>
#include <cstring>

#include "preload/touch_log.h"

namespace faultline::record {

using workload::Event;
using workload::EventOp;
using workload::kNone32;

namespace {
constexpr uint64_t kPage = 4096;
uint64_t page_up(uint64_t v) { return (v + kPage - 1) & ~(kPage - 1); }
}  // namespace

namespace {
// path is dir or below it.
bool under(const std::string& path, std::string dir) {
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  return path == dir || (path.size() > dir.size() && path.compare(0, dir.size(), dir) == 0 &&
                         (path[dir.size()] == '/' || dir == "/"));
}

std::string basename(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}
}  // namespace

bool DataFilter::operator()(const std::string& path) const {
  if (path.empty() || path[0] != '/') return false;  // sockets, pipes, anon_inode:...
  for (const std::string& x : exclude) {
    if (under(path, x)) return false;
  }
  if (!dirs.empty()) {
    return std::any_of(dirs.begin(), dirs.end(),
                       [&](const std::string& d) { return under(path, d); });
  }
  for (const char* s : preload::kSystemDirs) {
    if (path.compare(0, std::strlen(s), s) == 0) return false;
  }
  return true;
}

Assembler::Assembler(workload::RecordingWriter& out, DataFilter data, uint64_t t0_ns)
    : out_(out), data_(std::move(data)), t0_ns_(t0_ns) {}

void Assembler::emit(Event e, uint64_t time_ns, uint32_t task) {
  e.time_ns = time_ns > t0_ns_ ? time_ns - t0_ns_ : 0;
  e.task = task;
  out_.append(e);
}

// The task of a thread id; one not seen before is a process of its own (the
// program's first task, or one whose clone strace did not show).
Assembler::Task& Assembler::task_of(uint32_t tid, uint64_t time_ns) {
  auto it = tasks_.find(tid);
  if (it != tasks_.end()) return it->second;
  const uint32_t index = out_.add_task({tid, tid, ""});
  task_pid_.push_back(tid);
  task_comm_.emplace_back();
  const uint32_t proc = static_cast<uint32_t>(procs_.size());
  fdts_.emplace_back();
  procs_.push_back({static_cast<uint32_t>(fdts_.size() - 1), {}, index});
  Task& t = tasks_[tid] = {index, proc};
  emit({.op = EventOp::kTaskStart, .arg = kNone32}, time_ns, index);
  return t;
}

uint32_t Assembler::file_index(const std::string& path) {
  auto it = files_.find(path);
  if (it != files_.end()) return it->second;
  const uint32_t i = out_.add_file({path, 0});
  files_.emplace(path, i);
  file_paths_.push_back(path);
  file_extent_.push_back(0);
  return i;
}

void Assembler::release_fd(uint32_t fdt, int fd) {
  auto& table = fdts_[fdt];
  auto it = table.find(fd);
  if (it == table.end()) return;
  Desc& d = descs_[it->second.desc];
  table.erase(it);
  // The open file stays while a descriptor or a mapping holds it; the
  // recording closes it with its last descriptor.
  if (d.refs > 0 && --d.refs == 0 && d.file >= 0) {
    emit({.op = EventOp::kClose, .handle = d.handle}, last_time_, last_task_);
  }
}

void Assembler::set_fd(uint32_t fdt, int fd, uint32_t desc, bool cloexec) {
  release_fd(fdt, fd);
  ++descs_[desc].refs;
  fdts_[fdt][fd] = {desc, cloexec};
}

void Assembler::unmap_range(Proc& p, uint64_t lo, uint64_t hi, uint64_t time, uint32_t task) {
  std::vector<uint64_t> hit;
  for (const auto& [start, m] : p.maps) {
    if (start < hi && lo < m.end) hit.push_back(start);
  }
  for (const uint64_t start : hit) {
    const Map m = p.maps.at(start);
    const uint64_t a = std::max(lo, start), b = std::min(hi, m.end);
    emit({.op = EventOp::kMunmap,
          .map = m.id,
          .offset = (a - m.base) / kPage,
          .length = (b - a) / kPage},
         time, task);
    p.maps.erase(start);
    // What is left of it, on either side.
    if (start < a) p.maps[start] = {m.base, a, m.id, m.handle, m.pgoff};
    if (b < m.end) p.maps[b] = {m.base, m.end, m.id, m.handle, m.pgoff};
  }
}

void Assembler::call(const Call& c) {
  Task& t = task_of(c.tid, c.time_ns);
  last_time_ = c.time_ns;
  last_task_ = t.index;
  Proc& p = procs_[t.proc];
  auto desc_of = [&](int fd) -> Desc* {
    auto it = fdts_[p.fdt].find(fd);
    return it == fdts_[p.fdt].end() ? nullptr : &descs_[it->second.desc];
  };
  auto data_desc = [&](int fd) -> Desc* {
    Desc* d = desc_of(fd);
    return d && d->file >= 0 ? d : nullptr;
  };
  switch (c.kind) {
    case CallKind::kOpen: {
      Desc d;
      // A directory opened to list it (O_DIRECTORY, or one without the
      // flag: opendir() of a path) has no pages the recording follows.
      struct stat st {};
      const bool directory =
          c.directory || (::stat(c.path.c_str(), &st) == 0 && S_ISDIR(st.st_mode));
      if (!directory && data_(c.path)) {
        d.file = static_cast<int32_t>(file_index(c.path));
        d.handle = next_handle_++;
        emit({.op = EventOp::kOpen, .write = c.write, .file = static_cast<uint32_t>(d.file)},
             c.time_ns, t.index);
      }
      descs_.push_back(d);
      set_fd(p.fdt, c.ret_fd, static_cast<uint32_t>(descs_.size() - 1), c.cloexec);
      break;
    }
    case CallKind::kClose:
      release_fd(p.fdt, c.fd);
      break;
    case CallKind::kCloseRange: {
      std::vector<int> fds;
      for (const auto& [fd, f] : fdts_[p.fdt]) {
        if (static_cast<uint64_t>(fd) >= c.offset && static_cast<uint64_t>(fd) <= c.length) {
          fds.push_back(fd);
        }
      }
      for (int fd : fds) release_fd(p.fdt, fd);
      break;
    }
    case CallKind::kDup: {
      auto it = fdts_[p.fdt].find(c.fd);
      if (it != fdts_[p.fdt].end()) set_fd(p.fdt, c.ret_fd, it->second.desc, c.cloexec);
      break;
    }
    case CallKind::kRead:
      if (Desc* d = data_desc(c.fd)) {
        emit({.op = EventOp::kRead, .handle = d->handle, .offset = d->pos, .length = c.length},
             c.time_ns, t.index);
        file_extent_[d->file] = std::max(file_extent_[d->file], d->pos + c.length);
      }
      if (Desc* d = desc_of(c.fd); d && c.ret > 0) d->pos += static_cast<uint64_t>(c.ret);
      break;
    case CallKind::kPread:
      if (Desc* d = data_desc(c.fd)) {
        emit({.op = EventOp::kRead, .handle = d->handle, .offset = c.offset, .length = c.length},
             c.time_ns, t.index);
        file_extent_[d->file] = std::max(file_extent_[d->file], c.offset + c.length);
      }
      break;
    case CallKind::kLseek:
      if (Desc* d = desc_of(c.fd); d && c.ret >= 0) d->pos = static_cast<uint64_t>(c.ret);
      break;
    case CallKind::kMmap: {
      const uint64_t len = page_up(c.length);
      if (c.fixed) unmap_range(p, c.addr, c.addr + len, c.time_ns, t.index);
      Desc* d = c.anonymous ? nullptr : data_desc(c.fd);
      if (!d || len == 0) break;
      const Map m{c.addr, c.addr + len, next_map_++, d->handle, c.offset / kPage};
      emit({.op = EventOp::kMmap,
            .handle = d->handle,
            .arg = workload::map_arg(c.prot, c.shared, c.addr),
            .offset = m.pgoff,
            .length = len / kPage},
           c.time_ns, t.index);
      p.maps[c.addr] = m;
      file_extent_[d->file] = std::max(file_extent_[d->file], c.offset + c.length);
      break;
    }
    case CallKind::kMunmap:
      unmap_range(p, c.addr, c.addr + page_up(c.length), c.time_ns, t.index);
      break;
    case CallKind::kMremap: {
      auto it = p.maps.upper_bound(c.addr);
      if (it == p.maps.begin()) break;
      --it;
      const Map m = it->second;
      if (c.addr >= m.end) break;
      const uint64_t to = static_cast<uint64_t>(c.ret);
      unmap_range(p, c.addr, c.addr + page_up(c.offset), c.time_ns, t.index);
      const Map moved{to, to + page_up(c.length), next_map_++, m.handle,
                      m.pgoff + (c.addr - m.base) / kPage};
      emit({.op = EventOp::kMmap,
            .handle = m.handle,
            .arg = workload::map_arg(1, true, to),
            .offset = moved.pgoff,
            .length = page_up(c.length) / kPage},
           c.time_ns, t.index);
      p.maps[to] = moved;
      break;
    }
    case CallKind::kMadvise: {
      const uint64_t lo = c.addr, hi = c.addr + page_up(c.length);
      for (const auto& [start, m] : p.maps) {
        if (hi <= start || lo >= m.end) continue;
        const uint64_t a = std::max(lo, start), b = std::min(hi, m.end);
        emit({.op = EventOp::kMadvise,
              .map = m.id,
              .arg = c.advice,
              .offset = (a - m.base) / kPage,
              .length = (b - a) / kPage},
             c.time_ns, t.index);
      }
      break;
    }
    case CallKind::kFadvise:
      if (Desc* d = data_desc(c.fd)) {
        emit({.op = EventOp::kFadvise,
              .handle = d->handle,
              .arg = c.advice,
              .offset = c.offset,
              .length = c.length},
             c.time_ns, t.index);
      }
      break;
    case CallKind::kClone: {
      const uint32_t child_tid = static_cast<uint32_t>(c.ret);
      if (tasks_.count(child_tid)) break;
      uint32_t proc = t.proc;
      const uint32_t pid = c.thread ? task_pid_[t.index] : child_tid;
      if (!c.thread) {
        Proc child = p;  // fork(): the parent's mappings
        if (!c.share_files) {
          fdts_.push_back(fdts_[p.fdt]);  // a copy of the fd table, the same open files
          for (const auto& [fd, f] : fdts_.back()) ++descs_[f.desc].refs;
          child.fdt = static_cast<uint32_t>(fdts_.size() - 1);
        }
        procs_.push_back(std::move(child));
        proc = static_cast<uint32_t>(procs_.size() - 1);
      }
      const uint32_t index = out_.add_task({child_tid, pid, task_comm_[t.index]});
      if (!c.thread) procs_[proc].leader = index;
      tasks_[child_tid] = {index, proc};
      task_pid_.push_back(pid);
      task_comm_.push_back(task_comm_[t.index]);
      emit({.op = EventOp::kTaskStart, .thread = c.thread, .arg = t.index}, c.time_ns, index);
      break;
    }
    case CallKind::kExecve: {
      if (!c.path.empty()) {
        task_comm_[t.index] = basename(c.path);
        out_.set_task_comm(t.index, task_comm_[t.index]);
      }
      // The process's memory is replaced: every mapping goes; O_CLOEXEC files close.
      unmap_range(p, 0, ~uint64_t{0}, c.time_ns, t.index);
      std::vector<int> cloexec;
      for (const auto& [fd, f] : fdts_[p.fdt]) {
        if (f.cloexec) cloexec.push_back(fd);
      }
      for (int fd : cloexec) release_fd(p.fdt, fd);
      break;
    }
    case CallKind::kExit:
      emit({.op = EventOp::kTaskExit}, c.time_ns, t.index);
      break;
    case CallKind::kIoUring:
      limits_.insert("limit.io_uring");
      break;
    case CallKind::kEfault:
      limits_.insert("limit.efault");
      break;
  }
}

void Assembler::touch(const Touch& tc) {
  Task& t = task_of(tc.tid, tc.time_ns);
  Proc& p = procs_[t.proc];
  auto it = p.maps.upper_bound(tc.addr);
  if (it != p.maps.begin()) {
    --it;
    const Map& m = it->second;
    if (tc.addr < m.end) {
      emit({.op = EventOp::kTouch,
            .write = tc.write,
            .map = m.id,
            .offset = (tc.addr - m.base) / kPage},
           tc.time_ns, t.index);
      ++touches_;
      return;
    }
  }
  ++touches_outside_;
}

void Assembler::anon(const AnonSample& a) {
  auto it = tasks_.find(a.pid);
  if (it == tasks_.end()) return;
  uint64_t& last = anon_[a.pid];
  if (last == a.pages) return;
  last = a.pages;
  emit({.op = EventOp::kAnon, .length = a.pages}, a.time_ns, it->second.index);
}

std::vector<std::pair<std::string, std::string>> Assembler::finish() {
  for (size_t i = 0; i < file_paths_.size(); ++i) {
    struct stat st {};
    const bool exists = ::stat(file_paths_[i].c_str(), &st) == 0 && S_ISREG(st.st_mode);
    out_.set_file_size(static_cast<uint32_t>(i),
                       exists ? static_cast<uint64_t>(st.st_size) : file_extent_[i]);
  }
  std::vector<std::pair<std::string, std::string>> out;
  for (const std::string& l : limits_) out.emplace_back(l, "yes");
  return out;
}

}  // namespace faultline::record
