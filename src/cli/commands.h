// commands.h — the subcommands of the faultline CLI.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "faultline/scenario.h"
#include "util/status.h"

namespace faultline::cli {

inline constexpr const char* kVersion = "0.1.0";

void add_run_command(CLI::App& app);
void add_keys_command(CLI::App& app);
void add_probe_commands(CLI::App& app);
void add_sweep_command(CLI::App& app);

// The exit status the subcommand left (0, 1 for a failed run, 2 for bad input).
int exit_code();
void set_exit_code(int rc);
// Prints "faultline: <message>" and sets the exit code (2 for input errors).
void fail(const Status& st);
// Keeps the runs --only names: CASE/VARIANT, CASE or VARIANT; an error when none is.
Status keep_only(const std::string& only, std::vector<PlannedRun>* plan);

// A scenario (a file, or the built-in default when `path` is empty) and its
// planned runs after --set and --only.
struct PlannedScenario {
  Scenario scenario;
  std::vector<PlannedRun> runs;
};
Result<PlannedScenario> plan_scenario(const std::string& path, const std::vector<std::string>& sets,
                                      const std::string& only);
// Writes text to path atomically (temporary file + rename), or to stdout.
Status write_output(const std::string& path, const std::string& text);

}  // namespace faultline::cli
