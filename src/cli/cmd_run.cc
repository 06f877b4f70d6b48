// cmd_run.cc — `faultline run` and `faultline keys`.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>

#include "cli/commands.h"
#include "faultline/scenario.h"
#include "faultline/simulator.h"
#include "mpi/ranks.h"
#include "report/report.h"

namespace faultline::cli {
namespace {

int g_exit_code = 0;

struct RunArgs : RunOptions {
  std::string trace_dir;
  std::string timeline_dir;
};

// mkdir -p of one level: dir exists as a directory afterwards, or an error
// names the option.
Status make_dir(const std::string& option, const std::string& dir) {
  ::mkdir(dir.c_str(), 0755);
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return Status::InvalidArgument(option + ": cannot create '" + dir + "'");
  }
  return Status::Ok();
}

// Each run's timeline as DIR/CASE_VARIANT.timeline.csv and .timeline.svg,
// each written atomically.
Status write_timelines(const std::string& dir, const std::vector<RunResult>& runs) {
  for (const RunResult& r : runs) {
    if (r.timeline.empty()) continue;
    const std::string base = dir + "/" + file_safe(r.case_name) + "_" + file_safe(r.variant);
    FAULTLINE_RETURN_IF_ERROR(
        write_output(base + ".timeline.csv", report::format_timeline_csv(r.timeline)));
    FAULTLINE_RETURN_IF_ERROR(write_output(base + ".timeline.svg", report::render_timeline_svg(r)));
  }
  return Status::Ok();
}

void do_run(const RunArgs& a) {
  auto planned = plan_scenario(a.scenario, a.assignments(), a.only, a.machine);
  if (!planned.ok()) return fail(planned.status());
  const Scenario* sc = &planned->scenario;
  std::vector<PlannedRun>* plan = &planned->runs;
  if (!a.timeline_dir.empty() && std::none_of(plan->begin(), plan->end(), [](const PlannedRun& r) {
        return r.cfg.model.timeline();
      })) {
    return fail(Status::InvalidArgument(
        "--timeline-dir: no run has a timeline (give --timeline N or set model.timeline)"));
  }
  if (!a.trace_dir.empty()) {
    Status st = make_dir("--trace-dir", a.trace_dir);
    if (!st.ok()) return fail(st);
  }
  if (!a.timeline_dir.empty()) {
    Status st = make_dir("--timeline-dir", a.timeline_dir);
    if (!st.ok()) return fail(st);
  }
  SimOptions opts;
  opts.jobs = a.jobs;
  opts.progress = !a.quiet;
  opts.trace_dir = a.trace_dir;
  auto runs = mpi::simulate_on_ranks(*plan, opts);
  if (!runs.ok()) return fail(runs.status());
  if (!mpi::is_root()) return;  // rank 0 has every result and writes the report
  const report::Meta meta{sc->name, sc->description, sc->source, kVersion};
  if (!a.timeline_dir.empty()) {
    Status st = write_timelines(a.timeline_dir, *runs);
    if (!st.ok()) return fail(st);
  }
  Status st = write_output(a.output, format_runs(a.format, meta, *runs));
  if (!st.ok()) return fail(st);
}

}  // namespace

std::string format_runs(Format f, const report::Meta& meta, const std::vector<RunResult>& runs) {
  switch (f) {
    case Format::kJson:
      return report::format_json(meta, runs);
    case Format::kCsv:
      return report::format_csv(runs);
    case Format::kTable:
      break;
  }
  return report::format_table(meta, runs);
}

void add_report_options(CLI::App* cmd, Format* format, std::string* output,
                        const std::string& format_help) {
  std::vector<std::string> names;
  for (const auto& n : enum_names(Format{})) names.emplace_back(n.name);
  cmd->add_option_function<std::string>(
         "--format", [format](const std::string& v) { *format = *parse_enum<Format>(v); },
         format_help)
      ->check(CLI::IsMember(names));
  cmd->add_option("-o,--output", *output, "write the report to this file (atomically)");
}

void add_run_options(CLI::App* cmd, RunOptions* o, const std::string& format_help) {
  cmd->add_option("scenario", o->scenario,
                  "scenario file (TOML) or recording (none: the seed 1 matrix)");
  cmd->add_option("--set", o->sets, "KEY=VALUE, applied to every run after the scenario")
      ->allow_extra_args(false);
  cmd->add_option("--only", o->only, "only the run(s) named CASE/VARIANT, CASE or VARIANT");
  cmd->add_option("--machine", o->machine,
                  "a machine profile (faultline calibrate writes one): its device, machine and "
                  "cpu keys replace the scenario's; cases, variants and --set still override");
  add_report_options(cmd, &o->format, &o->output, format_help);
  cmd->add_option("--repeat", o->repeat,
                  "N seeds per run, access.seed to access.seed + N - 1: medians and [min, max] "
                  "(model.repetitions; a run that does not depend on the seed runs once)");
  cmd->add_option("--timeline", o->timeline,
                  "sample each run every N accesses, or every T of modelled time (10ms, 0.5s): "
                  "pgpgin, faults, the page cache and its LRU lists, mmap_miss, readahead "
                  "(model.timeline)");
  cmd->add_option("-j,--jobs", o->jobs, "runs in parallel (default: one per core)");
  cmd->add_flag("-q,--quiet", o->quiet, "no progress line");
}

int exit_code() { return g_exit_code; }
void set_exit_code(int rc) { g_exit_code = rc; }

int exit_status(const Status& st) {
  switch (st.code()) {
    case Status::Code::kOk:
      return kExitOk;
    case Status::Code::kInvalidArgument:
    case Status::Code::kNotFound:
      return kExitBadInput;
    case Status::Code::kPermission:
    case Status::Code::kUnavailable:
      return kExitEnvironment;
    case Status::Code::kIoError:
      return kExitSystem;
    case Status::Code::kInterrupted:
      return kExitInterrupted;
    case Status::Code::kProgramFailed:
      return kExitProgram;
    case Status::Code::kInternal:
      return kExitInternal;
  }
  return kExitInternal;
}

void fail(const Status& st) {
  // Under mpirun every rank meets the same error: rank 0 says it.
  if (mpi::is_root()) std::fprintf(stderr, "faultline: %s\n", st.message().c_str());
  g_exit_code = exit_status(st);
}

Status apply_machine_option(const std::string& path, Scenario* sc) {
  if (path.empty()) return Status::Ok();
  auto m = load_machine_profile(path);
  if (!m.ok()) return m.status().with_context("--machine");
  return apply_machine_profile(*m, sc);
}

Result<PlannedScenario> plan_scenario(const std::string& path, const std::vector<std::string>& sets,
                                      const std::string& only, const std::string& machine) {
  Result<Scenario> sc = path.empty() ? Result<Scenario>(default_scenario()) : load_scenario(path);
  if (!sc.ok()) return sc.status();
  FAULTLINE_RETURN_IF_ERROR(apply_machine_option(machine, &*sc));
  auto plan = plan_runs(*sc, sets);
  if (!plan.ok()) return plan.status();
  FAULTLINE_RETURN_IF_ERROR(keep_only(only, &*plan));
  return PlannedScenario{std::move(*sc), std::move(*plan)};
}

Status keep_only(const std::string& only, std::vector<PlannedRun>* plan) {
  if (only.empty()) return Status::Ok();
  std::vector<PlannedRun> kept;
  for (auto& r : *plan) {
    if (r.case_name + "/" + r.variant == only || r.case_name == only || r.variant == only) {
      kept.push_back(std::move(r));
    }
  }
  if (kept.empty()) return Status::InvalidArgument("--only: no run named '" + only + "'");
  *plan = std::move(kept);
  return Status::Ok();
}

Status write_output(const std::string& path, const std::string& text) {
  if (path.empty() || path == "-") {
    std::fwrite(text.data(), 1, text.size(), stdout);
    std::fflush(stdout);
    return Status::Ok();
  }
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::binary);
    if (!out) return Status::IoError(path + ": cannot write");
    out << text;
    out.close();
    if (!out) {
      std::remove(tmp.c_str());
      return Status::IoError(path + ": write failed");
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    return Status::IoError(path + ": cannot rename into place");
  }
  return Status::Ok();
}

void add_run_command(CLI::App& app) {
  auto a = std::make_shared<RunArgs>();
  CLI::App* run = app.add_subcommand(
      "run", "run a scenario on the model (no scenario: the seed 1 matrix, 20 GiB in 8 GiB)");
  add_run_options(run, a.get(), "table, json or csv");
  run->add_option("--trace-dir", a->trace_dir, "write the model's tracepoints of each run here");
  run->add_option("--timeline-dir", a->timeline_dir,
                  "write each run's timeline here: CSV, and SVG charts of memory and readahead");
  run->callback([a] { do_run(*a); });
}

namespace {

// The releases and every kernel switch under each, as the Markdown tables of
// docs/model_fidelity.md ("Kernel profiles"; cli_test.sh checks they agree).
std::string profile_tables() {
  std::string out = "| kernel.profile | release |\n|---|---|\n";
#define FAULTLINE_X(id, name, doc) out += std::string("| ") + name + " | " + doc + " |\n";
  FAULTLINE_KERNEL_RELEASES(FAULTLINE_X)
#undef FAULTLINE_X
  out += "\n| switch (`kernel.<name>`) |";
  std::string rule = "|---|";
  for (const auto& r : enum_names(mm::Release{})) {
    out += " " + std::string(r.name) + " |";
    rule += "---|";
  }
  out += " what it changes |\n" + rule + "---|\n";
  for (const SwitchDoc& d : switch_docs()) {
    out += "| " + d.key.substr(d.key.find('.') + 1) + " |";
    for (const std::string& v : d.values) out += " " + v + " |";
    out += " " + d.doc + " |\n";
  }
  return out;
}

}  // namespace

void add_keys_command(CLI::App& app) {
  CLI::App* keys = app.add_subcommand("keys", "list every scenario key with its default");
  keys->callback([] {
    for (const KeyDoc& d : key_docs()) {
      std::printf("%-34s %-10s %-22s %s\n", d.key.c_str(),
                  d.type.size() > 10 ? "choice" : d.type.c_str(), d.default_value.c_str(),
                  d.doc.c_str());
    }
  });
  CLI::App* profiles = app.add_subcommand(
      "profiles", "every kernel release and the value of each kernel switch under it (Markdown)");
  profiles->callback([] { std::fputs(profile_tables().c_str(), stdout); });
}

}  // namespace faultline::cli
