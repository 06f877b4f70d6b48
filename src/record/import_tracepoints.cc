// import_tracepoints.cc — a recording of the filemap:mm_filemap_fault
// events of the kernel's trace text: a tracefs instance's `trace` (or
// trace_pipe) file, with or without the record-tgid option, `trace-cmd
// report` (its -l, -t and --ts-diff variants, a buffer name in front), or
// perf script of the tracepoint.
//
//   t-25229   [000] .....  6225.416420: mm_filemap_fault: dev=254:0 ino=a781e3 ofs=0
//   t-25252   (  25252) [000] .....  6227.296143: mm_filemap_fault: dev=254:0 ino=a781e3 ofs=0
//   flhelper:    t-25646 [001]  6250.464086: mm_filemap_fault:     dev=254:0 ino=a781e3 ofs=0
//   t-25646   1.....  6250.464086: mm_filemap_fault:     dev=254:0 ino=a781e3 ofs=0  (-l)
//
// filemap_fault() traces the file (s_dev, i_ino in hexadecimal) and the byte
// offset of the faulting page; the spelling without '=' ("dev 254:0 ino
// a781e3") is read too. A file is named "dev:MAJ:MIN ino:N", the inode in
// decimal as ls -i and find -inum take it; with --data, a file under those
// directories with the same device and inode gives its path instead, and
// faults of files found under none of them are left out (system-wide traces
// fault libraries too).
// Each file is an open and one shared, read-only mmap of the whole file at
// time 0 by the first task; its size is the furthest page faulted (or its
// size here, when a path is known and that is larger), so the input is read
// twice: a first pass finds the files and their sizes, the second writes
// the events. Each fault is a touch of its page by its task (a retried
// fault, FAULT_FLAG_TRIED, is traced again and touches the page again, which
// the replay finds mapped). The task is the number after the comm and '-'
// (the kernel's pid, a thread id); with record-tgid, a thread of a process
// seen before is a thread of that process's first task, and a new process,
// like every task when the trace has no tgid, is forked from the first task
// (it has the files' mappings). Times are from the first fault; a clock
// without a fraction (counter, x86-tsc) is taken as nanoseconds. Other
// events are skipped; "[LOST N EVENTS]" lines are counted in the
// recording's limit.lost_events.
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <map>
#include <string_view>
#include <tuple>
#include <unordered_map>

#include "record/assemble.h"
#include "record/importers.h"
#include "util/text.h"
#include "workload/recording.h"

namespace faultline::record {
namespace {

using util::field_value;
using util::parse_number;
using util::trim;
using workload::EventOp;
using workload::kNone32;
using workload::RecordingWriter;

constexpr uint64_t kPage = 4096;
constexpr uint32_t kProtRead = 1;  // PROT_READ
constexpr std::string_view kEvent = "mm_filemap_fault:";

bool is_space(char c) { return c == ' ' || c == '\t'; }

// "6225.416420:" (seconds and microseconds, or nanoseconds with trace-cmd
// -t) or "123456:" (a clock without a fraction) in ns.
bool parse_time(std::string_view s, uint64_t* ns) {
  if (s.size() < 2 || s.back() != ':') return false;
  s.remove_suffix(1);
  if (s.find('.') == std::string_view::npos) return parse_number(s, 10, ns);
  return util::parse_seconds(s, ns);
}

struct FileKey {
  uint32_t major = 0, minor = 0;
  uint64_t ino = 0;
  bool operator<(const FileKey& o) const {
    return std::tie(major, minor, ino) < std::tie(o.major, o.minor, o.ino);
  }
};

struct Fault {
  uint32_t tid = 0;
  uint32_t tgid = 0;  // 0: not in the trace
  std::string_view comm;
  uint64_t time_ns = 0;
  FileKey file;
  uint64_t page = 0;
};

enum class LineKind { kOther, kLost, kFault };

// "comm-1234", "comm-1234 (  1230) [001] .....", "buf:  comm-1234 [001]",
// "comm-1234   1.....", or perf's "comm 1234 [001]": the task before the time.
bool parse_task(std::string_view head, Fault* f) {
  head = trim(head);
  size_t best = std::string_view::npos, best_end = 0;
  for (size_t j = head.find('-'); j != std::string_view::npos; j = head.find('-', j + 1)) {
    size_t k = j + 1;
    while (k < head.size() && std::isdigit(static_cast<unsigned char>(head[k]))) ++k;
    if (k == j + 1 || (k < head.size() && !is_space(head[k]) && head[k] != '(')) continue;
    const std::string_view rest = trim(head.substr(k));
    if (!rest.empty() && rest[0] != '(' && rest[0] != '[' &&
        rest.find_first_of(" \t") != std::string_view::npos) {
      continue;
    }
    best = j;
    best_end = k;
  }
  uint64_t tid = 0, tgid = 0;
  if (best != std::string_view::npos) {
    parse_number(head.substr(best + 1, best_end - best - 1), 10, &tid);
    const std::string_view rest = trim(head.substr(best_end));
    if (!rest.empty() && rest[0] == '(') {
      const size_t close = rest.find(')');
      if (close != std::string_view::npos) parse_number(trim(rest.substr(1, close - 1)), 10, &tgid);
    }
    std::string_view comm = trim(head.substr(0, best));
    // trace-cmd names the buffer of an instance first: "flhelper:   t-25646".
    const size_t sp = comm.find_first_of(" \t");
    if (sp != std::string_view::npos && sp > 0 && comm[sp - 1] == ':') comm = trim(comm.substr(sp));
    f->comm = comm;
  } else {
    // perf script: "comm 1234 [001]" or "comm 1230/1234 [001]".
    while (!head.empty() && head.back() == ']') {
      const size_t open = head.find_last_of('[');
      if (open == std::string_view::npos) return false;
      head = trim(head.substr(0, open));
    }
    const size_t sp = head.find_last_of(" \t");
    const std::string_view id = sp == std::string_view::npos ? head : head.substr(sp + 1);
    const size_t slash = id.find('/');
    if (slash == std::string_view::npos ? !parse_number(id, 10, &tid)
                                        : !parse_number(id.substr(0, slash), 10, &tgid) ||
                                              !parse_number(id.substr(slash + 1), 10, &tid)) {
      return false;
    }
    f->comm = sp == std::string_view::npos ? std::string_view{} : trim(head.substr(0, sp));
  }
  f->tid = static_cast<uint32_t>(tid);
  f->tgid = static_cast<uint32_t>(tgid);
  return true;
}

// One line of the trace; *err says why a line of mm_filemap_fault cannot be read.
LineKind parse_line(std::string_view line, Fault* f, uint64_t* lost, std::string* err) {
  size_t p = line.find(kEvent);
  while (p != std::string_view::npos &&
         ((p > 0 && !is_space(line[p - 1]) && line[p - 1] != ':') ||
          (p + kEvent.size() < line.size() && !is_space(line[p + kEvent.size()])))) {
    p = line.find(kEvent, p + 1);
  }
  if (p == std::string_view::npos) {
    // "CPU:1 [LOST 123 EVENTS]": the buffer was full.
    const size_t l = line.find("[LOST ");
    uint64_t n = 0;
    if (l != std::string_view::npos) {
      const std::string_view rest = line.substr(l + 6);
      if (parse_number(rest.substr(0, rest.find(' ')), 10, &n)) {
        *lost += n;
        return LineKind::kLost;
      }
    }
    return LineKind::kOther;
  }
  std::string_view head = line.substr(0, p);
  if (head.size() >= 8 && head.substr(head.size() - 8) == "filemap:") head.remove_suffix(8);
  head = trim(head);
  // The time, and trace-cmd --ts-diff's "(+193)" after it.
  size_t sp = head.find_last_of(" \t");
  std::string_view last = sp == std::string_view::npos ? head : head.substr(sp + 1);
  if (last.size() > 2 && last.substr(0, 2) == "(+" && last.back() == ')') {
    head = trim(head.substr(0, sp == std::string_view::npos ? 0 : sp));
    sp = head.find_last_of(" \t");
    last = sp == std::string_view::npos ? head : head.substr(sp + 1);
  }
  if (!parse_time(last, &f->time_ns)) {
    *err = "expected the time (seconds.microseconds:) before mm_filemap_fault";
    return LineKind::kOther;
  }
  if (sp == std::string_view::npos || !parse_task(head.substr(0, sp), f)) {
    *err = "expected the task (COMM-PID) before the time";
    return LineKind::kOther;
  }
  const std::string_view fields = line.substr(p + kEvent.size());
  const std::string_view dev = field_value(fields, "dev");
  const size_t colon = dev.find(':');
  uint64_t major = 0, minor = 0, ofs = 0;
  if (colon == std::string_view::npos || !parse_number(dev.substr(0, colon), 10, &major) ||
      !parse_number(dev.substr(colon + 1), 10, &minor) ||
      !parse_number(field_value(fields, "ino"), 16, &f->file.ino) ||
      !parse_number(field_value(fields, "ofs"), 10, &ofs)) {
    *err = "mm_filemap_fault: expected dev=MAJ:MIN ino=INODE (hexadecimal) ofs=OFFSET";
    return LineKind::kOther;
  }
  f->file.major = static_cast<uint32_t>(major);
  f->file.minor = static_cast<uint32_t>(minor);
  f->page = ofs / kPage;
  return LineKind::kFault;
}

struct TracedFile {
  std::string name;
  uint64_t pages = 0;  // the furthest page faulted + 1
  bool kept = true;    // false: not under --data
  uint32_t map = 0;    // its mapping's id
};

// The files under dirs, by device and inode.
std::map<FileKey, std::string> files_under(const std::vector<std::string>& dirs) {
  namespace fs = std::filesystem;
  std::map<FileKey, std::string> found;
  for (const std::string& d : dirs) {
    std::error_code ec;
    for (fs::recursive_directory_iterator it(d, fs::directory_options::skip_permission_denied, ec),
         end;
         !ec && it != end; it.increment(ec)) {
      struct stat st {};
      if (::stat(it->path().c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
      found.emplace(FileKey{major(st.st_dev), minor(st.st_dev), st.st_ino}, it->path().string());
    }
  }
  return found;
}

}  // namespace

Result<ImportReport> import_tracepoints(const std::string& in, const std::string& out,
                                        const ImportOptions& o) {
  struct stat st {};
  if (::stat(in.c_str(), &st) != 0) return Status::NotFound(in + ": cannot open trace");
  if (!S_ISREG(st.st_mode)) {
    return Status::InvalidArgument(in +
                                   ": not a regular file (the trace is read twice: save it first)");
  }
  // First pass: the files, their sizes, the first task.
  std::map<FileKey, uint32_t> file_of;
  std::vector<TracedFile> files;
  Fault first;
  std::string first_comm;
  uint64_t faults = 0, lost = 0;
  {
    std::ifstream is(in);
    if (!is) return Status::NotFound(in + ": cannot open trace");
    std::string line, err;
    uint64_t lineno = 0;
    Fault f;
    while (std::getline(is, line)) {
      ++lineno;
      if (parse_line(line, &f, &lost, &err) != LineKind::kFault) {
        if (!err.empty()) {
          return Status::InvalidArgument(in + ":" + std::to_string(lineno) + ": " + err +
                                         ", got '" + line + "'");
        }
        continue;
      }
      if (faults++ == 0) {
        first = f;
        first_comm = std::string(f.comm);
      }
      auto [it, fresh] = file_of.try_emplace(f.file, static_cast<uint32_t>(files.size()));
      if (fresh) {
        files.push_back({"dev:" + std::to_string(f.file.major) + ":" +
                         std::to_string(f.file.minor) + " ino:" + std::to_string(f.file.ino)});
      }
      files[it->second].pages = std::max(files[it->second].pages, f.page + 1);
    }
    if (is.bad()) return Status::IoError(in + ": read error");
  }
  if (faults == 0) {
    return Status::InvalidArgument(
        in + ": no mm_filemap_fault events (echo 1 > events/filemap/mm_filemap_fault/enable)");
  }
  DataFilter data;
  data.dirs = o.data_dirs;
  std::map<FileKey, std::string> paths;
  if (!o.data_dirs.empty()) paths = files_under(o.data_dirs);

  auto w = RecordingWriter::create(out);
  if (!w.ok()) return w.status();
  RecordingWriter& rec = **w;
  ImportReport rep;
  rec.add_task({first.tid, first.tgid ? first.tgid : first.tid, first_comm});
  rec.append({.op = EventOp::kTaskStart, .arg = kNone32});
  uint32_t next_map = 0;
  std::vector<uint32_t> index(files.size(), kNone32);  // in the recording
  for (const auto& [key, i] : file_of) {
    TracedFile& f = files[i];
    if (!o.data_dirs.empty()) {
      auto p = paths.find(key);
      f.kept = p != paths.end() && data(p->second);
      if (f.kept) f.name = p->second;
    }
  }
  for (size_t i = 0; i < files.size(); ++i) {
    TracedFile& f = files[i];
    if (!f.kept) continue;
    uint64_t size = f.pages * kPage;
    struct stat fst {};
    if (!o.data_dirs.empty() && ::stat(f.name.c_str(), &fst) == 0) {
      size = std::max(size, static_cast<uint64_t>(fst.st_size));
    }
    index[i] = rec.add_file({f.name, size});
    rep.files.push_back(f.name);
    rec.append({.op = EventOp::kOpen, .file = index[i]});
    f.map = next_map++;  // one open and one mapping a file: the handle has the map's number
    rec.append({.op = EventOp::kMmap,
                .handle = f.map,
                .arg = workload::map_arg(kProtRead, true, 0),
                .offset = 0,
                .length = f.pages});
  }

  // Second pass: the faults.
  std::ifstream is(in);
  if (!is) return Status::NotFound(in + ": cannot open trace");
  std::unordered_map<uint32_t, uint32_t> task_of{{first.tid, 0}};  // tid -> task index
  std::unordered_map<uint32_t, uint32_t> proc_of;                  // tgid -> its first task
  if (first.tgid) proc_of[first.tgid] = 0;
  std::string line, err;
  Fault f;
  uint64_t ignored = 0;
  while (std::getline(is, line)) {
    ++rep.lines;
    if (parse_line(line, &f, &ignored, &err) != LineKind::kFault) {
      ++rep.skipped;
      continue;
    }
    const TracedFile& tf = files[file_of.at(f.file)];
    if (!tf.kept) {
      ++rep.skipped;
      continue;
    }
    const uint64_t now = f.time_ns > first.time_ns ? f.time_ns - first.time_ns : 0;
    auto t = task_of.find(f.tid);
    if (t == task_of.end()) {
      auto p = f.tgid ? proc_of.find(f.tgid) : proc_of.end();
      const bool thread = p != proc_of.end();
      const uint32_t task = rec.add_task({f.tid, f.tgid ? f.tgid : f.tid, std::string(f.comm)});
      if (!thread && f.tgid) proc_of[f.tgid] = task;
      rec.append({.op = EventOp::kTaskStart,
                  .thread = thread,
                  .task = task,
                  .time_ns = now,
                  .arg = thread ? p->second : 0});
      t = task_of.emplace(f.tid, task).first;
    }
    rec.append({.op = EventOp::kTouch,
                .task = t->second,
                .time_ns = now,
                .map = tf.map,
                .offset = f.page});
  }
  if (is.bad()) return Status::IoError(in + ": read error");
  rep.events = rec.nr_events();
  std::vector<std::pair<std::string, std::string>> cond = {
      {"source", "tracepoints " + in},
      {"import.sees",
       "faults only (mm_filemap_fault): accesses that did not fault are not in the recording"}};
  if (lost) {
    cond.push_back({"limit.lost_events", std::to_string(lost) +
                                             " events the trace buffer lost (a larger "
                                             "buffer_size_kb keeps them)"});
  }
  FAULTLINE_RETURN_IF_ERROR(rec.finish(true, std::move(cond)));
  return rep;
}

}  // namespace faultline::record
