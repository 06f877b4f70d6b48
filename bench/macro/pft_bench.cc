// pft_bench.cc — the concurrent model on this machine's CPUs, db_bench style.
//
// Named workloads (each repetition is one run of the real-thread engine,
// access.interleave=real, cache-line counting off; the time is the engine's
// wall clock from the start barrier to the last thread's end):
//   pft/<tasks>/t<N>/<variant>     N tasks write-fault their 16 MiB slice of
//                                  an anonymous region, MADV_DONTNEED it,
//                                  32 passes. tasks: threads (one VMA) or
//                                  processes (an mm each). variant: seed 2's
//                                  base, +patch1, +patch2 (cumulative).
//   lat_pagefault/<rss>/t1         one task read-faults 16-page fault-around
//                                  windows of a cached 64 MiB file, zaps,
//                                  16 passes. rss: seed 3 unbatched | batched.
// Reported per benchmark: faults/s (pft) or ns/fault (lat_pagefault), with
// median, min and max over 7 repetitions. What moves the physical cache lines is the model's own
// VmAreaStruct, percpu counters and PTE locks, laid out as the kernel's.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "engine/concurrent_engine.h"
#include "faultline/config.h"

namespace {

using faultline::Config;
using faultline::enum_name;
using faultline::Interleave;
namespace mm = faultline::mm;
namespace workload = faultline::workload;

double stat_min(const std::vector<double>& v) { return *std::min_element(v.begin(), v.end()); }
double stat_max(const std::vector<double>& v) { return *std::max_element(v.begin(), v.end()); }

void run_one(benchmark::State& state, Config cfg, bool latency) {
  auto engine = faultline::engine::make_concurrent_engine();
  double faults = 0, wall = 0;
  for (auto _ : state) {
    auto r = engine->run(cfg, nullptr, {});
    if (!r.ok()) {
      state.SkipWithError(r.status().message().c_str());
      return;
    }
    const double w = r->get("model.wall_s");
    state.SetIterationTime(w);
    faults += r->get("pgfault");
    wall += w;
  }
  if (latency) {
    state.counters["ns_per_fault"] = faults > 0 ? wall / faults * 1e9 : 0;
  } else {
    state.counters["faults_per_s"] = wall > 0 ? faults / wall : 0;
  }
}

benchmark::internal::Benchmark* reg(const std::string& name, const Config& cfg, bool latency) {
  return benchmark::RegisterBenchmark(name.c_str(), run_one, cfg, latency)
      ->UseManualTime()
      ->Iterations(1)
      ->Repetitions(7)
      ->ReportAggregatesOnly(true)
      ->ComputeStatistics("min", stat_min)
      ->ComputeStatistics("max", stat_max)
      ->Unit(benchmark::kMillisecond);
}

Config base_config() {
  Config c;
  c.access.interleave = Interleave::kReal;
  c.access.coherence = false;
  return c;
}

void register_all() {
  struct Variant {
    const char* name;
    bool p1, p2;
  };
  const Variant variants[] = {
      {"base", false, false}, {"+patch1", true, false}, {"+patch2", true, true}};
  for (const auto tasks : {workload::TaskSharing::kThreads, workload::TaskSharing::kProcesses}) {
    for (unsigned n : {1u, 2u}) {
      for (const Variant& v : variants) {
        Config c = base_config();
        c.kernel.profile = mm::Release::k7_4;
        c.kernel.vma_refcnt_p1 = v.p1;
        c.kernel.vma_refcnt_p2 = v.p2;
        c.access.workload = workload::Kind::kPft;
        c.access.op = workload::AccessOp::kWrite;
        c.access.tasks = tasks;
        c.access.threads = n;
        c.access.region = uint64_t{n} << 24;  // 16 MiB per task
        c.access.passes = 32;
        reg(std::string("pft/") + std::string(enum_name(tasks)) + "/t" + std::to_string(n) + "/" +
                v.name,
            c, false);
      }
    }
  }
  for (bool batched : {false, true}) {
    Config c = base_config();
    c.kernel.profile = mm::Release::k7_1;
    c.kernel.batched_rss = batched;
    c.access.workload = workload::Kind::kLatPagefault;
    c.access.op = workload::AccessOp::kRead;
    c.access.threads = 1;
    c.access.region = 64 << 20;
    c.access.passes = 16;
    reg(std::string("lat_pagefault/") + (batched ? "batched" : "unbatched") + "/t1", c, true);
  }
}

}  // namespace

int main(int argc, char** argv) {
  register_all();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
