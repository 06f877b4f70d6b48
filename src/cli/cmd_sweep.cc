// cmd_sweep.cc — `faultline sweep`: the scenario's runs repeated for every
// value of the --vary keys, one metric tabulated (and charted) over them.
//
//   faultline sweep scenarios/seed1-mmap-miss.toml --only stride1021
//       --vary access.stride=1..4096*2 --plot stride.svg
#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <memory>

#include "cli/commands.h"
#include "cli/sweep_args.h"
#include "faultline/simulator.h"
#include "mpi/ranks.h"
#include "report/svg_chart.h"
#include "report/sweep_report.h"

namespace faultline::cli {
namespace {

struct SweepArgs : RunOptions {
  std::vector<std::string> vary;
  std::string metric = "pgpgin";
  std::string plot;
};

// The directory of `path` exists, so that a long sweep does not end in a
// write error.
Status check_writable_dir(const std::string& flag, const std::string& path) {
  if (path.empty() || path == "-") return Status::Ok();
  const size_t slash = path.find_last_of('/');
  const std::string dir = slash == std::string::npos ? "." : path.substr(0, slash + 1);
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return Status::InvalidArgument(flag + ": no directory '" + dir + "' for '" + path + "'");
  }
  return Status::Ok();
}

void do_sweep(const SweepArgs& a) {
  report::Sweep sweep;
  sweep.metric = a.metric;
  sweep.sets = a.assignments();
  if (a.vary.empty()) return fail(Status::InvalidArgument("--vary: give at least one KEY=VALUES"));
  for (const std::string& v : a.vary) {
    auto axis = parse_vary(v);
    if (!axis.ok()) return fail(axis.status());
    for (const report::SweepAxis& other : sweep.axes) {
      if (other.key == axis->key)
        return fail(Status::InvalidArgument("--vary: key '" + axis->key + "' given twice"));
    }
    for (const std::string& s : sweep.sets) {
      if (s.rfind(axis->key + "=", 0) == 0) {
        return fail(Status::InvalidArgument("--set " + s + ": the key is also in --vary"));
      }
    }
    sweep.axes.push_back(std::move(*axis));
  }
  if (!a.plot.empty() && a.plot == a.output) {
    return fail(Status::InvalidArgument("--plot and -o name the same file '" + a.plot + "'"));
  }
  if (a.plot == "-") return fail(Status::InvalidArgument("--plot: give a file name"));
  if (Status st = check_writable_dir("-o", a.output); !st.ok()) return fail(st);
  if (Status st = check_writable_dir("--plot", a.plot); !st.ok()) return fail(st);

  auto planned = plan_scenario(a.scenario, sweep.sets, a.only, a.machine);
  if (!planned.ok()) return fail(planned.status());
  const Scenario* sc = &planned->scenario;
  std::vector<PlannedRun>* plan = &planned->runs;
  sweep.points = sweep_points(sweep.axes);
  auto expanded = expand_sweep(*plan, sweep.axes, sweep.points);
  if (!expanded.ok()) return fail(expanded.status());

  SimOptions opts;
  opts.jobs = a.jobs;
  opts.progress = !a.quiet;
  auto runs = mpi::simulate_on_ranks(expanded->runs, opts);
  if (!runs.ok()) return fail(runs.status());
  if (!mpi::is_root()) return;  // rank 0 has every result and writes the report
  sweep.runs = std::move(*runs);
  sweep.run_point = std::move(expanded->run_point);

  // The metric is checked against what the runs report: counters depend on the engine.
  const bool reported = std::any_of(sweep.runs.begin(), sweep.runs.end(), [&](const RunResult& r) {
    return std::any_of(r.counters.begin(), r.counters.end(),
                       [&](const Counter& c) { return c.name == a.metric; });
  });
  if (!reported) {
    std::string names;
    for (const Counter& c : sweep.runs.front().counters)
      names += (names.empty() ? "" : ", ") + c.name;
    return fail(Status::InvalidArgument("--metric: no run reports a counter '" + a.metric +
                                        "' (they report " + names + ")"));
  }

  const report::Meta meta{sc->name, sc->description, sc->source, kVersion};
  std::string text;
  switch (a.format) {
    case Format::kJson:
      text = report::format_sweep_json(meta, sweep);
      break;
    case Format::kCsv:
      text = report::format_sweep_csv(sweep);
      break;
    case Format::kTable:
      text = report::format_sweep_table(meta, sweep);
      break;
  }
  // The chart first: if the report cannot be written after it, the chart
  // goes too, so an error leaves no output behind.
  if (!a.plot.empty()) {
    Status st = write_output(a.plot, report::render_svg(report::sweep_chart(meta, sweep)));
    if (!st.ok()) return fail(st);
  }
  Status st = write_output(a.output, text);
  if (!st.ok()) {
    if (!a.plot.empty()) std::remove(a.plot.c_str());
    return fail(st);
  }
}

}  // namespace

void add_sweep_command(CLI::App& app) {
  auto a = std::make_shared<SweepArgs>();
  CLI::App* cmd = app.add_subcommand(
      "sweep", "run a scenario for every value of one or more keys; a table, and a chart");
  add_run_options(cmd, a.get(), "table, json or csv (json and csv: every counter)");
  cmd->add_option("--vary", a->vary,
                  "KEY=V1,V2,... or KEY=START..END*FACTOR or KEY=START..END+STEP; several "
                  "--vary: every combination")
      ->allow_extra_args(false);
  cmd->add_option("--metric", a->metric, "the counter of the table and the chart (pgpgin)");
  cmd->add_option("--plot", a->plot, "write an SVG line chart of the metric to this file");
  cmd->callback([a] { do_sweep(*a); });
}

}  // namespace faultline::cli
