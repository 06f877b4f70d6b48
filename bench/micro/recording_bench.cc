// recording_bench.cc — how fast recordings are read and written.
//
// Named workloads (the recording is written once, to a temporary file):
//   read/random_touches     10 M touches of random pages of one mapping
//                           (the costliest to code: a 3-4 byte page delta each)
//   read/sequential_touches 10 M touches of consecutive pages
//   read/preads             10 M pread64 events at random offsets
//   write/random_touches    writing the first
// Reported: events per second, bytes per event. The target for reading is
// 50 M events/s or more (docs/trace_format.md).
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "workload/recording.h"

namespace {

namespace fs = std::filesystem;
using faultline::workload::Event;
using faultline::workload::EventOp;

constexpr uint64_t kEvents = 10'000'000;

std::string bench_path(const std::string& name) {
  return (fs::temp_directory_path() /
          ("faultline-recording-bench-" + std::to_string(::getpid()) + "-" + name + ".flr"))
      .string();
}

enum class Kind { kRandomTouches, kSequentialTouches, kPreads };

uint64_t write_recording(const std::string& path, Kind kind) {
  auto w = faultline::workload::RecordingWriter::create(path);
  if (!w.ok()) std::abort();
  (*w)->add_file({"/data/file", uint64_t{1} << 40});
  (*w)->add_task({1, 1, "bench"});
  (*w)->append({.op = EventOp::kTaskStart, .arg = faultline::workload::kNone32});
  (*w)->append({.op = EventOp::kOpen, .file = 0});
  (*w)->append({.op = EventOp::kMmap, .handle = 0, .arg = 1, .length = uint64_t{1} << 28});
  std::mt19937_64 rng(1);
  uint64_t t = 0;
  for (uint64_t i = 0; i < kEvents; ++i) {
    t += 50 + rng() % 1000;
    Event e{.op = EventOp::kTouch, .time_ns = t, .map = 0};
    switch (kind) {
      case Kind::kRandomTouches:
        e.offset = rng() % (uint64_t{1} << 28);
        break;
      case Kind::kSequentialTouches:
        e.offset = i;
        break;
      case Kind::kPreads:
        e.op = EventOp::kRead;
        e.handle = 0;
        e.offset = (rng() % (uint64_t{1} << 28)) << 12;
        e.length = 4096;
        break;
    }
    (*w)->append(e);
  }
  if (!(*w)->finish(true, {}).ok()) std::abort();
  return fs::file_size(path);
}

void read_bench(benchmark::State& state, Kind kind, const char* name) {
  const std::string path = bench_path(name);
  const uint64_t bytes = write_recording(path, kind);
  std::vector<Event> batch(4096);
  uint64_t events = 0, sink = 0;
  for (auto _ : state) {
    auto r = faultline::workload::RecordingReader::open(path);
    if (!r.ok()) {
      state.SkipWithError(r.status().message().c_str());
      break;
    }
    while (const size_t n = (*r)->next(batch)) {
      for (size_t i = 0; i < n; ++i) sink += batch[i].offset;
      events += n;
    }
  }
  benchmark::DoNotOptimize(sink);
  fs::remove(path);
  state.counters["events/s"] =
      benchmark::Counter(static_cast<double>(events), benchmark::Counter::kIsRate);
  state.counters["bytes/event"] = static_cast<double>(bytes) / (kEvents + 3);
}

void write_bench(benchmark::State& state) {
  const std::string path = bench_path("write");
  uint64_t events = 0;
  for (auto _ : state) {
    write_recording(path, Kind::kRandomTouches);
    events += kEvents;
  }
  fs::remove(path);
  state.counters["events/s"] =
      benchmark::Counter(static_cast<double>(events), benchmark::Counter::kIsRate);
}

}  // namespace

BENCHMARK_CAPTURE(read_bench, random_touches, Kind::kRandomTouches, "random")
    ->Name("read/random_touches")
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(read_bench, sequential_touches, Kind::kSequentialTouches, "sequential")
    ->Name("read/sequential_touches")
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(read_bench, preads, Kind::kPreads, "preads")
    ->Name("read/preads")
    ->Unit(benchmark::kMillisecond);
BENCHMARK(write_bench)->Name("write/random_touches")->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
