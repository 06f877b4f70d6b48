#include "engine/counters.h"

#include <string>

namespace faultline::engine {
namespace {

void add_events(const mm::VmStat& events, bool model, std::vector<Counter>* out) {
  for (size_t i = 0; i < mm::kNrVmEvents; ++i) {
    const auto e = static_cast<mm::VmEvent>(i);
    if (mm::is_model_event(e) != model) continue;
    out->push_back({std::string(mm::vm_event_name(e)), static_cast<double>(events[e])});
  }
}

}  // namespace

void report_counters(const mm::VmStat& events, const TaskCounters& task, double elapsed_s,
                     RunResult* r) {
  add_events(events, false, &r->counters);
  auto add = [r](const char* name, double v) { r->counters.push_back({name, v}); };
  add("minflt", static_cast<double>(task.min_flt));
  add("majflt", static_cast<double>(task.maj_flt));
  // The RSS counters as /proc/<pid>/status shows them (RssFile, RssShmem, RssAnon).
  add("rss_file_kb", static_cast<double>(task.rss[mm::MM_FILEPAGES] * 4));
  add("rss_shmem_kb", static_cast<double>(task.rss[mm::MM_SHMEMPAGES] * 4));
  add("rss_anon_kb", static_cast<double>(task.rss[mm::MM_ANONPAGES] * 4));
  add("elapsed_s", elapsed_s);
  add_events(events, true, &r->counters);
}

void report_file_counters(const mm::VmStat& events, uint64_t min_flt, uint64_t maj_flt,
                          std::vector<Counter>* out) {
  add_events(events, false, out);
  out->push_back({"minflt", static_cast<double>(min_flt)});
  out->push_back({"majflt", static_cast<double>(maj_flt)});
  add_events(events, true, out);
}

}  // namespace faultline::engine
