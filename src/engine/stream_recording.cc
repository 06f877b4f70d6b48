#include "engine/stream_recording.h"

#include <array>

#include "engine/engine.h"
#include "workload/generator.h"
#include "workload/recording.h"
#include "workload/trace.h"

namespace faultline::engine {

using workload::Event;
using workload::EventOp;

Status record_stream(const Config& cfg, const std::string& path) {
  if (cfg.access.workload != workload::Kind::kStream) {
    return Status::InvalidArgument("access.workload: only a stream can be written as a recording");
  }
  auto w = workload::RecordingWriter::create(path);
  if (!w.ok()) return w.status();
  workload::RecordingWriter& rec = **w;
  rec.add_file({"file", cfg.file.size});
  rec.add_task({1, 1, "stream"});
  uint64_t t = 0;
  auto add = [&](Event e) {
    e.time_ns = t++;
    rec.append(e);
  };
  const bool write = cfg.access.op == workload::AccessOp::kWrite;
  const uint64_t pages = mapping_pages(cfg);
  const uint64_t pgoff = cfg.mapping.offset >> 12;
  add({.op = EventOp::kTaskStart, .arg = workload::kNone32});
  add({.op = EventOp::kOpen, .write = write, .file = 0});
  const uint32_t prot = 1u | (write ? 2u : 0u);
  add({.op = EventOp::kMmap,
       .handle = 0,
       .arg = workload::map_arg(prot, cfg.mapping.shared, cfg.mapping.align_offset << 12),
       .offset = pgoff,
       .length = pages});
  if (cfg.mapping.madvise != mm::Madvise::kNormal) {
    add({.op = EventOp::kMadvise,
         .map = 0,
         .arg = static_cast<uint32_t>(cfg.mapping.madvise),
         .offset = 0,
         .length = pages});
  }
  if (cfg.file.fadvise != mm::Fadvise::kNormal) {
    add({.op = EventOp::kFadvise,
         .handle = 0,
         .arg = static_cast<uint32_t>(cfg.file.fadvise),
         .offset = 0,
         .length = 0});
  }
  const workload::AccessSpec spec = make_access_spec(cfg);
  const uint64_t base = pgoff << 12;
  if (cfg.access.method == workload::AccessMethod::kRead &&
      spec.pattern == workload::Pattern::kTrace) {
    auto ranges = workload::read_trace_ranges(spec);
    if (!ranges.ok()) return ranges.status();
    for (const workload::ByteRange& r : *ranges) {
      add({.op = EventOp::kRead,
           .handle = 0,
           .offset = base + r.offset,
           .length = r.length ? r.length : cfg.access.read_size});
    }
  } else {
    auto gen = workload::make_generator(spec);
    if (!gen.ok()) return gen.status();
    std::array<uint64_t, 4096> buf;
    uint64_t done = 0;
    while (const size_t n = (*gen)->next(buf)) {
      for (size_t i = 0; i < n; ++i) {
        if (cfg.access.method == workload::AccessMethod::kRead) {
          add({.op = EventOp::kRead,
               .handle = 0,
               .offset = base + (buf[i] << 12),
               .length = cfg.access.read_size});
          continue;
        }
        add({.op = EventOp::kTouch, .write = write, .map = 0, .offset = buf[i]});
        if (cfg.access.dontneed_every && (done + i + 1) % cfg.access.dontneed_every == 0) {
          add({.op = EventOp::kMadvise,
               .map = 0,
               .arg = static_cast<uint32_t>(mm::Madvise::kDontneed),
               .offset = 0,
               .length = pages});
        }
      }
      done += n;
    }
    FAULTLINE_RETURN_IF_ERROR((*gen)->status());
  }
  return rec.finish(true, {{"source", "faultline stream"}});
}

}  // namespace faultline::engine
