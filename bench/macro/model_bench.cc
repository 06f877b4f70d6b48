// model_bench.cc — the model's own speed, db_bench style.
//
// Named workloads (one benchmark each, one run per iteration):
//   seed1/<case>/<variant>   every run of the built-in default matrix
//                            (20 GiB file, 8 GiB machine, read_ahead_kb 8192)
//   seed1_small/<case>/...   the same matrix scaled to a 2 GiB file in a 1 GiB
//                            machine (the CI smoke benchmark)
// Reported per benchmark: simulated accesses per second, page-cache events
// (folios inserted + evicted) per second, fault attempts per second, and
// the run's pgpgin so a speed-up that changes the answer is noticed.
#include <benchmark/benchmark.h>

#include <cstdio>

#include "faultline/scenario.h"
#include "faultline/simulator.h"

namespace {

void run_one(benchmark::State& state, faultline::PlannedRun run) {
  faultline::SimOptions opts;
  opts.jobs = 1;
  opts.progress = false;
  double accesses = 0, events = 0, attempts = 0, pgpgin = 0;
  for (auto _ : state) {
    auto r = faultline::simulate({run}, opts);
    if (!r.ok()) {
      state.SkipWithError(r.status().message().c_str());
      return;
    }
    const faultline::RunResult& res = r->front();
    accesses += res.get("model.accesses");
    events += res.get("model.pages_inserted") + res.get("model.pages_evicted");
    attempts += res.get("model.fault_attempts");
    pgpgin = res.get("pgpgin");
  }
  using benchmark::Counter;
  state.counters["accesses/s"] = Counter(accesses, Counter::kIsRate);
  state.counters["pagecache_events/s"] = Counter(events, Counter::kIsRate);
  state.counters["fault_attempts/s"] = Counter(attempts, Counter::kIsRate);
  state.counters["pgpgin_GiB"] = pgpgin / (1024.0 * 1024.0);
}

void register_matrix(const char* prefix, const std::vector<std::string>& overrides) {
  auto plan = faultline::plan_runs(faultline::default_scenario(), overrides);
  if (!plan.ok()) {
    std::fprintf(stderr, "model_bench: %s\n", plan.status().message().c_str());
    std::exit(2);
  }
  for (const faultline::PlannedRun& run : *plan) {
    const std::string name = std::string(prefix) + "/" + run.case_name + "/" + run.variant;
    benchmark::RegisterBenchmark(name.c_str(), run_one, run)
        ->Unit(benchmark::kMillisecond)
        ->Iterations(1);
  }
}

}  // namespace

int main(int argc, char** argv) {
  register_matrix("seed1", {});
  register_matrix("seed1_small", {"file.size=2GiB", "machine.memory=1GiB"});
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
