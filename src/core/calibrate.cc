#include "faultline/calibrate.h"

#include <fmt/format.h>
#include <stdlib.h>
#include <sys/utsname.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string_view>

#include "faultline/simulator.h"
#include "util/text.h"

namespace faultline {

// Each workload leans on a few of the costs:
// - tmpfs and warm mappings on the fault and the PTEs; a file written 4 KiB
//   at a time on the folio mapped, which the large folios of the others
//   spread over many pages. tmpfs at stride 1 and 16 map the same PTEs
//   and load 16 or 1 of each fault-around's, a second pass loads through
//   PTEs loaded before: the three separate a first load (a hypervisor's
//   shadow exit, where there is one) from a PTE set and from a later load;
// - warm read(2) on the call and the copy;
// - cold reads of single pages on the request latency, cold streams on the
//   bandwidth, the request time and the folio insertion;
// - a file larger than its cgroup limit on reclaim. The same sequential
//   pass through a mapping and by read(2) evicts the same folios, mapped
//   and not: the pair separates the TLB flush that ends a batch of reclaim
//   which unmapped something from the eviction itself. The last two read the
//   same 2 MiB windows at random, once with room for them and once under a
//   limit that evicts most of each window untouched: the pair separates
//   evicting a folio from adding one, which the other reclaim workloads
//   (each evicting about as much as it adds) cannot.
// None of them is a case of scenarios/fidelity, which judges the result,
// though tmpfs at stride 1 and 16 and at random share the patterns of the
// matrix's tmpfs cases (on 96 MiB, not 128).
const char* const kCalibrationScenarioToml = R"(
name = "calibrate"
description = "the workloads faultline calibrate times on the kernel and fits the model to"
[file]
size = "96MiB"
[access]
seed = 101
[probe]
repetitions = 5

[[case]]
name = "tmpfs-sequential"
set = ["file.fs=tmpfs", "access.pattern=sequential", "access.fraction=1"]
[[case]]
name = "tmpfs-stride16"
set = ["file.fs=tmpfs", "access.pattern=stride", "access.stride=16", "access.fraction=0.0625"]
[[case]]
name = "tmpfs-sequential-twice"
set = ["file.fs=tmpfs", "access.pattern=sequential", "access.count=49152"]
[[case]]
name = "tmpfs-random"
set = ["file.fs=tmpfs", "access.pattern=random", "access.fraction=0.25"]
[[case]]
name = "warm-mmap-stride4"
set = ["file.cache=warm-read", "access.pattern=stride", "access.stride=4", "access.fraction=0.25"]
[[case]]
name = "warm-mmap-sequential-pmd"
set = ["file.cache=warm-write", "file.write_chunk=4MiB", "access.pattern=sequential", "access.fraction=1"]
[[case]]
name = "warm-mmap-order0-stride4"
set = ["file.cache=warm-write", "file.write_chunk=4KiB", "access.pattern=stride", "access.stride=4", "access.fraction=0.25"]
[[case]]
name = "warm-mmap-sequential-1m"
set = ["file.cache=warm-read", "file.warm_chunk=1MiB", "access.pattern=sequential", "access.fraction=1"]
[[case]]
name = "warm-pread-4k"
set = ["file.cache=warm-read", "access.method=read", "access.pattern=sequential", "access.fraction=1"]
[[case]]
name = "warm-pread-256k"
set = ["file.cache=warm-read", "access.method=read", "access.read_size=256KiB", "access.pattern=stride", "access.stride=64", "access.fraction=0.015625"]
[[case]]
name = "cold-mmap-advrandom"
set = ["mapping.madvise=random", "access.pattern=random", "access.fraction=0.03", "file.size=192MiB"]
[[case]]
name = "cold-pread-4k-fadvrandom"
set = ["file.fadvise=random", "access.method=read", "access.pattern=random", "access.fraction=0.03", "file.size=192MiB"]
[[case]]
name = "cold-mmap-sequential-ra512"
set = ["device.read_ahead_kb=512", "access.pattern=sequential", "access.fraction=1", "file.size=192MiB"]
[[case]]
name = "cold-pread-1m-ra2048"
set = ["device.read_ahead_kb=2048", "access.method=read", "access.read_size=1MiB", "access.pattern=stride", "access.stride=256", "access.fraction=0.00390625", "file.size=192MiB"]
[[case]]
name = "cold-mmap-stride-ra4096"
set = ["device.read_ahead_kb=4096", "access.pattern=stride", "access.stride=700", "access.count=70", "file.size=192MiB"]
[[case]]
name = "limit-sequential"
set = ["machine.memory_limit=64MiB", "access.pattern=sequential", "access.fraction=1", "file.size=256MiB"]
[[case]]
name = "limit-pread-sequential"
set = ["machine.memory_limit=64MiB", "access.method=read", "access.pattern=sequential", "access.fraction=1", "file.size=256MiB"]
[[case]]
name = "limit-random-ra32"
set = ["machine.memory_limit=64MiB", "device.read_ahead_kb=32", "access.pattern=random", "access.fraction=0.1", "file.size=256MiB"]
[[case]]
name = "cold-random-ra2048"
set = ["device.read_ahead_kb=2048", "access.pattern=random", "access.count=300", "file.size=256MiB"]
[[case]]
name = "limit-random-ra2048"
set = ["machine.memory_limit=64MiB", "device.read_ahead_kb=2048", "access.pattern=random", "access.count=300", "file.size=256MiB"]
)";

const std::vector<FittedKey> kFittedKeys = {
    {"device.bandwidth", 20e6, 100e9},  // bytes per second
    {"device.latency_us", 0.5, 50000},
    {"device.request_us", 1, 50000},
    {"cpu.fault_ns", 100, 100000},
    {"cpu.map_page_ns", 1, 10000},
    {"cpu.map_folio_ns", 1, 10000},
    {"cpu.add_folio_ns", 10, 100000},
    {"cpu.evict_folio_ns", 10, 100000},
    {"cpu.access_ns", 0.1, 10000},
    {"cpu.read_call_ns", 10, 100000},
    {"cpu.copy_page_ns", 10, 100000},
    // A shadow exit costs what a PTE set would where every PTE set is
    // loaded through; the workloads that load a few PTEs of each
    // fault-around tell them apart, from a start of a few microseconds.
    {"cpu.shadow_fault_ns", 1, 100000, 10000},
    // Where it is not folded into evict_folio_ns, a flush costs at least
    // an exit: searched from its bottom and from 10 us.
    {"cpu.tlb_flush_ns", 1, 200000, 10000},
};
const std::vector<uint32_t> kFittedQueueDepths = {1, 2, 4, 0};

namespace {

// How the device serves a batch's requests: one after another, or together
// (device.shared_batches). Each queue depth is tried with both.
struct Discipline {
  uint32_t queue_depth;
  bool shared;
};

// The value of key in cfg as a number (every fitted key is numeric).
double key_number(const Config& cfg, const std::string& key) {
  for (const auto& [k, v] : effective_keys(cfg)) {
    if (k == key) return std::stod(v);
  }
  return 0;
}

std::string key_text(const std::string& key, double v) {
  if (key == "device.bandwidth") return fmt::format("{:.0f}", v);
  return fmt::format("{:.4g}", v);
}

// The fit's measure: the mean square of ln(model / kernel median) over the
// points the kernel timed.
double mean_square_log_error(const std::vector<FitPoint>& points,
                             const std::vector<double>& model) {
  double sum = 0;
  size_t n = 0;
  for (size_t i = 0; i < points.size(); ++i) {
    const double k = points[i].kernel_s.median;
    if (k <= 0) continue;
    sum += std::pow(std::log(std::max(model[i], 1e-12) / k), 2);
    ++n;
  }
  return n ? sum / static_cast<double>(n) : 0;
}

class Fitter {
 public:
  // frozen[i]: kFittedKeys[i] is measured, not searched.
  Fitter(const std::vector<FitPoint>& points, const FitOptions& opts, std::vector<bool> frozen)
      : points_(points), opts_(opts), frozen_(std::move(frozen)) {}

  // The model's elapsed_s of every point with the keys at x (ln values)
  // and the given queue depth and discipline.
  Result<std::vector<double>> times(const std::vector<double>& x, Discipline d) {
    std::vector<PlannedRun> plan;
    for (const FitPoint& p : points_) {
      PlannedRun r = p.run;
      for (size_t i = 0; i < kFittedKeys.size(); ++i) {
        FAULTLINE_RETURN_IF_ERROR(
            set_key(r.cfg, kFittedKeys[i].key, key_text(kFittedKeys[i].key, std::exp(x[i]))));
      }
      r.cfg.device.queue_depth = d.queue_depth;
      r.cfg.device.shared_batches = d.shared;
      plan.push_back(std::move(r));
    }
    SimOptions sim;
    sim.progress = false;
    sim.jobs = opts_.jobs;
    auto runs = simulate(plan, sim);
    if (!runs.ok()) return runs.status();
    ++evaluations_;
    std::vector<double> out;
    for (const RunResult& r : *runs) out.push_back(r.get("elapsed_s"));
    return out;
  }

  Result<double> eval(const std::vector<double>& x, Discipline d) {
    auto t = times(x, d);
    if (!t.ok()) return t.status();
    return mean_square_log_error(points_, *t);
  }

  // Pattern search from x: each key up and down by a factor, the factor
  // halved (in the logarithm) when nothing improves, from `from` until it is
  // below `until`.
  Result<double> search(std::vector<double>* x, Discipline d, double from, double until) {
    auto f = eval(*x, d);
    if (!f.ok()) return f.status();
    double best = *f;
    for (double step = std::log(from); step > std::log(until);) {
      bool improved = false;
      for (size_t i = 0; i < x->size(); ++i) {
        if (frozen_[i]) continue;
        for (double dir : {1.0, -1.0}) {
          std::vector<double> y = *x;
          y[i] = std::clamp(y[i] + dir * step, std::log(kFittedKeys[i].lo),
                            std::log(kFittedKeys[i].hi));
          if (y[i] == (*x)[i]) continue;
          auto g = eval(y, d);
          if (!g.ok()) return g.status();
          if (*g < best * (1 - 1e-9)) {
            best = *g;
            *x = std::move(y);
            improved = true;
            break;
          }
        }
      }
      if (!improved) step /= 2;
    }
    return best;
  }

  size_t evaluations() const { return evaluations_; }

 private:
  const std::vector<FitPoint>& points_;
  FitOptions opts_;
  std::vector<bool> frozen_;
  size_t evaluations_ = 0;
};

double rms(const std::vector<FitPoint>& points, const std::vector<double>& model) {
  return std::sqrt(mean_square_log_error(points, model));
}

}  // namespace

Result<FitResult> fit_machine(const std::vector<FitPoint>& points, const FitOptions& opts) {
  if (points.empty()) return Status::InvalidArgument("calibrate: no workload to fit");
  const Config& start = points.front().run.cfg;
  std::vector<double> x0;
  for (const FittedKey& k : kFittedKeys) {
    x0.push_back(std::log(std::clamp(key_number(start, k.key), k.lo, k.hi)));
  }
  const std::vector<double> x_start = x0;
  std::vector<bool> frozen(kFittedKeys.size(), false);
  for (const auto& measured : opts.measured) {
    const std::string& key = measured.first;
    const double value = measured.second;
    auto it = std::find_if(kFittedKeys.begin(), kFittedKeys.end(),
                           [&key](const FittedKey& k) { return key == k.key; });
    if (it == kFittedKeys.end()) {
      return Status::InvalidArgument(fmt::format("calibrate: {} is not a fitted key", key));
    }
    if (!(value > 0)) {
      return Status::InvalidArgument(fmt::format("calibrate: measured {} = {}", key, value));
    }
    const size_t i = static_cast<size_t>(it - kFittedKeys.begin());
    x0[i] = std::log(value);
    frozen[i] = true;
  }
  Fitter fitter(points, opts, frozen);
  FitResult out;
  auto t0 = fitter.times(x_start, {start.device.queue_depth, start.device.shared_batches});
  if (!t0.ok()) return t0.status();
  out.model_s_start = *t0;
  out.rms_start = rms(points, *t0);
  // Each queue depth and discipline coarsely (to 5 %), then the best one
  // finely (to 1 %).
  double best = INFINITY;
  std::vector<double> best_x;
  Discipline best_d{0, false};
  // The second start: the keys with one at it.
  std::vector<std::vector<double>> starts = {x0};
  std::vector<double> x1 = x0;
  for (size_t i = 0; i < kFittedKeys.size(); ++i) {
    if (kFittedKeys[i].alt > 0 && !frozen[i]) x1[i] = std::log(kFittedKeys[i].alt);
  }
  if (x1 != x0) starts.push_back(std::move(x1));
  for (bool shared : {false, true}) {
    for (uint32_t qd : kFittedQueueDepths) {
      const Discipline d{qd, shared};
      double best_here = INFINITY;
      for (const std::vector<double>& from : starts) {
        std::vector<double> x = from;
        auto f = fitter.search(&x, d, 4.0, 1.05);
        if (!f.ok()) return f.status();
        best_here = std::min(best_here, *f);
        if (*f < best) {
          best = *f;
          best_x = x;
          best_d = d;
        }
      }
      if (opts.progress) {
        opts.progress(fmt::format("queue depth {}{}: rms of ln(model / kernel) {:.4f}",
                                  qd ? std::to_string(qd) : std::string("unlimited"),
                                  shared ? ", batches shared" : "", std::sqrt(best_here)));
      }
    }
  }
  if (auto f = fitter.search(&best_x, best_d, 1.1, 1.01); !f.ok()) return f.status();
  auto t = fitter.times(best_x, best_d);
  if (!t.ok()) return t.status();
  out.model_s = *t;
  out.rms = rms(points, *t);
  for (size_t i = 0; i < kFittedKeys.size(); ++i) {
    out.keys.emplace_back(kFittedKeys[i].key, key_text(kFittedKeys[i].key, std::exp(best_x[i])));
  }
  // With the other device keys, so the profile has one [device] table.
  auto cpu = std::find_if(out.keys.begin(), out.keys.end(),
                          [](const auto& kv) { return kv.first.rfind("cpu.", 0) == 0; });
  cpu = out.keys.insert(cpu, {"device.queue_depth", std::to_string(best_d.queue_depth)});
  out.keys.insert(std::next(cpu),
                  {"device.shared_batches", best_d.shared ? std::string("true") : "false"});
  out.evaluations = fitter.evaluations();
  return out;
}

// Sixteen windows of 2,048 folios, twice, into memory that has room: no
// reclaim among the insertions. The time is not fitted (tracing slows it).
const char* const kInsertionScenarioToml = R"(
name = "calibrate-insertion"
description = "cold random 8 MiB read-around windows, traced: the kernel's time per folio added"
[file]
size = "256MiB"
[device]
read_ahead_kb = 8192
[access]
pattern = "random"
count = 16
seed = 101
[probe]
repetitions = 2

[[case]]
name = "insertion"
set = []
)";

namespace {

// One mm_filemap_add_to_page_cache line of tracefs text: its time (ns) and
// the folio's first page and order. False for any other line.
bool parse_insertion(std::string_view line, uint64_t* ns, uint64_t* index, unsigned* order) {
  static constexpr std::string_view kEvent = " mm_filemap_add_to_page_cache:";
  const size_t ev = line.find(kEvent);
  if (ev == std::string_view::npos) return false;
  // The timestamp ("22800.762784:") is the token before the event's name.
  std::string_view head = line.substr(0, ev);
  const size_t sp = head.find_last_of(" \t");
  std::string_view stamp = sp == std::string_view::npos ? head : head.substr(sp + 1);
  if (stamp.size() < 2 || stamp.back() != ':') return false;
  stamp.remove_suffix(1);
  if (!util::parse_seconds(stamp, ns)) return false;
  const std::string_view fields = line.substr(ev + kEvent.size());
  uint64_t ofs = 0, ord = 0;
  if (!util::parse_number(util::field_value(fields, "ofs"), 10, &ofs) ||
      !util::parse_number(util::field_value(fields, "order"), 10, &ord) || ord > 63) {
    return false;
  }
  *index = ofs / 4096;
  *order = static_cast<unsigned>(ord);
  return true;
}

double quantile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  const double at = q * static_cast<double>(v.size() - 1);
  const size_t i = static_cast<size_t>(at);
  return i + 1 < v.size() ? v[i] + (at - static_cast<double>(i)) * (v[i + 1] - v[i]) : v[i];
}

}  // namespace

Result<InsertionTiming> insertion_timing(const std::vector<std::string>& trace_files) {
  std::vector<double> per_folio;  // ns per folio of each window
  InsertionTiming out;
  for (const std::string& path : trace_files) {
    std::ifstream in(path);
    if (!in) return Status::IoError(fmt::format("calibrate: cannot read trace {}", path));
    // The run of insertions at consecutive indices being read: its first
    // and last times, its count, and the index the next one would have.
    uint64_t first_ns = 0, last_ns = 0, n = 0, next = 0;
    auto close = [&] {
      if (n >= kMinTimedFolios && last_ns > first_ns) {
        per_folio.push_back(static_cast<double>(last_ns - first_ns) / static_cast<double>(n - 1));
        out.folios += n;
      }
      n = 0;
    };
    std::string line;
    while (std::getline(in, line)) {
      uint64_t ns = 0, index = 0;
      unsigned order = 0;
      if (line.empty() || line[0] == '#') continue;
      if (!parse_insertion(line, &ns, &index, &order)) {
        close();  // another event ends a window's insertion loop
        continue;
      }
      if (n && (index != next || ns < last_ns)) close();
      if (n == 0) first_ns = ns;
      last_ns = ns;
      next = index + (uint64_t{1} << order);
      ++n;
    }
    close();
  }
  out.windows = per_folio.size();
  if (!per_folio.empty()) {
    out.median_ns = quantile(per_folio, 0.5);
    out.q1_ns = quantile(per_folio, 0.25);
    out.q3_ns = quantile(per_folio, 0.75);
  }
  return out;
}

namespace {

// The probe's traced run of kInsertionScenarioToml, in a directory of its
// own that goes afterwards. windows 0 where tracing is not available.
Result<InsertionTiming> measure_insertion(const CompareOptions& probe, const FitOptions& fit) {
  auto sc = parse_scenario(kInsertionScenarioToml, "<calibration insertion>");
  if (!sc.ok()) return sc.status();
  std::string dir =
      (std::filesystem::temp_directory_path() / "faultline-calibrate-XXXXXX").string();
  if (!::mkdtemp(dir.data())) {
    return Status::IoError(fmt::format("calibrate: mkdtemp {}: {}", dir, std::strerror(errno)));
  }
  struct Remove {
    std::string dir;
    ~Remove() {
      std::error_code ec;
      std::filesystem::remove_all(dir, ec);
    }
  } remove{dir};
  CompareOptions opts = probe;
  opts.repetitions = 0;  // the scenario's
  opts.trace_events = true;
  opts.output_dir = dir;
  if (fit.progress) fit.progress("timing the kernel's folio insertions from its tracepoints");
  auto cases = probe_for_model(*sc, {}, opts);
  if (!cases.ok()) return cases.status();
  std::vector<std::string> files;
  for (const ProbedCase& c : *cases) {
    files.insert(files.end(), c.kernel_event_files.begin(), c.kernel_event_files.end());
  }
  return insertion_timing(files);
}

}  // namespace

Result<Calibration> calibrate(const Scenario& workloads, const CompareOptions& probe,
                              const FitOptions& fit) {
  Calibration c;
  // First, so that --hold-insertion without tracefs fails before the probe.
  auto ins = measure_insertion(probe, fit);
  if (!ins.ok()) return ins.status();
  c.insertion = *ins;
  FitOptions opts = fit;
  if (fit.hold_insertion) {
    if (c.insertion.windows == 0) {
      return Status::Unavailable(
          "calibrate: no readahead window was traced (is tracefs available?), so "
          "cpu.add_folio_ns cannot be held at the kernel's insertion time");
    }
    opts.measured.emplace_back("cpu.add_folio_ns", c.insertion.median_ns);
    c.insertion_held = true;
  }
  auto cases = probe_for_model(workloads, {}, probe);
  if (!cases.ok()) return cases.status();
  struct utsname u {};
  if (uname(&u) == 0) c.host = u.nodename;
  for (const ProbedCase& pc : *cases) {
    c.kernel_release = pc.kernel_release;
    FitPoint p;
    p.name = pc.kernel.case_name;
    if (pc.kernel.variant != "default") p.name += "/" + pc.kernel.variant;
    p.run = pc.model_run;
    p.kernel_s = {pc.kernel.get("elapsed_s"), pc.kernel.get("elapsed_s.min"),
                  pc.kernel.get("elapsed_s.max")};
    c.points.push_back(std::move(p));
  }
  if (fit.progress) fit.progress("fitting the model's device and CPU costs");
  auto f = fit_machine(c.points, opts);
  if (!f.ok()) return f.status();
  c.fit = std::move(*f);
  return c;
}

namespace {

// What the insertion timing says, as lines after `lead`.
std::string insertion_line(const Calibration& c, std::string_view lead) {
  const InsertionTiming& t = c.insertion;
  if (t.windows == 0) return fmt::format("{}The kernel's insertions were not traced.\n", lead);
  return fmt::format(
      "{0}The kernel's readahead added a folio every {1:.0f} ns (quartiles {2:.0f} to {3:.0f})\n"
      "{0}in {4} traced windows of {5} folios, the tracepoint's own cost included;\n"
      "{0}cpu.add_folio_ns {6}.\n",
      lead, t.median_ns, t.q1_ns, t.q3_ns, t.windows, t.folios,
      c.insertion_held ? "is held at that, not fitted"
                       : "is fitted, and also stands for a read's other work per folio");
}

}  // namespace

std::string format_machine_profile(const Calibration& c) {
  std::string out = fmt::format(
      "# Machine profile written by faultline calibrate: the model's device and CPU costs\n"
      "# fitted to {} workloads timed on this machine's kernel (rms of ln(model / kernel)\n"
      "# {:.3f}, {:.3f} with the starting keys). Load it with --machine.\n",
      c.points.size(), c.fit.rms, c.fit.rms_start);
  out += insertion_line(c, "# ");
  out += fmt::format("name = \"{}\"\n", c.host.empty() ? "calibrated" : c.host);
  out += fmt::format("description = \"{}, kernel {}, loop device of the probe\"\n",
                     c.host.empty() ? "this machine" : c.host, c.kernel_release);
  std::string section;
  for (const auto& [k, v] : c.fit.keys) {
    const std::string s = k.substr(0, k.find('.'));
    if (s != section) {
      out += "[" + s + "]\n";
      section = s;
    }
    out += k.substr(k.find('.') + 1) + " = " + v + "\n";
  }
  out += "\n# workload                        kernel s (median)      model s    error\n";
  for (size_t i = 0; i < c.points.size(); ++i) {
    const double k = c.points[i].kernel_s.median;
    out += fmt::format("# {:<30} {:>17.5f} {:>12.5f} {:>+7.1f}%\n", c.points[i].name, k,
                       c.fit.model_s[i], k > 0 ? 100 * (c.fit.model_s[i] - k) / k : 0.0);
  }
  return out;
}

std::string format_calibration_table(const Calibration& c) {
  std::string out =
      fmt::format("calibration on {} (kernel {}): {} workloads, {} model runs of the set\n\n",
                  c.host, c.kernel_release, c.points.size(), c.fit.evaluations);
  out += fmt::format("{:<30} {:>10} {:>8} {:>12} {:>8} {:>12} {:>8}\n", "workload", "kernel s",
                     "spread", "model start", "error", "model fit", "error");
  auto err = [](double m, double k) {
    return k > 0 ? fmt::format("{:+.1f}%", 100 * (m - k) / k) : "-";
  };
  size_t within = 0;
  for (size_t i = 0; i < c.points.size(); ++i) {
    const FitPoint& p = c.points[i];
    const double k = p.kernel_s.median;
    within += k > 0 && std::fabs(c.fit.model_s[i] - k) <= 0.15 * k;
    out += fmt::format("{:<30} {:>10.5f} {:>7.1f}% {:>12.5f} {:>8} {:>12.5f} {:>8}\n", p.name, k,
                       100 * p.kernel_s.relative(), c.fit.model_s_start[i],
                       err(c.fit.model_s_start[i], k), c.fit.model_s[i], err(c.fit.model_s[i], k));
  }
  out += fmt::format(
      "\nrms of ln(model / kernel): {:.3f} at the start, {:.3f} fitted; {} of {} "
      "workloads within 15%\n\nfitted keys:\n",
      c.fit.rms_start, c.fit.rms, within, c.points.size());
  for (const auto& [k, v] : c.fit.keys) out += fmt::format("  {} = {}\n", k, v);
  out += insertion_line(c, "");
  return out;
}

}  // namespace faultline
