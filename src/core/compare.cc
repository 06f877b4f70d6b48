#include "faultline/compare.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>

#include "engine/engine.h"
#include "engine/file_set.h"
#include "faultline/simulator.h"
#include "mm/profile.h"
#include "probe/pft.h"
#include "probe/probe.h"
#include "probe/replay_plan.h"
#include "workload/generator.h"
#include "workload/trace.h"

namespace faultline {
namespace {

// Counters put side by side, in this order; those with a tolerance in the
// scenario are judged, the others shown.
const char* const kCompared[] = {"pgpgin",
                                 "majflt",
                                 "minflt",
                                 "pgmajfault",
                                 "workingset_refault_file",
                                 "workingset_activate_file",
                                 "elapsed_s"};

// Below these absolute differences a counter is within tolerance whatever
// the relative error: a few KiB of file-system metadata, a fault or two.
double absolute_floor(const std::string& counter) {
  if (counter == "pgpgin") return 64;  // KiB
  if (counter == "majflt" || counter == "minflt" || counter == "pgmajfault") return 2;
  return 0;
}

// The model's advice carries the kernel's uapi numbers, which the probe
// hands to madvise(2) and posix_fadvise(2) as they are.
static_assert(static_cast<int>(mm::Madvise::kNormal) == MADV_NORMAL);
static_assert(static_cast<int>(mm::Madvise::kRandom) == MADV_RANDOM);
static_assert(static_cast<int>(mm::Madvise::kSequential) == MADV_SEQUENTIAL);
static_assert(static_cast<int>(mm::Madvise::kWillneed) == MADV_WILLNEED);
static_assert(static_cast<int>(mm::Madvise::kDontneed) == MADV_DONTNEED);
static_assert(static_cast<int>(mm::Madvise::kHugepage) == MADV_HUGEPAGE);
static_assert(static_cast<int>(mm::Fadvise::kNormal) == POSIX_FADV_NORMAL);
static_assert(static_cast<int>(mm::Fadvise::kRandom) == POSIX_FADV_RANDOM);
static_assert(static_cast<int>(mm::Fadvise::kSequential) == POSIX_FADV_SEQUENTIAL);
static_assert(static_cast<int>(mm::Fadvise::kWillneed) == POSIX_FADV_WILLNEED);
static_assert(static_cast<int>(mm::Fadvise::kDontneed) == POSIX_FADV_DONTNEED);
static_assert(static_cast<int>(mm::Fadvise::kNoreuse) == POSIX_FADV_NOREUSE);

Result<probe::Request> make_request(const Config& cfg, const std::string& name,
                                    const CompareOptions& opts, int repetitions) {
  auto unsupported = [](const std::string& what) {
    return Status::InvalidArgument("probe: " + what + " cannot be run on the host kernel");
  };
  if (cfg.mapping.offset || cfg.mapping.length) return unsupported("mapping.offset/length");
  if (cfg.mapping.align_offset) return unsupported("mapping.align_offset");
  if (cfg.file.large_folios != LargeFolios::kAuto) return unsupported("file.large_folios");
  if (cfg.file.tmpfs_huge_order) return unsupported("file.tmpfs_huge_order");
  if (cfg.access.dontneed_every) return unsupported("access.dontneed_every");
  if (cfg.access.workload == workload::Kind::kRecording) {
    return unsupported("access.workload=recording");
  }
  probe::Request r;
  r.name = name;
  r.file_bytes = cfg.file.size;
  r.fs = cfg.file.fs;
  r.read_ahead_kb = cfg.device.read_ahead_kb;
  r.memory_limit_bytes = cfg.machine.memory_limit;
  r.map_shared = cfg.mapping.shared;
  r.madvise_advice = static_cast<int>(cfg.mapping.madvise);
  r.fadvise_advice = static_cast<int>(cfg.file.fadvise);
  r.write = cfg.access.op == workload::AccessOp::kWrite;
  r.method = cfg.access.method;
  r.cache = cfg.file.cache;
  r.write_chunk_bytes = static_cast<uint32_t>(cfg.file.write_chunk);
  r.warm_chunk_bytes = static_cast<uint32_t>(cfg.file.warm_chunk);
  const workload::AccessSpec spec = engine::make_access_spec(cfg);
  auto pages = workload::generate_all(spec);
  if (!pages.ok()) return pages.status();
  r.pages = std::move(*pages);
  if (r.method == workload::AccessMethod::kRead) {
    // One pread per access: a traced access keeps its length, a generated
    // one (or a page index) reads access.read_size.
    if (spec.pattern == workload::Pattern::kTrace) {
      auto ranges = workload::read_trace_ranges(spec);
      if (!ranges.ok()) return ranges.status();
      for (const workload::ByteRange& br : *ranges) {
        r.reads.push_back({br.offset, br.length ? br.length : cfg.access.read_size});
      }
    } else {
      for (uint64_t page : r.pages) r.reads.push_back({page * 4096, cfg.access.read_size});
    }
  }
  r.repetitions = repetitions;
  r.trace_events = opts.trace_events;
  r.workspace_root = opts.workspace_root;
  r.output_dir = opts.output_dir;
  return r;
}

// The newest release the model has that is not newer than the running
// kernel (uname -r); the default release if the running one cannot be read.
mm::Release host_release() {
  struct utsname u {};
  int major = 0, minor = 0;
  if (uname(&u) != 0 || std::sscanf(u.release, "%d.%d", &major, &minor) != 2) {
    return mm::kDefaultRelease;
  }
  std::optional<mm::Release> best;
  int best_v = -1;
  for (const auto& r : enum_names(mm::Release{})) {
    int a = 0, b = 0;
    if (std::sscanf(std::string(r.name).c_str(), "%d.%d", &a, &b) != 2) continue;
    const int v = a * 100 + b;
    if (v <= major * 100 + minor && v > best_v) {
      best_v = v;
      best = r.value;
    }
  }
  return best ? *best : enum_names(mm::Release{}).front().value;  // older than every release
}

std::string host_profile_name() { return std::string(enum_name(host_release())); }

// The kernel.* switches a configuration resolves to, as text.
std::vector<std::pair<std::string, std::string>> kernel_switches(const Config& cfg) {
  std::vector<std::pair<std::string, std::string>> out;
  for (auto& kv : effective_keys(cfg)) {
    if (kv.first.rfind("kernel.", 0) == 0) out.push_back(std::move(kv));
  }
  return out;
}

// A variant can run on the host if, under the host's profile, it leaves
// every kernel switch as the host kernel has it (for example "batched RSS"
// on a kernel that batches). Otherwise it exists only in the model.
bool runs_on_host(const Scenario& sc, const NamedOverrides& v) {
  Config host = sc.base;
  host.kernel.profile = host_release();
  Config with = host;
  if (!apply_assignments(with, v.set).ok()) return false;
  with.kernel.profile = host_release();  // the host's, whatever v says
  return kernel_switches(with) == kernel_switches(host);
}

uint64_t host_mem_total() {
  std::ifstream in("/proc/meminfo");
  std::string key;
  uint64_t kb = 0;
  while (in >> key >> kb) {
    if (key == "MemTotal:") return kb * 1024;
    in.ignore(256, '\n');
  }
  return 0;
}

struct ProbedRun {
  PlannedRun plan;
  std::string name;
  probe::Result kernel;
  probe::Result program;  // a recording's program itself (runs empty: not run)
};

// The host's replay of a recording: its files and steps, with the
// configuration's file system, device, cache and limit; mapping.madvise and
// file.fadvise, when not normal, after every mmap and open, as the model
// applies them.
Result<probe::Request> replay_request(const Config& cfg, const std::string& name,
                                      const CompareOptions& opts, int repetitions,
                                      probe::ReplayPlan* plan_out) {
  auto plan = probe::plan_replay(cfg.access.trace, cfg.access.allow_incomplete);
  if (!plan.ok()) return plan.status();
  probe::Request r;
  r.name = name;
  r.fs = cfg.file.fs;
  r.read_ahead_kb = cfg.device.read_ahead_kb;
  r.memory_limit_bytes = cfg.machine.memory_limit;
  r.cache = cfg.file.cache;
  r.write_chunk_bytes = static_cast<uint32_t>(cfg.file.write_chunk);
  r.warm_chunk_bytes = static_cast<uint32_t>(cfg.file.warm_chunk);
  for (uint64_t bytes : plan->file_bytes) r.files.push_back({bytes, ""});
  for (const probe::ReplayOp& op : plan->ops) {
    r.ops.push_back(op);
    if (op.kind == probe::ReplayOp::Kind::kMmap && cfg.mapping.madvise != mm::Madvise::kNormal) {
      r.ops.push_back({.kind = probe::ReplayOp::Kind::kMadvise,
                       .slot = op.slot,
                       .arg = static_cast<uint32_t>(cfg.mapping.madvise),
                       .offset = 0,
                       .length = op.length});
    }
    if (op.kind == probe::ReplayOp::Kind::kOpen && cfg.file.fadvise != mm::Fadvise::kNormal) {
      r.ops.push_back({.kind = probe::ReplayOp::Kind::kFadvise,
                       .slot = op.slot,
                       .arg = static_cast<uint32_t>(cfg.file.fadvise)});
    }
  }
  r.open_slots = plan->open_slots;
  r.map_slots = plan->map_slots;
  r.anon_slots = plan->anon_slots;
  r.anon_max_pages = plan->anon_max_pages;
  r.largest_read = plan->largest_read;
  r.repetitions = repetitions;
  r.workspace_root = opts.workspace_root;
  r.trace_events = opts.trace_events;
  r.output_dir = opts.output_dir;
  if (plan_out) *plan_out = std::move(*plan);
  return r;
}

// The recorded program itself, on copies of its files on the probe's file
// system mounted over the originals.
Result<probe::Request> program_request(const probe::Request& replay, const probe::ReplayPlan& plan,
                                       const std::string& recording) {
  if (plan.argv.empty()) {
    return Status::InvalidArgument(recording + ": the recording names no command to run");
  }
  probe::Request r = replay;
  r.name = replay.name + "-program";
  r.ops.clear();
  r.open_slots = r.map_slots = r.anon_slots = 0;
  r.anon_max_pages.clear();
  r.files.clear();
  for (const std::string& path : plan.file_paths) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) {
      return Status::ProgramFailed(recording + ": the program's file " + path +
                                   " is not a regular file here (run it where its files are, "
                                   "or compare --no-program to replay the recording only)");
    }
    r.files.push_back({0, path});
  }
  r.command = plan.argv;
  r.cwd = plan.cwd;
  return r;
}

Result<std::vector<ProbedRun>> run_probe(const Scenario& sc,
                                         const std::vector<std::string>& overrides,
                                         const CompareOptions& opts,
                                         std::vector<std::string>* skipped) {
  std::vector<NamedOverrides> variants = sc.variants;
  Scenario host = sc;
  host.variants.clear();
  for (const NamedOverrides& v : variants) {
    if (!runs_on_host(sc, v)) {
      skipped->push_back("variant '" + v.name +
                         "' sets kernel switches the host kernel lacks: " + "model only");
    } else {
      host.variants.push_back(v);
    }
  }
  if (!variants.empty() && host.variants.empty()) {
    return Status::InvalidArgument(sc.source +
                                   ": every variant changes kernel switches; "
                                   "nothing can be run on the host");
  }
  // The model describes this machine's kernel.
  std::vector<std::string> all = {"kernel.profile=" + host_profile_name()};
  all.insert(all.end(), overrides.begin(), overrides.end());
  auto plan = plan_runs(host, all);
  if (!plan.ok()) return plan.status();
  auto live = probe::make_live_probe();
  std::vector<ProbedRun> out;
  const int reps = opts.repetitions > 0 ? opts.repetitions : sc.probe.repetitions;
  for (PlannedRun& p : *plan) {
    const std::string name = file_safe(sc.name + "-" + p.case_name + "-" + p.variant);
    const bool pft = p.cfg.access.workload == workload::Kind::kPft;
    if (pft || p.cfg.access.workload == workload::Kind::kLatPagefault) {
      // Anonymous memory or a memfd: no file system, loop device or root needed.
      if (pft && p.cfg.access.op != workload::AccessOp::kWrite) {
        return Status::InvalidArgument(sc.source +
                                       ": probe: pft runs write faults (access.op=write)");
      }
      probe::PftRequest req;
      req.threads = p.cfg.access.threads;
      req.tasks = p.cfg.access.tasks;
      req.region_bytes = p.cfg.access.region;
      req.passes = static_cast<int>(p.cfg.access.passes);
      req.zap = p.cfg.access.zap;
      req.repetitions = reps;
      if (opts.progress) opts.progress("probe " + sc.name + " " + p.case_name + "/" + p.variant);
      ProbedRun pr{p, name, {}, {}};
      Status st = pft ? probe::run_pft(req, &pr.kernel, nullptr)
                      : probe::run_lat_pagefault(req, &pr.kernel, nullptr);
      if (!st.ok()) return st.with_context(sc.source);
      out.push_back(std::move(pr));
      continue;
    }
    auto progress = [&](int done, int total) {
      if (opts.progress) {
        opts.progress("  repetition " + std::to_string(done) + "/" + std::to_string(total));
      }
    };
    if (p.cfg.access.workload == workload::Kind::kRecording || !p.cfg.streams.empty()) {
      // Several files and streams: replayed as the recording the model replays.
      std::optional<engine::FileSetRecording> set;
      if (!p.cfg.streams.empty()) {
        auto made = engine::FileSetRecording::create(p.cfg);
        if (!made.ok()) return made.status().with_context(sc.source);
        set.emplace(std::move(*made));
      }
      const Config rcfg = set ? set->replay_config(p.cfg) : p.cfg;
      probe::ReplayPlan replay;
      auto req = replay_request(rcfg, name, opts, reps, &replay);
      if (!req.ok()) return req.status().with_context(sc.source);
      if (opts.progress) {
        opts.progress("probe " + sc.name + " " + p.case_name + "/" + p.variant + ": replay");
      }
      ProbedRun pr{p, name, {}, {}};
      // The program's request first: a file it needs that is gone fails
      // before the replay has run.
      const bool program = opts.run_program && !set && !replay.argv.empty();
      Result<probe::Request> prog = Status::Unavailable("no program run");
      if (program) {
        prog = program_request(*req, replay, p.cfg.access.trace);
        if (!prog.ok()) return prog.status();
      }
      FAULTLINE_RETURN_IF_ERROR(live->run(*req, &pr.kernel, progress));
      if (opts.run_program && replay.argv.empty() && !set) {
        pr.program.notes.push_back(
            "the recording names no command (an import?): the program itself is not run");
      } else if (program) {
        if (opts.progress) {
          opts.progress("probe " + sc.name + " " + p.case_name + "/" + p.variant + ": the program");
        }
        FAULTLINE_RETURN_IF_ERROR(live->run(*prog, &pr.program, progress));
      }
      out.push_back(std::move(pr));
      continue;
    }
    auto req = make_request(p.cfg, name, opts, reps);
    if (!req.ok()) return req.status().with_context(sc.source);
    if (opts.progress) opts.progress("probe " + sc.name + " " + p.case_name + "/" + p.variant);
    ProbedRun pr{p, name, {}, {}};
    Status st = live->run(*req, &pr.kernel, progress);
    if (!st.ok()) return st;
    out.push_back(std::move(pr));
  }
  return out;
}

// Every counter of the runs as its median, .min and .max, names prefixed.
void add_spreads(const std::vector<probe::Counters>& runs, const std::string& prefix,
                 RunResult* r) {
  std::vector<std::string> keys;
  for (const auto& run : runs) {
    for (const auto& [k, v] : run) {
      if (std::find(keys.begin(), keys.end(), k) == keys.end()) keys.push_back(k);
    }
  }
  std::sort(keys.begin(), keys.end());
  for (const std::string& k : keys) {
    const Spread s = probe::spread(runs, k);
    r->counters.push_back({prefix + k, s.median});
    r->counters.push_back({prefix + k + ".min", s.min});
    r->counters.push_back({prefix + k + ".max", s.max});
  }
}

// The kernel's side of a probed run: its names, the configuration it ran
// and every counter as median, .min and .max.
RunResult kernel_result(const ProbedRun& pr) {
  RunResult r;
  r.case_name = pr.plan.case_name;
  r.variant = pr.plan.variant;
  r.config = effective_keys(pr.plan.cfg);
  add_spreads(pr.kernel.runs, "", &r);
  return r;
}

}  // namespace

Result<std::vector<RunResult>> probe_scenario(const Scenario& sc,
                                              const std::vector<std::string>& overrides,
                                              const CompareOptions& opts) {
  std::vector<std::string> skipped;
  auto probed = run_probe(sc, overrides, opts, &skipped);
  if (!probed.ok()) return probed.status();
  std::vector<RunResult> out;
  for (const ProbedRun& pr : *probed) {
    RunResult r = kernel_result(pr);
    r.config.emplace_back("host.kernel_release", pr.kernel.host.kernel_release);
    // A recording's program itself, beside its replay.
    add_spreads(pr.program.runs, "program.", &r);
    out.push_back(std::move(r));
  }
  return out;
}

Result<RunResult> probe_command(const std::string& command, const std::vector<std::string>& files,
                                const std::vector<std::string>& overrides,
                                const CompareOptions& opts) {
  if (command.empty()) return Status::InvalidArgument("--command: empty command");
  if (files.empty()) {
    return Status::InvalidArgument(
        "--command needs --file PATH for each data file the program reads (or record it first: "
        "faultline record -o REC -- CMD, then faultline probe REC)");
  }
  Scenario sc;
  sc.name = "command";
  sc.source = "--command";
  std::vector<std::string> all = {"kernel.profile=" + host_profile_name()};
  all.insert(all.end(), overrides.begin(), overrides.end());
  auto plan = plan_runs(sc, all);
  if (!plan.ok()) return plan.status();
  const Config& cfg = plan->front().cfg;
  probe::Request r;
  r.name = "command";
  r.fs = cfg.file.fs;
  r.read_ahead_kb = cfg.device.read_ahead_kb;
  r.memory_limit_bytes = cfg.machine.memory_limit;
  r.cache = cfg.file.cache;
  r.write_chunk_bytes = static_cast<uint32_t>(cfg.file.write_chunk);
  r.warm_chunk_bytes = static_cast<uint32_t>(cfg.file.warm_chunk);
  std::error_code ec;
  for (const std::string& f : files) {
    const std::filesystem::path p = std::filesystem::absolute(f, ec);
    if (ec || !std::filesystem::is_regular_file(p, ec)) {
      return Status::NotFound("--file " + f + ": not a regular file");
    }
    r.files.push_back({0, p.lexically_normal().string()});
  }
  r.command = {"/bin/sh", "-c", command};
  r.cwd = std::filesystem::current_path(ec).string();
  r.repetitions = opts.repetitions > 0 ? opts.repetitions : sc.probe.repetitions;
  r.workspace_root = opts.workspace_root;
  auto live = probe::make_live_probe();
  probe::Result res;
  if (opts.progress) opts.progress("probe: " + command);
  FAULTLINE_RETURN_IF_ERROR(live->run(r, &res, [&](int done, int total) {
    if (opts.progress) {
      opts.progress("  repetition " + std::to_string(done) + "/" + std::to_string(total));
    }
  }));
  RunResult out;
  out.case_name = "command";
  out.variant = "default";
  out.config = effective_keys(cfg);
  out.config.emplace_back("probe.command", command);
  for (size_t i = 0; i < files.size(); ++i) {
    out.config.emplace_back("probe.file." + std::to_string(i), r.files[i].source);
  }
  out.config.emplace_back("host.kernel_release", res.host.kernel_release);
  add_spreads(res.runs, "", &out);
  return out;
}

namespace {

// The model's run of a probed one, on a machine like this one.
PlannedRun host_model_run(const ProbedRun& pr) {
  PlannedRun p = pr.plan;
  if (!p.cfg.machine.memory_limit) p.cfg.machine.memory = host_mem_total();
  // The model gets the probe's device: its max_sectors_kb bounds read(2)'s
  // readahead (io_pages) and the size of a request.
  const Spread msk = probe::spread(pr.kernel.runs, "device.max_sectors_kb");
  if (msk.median >= 4) p.cfg.device.max_sectors_kb = static_cast<uint32_t>(msk.median);
  // Concurrent workloads with more tasks than this machine has CPUs: the
  // model's time estimate shares the same number of CPUs.
  const long online = ::sysconf(_SC_NPROCESSORS_ONLN);
  if (p.cfg.access.workload != workload::Kind::kStream && p.cfg.machine.cpus == 0 && online > 0 &&
      static_cast<unsigned long>(online) < p.cfg.access.threads) {
    p.cfg.machine.cpus = static_cast<uint32_t>(online);
  }
  return p;
}

}  // namespace

Result<std::vector<ProbedCase>> probe_for_model(const Scenario& sc,
                                                const std::vector<std::string>& overrides,
                                                const CompareOptions& opts) {
  std::vector<std::string> skipped;
  auto probed = run_probe(sc, overrides, opts, &skipped);
  if (!probed.ok()) return probed.status();
  std::vector<ProbedCase> out;
  for (const ProbedRun& pr : *probed) {
    ProbedCase c;
    c.model_run = host_model_run(pr);
    c.kernel_release = pr.kernel.host.kernel_release;
    c.kernel = kernel_result(pr);
    c.kernel_event_files = pr.kernel.event_files;
    out.push_back(std::move(c));
  }
  return out;
}

Result<std::vector<CompareCase>> compare_scenario(const Scenario& sc,
                                                  const std::vector<std::string>& overrides,
                                                  const CompareOptions& opts) {
  std::vector<std::string> skipped;
  auto probed = run_probe(sc, overrides, opts, &skipped);
  if (!probed.ok()) return probed.status();
  // The model of the same runs, on a machine with this machine's memory.
  std::vector<PlannedRun> model_plan;
  for (const ProbedRun& pr : *probed) model_plan.push_back(host_model_run(pr));
  SimOptions sim;
  sim.progress = false;
  sim.jobs = 1;
  if (opts.trace_events) sim.trace_dir = opts.output_dir;
  std::vector<RunResult> model;
  std::vector<double> wall;
  for (const PlannedRun& p : model_plan) {
    const auto t0 = std::chrono::steady_clock::now();
    auto r = simulate({p}, sim);
    wall.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    if (!r.ok()) return r.status();
    model.push_back(std::move(r->front()));
  }

  std::map<std::string, double> tolerance;
  for (const auto& [k, v] : sc.probe.tolerance) tolerance[k] = v;
  std::vector<CompareCase> out;
  for (size_t i = 0; i < probed->size(); ++i) {
    const ProbedRun& pr = (*probed)[i];
    CompareCase c;
    c.scenario = sc.name;
    c.case_name = pr.plan.case_name;
    c.variant = pr.plan.variant;
    c.kernel_release = pr.kernel.host.kernel_release;
    c.model_profile = host_profile_name();
    c.model = model[i];
    c.model_wall_s = wall[i];
    c.notes = pr.kernel.notes;
    c.notes.insert(c.notes.end(), skipped.begin(), skipped.end());
    for (const std::string& n : pr.program.notes) c.notes.push_back("program: " + n);
    c.kernel_event_files = pr.kernel.event_files;
    if (opts.trace_events) {
      c.model_event_file = model_trace_path(opts.output_dir, c.case_name, c.variant);
    }
    std::vector<std::pair<std::string, std::string>> compared;  // (kernel name, model name)
    for (const char* name : kCompared) compared.emplace_back(name, name);
    if (is_concurrent_workload(pr.plan.cfg)) {
      // The model's rate comes from illustrative per-step costs: shown, not judged.
      compared.emplace_back("faults_per_s", "model.est_faults_per_s");
      compared.emplace_back("ns_per_fault", "model.est_ns_per_fault");
    }
    for (const auto& [name, model_name] : compared) {
      CompareRow row;
      row.counter = name;
      row.model = c.model.get(model_name);
      row.kernel = probe::spread(pr.kernel.runs, name);
      const double k = row.kernel.median;
      row.error = k != 0 ? (row.model - k) / k : (row.model == 0 ? 0 : INFINITY);
      auto t = tolerance.find(name);
      if (name == std::string("elapsed_s") && t == tolerance.end()) {
        // Time has its own verdict: the counters' fidelity and the time
        // model's are reported apart.
        if (k > 0 && row.model > 0) {
          row.tolerance = sc.probe.time_tolerance;
          row.within = std::fabs(row.model - k) <= row.tolerance * k;
          c.time_judged = true;
          c.time_pass = row.within;
        }
      } else if (t != tolerance.end()) {
        row.tolerance = t->second;
        row.within =
            std::fabs(row.model - k) <= std::max(t->second * std::fabs(k), absolute_floor(name));
        c.judged = true;
        c.pass = c.pass && row.within;
      }
      if (!pr.program.runs.empty()) {
        row.has_program = true;
        row.program = probe::spread(pr.program.runs, name);
        const double g = row.program.median;
        row.program_error = g != 0 ? (row.model - g) / g : (row.model == 0 ? 0 : INFINITY);
        if (t != tolerance.end() && name != "minflt") {
          row.program_judged = true;
          row.program_within =
              std::fabs(row.model - g) <= std::max(t->second * std::fabs(g), absolute_floor(name));
          c.has_program = true;
          c.program_pass = c.program_pass && row.program_within;
        }
      }
      c.rows.push_back(row);
    }
    out.push_back(std::move(c));
  }
  return out;
}

}  // namespace faultline
