// commands.h — the subcommands of the faultline CLI.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "faultline/scenario.h"
#include "report/report.h"
#include "util/enum_names.h"
#include "util/status.h"

namespace faultline::cli {

inline constexpr const char* kVersion = "0.1.0";

void add_run_command(CLI::App& app);
void add_keys_command(CLI::App& app);
void add_probe_commands(CLI::App& app);
void add_sweep_command(CLI::App& app);
void add_trace_command(CLI::App& app);
void add_record_command(CLI::App& app);
void add_explain_command(CLI::App& app);

// --format: how a report is written.
#define FAULTLINE_REPORT_FORMATS(X) X(kTable, "table") X(kJson, "json") X(kCsv, "csv")
FAULTLINE_NAMED_ENUM(Format, FAULTLINE_REPORT_FORMATS)

// --format and -o: how and where a command writes its report.
void add_report_options(CLI::App* cmd, Format* format, std::string* output,
                        const std::string& format_help);

// What `run` and `sweep` share: the scenario, which of its runs, and the
// report of them.
struct RunOptions {
  std::string scenario;  // "": the built-in default
  std::string machine;   // --machine: a machine profile ("": none)
  std::vector<std::string> sets;
  std::string only;
  Format format = Format::kTable;
  std::string output;
  int jobs = 0;
  bool quiet = false;
  // --repeat N: model.repetitions=N after every --set ("": the scenario's).
  std::string repeat;
  // --timeline N|Ts: model.timeline=N|Ts after every --set ("": the scenario's).
  std::string timeline;
  // The --set assignments with --repeat's and --timeline's last.
  std::vector<std::string> assignments() const {
    std::vector<std::string> out = sets;
    if (!repeat.empty()) out.push_back("model.repetitions=" + repeat);
    if (!timeline.empty()) out.push_back("model.timeline=" + timeline);
    return out;
  }
};
void add_run_options(CLI::App* cmd, RunOptions* o, const std::string& format_help);

// Exit statuses of every subcommand (README, "Exit status"):
inline constexpr int kExitOk = 0;
inline constexpr int kExitInternal = 1;        // a failure of faultline itself
inline constexpr int kExitBadInput = 2;        // the scenario, a trace, a flag or a key
inline constexpr int kExitOutOfTolerance = 3;  // compare --strict: a case outside tolerance
inline constexpr int kExitEnvironment = 4;  // the machine lacks what is needed: root, loop devices,
                                            // mkfs, a memory cgroup
inline constexpr int kExitSystem = 5;       // a system call or I/O failed, a child was killed
inline constexpr int kExitProgram = 6;      // the program recorded or probed was not found, failed,
                                            // exited non-zero or was killed
inline constexpr int kExitInterrupted = 130;  // SIGINT or SIGTERM; everything was cleaned up

// The exit status for an error of this kind.
int exit_status(const Status& st);
// The exit status the subcommand left.
int exit_code();
void set_exit_code(int rc);
// Prints "faultline: <message>" and sets the exit code from the error's kind.
void fail(const Status& st);
// Keeps the runs --only names: CASE/VARIANT, CASE or VARIANT; an error when none is.
Status keep_only(const std::string& only, std::vector<PlannedRun>* plan);

// A scenario (a file, or the built-in default when `path` is empty) and its
// planned runs after --set and --only.
struct PlannedScenario {
  Scenario scenario;
  std::vector<PlannedRun> runs;
};
// The scenario at path (""; the built-in default) with the machine profile
// at machine applied ("": none), planned with sets.
Result<PlannedScenario> plan_scenario(const std::string& path, const std::vector<std::string>& sets,
                                      const std::string& only, const std::string& machine = "");
// Loads the machine profile at path into sc ("": nothing to do).
Status apply_machine_option(const std::string& path, Scenario* sc);
// A report of runs in the given format.
std::string format_runs(Format f, const report::Meta& meta, const std::vector<RunResult>& runs);
// Writes text to path atomically (temporary file + rename), or to stdout.
Status write_output(const std::string& path, const std::string& text);

}  // namespace faultline::cli
