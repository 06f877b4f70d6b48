// main.cc — the faultline command line: dispatch only.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "mpi/ranks.h"

int main(int argc, char** argv) {
  // Under mpirun: MPI first, and only the commands that spread their runs.
  faultline::mpi::Session mpi(&argc, &argv);
  if (!mpi.status().ok()) {
    std::fprintf(stderr, "faultline: %s\n", mpi.status().message().c_str());
    return faultline::cli::kExitEnvironment;
  }
  if (faultline::mpi::size() > 1 && argc > 1) {
    const std::string cmd = argv[1];
    if (cmd != "run" && cmd != "sweep") {
      if (faultline::mpi::is_root()) {
        std::fprintf(stderr,
                     "faultline: %s: runs in one process; under mpirun only run and "
                     "sweep spread their runs over the ranks\n",
                     cmd.c_str());
      }
      return faultline::cli::kExitBadInput;
    }
  }
  CLI::App app{"faultline: a model of the Linux page-fault path, and a probe of the real one"};
  app.require_subcommand(1);
  app.set_version_flag("--version", faultline::cli::kVersion);
  faultline::cli::add_run_command(app);
  faultline::cli::add_sweep_command(app);
  faultline::cli::add_explain_command(app);
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
