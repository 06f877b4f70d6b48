#include "engine/file_set.h"

#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <filesystem>
#include <map>
#include <memory>
#include <queue>

#include "workload/generator.h"
#include "workload/recording.h"

namespace faultline::engine {
namespace {

using workload::Event;
using workload::EventOp;
using workload::kNone32;

constexpr uint64_t kNominalNs = 1000000000;  // the stretch without a recording: one second
constexpr uint32_t kProtRead = 1, kProtWrite = 2;

// Where a stream's events come from. Ids in the events are the source's own
// (a recording's) or already the workload's (a pattern's).
class Source {
 public:
  virtual ~Source() = default;
  virtual bool next(Event* e) = 0;
  virtual Status status() const { return Status::Ok(); }
};

// One pattern stream: its accesses, spread evenly over the stretch.
class PatternSource final : public Source {
 public:
  PatternSource(std::unique_ptr<workload::Generator> gen, uint64_t stretch_ns, Event proto,
                uint64_t read_size)
      : gen_(std::move(gen)),
        total_(gen_->total()),
        stretch_(stretch_ns),
        proto_(proto),
        read_size_(read_size) {}
  bool next(Event* e) override {
    if (pos_ == len_) {
      len_ = gen_->next(buf_);
      pos_ = 0;
      if (len_ == 0) return false;
    }
    const uint64_t page = buf_[pos_++];
    *e = proto_;
    const long double at = (static_cast<long double>(done_) + 0.5L) *
                           static_cast<long double>(stretch_) /
                           static_cast<long double>(std::max<uint64_t>(total_, 1));
    e->time_ns = static_cast<uint64_t>(at);
    ++done_;
    if (e->op == EventOp::kRead) {
      e->offset = page << 12;
      e->length = read_size_;
    } else {
      e->offset = page;
    }
    return true;
  }
  Status status() const override { return gen_->status(); }

 private:
  std::unique_ptr<workload::Generator> gen_;
  uint64_t total_, stretch_;
  Event proto_;
  uint64_t read_size_;
  std::array<uint64_t, 4096> buf_{};
  size_t pos_ = 0, len_ = 0;
  uint64_t done_ = 0;
};

// A recording stream: its events as recorded; remap() turns its ids into
// the workload's as each event is written.
class RecordingSource final : public Source {
 public:
  RecordingSource(std::unique_ptr<workload::RecordingReader> r, uint32_t task_base,
                  std::vector<uint32_t> file_of)
      : reader_(std::move(r)), task_base_(task_base), file_of_(std::move(file_of)) {}
  bool next(Event* e) override {
    if (pos_ == len_) {
      len_ = reader_->next(batch_);
      pos_ = 0;
      if (len_ == 0) return false;
    }
    *e = batch_[pos_++];
    return true;
  }
  Status status() const override { return reader_->status(); }

  void remap(Event* e, uint32_t* next_handle, uint32_t* next_map) {
    e->task += task_base_;
    if (e->op == EventOp::kTaskStart && e->arg != kNone32) e->arg += task_base_;
    switch (e->op) {
      case EventOp::kOpen:
        e->file = file_of_[e->file];
        handle_of_.push_back((*next_handle)++);
        break;
      case EventOp::kMmap:
        if (e->handle != kNone32) e->handle = handle_of_[e->handle];
        map_of_.push_back((*next_map)++);
        break;
      case EventOp::kClose:
      case EventOp::kFadvise:
      case EventOp::kRead:
        e->handle = handle_of_[e->handle];
        break;
      case EventOp::kMunmap:
      case EventOp::kMadvise:
      case EventOp::kTouch:
        e->map = map_of_[e->map];
        break;
      default:
        break;
    }
  }

 private:
  std::unique_ptr<workload::RecordingReader> reader_;
  uint32_t task_base_;
  std::vector<uint32_t> file_of_;
  std::vector<uint32_t> handle_of_, map_of_;
  std::array<Event, 1024> batch_{};
  size_t pos_ = 0, len_ = 0;
};

}  // namespace

Status record_file_set(const Config& cfg, const std::string& path) {
  if (cfg.streams.empty()) return Status::InvalidArgument("[[streams]]: none to write");
  // The recordings first: their files, tasks and the stretch.
  std::vector<std::unique_ptr<workload::RecordingReader>> readers(cfg.streams.size());
  uint64_t stretch = 0;
  bool any_recording = false;
  for (size_t i = 0; i < cfg.streams.size(); ++i) {
    const StreamDecl& st = cfg.streams[i];
    if (st.recording.empty()) continue;
    auto r = workload::RecordingReader::open(st.recording, cfg.access.allow_incomplete);
    if (!r.ok()) return r.status().with_context("streams." + st.name + ".recording");
    stretch = std::max(stretch, (*r)->info().duration_ns);
    any_recording = true;
    readers[i] = std::move(*r);
  }
  if (!any_recording || stretch == 0) stretch = kNominalNs;

  auto w = workload::RecordingWriter::create(path);
  if (!w.ok()) return w.status();
  workload::RecordingWriter& rec = **w;
  std::map<std::string, uint32_t> file_index;  // by name or path
  std::vector<uint64_t> file_size;
  auto file = [&](const std::string& name, uint64_t size) {
    auto [it, fresh] = file_index.try_emplace(name, static_cast<uint32_t>(file_size.size()));
    if (fresh) {
      rec.add_file({name, size});
      file_size.push_back(size);
    } else if (size > file_size[it->second]) {
      file_size[it->second] = size;
      rec.set_file_size(it->second, size);
    }
    return it->second;
  };
  std::map<std::string, const FileDecl*> decl;
  for (const FileDecl& f : cfg.files) {
    file(f.name, f.size);
    decl[f.name] = &f;
  }

  // The pattern streams' tasks: a process per process name (or stream),
  // its other streams threads of it.
  struct Task {
    size_t stream;
    uint32_t task, leader;  // leader: the process's first task
  };
  std::vector<Task> tasks;
  std::map<std::string, uint32_t> leader_of;  // by process name
  std::map<uint32_t, uint64_t> anon_of;       // by leader: bytes
  // Whether any stream of a process stores through its mapping of a file.
  std::map<std::pair<uint32_t, uint32_t>, bool> writes;
  for (size_t i = 0; i < cfg.streams.size(); ++i) {
    const StreamDecl& st = cfg.streams[i];
    if (!st.recording.empty()) continue;
    const uint32_t t = rec.add_task({static_cast<uint32_t>(tasks.size() + 1), 0, st.name});
    const std::string proc = st.process.empty() ? "stream:" + st.name : st.process;
    auto [it, fresh] = leader_of.try_emplace(proc, t);
    tasks.push_back({i, t, it->second});
    anon_of[it->second] += st.anon;
    if (st.method == workload::AccessMethod::kMmap) {
      writes[{it->second, file_index.at(st.file)}] |= st.op == workload::AccessOp::kWrite;
    }
  }
  std::vector<std::unique_ptr<RecordingSource>> recordings(cfg.streams.size());
  for (size_t i = 0; i < cfg.streams.size(); ++i) {
    if (!readers[i]) continue;
    const workload::RecordingInfo& info = readers[i]->info();
    uint32_t first = kNone32;
    for (const workload::RecordedTask& t : info.tasks) {
      const uint32_t id = rec.add_task(t);
      if (first == kNone32) first = id;
    }
    std::vector<uint32_t> file_of;
    for (const workload::RecordedFile& f : info.files) file_of.push_back(file(f.path, f.size));
    recordings[i] = std::make_unique<RecordingSource>(
        std::move(readers[i]), first == kNone32 ? 0 : first, std::move(file_of));
  }

  // The setup, at time 0: tasks, anonymous memory, opens, mappings, hints.
  uint32_t next_handle = 0, next_map = 0;
  std::map<std::pair<uint32_t, uint32_t>, uint32_t> map_of;  // (leader, file) -> map
  std::vector<std::unique_ptr<Source>> sources(cfg.streams.size());
  for (const Task& t : tasks) {
    const StreamDecl& st = cfg.streams[t.stream];
    const FileDecl& f = *decl.at(st.file);
    const uint32_t fi = file_index.at(st.file);
    const bool leader = t.task == t.leader;
    rec.set_task_comm(t.task, st.name);
    rec.append({.op = EventOp::kTaskStart,
                .thread = !leader,
                .task = t.task,
                .arg = leader ? kNone32 : t.leader});
    if (leader && anon_of[t.leader]) {
      rec.append(
          {.op = EventOp::kAnon, .task = t.task, .length = (anon_of[t.leader] + 4095) / 4096});
    }
    const bool write = st.op == workload::AccessOp::kWrite;
    const uint32_t handle = next_handle++;
    rec.append({.op = EventOp::kOpen, .write = write, .task = t.task, .file = fi});
    const uint64_t pages = (f.size + 4095) / 4096;
    Event proto{.task = t.task};
    if (st.method == workload::AccessMethod::kRead) {
      proto.op = EventOp::kRead;
      proto.handle = handle;
    } else {
      auto [it, fresh] = map_of.try_emplace({t.leader, fi}, next_map);
      if (fresh) {
        ++next_map;
        const bool w_map = writes[{t.leader, fi}];
        rec.append({.op = EventOp::kMmap,
                    .task = t.task,
                    .handle = handle,
                    .arg = workload::map_arg(kProtRead | (w_map ? kProtWrite : 0), f.shared, 0),
                    .offset = 0,
                    .length = pages});
        if (f.madvise != mm::Madvise::kNormal) {
          rec.append({.op = EventOp::kMadvise,
                      .task = t.task,
                      .map = it->second,
                      .arg = static_cast<uint32_t>(f.madvise),
                      .offset = 0,
                      .length = pages});
        }
      }
      proto.op = EventOp::kTouch;
      proto.write = write;
      proto.map = it->second;
    }
    // After the mapping's madvise, as a single-file stream applies its hints.
    if (f.fadvise != mm::Fadvise::kNormal) {
      rec.append({.op = EventOp::kFadvise,
                  .task = t.task,
                  .handle = handle,
                  .arg = static_cast<uint32_t>(f.fadvise),
                  .offset = 0,
                  .length = 0});
    }
    workload::AccessSpec spec;
    spec.pattern = st.pattern;
    spec.pages = std::max<uint64_t>(1, static_cast<uint64_t>(st.span * static_cast<double>(pages)));
    spec.count = st.count ? st.count
                          : std::max<uint64_t>(
                                1, static_cast<uint64_t>(st.fraction * static_cast<double>(pages)));
    spec.stride = st.stride;
    spec.start = st.start;
    spec.seed = st.seed ? st.seed : cfg.access.seed + t.stream;
    auto gen = workload::make_generator(spec);
    if (!gen.ok()) return gen.status().with_context("streams." + st.name);
    sources[t.stream] =
        std::make_unique<PatternSource>(std::move(*gen), stretch, proto, st.read_size);
  }
  for (size_t i = 0; i < cfg.streams.size(); ++i) {
    if (recordings[i]) sources[i] = std::move(recordings[i]);
  }

  // Every stream's events by time, then by stream.
  struct Head {
    Event e;
    size_t source;
    bool operator>(const Head& o) const {
      return e.time_ns != o.e.time_ns ? e.time_ns > o.e.time_ns : source > o.source;
    }
  };
  std::priority_queue<Head, std::vector<Head>, std::greater<Head>> heap;
  for (size_t i = 0; i < sources.size(); ++i) {
    Head h{{}, i};
    if (sources[i]->next(&h.e)) heap.push(h);
  }
  while (!heap.empty()) {
    Head h = heap.top();
    heap.pop();
    if (auto* r = dynamic_cast<RecordingSource*>(sources[h.source].get())) {
      r->remap(&h.e, &next_handle, &next_map);
    }
    rec.append(h.e);
    if (sources[h.source]->next(&h.e)) heap.push(h);
  }
  for (const auto& s : sources) FAULTLINE_RETURN_IF_ERROR(s->status());
  return rec.finish(true, {{"source", "faultline [[streams]]"}});
}

Result<FileSetRecording> FileSetRecording::create(const Config& cfg) {
  std::error_code ec;
  std::string dir = std::filesystem::temp_directory_path(ec).string();
  if (ec || dir.empty()) dir = "/tmp";
  std::string tmpl = dir + "/faultline-streams-XXXXXX";
  const int fd = ::mkstemp(tmpl.data());
  if (fd < 0) return Status::IoError(tmpl + ": cannot create a temporary file");
  ::close(fd);
  FileSetRecording out(tmpl);
  FAULTLINE_RETURN_IF_ERROR(record_file_set(cfg, out.path()));
  return out;
}

FileSetRecording::~FileSetRecording() {
  if (!path_.empty()) ::unlink(path_.c_str());
}

Config FileSetRecording::replay_config(const Config& cfg) const {
  Config c = cfg;
  c.access.workload = workload::Kind::kRecording;
  c.access.trace = path_;
  return c;
}

}  // namespace faultline::engine
