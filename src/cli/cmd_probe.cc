// cmd_probe.cc — `faultline probe` and `faultline compare` (the live kernel).
#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdio>

#include "cli/commands.h"
#include "cli/events.h"
#include "faultline/calibrate.h"
#include "faultline/compare.h"
#include "faultline/scenario.h"
#include "report/compare_report.h"
#include "report/report.h"

namespace faultline::cli {
namespace {

struct ProbeArgs {
  std::string scenario;
  std::string all_dir;
  std::vector<std::string> sets;
  Format format = Format::kTable;
  std::string output;
  std::string trace_dir;
  std::string machine;  // compare --machine
  int repetitions = 0;
  bool events = false;
  bool strict = false;
  bool no_program = false;
  bool quiet = false;
  bool hold_insertion = false;     // calibrate --hold-insertion
  std::string command;             // probe --command
  std::vector<std::string> files;  // its data files
};

CompareOptions options(const ProbeArgs& a) {
  CompareOptions o;
  o.repetitions = a.repetitions;
  o.run_program = !a.no_program;
  o.trace_events = a.events || !a.trace_dir.empty();
  o.output_dir = a.trace_dir.empty() ? std::string("faultline-events") : a.trace_dir;
  if (!a.quiet)
    o.progress = [](const std::string& line) {
      std::fprintf(stderr, "faultline: %s\n", line.c_str());
    };
  return o;
}

Status make_dir(const std::string& dir) {
  ::mkdir(dir.c_str(), 0755);
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return Status::InvalidArgument(dir + ": cannot create directory");
  }
  return Status::Ok();
}

Result<std::vector<std::string>> scenario_files(const ProbeArgs& a) {
  if (a.all_dir.empty()) {
    if (a.scenario.empty())
      return Status::InvalidArgument("a scenario file or --all DIR is needed");
    return std::vector<std::string>{a.scenario};
  }
  DIR* d = ::opendir(a.all_dir.c_str());
  if (!d) return Status::NotFound(a.all_dir + ": cannot open directory");
  std::vector<std::string> files;
  while (dirent* e = ::readdir(d)) {
    const std::string n = e->d_name;
    if (n.size() > 5 && n.substr(n.size() - 5) == ".toml") files.push_back(a.all_dir + "/" + n);
  }
  ::closedir(d);
  std::sort(files.begin(), files.end());
  if (files.empty()) return Status::NotFound(a.all_dir + ": no .toml scenario in it");
  return files;
}

void do_probe_command(const ProbeArgs& a) {
  if (!a.scenario.empty()) {
    return fail(Status::InvalidArgument("probe: a scenario or --command, not both"));
  }
  auto run = probe_command(a.command, a.files, a.sets, options(a));
  if (!run.ok()) return fail(run.status());
  report::Meta meta{"command", a.command, "--command", kVersion};
  meta.probe = true;
  if (Status st = write_output(a.output, format_runs(a.format, meta, {*run})); !st.ok()) fail(st);
}

void do_probe(const ProbeArgs& a) {
  if (!a.command.empty()) return do_probe_command(a);
  if (!a.files.empty()) return fail(Status::InvalidArgument("probe: --file goes with --command"));
  if (a.scenario.empty()) {
    return fail(Status::InvalidArgument("probe: a scenario, a recording or --command is needed"));
  }
  auto sc = load_scenario(a.scenario);
  if (!sc.ok()) return fail(sc.status());
  const CompareOptions o = options(a);
  if (o.trace_events) {
    if (Status st = make_dir(o.output_dir); !st.ok()) return fail(st);
  }
  auto runs = probe_scenario(*sc, a.sets, o);
  if (!runs.ok()) return fail(runs.status());
  report::Meta meta{sc->name, sc->description, sc->source, kVersion};
  meta.probe = true;
  if (Status st = write_output(a.output, format_runs(a.format, meta, *runs)); !st.ok()) fail(st);
}

void do_compare(const ProbeArgs& a) {
  auto files = scenario_files(a);
  if (!files.ok()) return fail(files.status());
  // Parse everything first: a bad file fails before any probe runs.
  std::vector<Scenario> scenarios;
  for (const std::string& f : *files) {
    auto sc = load_scenario(f);
    if (!sc.ok()) return fail(sc.status());
    if (Status st = apply_machine_option(a.machine, &*sc); !st.ok()) return fail(st);
    if (auto plan = plan_runs(*sc, a.sets); !plan.ok()) return fail(plan.status());
    scenarios.push_back(std::move(*sc));
  }
  const CompareOptions o = options(a);
  if (o.trace_events) {
    if (Status st = make_dir(o.output_dir); !st.ok()) return fail(st);
  }
  std::vector<CompareCase> all;
  for (const Scenario& sc : scenarios) {
    CompareOptions so = o;
    if (o.trace_events) {
      so.output_dir = o.output_dir + "/" + sc.name;
      if (Status st = make_dir(so.output_dir); !st.ok()) return fail(st);
    }
    auto cases = compare_scenario(sc, a.sets, so);
    if (!cases.ok()) return fail(cases.status());
    all.insert(all.end(), cases->begin(), cases->end());
  }
  std::string text;
  switch (a.format) {
    case Format::kJson:
      text = report::format_compare_json(all);
      break;
    case Format::kCsv:
      text = report::format_compare_csv(all);
      break;
    case Format::kTable:
      text = a.all_dir.empty() ? report::format_compare_table(all)
                               : report::format_compare_matrix(all);
      if (a.events) {
        for (const CompareCase& c : all) text += "\n" + explain_divergence(c);
      }
      break;
  }
  if (Status st = write_output(a.output, text); !st.ok()) return fail(st);
  if (a.strict &&
      std::any_of(all.begin(), all.end(), [](const CompareCase& c) { return !c.pass; })) {
    set_exit_code(kExitOutOfTolerance);
  }
}

void do_calibrate(const ProbeArgs& a) {
  if (!a.sets.empty()) {
    return fail(Status::InvalidArgument(
        "calibrate: --set is not taken (the workloads are the scenario's; start from a profile "
        "with --machine)"));
  }
  Result<Scenario> sc = a.scenario.empty()
                            ? parse_scenario(kCalibrationScenarioToml, "<calibration workloads>")
                            : load_scenario(a.scenario);
  if (!sc.ok()) return fail(sc.status());
  if (Status st = apply_machine_option(a.machine, &*sc); !st.ok()) return fail(st);
  FitOptions fit;
  fit.hold_insertion = a.hold_insertion;
  if (!a.quiet) {
    fit.progress = [](const std::string& line) {
      std::fprintf(stderr, "faultline: %s\n", line.c_str());
    };
  }
  auto c = calibrate(*sc, options(a), fit);
  if (!c.ok()) return fail(c.status());
  const std::string table = format_calibration_table(*c);
  const std::string profile = format_machine_profile(*c);
  if (a.output.empty() || a.output == "-") {
    std::fputs(table.c_str(), stderr);
    if (Status st = write_output("-", profile); !st.ok()) return fail(st);
    return;
  }
  if (Status st = write_output(a.output, profile); !st.ok()) return fail(st);
  std::fputs(table.c_str(), stdout);
}

void common_options(CLI::App* cmd, ProbeArgs* a) {
  cmd->add_option("--set", a->sets, "KEY=VALUE, applied to every run after the scenario");
  add_report_options(cmd, &a->format, &a->output, "table, json or csv");
  cmd->add_option("--reps", a->repetitions, "repetitions on the kernel (default: the scenario's)")
      ->check(CLI::Range(1, 100));
  cmd->add_option("--trace-dir", a->trace_dir, "save the kernel's (and model's) tracepoints here");
  cmd->add_flag("-q,--quiet", a->quiet, "no progress lines");
}

}  // namespace

void add_probe_commands(CLI::App& app) {
  auto p = std::make_shared<ProbeArgs>();
  CLI::App* probe = app.add_subcommand(
      "probe", "run a scenario's access stream on this machine's kernel (root, loop devices)");
  probe->add_option("scenario", p->scenario,
                    "scenario file (TOML) or recording (faultline record; its replay, then "
                    "its program unless --no-program)");
  probe->add_option("--command", p->command,
                    "instead of a scenario: run this shell command on copies of its --file "
                    "data files on the probe's file system");
  probe->add_option("--file", p->files, "with --command: a data file it reads (repeatable)");
  probe->add_flag("--no-program", p->no_program,
                  "a recording: replay it, but do not run its program again");
  common_options(probe, p.get());
  probe->callback([p] { do_probe(*p); });

  auto c = std::make_shared<ProbeArgs>();
  CLI::App* compare = app.add_subcommand(
      "compare",
      "the model and this machine's kernel side by side, with the error of each counter");
  compare->add_option("scenario", c->scenario,
                      "scenario file (TOML) or recording (faultline record)");
  compare->add_option("--all", c->all_dir, "every scenario in this directory, as a matrix");
  compare->add_flag("--events", c->events,
                    "record tracepoints and show where model and kernel part ways");
  compare->add_flag("--strict", c->strict, "exit with status 3 if a case is out of tolerance");
  compare->add_option("--machine", c->machine,
                      "the model's machine profile (faultline calibrate writes this machine's)");
  compare->add_flag("--no-program", c->no_program,
                    "a recording: replay it on the kernel, but do not run its program again");
  common_options(compare, c.get());
  compare->callback([c] { do_compare(*c); });

  auto k = std::make_shared<ProbeArgs>();
  CLI::App* cal = app.add_subcommand(
      "calibrate",
      "time workloads on this machine's kernel and fit the model's device and CPU costs to "
      "them: a machine profile for --machine (root, loop devices)");
  cal->add_option("workloads", k->scenario,
                  "scenario whose cases are the workloads (default: the built-in set)");
  cal->add_option("--machine", k->machine, "start the fit from this machine profile");
  cal->add_option("-o,--output", k->output,
                  "write the profile here (atomically); none: the profile on stdout, the table "
                  "on stderr");
  cal->add_option("--reps", k->repetitions, "repetitions on the kernel (default: 5)")
      ->check(CLI::Range(1, 100));
  cal->add_option("--set", k->sets, "not taken: calibrate times the workloads as they are");
  cal->add_flag("--hold-insertion", k->hold_insertion,
                "hold cpu.add_folio_ns at the kernel's traced time per folio added, instead of "
                "fitting it");
  cal->add_flag("-q,--quiet", k->quiet, "no progress lines");
  cal->callback([k] { do_calibrate(*k); });
}

}  // namespace faultline::cli
