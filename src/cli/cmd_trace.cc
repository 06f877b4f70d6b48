// cmd_trace.cc — `faultline trace show`: a recording as text.
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "workload/recording.h"

namespace faultline::cli {
namespace {

struct ShowArgs {
  std::string path;
  uint64_t limit = 0;
  bool header_only = false;
};

void do_show(const ShowArgs& a) {
  auto r = workload::RecordingReader::open(a.path, /*allow_incomplete=*/true);
  if (!r.ok()) return fail(r.status());
  const workload::RecordingInfo& info = (*r)->info();
  std::printf("# faultline recording, format version %u%s\n", info.version,
              info.complete ? "" : ", INCOMPLETE");
  std::printf("# %llu events over %.6f s\n", static_cast<unsigned long long>(info.nr_events),
              static_cast<double>(info.duration_ns) / 1e9);
  for (const auto& [k, v] : info.conditions) std::printf("# %s: %s\n", k.c_str(), v.c_str());
  for (size_t i = 0; i < info.files.size(); ++i) {
    std::printf("# file %zu: %s, %llu bytes\n", i, info.files[i].path.c_str(),
                static_cast<unsigned long long>(info.files[i].size));
  }
  for (size_t i = 0; i < info.tasks.size(); ++i) {
    std::printf("# task %zu: tid %u, pid %u, %s\n", i, info.tasks[i].tid, info.tasks[i].pid,
                info.tasks[i].comm.c_str());
  }
  if (a.header_only) return;
  std::vector<workload::Event> batch(4096);
  uint64_t shown = 0;
  while (const size_t n = (*r)->next(batch)) {
    for (size_t i = 0; i < n; ++i) {
      if (a.limit && shown == a.limit) return;
      std::printf("%s\n", workload::format_event(info, batch[i]).c_str());
      ++shown;
    }
  }
  if (!(*r)->status().ok()) fail((*r)->status());
}

}  // namespace

void add_trace_command(CLI::App& app) {
  CLI::App* trace = app.add_subcommand("trace", "read and convert recordings (faultline record)");
  trace->require_subcommand(1);
  auto a = std::make_shared<ShowArgs>();
  CLI::App* show = trace->add_subcommand("show", "print a recording as text, one event a line");
  show->add_option("recording", a->path, "the recording")->required();
  show->add_option("-n,--limit", a->limit, "print at most this many events");
  show->add_flag("--header", a->header_only, "print the files, tasks and conditions only");
  show->callback([a] { do_show(*a); });
}

}  // namespace faultline::cli
