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

Result<std::vector<RunResult>> simulate(const std::vector<PlannedRun>& runs,
                                        const SimOptions& opts) {
  std::vector<Result<RunResult>> results(runs.size(), Status::Unavailable("not run"));
  std::vector<std::atomic<uint64_t>> done(runs.size());
  std::vector<uint64_t> totals(runs.size(), 0);
  std::atomic<size_t> next{0};
  std::atomic<size_t> finished{0};
  const int jobs = opts.jobs > 0 ? opts.jobs : usable_cpus();

  auto worker = [&] {
    auto serial = engine::make_serial_engine();
    auto concurrent = engine::make_concurrent_engine();
    for (size_t i = next++; i < runs.size(); i = next++) {
      std::unique_ptr<TextTracer> tracer;
      if (!opts.trace_dir.empty()) {
        const std::string path =
            model_trace_path(opts.trace_dir, runs[i].case_name, runs[i].variant);
        tracer = std::make_unique<TextTracer>(path);
        if (!tracer->ok()) {
          results[i] = Status::IoError(path + ": cannot write trace");
          ++finished;
          continue;
        }
      }
      engine::Engine& engine = engine::is_concurrent_workload(runs[i].cfg) ? *concurrent : *serial;
      auto r = engine.run(runs[i].cfg, tracer.get(), [&, i](uint64_t d, uint64_t t) {
        done[i].store(d, std::memory_order_relaxed);
        totals[i] = t;
      });
      if (r.ok()) {
        r->case_name = runs[i].case_name;
        r->variant = runs[i].variant;
      }
      results[i] = std::move(r);
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
      uint64_t d = 0, t = 0;
      for (size_t i = 0; i < runs.size(); ++i) {
        d += done[i].load(std::memory_order_relaxed);
        t += totals[i];
      }
      std::fprintf(stderr, "%sfaultline: %zu/%zu runs done, %llu accesses replayed, %.1f s%s",
                   tty ? "\r" : "", finished.load(), runs.size(), (unsigned long long)d, secs,
                   tty ? "   " : "\n");
      printed = true;
    }
    if (printed && tty) std::fprintf(stderr, "\r%80s\r", "");
  });
  std::vector<std::thread> pool;
  for (int j = 1; j < std::min<int>(jobs, static_cast<int>(runs.size())); ++j)
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
  for (size_t i = 0; i < results.size(); ++i) {
    if (!results[i].ok()) {
      if (opts.failed_run) *opts.failed_run = i;
      return results[i].status();
    }
    out.push_back(std::move(*results[i]));
  }
  return out;
}

}  // namespace faultline
