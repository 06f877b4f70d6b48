// serial_engine.cc — the deterministic, single-threaded engine.
//
// Builds the modelled machine from a Config, prepares the file's page cache
// as the probe prepares the real one (cold, or warmed by read(2) or by the
// write(2) that created it), maps it, applies the madvise hint, then replays
// the access stream. Counters are the deltas over madvise + accesses.
#include <algorithm>
#include <array>
#include <iterator>

#include "engine/counters.h"
#include "engine/engine.h"
#include "engine/file_set.h"
#include "engine/invariant_check.h"
#include "engine/machine.h"
#include "engine/recording_replay.h"
#include "engine/timeline.h"
#include "mm/filemap.h"
#include "mm/madvise.h"
#include "mm/memory.h"
#include "workload/generator.h"
#include "workload/trace.h"

namespace faultline::engine {
namespace {

using workload::AccessMethod;
using workload::AccessOp;
using workload::Pattern;

// What a replay works on.
struct Stream {
  mm::Kernel& k;
  mm::Vma& vma;
  mm::File& file;
  const Config& cfg;
  uint64_t map_pages;
  const RunProgress& progress;
  TimelineSampler& timeline;
  InvariantCheck& invariants;
  uint64_t done = 0;  // accesses replayed
};

// The generated (or traced) pages, each touched through the mapping, or
// read with one pread of access.read_size (access.method=read).
Status replay_stream(Stream& s, const workload::AccessSpec& spec) {
  auto gen = workload::make_generator(spec);
  if (!gen.ok()) return gen.status();
  const bool write = s.cfg.access.op == AccessOp::kWrite;
  const bool read_method = s.cfg.access.method == AccessMethod::kRead;
  const uint64_t read_size = s.cfg.access.read_size;
  const uint64_t dontneed_every = s.cfg.access.dontneed_every;
  // The runs engine takes a stretch of consecutive pages whose PTEs are
  // present as one step (handle_pte_hits), ending where an invariant check
  // or a MADV_DONTNEED is due (with a timeline, every access is sampled
  // alone); the per-page engine, the reference, takes every access alone.
  const bool batch_hits = s.k.runs() && !read_method && !s.timeline.on();
  std::array<uint64_t, 4096> buf;
  uint64_t done = 0;
  while (const size_t n = (*gen)->next(buf)) {
    size_t stretch_end = 0;  // buf[i, stretch_end) are consecutive pages
    for (size_t i = 0; i < n; ++i) {
      if (batch_hits) {
        if (i >= stretch_end) {
          stretch_end = i + 1;
          while (stretch_end < n && buf[stretch_end] == buf[stretch_end - 1] + 1) ++stretch_end;
        }
        uint64_t m = std::min<uint64_t>(stretch_end - i, s.invariants.until_due(done + i));
        if (dontneed_every) m = std::min(m, dontneed_every - (done + i) % dontneed_every);
        const uint64_t h = m > 1 ? mm::handle_pte_hits(s.k, s.vma, buf[i], m, write) : 0;
        if (h) {
          if (dontneed_every && (done + i + h) % dontneed_every == 0) {
            s.k.set_access_seq(done + i + h - 1);  // the zap follows the stretch's last load
            mm::do_madvise(s.k, s.vma, 0, s.map_pages, mm::Madvise::kDontneed);
          }
          s.k.settle_reclaim();
          s.invariants.after_access(done + i + h);
          i += h - 1;
          continue;
        }
      }
      s.k.set_access_seq(done + i);
      if (read_method) {
        mm::filemap_read(s.k, s.file, (s.vma.vm_pgoff + buf[i]) << mm::kPageShift, read_size);
      } else {
        mm::handle_access(s.k, s.vma, buf[i], write);
        if (dontneed_every && (done + i + 1) % dontneed_every == 0) {
          mm::do_madvise(s.k, s.vma, 0, s.map_pages, mm::Madvise::kDontneed);
        }
      }
      s.k.settle_reclaim();
      s.timeline.after_access(done + i + 1);
      s.invariants.after_access(done + i + 1);
    }
    done += n;
    s.done = done;
    if (s.progress) s.progress(done, (*gen)->total());
  }
  return (*gen)->status();
}

// A trace replayed by read(2): each access is one pread of its own length
// (a page index: access.read_size).
Status replay_traced_reads(Stream& s, const workload::AccessSpec& spec) {
  auto ranges = workload::read_trace_ranges(spec);
  if (!ranges.ok()) return ranges.status();
  const uint64_t base = s.vma.vm_pgoff << mm::kPageShift;
  const uint64_t n = ranges->size();
  for (uint64_t i = 0; i < n; ++i) {
    const workload::ByteRange& r = (*ranges)[i];
    s.k.set_access_seq(i);
    mm::filemap_read(s.k, s.file, base + r.offset, r.length ? r.length : s.cfg.access.read_size);
    s.k.settle_reclaim();
    s.timeline.after_access(i + 1);
    s.invariants.after_access(i + 1);
    s.done = i + 1;
    if (s.progress && ((i + 1) % 4096 == 0 || i + 1 == n)) s.progress(i + 1, n);
  }
  return Status::Ok();
}

class SerialEngine final : public Engine {
 public:
  Result<RunResult> run(const Config& cfg, mm::Tracer* tracer,
                        const RunProgress& progress) override;
};

Result<RunResult> SerialEngine::run(const Config& cfg, mm::Tracer* tracer,
                                    const RunProgress& progress) {
  if (!cfg.streams.empty()) {
    // Several files and streams: written as one program's recording, replayed as one.
    auto set = FileSetRecording::create(cfg);
    if (!set.ok()) return set.status();
    auto r = replay_recording(set->replay_config(cfg), tracer, progress);
    if (r.ok()) r->config = effective_keys(cfg);
    return r;
  }
  if (cfg.access.workload == workload::Kind::kRecording) {
    return replay_recording(cfg, tracer, progress);
  }
  const std::unique_ptr<mm::Kernel> kernel = make_kernel(cfg);
  mm::Kernel& k = *kernel;
  mm::AddressSpace* as = make_file(k, cfg, cfg.file.size);
  mm::File* file = k.open(as);

  mm::Mm mm;
  const uint64_t map_pages = mapping_pages(cfg);

  mm::vm_flags_t flags = mm::VM_READ;
  if (cfg.access.op == AccessOp::kWrite) flags |= mm::VM_WRITE;
  if (cfg.mapping.shared) flags |= mm::VM_SHARED;
  mm::Vma* vma = k.mmap(&mm, file, cfg.mapping.offset >> mm::kPageShift, map_pages, flags,
                        cfg.mapping.align_offset);

  k.settle_reclaim();  // the preparation's reclaim is not the workload's
  const mm::VmStat before = k.vmstat();
  const double t0 = k.now_ns();
  mm::do_madvise(k, *vma, 0, map_pages, cfg.mapping.madvise);
  if (cfg.file.fadvise != mm::Fadvise::kNormal) {
    mm::do_fadvise(k, *file, 0, as->nr_pages(), cfg.file.fadvise);
  }

  const workload::AccessSpec spec = make_access_spec(cfg);
  TimelineSampler timeline(cfg.model, k, before, t0, [&mm] {
    return std::pair<uint64_t, uint64_t>{mm.min_flt, mm.maj_flt};
  });
  InvariantCheck invariants(cfg.model.invariants, k,
                            [&mm] { return std::vector<const mm::Mm*>{&mm}; });
  Stream st{k, *vma, *file, cfg, map_pages, progress, timeline, invariants};
  k.set_tracer(tracer);
  const Status replayed =
      cfg.access.method == AccessMethod::kRead && spec.pattern == Pattern::kTrace
          ? replay_traced_reads(st, spec)
          : replay_stream(st, spec);
  k.set_tracer(nullptr);
  FAULTLINE_RETURN_IF_ERROR(replayed);
  FAULTLINE_RETURN_IF_ERROR(invariants.finish(st.done));
  // Readahead still cached at the end that the workload never touched.
  k.vmstat().inc(mm::VmEvent::ra_wasted_unused, as->nr_ra_unused_pages());

  k.settle_reclaim();  // the last access's
  RunResult r;
  r.config = effective_keys(cfg);
  r.timeline = timeline.finish(st.done);
  TaskCounters task;
  task.min_flt = mm.min_flt;
  task.maj_flt = mm.maj_flt;
  std::copy(std::begin(mm.rss), std::end(mm.rss), std::begin(task.rss));
  report_counters(k.vmstat() - before, task, (k.now_ns() - t0) / 1e9, &r);
  auto add = [&](const char* name, double v) { r.counters.push_back({name, v}); };
  add("model.mmap_miss_max", k.mmap_miss_peak());
  add("model.mmap_miss_final", file->f_ra.mmap_miss);
  add("model.cache_capacity_pages", static_cast<double>(k.capacity_pages()));
  add("model.page_cache_pages", static_cast<double>(as->nr_cached_pages()));
  return r;
}

}  // namespace

uint64_t mapping_pages(const Config& cfg) {
  const uint64_t len = cfg.mapping.length ? cfg.mapping.length : cfg.file.size - cfg.mapping.offset;
  return (len + mm::kPageSize - 1) >> mm::kPageShift;
}

workload::AccessSpec make_access_spec(const Config& cfg) {
  workload::AccessSpec spec;
  spec.pattern = cfg.access.pattern;
  const uint64_t pages = mapping_pages(cfg);
  if (cfg.access.pattern == Pattern::kTrace) {
    // A trace addresses the whole mapping and has its own length; a count
    // replays only its first count accesses (span and fraction do not apply).
    spec.pages = pages;
    spec.count = cfg.access.count;
    spec.trace = cfg.access.trace;
    spec.trace_format = cfg.access.trace_format;
    return spec;
  }
  // The pattern covers the first access.span of the mapping; the number of
  // accesses is a fraction of the whole mapping.
  spec.pages =
      std::max<uint64_t>(1, static_cast<uint64_t>(cfg.access.span * static_cast<double>(pages)));
  spec.count = cfg.access.count
                   ? cfg.access.count
                   : static_cast<uint64_t>(cfg.access.fraction * static_cast<double>(pages));
  if (spec.count == 0) spec.count = 1;
  spec.stride = cfg.access.stride;
  spec.start = cfg.access.start;
  spec.seed = cfg.access.seed;
  return spec;
}

std::unique_ptr<Engine> make_serial_engine() { return std::make_unique<SerialEngine>(); }

}  // namespace faultline::engine
