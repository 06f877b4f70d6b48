// cmd_trace.cc — `faultline trace show` (a recording as text), `trace
// import` (a recording from another tool's trace) and `trace export` (a
// recording as a fio iolog).
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "record/import.h"
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

struct ImportArgs {
  std::string from;
  std::string in;
  std::string output;
  std::string maps;
  std::vector<std::string> data;
};

void do_import(const ImportArgs& a) {
  const auto format = parse_enum<record::ImportFormat>(a.from);
  if (!format) {
    return fail(Status::InvalidArgument("--from: expected one of " +
                                        enum_choices<record::ImportFormat>(", ") + ", got '" +
                                        a.from + "'"));
  }
  record::ImportOptions o;
  o.maps = a.maps;
  o.data_dirs = a.data;
  o.version = kVersion;
  auto rep = record::import_recording(*format, a.in, a.output, o);
  if (!rep.ok()) return fail(rep.status());
  std::fprintf(stderr, "faultline: %s: %llu events from %llu lines of %s (%llu not used)\n",
               a.output.c_str(), static_cast<unsigned long long>(rep->events),
               static_cast<unsigned long long>(rep->lines), a.in.c_str(),
               static_cast<unsigned long long>(rep->skipped));
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

  auto i = std::make_shared<ImportArgs>();
  CLI::App* imp = trace->add_subcommand("import", "make a recording from another tool's trace");
  imp->add_option("--from", i->from, enum_choices<record::ImportFormat>(", "))->required();
  imp->add_option("input", i->in, "the other tool's output")->required();
  imp->add_option("-o,--output", i->output, "the recording")->required();
  imp->add_option("--maps", i->maps, "lackey, perf: a copy of the process's /proc/PID/maps");
  imp->add_option("--data", i->data, "record the files under this directory (repeat for more)")
      ->allow_extra_args(false);
  imp->callback([i] { do_import(*i); });

  auto e = std::make_shared<std::pair<std::string, std::string>>();
  CLI::App* exp = trace->add_subcommand(
      "export", "write a recording's reads and touches as a fio iolog (version 3)");
  exp->add_option("recording", e->first, "the recording")->required();
  exp->add_option("-o,--output", e->second, "the fio iolog")->required();
  exp->callback([e] {
    if (Status st = record::export_fio_iolog(e->first, e->second); !st.ok()) fail(st);
  });
}

}  // namespace faultline::cli
