// import_perf.cc — a recording of the page faults that `perf record -e
// page-faults -c 1 -d PROGRAM` sampled and `perf script` printed, placed in
// the file mappings of the process's /proc/PID/maps (--maps, copied while
// the program ran).
//
//   24964  6146.970503:     7f69c29a9000                  -F tid,time,addr
//   t 24964/24964  6146.970503: page-faults:  7f69c29a9000 [unknown] (/tmp/data.bin)
//        5592e64ef251 main (/tmp/t)                       -F comm,pid,tid,time,event,addr,ip,...
//   t 26234 [001]  6320.635497: exceptions:page_fault_user: address=0x7f9677400007
//        ip=0x56471eba926b error_code=0x6                 perf record -e exceptions:page_fault_user
//
// perf script prints its fields in a fixed order whatever -F says: comm,
// pid/tid, [cpu], the time (seconds, microseconds or with --ns
// nanoseconds), the period, the event, then the data address (-d, field
// addr) before the instruction's (ip). The fault's address is the first
// number after the time and the event; the exceptions:page_fault_user
// tracepoint gives it as address= and says a store in error_code (bit 1,
// X86_PF_WRITE). perf's default fields leave the data address out: a kernel
// address where the data address should be is an instruction's, and an
// error says to add addr to -F. Without -c 1, perf samples the faults
// at a frequency: each sample then stands for its period of faults, and the
// recording says so (limit.perf_sampled).
//
// Every maps line of a data file (DataFilter: --data, or outside the
// system's directories) is an open of the file and an mmap of the line's
// range at time 0 by the first task: vm_pgoff from the line's offset, the
// PROT_* bits and MAP_SHARED from its perms. A file the maps map executable
// anywhere is a program or a library and left out, as are anonymous shared
// memory (/memfd:, /SYSV) and valgrind's vgdb-pipe files. Each fault in a
// data mapping is a touch of its page, a load unless the event says it was
// a store. Times are from the first sample. Tasks are one per tid: with a
// pid field, a tid of a pid seen before is a thread of that pid's first
// task, and a new pid is a process forked from the first task (it has the
// maps' mappings); without one, every tid is a thread of the first task's
// process, whose maps these are. A process whose comm is not the first
// task's ran another program (execve sets the comm): its samples are left
// out, as the maps are not its.
//
// Files are sized as they are on this machine now, or by the furthest page
// touched when that is larger (a file gone since: its mappings' extent).
#include <sys/mman.h>
#include <sys/stat.h>

#include <algorithm>
#include <charconv>
#include <fstream>
#include <map>
#include <set>
#include <string_view>
#include <unordered_map>

#include "record/assemble.h"
#include "record/importers.h"
#include "record/proc_maps.h"
#include "util/text.h"
#include "workload/recording.h"

namespace faultline::record {
namespace {

using util::next_field;
using util::parse_number;
using util::trim;
using workload::EventOp;
using workload::kNone32;
using workload::RecordingWriter;

// The process's maps and its data-file mappings, read as import_lackey.cc
// reads them.

// "6146.970503:" (seconds, then microseconds or, with --ns, nanoseconds) in
// ns; false if s is not a time.
bool parse_time(std::string_view s, uint64_t* ns) {
  if (s.size() < 4 || s.back() != ':') return false;
  s.remove_suffix(1);
  return util::parse_seconds(s, ns);
}

bool all_digits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// The software fault events, with or without modifiers ("page-faults:u").
bool is_fault_event(std::string_view name) {
  const std::string_view base = name.substr(0, name.find(':'));
  return base == "page-faults" || base == "faults" || base == "major-faults" ||
         base == "minor-faults";
}

constexpr uint64_t kKernelStart = 0xffff800000000000;  // x86-64 and arm64 kernel half

struct Sample {
  uint32_t tid = 0;
  uint32_t pid = 0;  // 0: not printed
  std::string comm;
  uint64_t time_ns = 0;
  uint64_t period = 0;  // 0: not printed
  uint64_t addr = 0;
  bool write = false;
};

enum class LineKind { kNotSample, kOtherEvent, kFault };

// One line of perf script; *err says why a line with a sample's time cannot
// be read.
LineKind parse_sample(std::string_view line, std::vector<std::string_view>* tok, Sample* out,
                      std::string* err) {
  if (line.find("PERF_RECORD_") != std::string_view::npos) return LineKind::kNotSample;
  tok->clear();
  for (std::string_view s = line, f; !(f = next_field(&s)).empty();) tok->push_back(f);
  const std::vector<std::string_view>& t = *tok;
  size_t ti = 0;
  while (ti < t.size() && !parse_time(t[ti], &out->time_ns)) ++ti;
  if (ti == t.size()) return LineKind::kNotSample;
  // Before the time: comm (it may hold spaces), pid/tid or tid, [cpu].
  size_t end = ti;
  while (end > 0 && t[end - 1].front() == '[') --end;
  const std::string_view id = end > 0 ? t[end - 1] : std::string_view{};
  const size_t slash = id.find('/');
  uint64_t tid = 0, pid = 0;
  if (slash == std::string_view::npos ? !parse_number(id, 10, &tid)
                                      : !parse_number(id.substr(0, slash), 10, &pid) ||
                                            !parse_number(id.substr(slash + 1), 10, &tid)) {
    *err = "expected the thread id before the time (perf script -F tid,time,addr)";
    return LineKind::kNotSample;
  }
  out->tid = static_cast<uint32_t>(tid);
  out->pid = static_cast<uint32_t>(pid);
  out->comm.clear();
  for (size_t i = 0; i + 1 < end; ++i) {
    if (i) out->comm += ' ';
    out->comm += t[i];
  }
  // After it: the period, the event, the data address.
  size_t j = ti + 1;
  out->period = 0;
  if (j + 1 < t.size() && all_digits(t[j]) && t[j + 1].back() == ':') {
    parse_number(t[j++], 10, &out->period);
  }
  std::string_view event;
  if (j < t.size() && t[j].back() == ':') {
    event = t[j].substr(0, t[j].size() - 1);
    ++j;
  }
  out->write = false;
  if (event == "exceptions:page_fault_user") {
    bool have = false;
    for (; j < t.size(); ++j) {
      uint64_t code = 0;
      if (t[j].rfind("address=0x", 0) == 0) have = parse_number(t[j].substr(10), 16, &out->addr);
      if (t[j].rfind("error_code=0x", 0) == 0 && parse_number(t[j].substr(13), 16, &code)) {
        out->write = code & 2;  // X86_PF_WRITE
      }
    }
    if (!have) *err = "exceptions:page_fault_user: expected address=0x...";
    return have ? LineKind::kFault : LineKind::kNotSample;
  }
  if (!event.empty() && !is_fault_event(event)) return LineKind::kOtherEvent;
  if (j == t.size() || !parse_number(t[j], 16, &out->addr)) {
    *err =
        "expected the fault's data address after the time (perf record -d; perf script -F "
        "tid,time,addr)";
    return LineKind::kNotSample;
  }
  if (out->addr >= kKernelStart) {
    *err = std::string(t[j]) +
           " is a kernel address, an instruction's: perf script's default fields leave the data "
           "address out (perf script -F tid,time,addr)";
    return LineKind::kNotSample;
  }
  return LineKind::kFault;
}

}  // namespace

Result<ImportReport> import_perf(const std::string& in, const std::string& out,
                                 const ImportOptions& o) {
  auto opened = open_address_import(in, out, o, "perf", "perf script output");
  if (!opened.ok()) return opened.status();
  std::ifstream& is = opened->is;
  DataMaps& maps = opened->maps;
  RecordingWriter& rec = *opened->rec;

  ImportReport rep;
  std::unordered_map<uint32_t, uint32_t> task_of;  // tid -> task index
  std::unordered_map<uint32_t, uint32_t> proc_of;  // pid -> its first task
  uint32_t first_pid = 0;
  std::string first_comm;
  uint64_t t0 = 0, samples = 0, outside = 0;
  bool sampled = false;
  std::vector<std::string_view> tok;
  Sample smp;
  std::string line, err;
  while (std::getline(is, line)) {
    ++rep.lines;
    err.clear();
    const LineKind kind = parse_sample(line, &tok, &smp, &err);
    if (!err.empty()) {
      return Status::InvalidArgument(in + ":" + std::to_string(rep.lines) + ": " + err + ", got '" +
                                     line + "'");
    }
    if (kind != LineKind::kFault) {
      ++rep.skipped;
      continue;
    }
    if (samples++ == 0) {
      t0 = smp.time_ns;
      first_pid = smp.pid ? smp.pid : smp.tid;
      first_comm = smp.comm;
      task_of[smp.tid] = rec.add_task({smp.tid, first_pid, smp.comm});
      proc_of[first_pid] = 0;
      rec.append({.op = EventOp::kTaskStart, .arg = kNone32});
      maps.emit(rec, 0);
    }
    const uint64_t now = smp.time_ns > t0 ? smp.time_ns - t0 : 0;
    const uint32_t pid = smp.pid ? smp.pid : first_pid;
    if (pid != first_pid && !smp.comm.empty() && smp.comm != first_comm) {
      ++rep.skipped;  // another program: these maps are not its
      continue;
    }
    sampled = sampled || smp.period > 1;
    uint32_t map = 0;
    uint64_t page = 0;
    bool mapped = false;
    if (!maps.find(smp.addr, &map, &page, &mapped)) {
      if (!mapped) ++outside;
      ++rep.skipped;
      continue;
    }
    auto it = task_of.find(smp.tid);
    if (it == task_of.end()) {
      // A thread of a process seen before, or a process of its own, forked
      // from the first task (whose mappings it has).
      auto p = proc_of.find(pid);
      const bool thread = p != proc_of.end();
      const uint32_t index = rec.add_task({smp.tid, pid, smp.comm});
      if (!thread) proc_of[pid] = index;
      rec.append({.op = EventOp::kTaskStart,
                  .thread = thread,
                  .task = index,
                  .time_ns = now,
                  .arg = thread ? p->second : 0});
      it = task_of.emplace(smp.tid, index).first;
    }
    rec.append({.op = EventOp::kTouch,
                .write = smp.write,
                .task = it->second,
                .time_ns = now,
                .map = map,
                .offset = page});
  }
  if (is.bad()) return Status::IoError(in + ": read error");
  if (samples == 0) {
    return Status::InvalidArgument(
        in +
        ": no page-fault samples (perf record -e page-faults -c 1 -d; perf script -F "
        "tid,time,addr)");
  }
  maps.set_sizes(rec);
  rep.files = maps.paths();
  rep.events = rec.nr_events();
  std::vector<std::pair<std::string, std::string>> cond = {
      {"source", "perf script " + in + " with maps " + o.maps},
      {"import.sees",
       "page faults only: accesses that did not fault (cached PTEs, fault-around) are not in the "
       "recording"},
      {"faults_outside_maps", std::to_string(outside)}};
  if (sampled) {
    cond.push_back({"limit.perf_sampled",
                    "a sample stands for several faults (a period above 1): perf record -c 1 "
                    "records every fault"});
  }
  FAULTLINE_RETURN_IF_ERROR(rec.finish(true, std::move(cond)));
  return rep;
}

}  // namespace faultline::record
