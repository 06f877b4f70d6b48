// main.cc — the faultline command line: dispatch only.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <string>
#include <vector>

#include "cli/commands.h"

int main(int argc, char** argv) {
  CLI::App app{"faultline: a model of the Linux page-fault path, and a probe of the real one"};
  app.require_subcommand(1);
  app.set_version_flag("--version", faultline::cli::kVersion);
  faultline::cli::add_run_command(app);
  faultline::cli::add_sweep_command(app);
  faultline::cli::add_keys_command(app);
  faultline::cli::add_probe_commands(app);
  faultline::cli::add_trace_command(app);
  faultline::cli::add_record_command(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? faultline::cli::kExitOk : faultline::cli::kExitBadInput;
  }
  return faultline::cli::exit_code();
}
