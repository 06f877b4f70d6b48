#include "record/import.h"

#include <algorithm>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>

#include "record/assemble.h"
#include "record/importers.h"
#include "record/strace.h"
#include "workload/recording.h"

namespace faultline::record {
namespace {

using workload::Event;
using workload::EventOp;

// A recording of what strace saw, in time order.
Result<ImportReport> import_strace(const std::string& in, const std::string& out,
                                   const ImportOptions& o) {
  auto log = read_strace_log(in);
  if (!log.ok()) return log.status();
  std::stable_sort(log->calls.begin(), log->calls.end(),
                   [](const Call& a, const Call& b) { return a.time_ns < b.time_ns; });
  auto w = workload::RecordingWriter::create(out);
  if (!w.ok()) return w.status();
  DataFilter data;
  data.dirs = o.data_dirs;
  Assembler as(**w, data, log->calls.empty() ? 0 : log->calls.front().time_ns);
  for (const Call& c : log->calls) as.call(c);
  auto cond = as.finish();
  cond.insert(cond.begin(), {{"source", "strace log " + in},
                             {"import.sees", "system calls; no access through a mapping"}});
  ImportReport rep;
  rep.events = (*w)->nr_events();
  rep.lines = log->lines;
  rep.skipped = log->skipped;
  FAULTLINE_RETURN_IF_ERROR((*w)->finish(true, std::move(cond)));
  return rep;
}

// fio iolog version 2 ("FILE ACTION [OFFSET LENGTH]") or 3 (a timestamp in
// milliseconds first). Reads become reads of an open file per fio file;
// writes, syncs and trims are counted as skipped (recordings hold reads).
Result<ImportReport> import_fio(const std::string& in, const std::string& out) {
  std::ifstream is(in);
  if (!is) return Status::NotFound(in + ": cannot open fio iolog");
  std::string line;
  uint64_t lineno = 0;
  auto bad = [&](const std::string& what) {
    return Status::InvalidArgument(in + ":" + std::to_string(lineno) + ": " + what);
  };
  if (!std::getline(is, line)) return Status::InvalidArgument(in + ": empty fio iolog");
  ++lineno;
  int version = 0;
  if (line.rfind("fio version 2 iolog", 0) == 0) version = 2;
  if (line.rfind("fio version 3 iolog", 0) == 0) version = 3;
  if (!version) return bad("not a fio iolog (its first line is 'fio version 2|3 iolog')");
  auto w = workload::RecordingWriter::create(out);
  if (!w.ok()) return w.status();
  workload::RecordingWriter& rec = **w;
  rec.add_task({1, 1, "fio"});
  rec.append({.op = EventOp::kTaskStart, .arg = workload::kNone32});
  std::map<std::string, uint32_t> files, handles;
  std::vector<uint64_t> extent;
  uint64_t now_ns = 0;
  ImportReport rep;
  while (std::getline(is, line)) {
    ++lineno;
    ++rep.lines;
    if (line.empty() || line[0] == '#') continue;
    std::istringstream ls(line);
    std::string name, action;
    if (version == 3) {
      uint64_t ms = 0;
      if (!(ls >> ms)) return bad("expected a timestamp in milliseconds, got '" + line + "'");
      now_ns = std::max(now_ns, ms * 1000000);
    }
    if (!(ls >> name >> action)) return bad("expected FILE ACTION, got '" + line + "'");
    uint64_t offset = 0, length = 0;
    const bool io = action == "read" || action == "write" || action == "trim" || action == "wait" ||
                    action == "sync" || action == "datasync";
    if (io && action != "sync" && action != "datasync" && !(ls >> offset >> length)) {
      return bad(action + ": expected OFFSET LENGTH, got '" + line + "'");
    }
    auto file = [&]() -> uint32_t {
      auto it = files.find(name);
      if (it != files.end()) return it->second;
      const uint32_t f = rec.add_file({name, 0});
      files.emplace(name, f);
      extent.push_back(0);
      return f;
    };
    if (action == "add") {
      file();
    } else if (action == "open") {
      const uint32_t f = file();
      if (!handles.count(name)) {
        handles[name] = static_cast<uint32_t>(handles.size());
        rec.append({.op = EventOp::kOpen, .time_ns = now_ns, .file = f});
      }
    } else if (action == "close") {
      if (auto it = handles.find(name); it != handles.end()) {
        rec.append({.op = EventOp::kClose, .time_ns = now_ns, .handle = it->second});
        handles.erase(it);
      }
    } else if (action == "read") {
      const uint32_t f = file();
      if (!handles.count(name)) {
        handles[name] = static_cast<uint32_t>(handles.size());
        rec.append({.op = EventOp::kOpen, .time_ns = now_ns, .file = f});
      }
      rec.append({.op = EventOp::kRead,
                  .time_ns = now_ns,
                  .handle = handles[name],
                  .offset = offset,
                  .length = length});
      extent[f] = std::max(extent[f], offset + length);
    } else if (action == "wait" && version == 2) {
      now_ns += offset * 1000;  // microseconds
    } else if (io) {
      ++rep.skipped;  // writes, trims, syncs
    } else {
      return bad("unknown action '" + action + "'");
    }
  }
  // A file's size: what fio reached, or its size on this machine if larger.
  for (const auto& [name, f] : files) {
    std::ifstream probe(name, std::ios::binary | std::ios::ate);
    const uint64_t here = probe ? static_cast<uint64_t>(probe.tellg()) : 0;
    rec.set_file_size(f, std::max(extent[f], here));
    rep.files.push_back(name);
  }
  rep.events = rec.nr_events();
  FAULTLINE_RETURN_IF_ERROR(
      rec.finish(true, {{"source", "fio iolog v" + std::to_string(version) + " " + in},
                        {"import.sees", "reads; writes, trims and syncs are left out"}}));
  return rep;
}

}  // namespace

Result<ImportReport> import_recording(ImportFormat f, const std::string& in, const std::string& out,
                                      const ImportOptions& o) {
  switch (f) {
    case ImportFormat::kStrace:
      return import_strace(in, out, o);
    case ImportFormat::kFio:
      return import_fio(in, out);
    case ImportFormat::kLackey:
      return import_lackey(in, out, o);
    case ImportFormat::kPerf:
      return import_perf(in, out, o);
    case ImportFormat::kTracepoints:
      return import_tracepoints(in, out, o);
  }
  return Status::InvalidArgument("import: unknown format");
}

Status export_fio_iolog(const std::string& recording, const std::string& out) {
  auto r = workload::RecordingReader::open(recording, /*allow_incomplete=*/true);
  if (!r.ok()) return r.status();
  const workload::RecordingInfo& info = (*r)->info();
  const std::string tmp = out + ".tmp." + std::to_string(::getpid());
  std::ofstream os(tmp);
  if (!os) return Status::IoError(out + ": cannot write");
  os << "fio version 3 iolog\n";
  for (const auto& f : info.files) os << "0 " << f.path << " add\n";
  std::vector<uint32_t> handle_file;  // by handle
  std::vector<bool> opened(info.files.size(), false);
  struct MapOf {
    uint32_t file;
    uint64_t pgoff;
  };
  std::vector<MapOf> maps;  // by map id
  std::vector<Event> batch(4096);
  while (const size_t n = (*r)->next(batch)) {
    for (size_t i = 0; i < n; ++i) {
      const Event& e = batch[i];
      const uint64_t ms = e.time_ns / 1000000;
      switch (e.op) {
        case EventOp::kOpen:
          handle_file.push_back(e.file);
          if (!opened[e.file]) {
            os << ms << ' ' << info.files[e.file].path << " open\n";
            opened[e.file] = true;
          }
          break;
        case EventOp::kMmap:
          maps.push_back({e.handle == workload::kNone32 ? workload::kNone32 : handle_file[e.handle],
                          e.offset});
          break;
        case EventOp::kRead:
          os << ms << ' ' << info.files[handle_file[e.handle]].path << " read " << e.offset << ' '
             << e.length << '\n';
          break;
        case EventOp::kTouch:
          if (maps[e.map].file != workload::kNone32) {
            os << ms << ' ' << info.files[maps[e.map].file].path << " read "
               << (maps[e.map].pgoff + e.offset) * 4096 << " 4096\n";
          }
          break;
        default:
          break;
      }
    }
  }
  FAULTLINE_RETURN_IF_ERROR((*r)->status());
  const uint64_t end_ms = info.duration_ns / 1000000;
  for (size_t f = 0; f < info.files.size(); ++f) {
    if (opened[f]) os << end_ms << ' ' << info.files[f].path << " close\n";
  }
  os.close();
  if (!os) {
    std::remove(tmp.c_str());
    return Status::IoError(out + ": write failed");
  }
  if (std::rename(tmp.c_str(), out.c_str()) != 0) {
    std::remove(tmp.c_str());
    return Status::IoError(out + ": cannot rename into place");
  }
  return Status::Ok();
}

}  // namespace faultline::record
