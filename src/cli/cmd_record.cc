// cmd_record.cc — `faultline record [-o FILE] -- CMD [ARGS...]`.
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "record/recorder.h"

namespace faultline::cli {
namespace {

struct RecordArgs {
  std::vector<std::string> command;
  std::string output = "faultline.flr";
  std::vector<std::string> data;
  uint64_t epoch_pages = 8192;
  uint64_t epoch_ms = 100;
  bool quiet = false;
};

void do_record(const RecordArgs& a) {
  record::RecordOptions o;
  o.command = a.command;
  o.output = a.output;
  o.data_dirs = a.data;
  o.epoch_pages = a.epoch_pages;
  o.epoch_ms = a.epoch_ms;
  o.version = kVersion;
  if (!a.quiet) {
    o.progress = [](const std::string& line) {
      std::fprintf(stderr, "faultline: %s\n", line.c_str());
    };
  }
  auto rep = record::record_command(o);
  if (!rep.ok()) return fail(rep.status());
  std::fprintf(stderr,
               "faultline: %s: %llu events (%llu system calls, %llu page touches) of %zu file(s) "
               "in %.2f s\n",
               a.output.c_str(), static_cast<unsigned long long>(rep->events),
               static_cast<unsigned long long>(rep->syscalls),
               static_cast<unsigned long long>(rep->touches), rep->files.size(), rep->wall_s);
  for (const std::string& f : rep->files) std::fprintf(stderr, "faultline:   %s\n", f.c_str());
  for (const std::string& l : rep->limits) {
    std::fprintf(stderr,
                 "faultline: %s: what the recording could not see is described in "
                 "docs/recording.md\n",
                 l.c_str());
  }
  if (rep->touches_outside) {
    std::fprintf(stderr, "faultline: %llu touches fell in no mapping of a data file\n",
                 static_cast<unsigned long long>(rep->touches_outside));
  }
  if (rep->interrupted) {
    return fail(
        Status::Interrupted("record interrupted; the recording is kept, marked incomplete"));
  }
  if (!rep->complete) {
    const std::string why = rep->signal ? "was killed by signal " + std::to_string(rep->signal)
                                        : "exited with status " + std::to_string(rep->exit_status);
    return fail(Status::ProgramFailed(a.command[0] + " " + why + "; " + a.output +
                                      " is kept, marked incomplete (replay it with --set "
                                      "access.allow_incomplete=true)"));
  }
}

}  // namespace

void add_record_command(CLI::App& app) {
  auto a = std::make_shared<RecordArgs>();
  CLI::App* cmd = app.add_subcommand(
      "record", "run a program and record what it does to its files (strace and a preload shim)");
  cmd->add_option("-o,--output", a->output, "the recording (default faultline.flr)");
  cmd->add_option("--data", a->data,
                  "record the files under this directory (repeat for more; default: every file "
                  "outside /usr, /lib, /etc, /proc, /sys, /dev, /run, /bin, /sbin)")
      ->allow_extra_args(false);
  cmd->add_option("--epoch-pages", a->epoch_pages,
                  "an epoch ends after this many page touches (default 8192)")
      ->check(CLI::Range(uint64_t{1}, uint64_t{1} << 20));
  cmd->add_option("--epoch-ms", a->epoch_ms, "... or after this many milliseconds (default 100)")
      ->check(CLI::Range(uint64_t{1}, uint64_t{3600000}));
  cmd->add_flag("-q,--quiet", a->quiet, "no progress lines");
  cmd->add_option("command", a->command, "the program and its arguments, after --")->required();
  cmd->callback([a] { do_record(*a); });
}

}  // namespace faultline::cli
