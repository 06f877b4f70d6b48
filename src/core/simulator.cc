#include "faultline/simulator.h"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <fstream>
#include <mutex>
#include <thread>

#include "engine/concurrent_engine.h"
#include "engine/engine.h"
#include "util/cpus.h"

namespace faultline {
namespace {

// Writes the model's tracepoints one per line, in the shape of ftrace's text
// output, so the two can be read side by side.
class TextTracer final : public mm::Tracer {
 public:
  explicit TextTracer(const std::string& path) : out_(path) {}
  bool ok() const { return static_cast<bool>(out_); }
  void event(const mm::TraceEvent& e) override {
    char buf[320];
    const std::string_view name = enum_name(e.kind);
    int n = 0;
    switch (e.kind) {
      case mm::TraceKind::kFilemapFault:
        n = std::snprintf(buf, sizeof buf, "access=%llu %.*s: ino=%u index=%llu\n",
                          (unsigned long long)e.seq, (int)name.size(), name.data(), e.ino,
                          (unsigned long long)e.index);
        break;
      case mm::TraceKind::kFilemapMapPages:
        n = std::snprintf(buf, sizeof buf, "access=%llu %.*s: ino=%u start=%llu end=%llu\n",
                          (unsigned long long)e.seq, (int)name.size(), name.data(), e.ino,
                          (unsigned long long)e.index, (unsigned long long)e.end);
        break;
      case mm::TraceKind::kAddToPageCache:
      case mm::TraceKind::kDeleteFromPageCache:
        n = std::snprintf(buf, sizeof buf, "access=%llu %.*s: ino=%u ofs=%llu order=%u\n",
                          (unsigned long long)e.seq, (int)name.size(), name.data(), e.ino,
                          (unsigned long long)e.index, e.order);
        break;
      case mm::TraceKind::kPageCacheRaUnbounded:
        n = std::snprintf(buf, sizeof buf,
                          "access=%llu %.*s: ino=%u index=%llu nr_to_read=%llu "
                          "lookahead_size=%u mmap_miss=%u\n",
                          (unsigned long long)e.seq, (int)name.size(), name.data(), e.ino,
                          (unsigned long long)e.index, (unsigned long long)e.end, e.req_count,
                          e.mmap_miss);
        break;
      case mm::TraceKind::kMmapMiss:
        n = std::snprintf(buf, sizeof buf, "access=%llu %.*s: ino=%u mmap_miss=%u\n",
                          (unsigned long long)e.seq, (int)name.size(), name.data(), e.ino,
                          e.mmap_miss);
        break;
      default:
        n = std::snprintf(buf, sizeof buf,
                          "access=%llu %.*s: ino=%u index=%llu req_count=%u order=%u "
                          "size=%u async_size=%u start=%llu ra_pages=%u mmap_miss=%u\n",
                          (unsigned long long)e.seq, (int)name.size(), name.data(), e.ino,
                          (unsigned long long)e.index, e.req_count, e.order, e.ra_size,
                          e.ra_async_size, (unsigned long long)e.ra_start, e.ra_pages, e.mmap_miss);
    }
    out_.write(buf, n);
  }

 private:
  std::ofstream out_;
};

}  // namespace

std::string file_safe(const std::string& s) {
  std::string o;
  for (char c : s)
    o += (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.') ? c : '_';
  return o;
}

std::string model_trace_path(const std::string& dir, const std::string& case_name,
                             const std::string& variant) {
  return dir + "/" + file_safe(case_name) + "-" + file_safe(variant) + ".model.trace";
}

namespace {

// One run of the model: a planned run, or one seed of a repeated one.
struct Job {
  size_t run = 0;      // index into the plan
  uint32_t rep = 0;    // repetition (0: the planned seed)
  uint32_t nreps = 1;  // repetitions of that run
};

// Every counter's median over the repetitions, in the first one's order.
std::vector<Counter> median_counters(const std::vector<const std::vector<Counter>*>& reps) {
  std::vector<Counter> out = *reps.front();
  for (size_t i = 0; i < out.size(); ++i) {
    std::vector<double> values;
    for (const std::vector<Counter>* r : reps) {
      double v = 0;
      if (i < r->size() && (*r)[i].name == out[i].name) {
        v = (*r)[i].value;
      } else {
        for (const Counter& c : *r) {
          if (c.name == out[i].name) v = c.value;
        }
      }
      values.push_back(v);
    }
    out[i].value = spread_of(std::move(values)).median;
  }
  return out;
}

// The repetitions of one run as one result: the first one's names, keys
// and files, each counter's median, and every seed's own counters.
RunResult fold(std::vector<RunResult> reps, const std::vector<uint64_t>& seeds) {
  std::vector<const std::vector<Counter>*> counters;
  for (const RunResult& r : reps) counters.push_back(&r.counters);
  RunResult out = reps.front();
  out.counters = median_counters(counters);
  for (size_t f = 0; f < out.files.size(); ++f) {
    std::vector<const std::vector<Counter>*> per_file;
    for (const RunResult& r : reps) {
      if (f < r.files.size()) per_file.push_back(&r.files[f].counters);
    }
    out.files[f].counters = median_counters(per_file);
  }
  for (size_t k = 0; k < reps.size(); ++k) {
    out.repetitions.push_back({seeds[k], std::move(reps[k].counters)});
  }
  return out;
}

}  // namespace

Result<std::vector<RunResult>> simulate(const std::vector<PlannedRun>& runs,
                                        const SimOptions& opts) {
  // Repeated runs are expanded into one job per seed; results are folded
  // back in plan order, so the pool's schedule never shows in a report.
  std::vector<Job> job_list;
  for (size_t i = 0; i < runs.size(); ++i) {
    const Config& c = runs[i].cfg;
    const uint32_t n = c.model.repetitions > 1 && depends_on_seed(c) ? c.model.repetitions : 1;
    for (uint32_t k = 0; k < n; ++k) job_list.push_back({i, k, n});
  }
  std::vector<Result<RunResult>> results(job_list.size(), Status::Unavailable("not run"));
  std::vector<std::atomic<uint64_t>> done(job_list.size());
  std::atomic<size_t> next{0};
  std::atomic<size_t> finished{0};
  const int jobs = opts.jobs > 0 ? opts.jobs : usable_cpus();

  auto worker = [&] {
    auto serial = engine::make_serial_engine();
    auto concurrent = engine::make_concurrent_engine();
    for (size_t j = next++; j < job_list.size(); j = next++) {
      const PlannedRun& run = runs[job_list[j].run];
      std::unique_ptr<TextTracer> tracer;
      // Tracepoints of the planned seed only: the repetitions would write
      // the same file.
      if (!opts.trace_dir.empty() && job_list[j].rep == 0) {
        const std::string path = model_trace_path(opts.trace_dir, run.case_name, run.variant);
        tracer = std::make_unique<TextTracer>(path);
        if (!tracer->ok()) {
          results[j] = Status::IoError(path + ": cannot write trace");
          ++finished;
          continue;
        }
      }
      Config cfg = job_list[j].rep == 0 ? run.cfg : with_repetition(run.cfg, job_list[j].rep);
      // The timeline, as the tracepoints, is of the planned seed only.
      if (job_list[j].rep > 0) cfg.model.timeline_accesses = 0, cfg.model.timeline_interval_s = 0;
      engine::Engine& engine = is_concurrent_workload(cfg) ? *concurrent : *serial;
      auto r = engine.run(cfg, tracer.get(), [&, j](uint64_t d, uint64_t) {
        done[j].store(d, std::memory_order_relaxed);
      });
      if (r.ok()) {
        r->case_name = run.case_name;
        r->variant = run.variant;
      }
      results[j] = std::move(r);
      ++finished;
    }
  };

  const auto t0 = std::chrono::steady_clock::now();
  std::mutex mu;
  std::condition_variable cv;
  bool stop = false;
  std::thread progress([&] {
    if (!opts.progress) return;
    const bool tty = isatty(2);
    bool printed = false;
    std::unique_lock lock(mu);
    while (!cv.wait_for(lock, std::chrono::milliseconds(tty ? 250 : 5000), [&] { return stop; })) {
      const double secs =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      if (secs < 2.0) continue;
      uint64_t d = 0;
      for (size_t j = 0; j < job_list.size(); ++j) d += done[j].load(std::memory_order_relaxed);
      std::fprintf(stderr, "%sfaultline: %zu/%zu runs done, %llu accesses replayed, %.1f s%s",
                   tty ? "\r" : "", finished.load(), job_list.size(), (unsigned long long)d, secs,
                   tty ? "   " : "\n");
      printed = true;
    }
    if (printed && tty) std::fprintf(stderr, "\r%80s\r", "");
  });
  std::vector<std::thread> pool;
  for (int j = 1; j < std::min<int>(jobs, static_cast<int>(job_list.size())); ++j)
    pool.emplace_back(worker);
  worker();
  for (auto& t : pool) t.join();
  {
    std::lock_guard lock(mu);
    stop = true;
  }
  cv.notify_all();
  progress.join();

  std::vector<RunResult> out;
  for (size_t j = 0; j < job_list.size();) {
    const Job& job = job_list[j];
    std::vector<RunResult> reps;
    std::vector<uint64_t> seeds;
    for (uint32_t k = 0; k < job.nreps; ++k, ++j) {
      if (!results[j].ok()) {
        if (opts.failed_run) *opts.failed_run = job.run;
        return results[j].status();
      }
      reps.push_back(std::move(*results[j]));
      seeds.push_back(runs[job.run].cfg.access.seed + k);
    }
    out.push_back(job.nreps == 1 ? std::move(reps.front()) : fold(std::move(reps), seeds));
  }
  return out;
}

}  // namespace faultline
