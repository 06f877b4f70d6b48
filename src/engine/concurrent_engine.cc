// concurrent_engine.cc — the schedulers of the concurrent model and its
// report. Threads live here, never in mm/.
#include "engine/concurrent_engine.h"

#include <algorithm>
#include <chrono>
#include <latch>
#include <string>
#include <thread>
#include <vector>

#include "engine/counters.h"
#include "mm/percpu_counter.h"
#include "mm/smp_fault.h"

namespace faultline::engine {
namespace {

namespace smp = mm::smp;

// The cache domain of each task's CPU (access.placement over
// machine.cpus_per_domain); empty when the machine is one domain.
std::vector<uint32_t> task_domains(const Config& cfg) {
  const uint32_t per = cfg.machine.cpus_per_domain;
  const uint32_t n = cfg.access.threads;
  if (per == 0) return {};
  std::vector<uint32_t> d(n);
  const uint32_t cpus = cfg.machine.cpus ? cfg.machine.cpus : n;
  const uint32_t domains = (cpus + per - 1) / per;
  for (uint32_t i = 0; i < n; ++i) {
    d[i] = cfg.access.placement == Placement::kSpread ? i % domains : i / per;
  }
  return d;
}

smp::WorldSpec make_spec(const Config& cfg) {
  smp::WorldSpec s;
  s.workload = cfg.access.workload == workload::Kind::kLatPagefault
                   ? smp::SmpWorkload::kLatPagefault
                   : smp::SmpWorkload::kPft;
  switch (cfg.access.tasks) {
    case workload::TaskSharing::kThreads:
      s.sharing = smp::SmpSharing::kThreads;
      break;
    case workload::TaskSharing::kThreadsVmaEach:
      s.sharing = smp::SmpSharing::kThreadsVmaEach;
      break;
    case workload::TaskSharing::kProcesses:
      s.sharing = smp::SmpSharing::kProcesses;
      break;
  }
  s.nr_cpus = cfg.access.threads;
  s.prof = resolve_profile(cfg.kernel);
  uint64_t slice = std::max<uint64_t>(1, (cfg.access.region >> mm::kPageShift) / s.nr_cpus);
  if (s.workload == smp::SmpWorkload::kLatPagefault) {
    slice = mm::round_up(slice, s.prof.fault_around_pages());  // whole fault-around windows
  }
  s.slice_pages = slice;
  s.passes = cfg.access.passes;
  s.zap = cfg.access.zap;
  s.write = cfg.access.op == workload::AccessOp::kWrite;
  s.track_lines = cfg.access.coherence;
  s.real_work = cfg.access.interleave == Interleave::kReal;
  s.rss_batch = mm::percpu_counter_batch(cfg.machine.cpus ? cfg.machine.cpus : s.nr_cpus);
  s.costs = cfg.smp;
  s.seed = cfg.access.seed;
  s.access_ns = cfg.cpu.access_ns;
  s.domains = task_domains(cfg);
  return s;
}

struct Timing {
  double makespan_ns = 0;  // modelled (timed, lockstep)
  double busy_ns = 0;      // modelled: the tasks' steps, summed
  double wall_s = 0;       // measured (real)
};

constexpr uint64_t kProgressSteps = uint64_t{1} << 16;

uint64_t total_faults(const smp::World& w) {
  const smp::WorldSpec& s = w.spec();
  const uint64_t per_fault = s.workload == smp::SmpWorkload::kPft ? 1 : s.prof.fault_around_pages();
  return (s.slice_pages + per_fault - 1) / per_fault * s.passes * s.nr_cpus;
}

void report_progress(smp::World& w, const RunProgress& progress) {
  if (!progress) return;
  uint64_t done = 0;
  for (unsigned i = 0; i < w.nr_tasks(); ++i) done += w.task(i).vm_events[mm::VmEvent::pgfault];
  progress(done, total_faults(w));
}

Timing run_lockstep(smp::World& w, const RunProgress& progress) {
  std::vector<double> clock(w.nr_tasks(), 0);
  double busy = 0;
  uint64_t steps = 0;
  for (bool any = true; any;) {
    any = false;
    for (unsigned i = 0; i < w.nr_tasks(); ++i) {
      smp::Task& t = w.task(i);
      if (w.done(t)) continue;
      const double ns = w.step(t);
      clock[i] += ns;
      busy += ns;
      any = true;
      if (++steps % kProgressSteps == 0) report_progress(w, progress);
    }
  }
  return {*std::max_element(clock.begin(), clock.end()), busy, 0};
}

Timing run_timed(smp::World& w, const RunProgress& progress) {
  const unsigned n = w.nr_tasks();
  std::vector<double> clock(n);
  for (unsigned i = 0; i < n; ++i) clock[i] = w.nominal_fault_ns() * i / n;
  double busy = 0;
  uint64_t steps = 0;
  for (;;) {
    int next = -1;
    for (unsigned i = 0; i < n; ++i) {
      if (w.done(w.task(i))) continue;
      if (next < 0 || clock[i] < clock[next]) next = static_cast<int>(i);
    }
    if (next < 0) break;
    const double ns = w.step(w.task(next), clock[next]);
    clock[next] += ns;
    busy += ns;
    if (++steps % kProgressSteps == 0) report_progress(w, progress);
  }
  return {*std::max_element(clock.begin(), clock.end()), busy, 0};
}

Timing run_real(smp::World& w) {
  using Clock = std::chrono::steady_clock;
  const unsigned n = w.nr_tasks();
  std::latch start(n);
  std::vector<Clock::time_point> begin(n), end(n);
  std::vector<std::thread> threads;
  threads.reserve(n);
  for (unsigned i = 0; i < n; ++i) {
    threads.emplace_back([&w, &start, &begin, &end, i] {
      smp::Task& t = w.task(i);
      start.arrive_and_wait();
      begin[i] = Clock::now();
      while (!w.done(t)) w.step(t);
      end[i] = Clock::now();
    });
  }
  for (auto& t : threads) t.join();
  // From the first task's start to the last task's end.
  const auto t0 = *std::min_element(begin.begin(), begin.end());
  const auto t1 = *std::max_element(end.begin(), end.end());
  return {0, 0, std::chrono::duration<double>(t1 - t0).count()};
}

class ConcurrentEngine final : public Engine {
 public:
  Result<RunResult> run(const Config& cfg, mm::Tracer* tracer,
                        const RunProgress& progress) override;
};

Result<RunResult> ConcurrentEngine::run(const Config& cfg, mm::Tracer* tracer,
                                        const RunProgress& progress) {
  (void)tracer;  // the concurrent model has no tracepoints yet
  smp::World w(make_spec(cfg));
  Timing tm;
  switch (cfg.access.interleave) {
    case Interleave::kReal:
      tm = run_real(w);
      break;
    case Interleave::kLockstep:
      tm = run_lockstep(w, progress);
      break;
    case Interleave::kTimed:
      tm = run_timed(w, progress);
      break;
  }
  // More tasks than CPUs (machine.cpus): they take turns, so the run lasts
  // at least their summed work over the CPUs. The order of steps, and so
  // the counts, stay those of one task per CPU.
  if (cfg.machine.cpus > 0 && cfg.machine.cpus < w.nr_tasks()) {
    tm.makespan_ns = std::max(tm.makespan_ns, tm.busy_ns / cfg.machine.cpus);
  }
  report_progress(w, progress);

  const mm::VmStat ev = w.vm_events();
  const double faults = static_cast<double>(ev[mm::VmEvent::pgfault]);
  auto per_fault = [&](double v) { return faults > 0 ? v / faults : 0.0; };
  RunResult r;
  r.config = effective_keys(cfg);
  TaskCounters task;
  task.min_flt = w.min_flt();
  task.rss[mm::MM_ANONPAGES] = w.rss_sum(mm::MM_ANONPAGES);
  task.rss[mm::MM_FILEPAGES] = w.rss_sum(mm::MM_FILEPAGES);
  // elapsed_s: the same meaning as the serial engine's, the run's duration
  // as the model sees it: wall-clock time on real threads, the makespan of
  // the per-step costs otherwise.
  const bool real = cfg.access.interleave == Interleave::kReal;
  report_counters(ev, task, real ? tm.wall_s : tm.makespan_ns / 1e9, &r);
  auto add = [&](std::string name, double v) { r.counters.push_back({std::move(name), v}); };
  add("model.threads", w.nr_tasks());
  add("model.rss_updates_per_fault", per_fault(static_cast<double>(ev[mm::VmEvent::rss_updates])));
  add("model.rss_batch", w.spec().rss_batch);
  if (const mm::CoherenceTracker* coh = w.coherence()) {
    const mm::LineGroupStats t = coh->total();
    add("model.line_accesses_per_fault", per_fault(static_cast<double>(t.accesses)));
    add("model.coherence_misses", static_cast<double>(t.misses));
    add("model.coherence_upgrades", static_cast<double>(t.upgrades));
    add("model.coherence_misses_per_fault", per_fault(static_cast<double>(t.misses)));
    add("model.coherence_upgrades_per_fault", per_fault(static_cast<double>(t.upgrades)));
    add("model.coherence_transfers_per_fault",
        per_fault(static_cast<double>(t.misses + t.upgrades)));
    add("model.coherence_far_transfers_per_fault", per_fault(static_cast<double>(t.far)));
    for (const mm::LineGroupStats& g : coh->groups()) {
      const std::string p = "model.coherence." + g.name + ".";
      add(p + "accesses_per_fault", per_fault(static_cast<double>(g.accesses)));
      add(p + "misses_per_fault", per_fault(static_cast<double>(g.misses)));
      add(p + "upgrades_per_fault", per_fault(static_cast<double>(g.upgrades)));
    }
  }
  if (real) {
    add("model.wall_s", tm.wall_s);
    add("model.wall_faults_per_s", tm.wall_s > 0 ? faults / tm.wall_s : 0);
  } else {
    add("model.est_ns_per_fault", faults > 0 ? tm.makespan_ns * w.nr_tasks() / faults : 0);
    add("model.est_faults_per_s", tm.makespan_ns > 0 ? faults / tm.makespan_ns * 1e9 : 0);
    if (w.spec().workload == smp::SmpWorkload::kLatPagefault) {
      // lmbench's lat_pagefault figure: the time per page the program loads.
      const double pages = faults + static_cast<double>(ev[mm::VmEvent::pte_hits]);
      add("model.est_ns_per_page", pages > 0 ? tm.makespan_ns * w.nr_tasks() / pages : 0);
    }
  }
  return r;
}

}  // namespace

std::unique_ptr<Engine> make_concurrent_engine() { return std::make_unique<ConcurrentEngine>(); }

}  // namespace faultline::engine
