#include "report/report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "report/report_internal.h"

namespace faultline::report {
namespace {

std::vector<std::string> unique_in_order(const std::vector<RunResult>& runs, bool cases) {
  std::vector<std::string> out;
  for (const RunResult& r : runs) {
    const std::string& n = cases ? r.case_name : r.variant;
    if (std::find(out.begin(), out.end(), n) == out.end()) out.push_back(n);
  }
  return out;
}

const RunResult* find(const std::vector<RunResult>& runs, const std::string& c,
                      const std::string& v) {
  for (const RunResult& r : runs) {
    if (r.case_name == c && r.variant == v) return &r;
  }
  return nullptr;
}

using CellFn = std::string (*)(const RunResult&);

void matrix(std::string& out, const std::string& title, const std::vector<RunResult>& runs,
            CellFn cell) {
  const auto cases = unique_in_order(runs, true);
  const auto variants = unique_in_order(runs, false);
  size_t w0 = 8;
  for (const auto& c : cases) w0 = std::max(w0, c.size());
  std::vector<size_t> w(variants.size());
  for (size_t j = 0; j < variants.size(); ++j) {
    w[j] = variants[j].size();
    for (const auto& c : cases) {
      if (const RunResult* r = find(runs, c, variants[j])) w[j] = std::max(w[j], cell(*r).size());
    }
  }
  out += title + "\n";
  out += fmt::format("{:<{}}", "workload", w0);
  for (size_t j = 0; j < variants.size(); ++j) out += fmt::format("  {:>{}}", variants[j], w[j]);
  out += "\n";
  for (const auto& c : cases) {
    out += fmt::format("{:<{}}", c, w0);
    for (size_t j = 0; j < variants.size(); ++j) {
      const RunResult* r = find(runs, c, variants[j]);
      out += fmt::format("  {:>{}}", r ? cell(*r) : "-", w[j]);
    }
    out += "\n";
  }
  out += "\n";
}

std::string gib_time(const RunResult& r) {
  return format_counter("pgpgin", r.get("pgpgin")) + "/" +
         format_counter("elapsed_s", r.get("elapsed_s"));
}
std::string faults(const RunResult& r) {
  return fmt::format("{}/{}", format_number(r.get("majflt")), format_number(r.get("minflt")));
}
std::string readahead(const RunResult& r) {
  return fmt::format("{}/{}/{}", format_number(r.get("model.ra_readaround_windows")),
                     format_number(r.get("model.ra_async_windows")),
                     format_number(r.get("model.mmap_miss_max")));
}

// A counter's [min, max] over the seeds of a repeated run; "-" for a run
// that ran once.
std::string spread_cell(const RunResult& r, const char* counter) {
  if (r.repetitions.size() < 2) return "-";
  const Spread sp = r.spread(counter);
  if (counter_unit(counter) == "GiB") {
    return fmt::format("[{:.3f}, {:.3f}]", counter_in_unit(counter, sp.min),
                       counter_in_unit(counter, sp.max));
  }
  return fmt::format("[{}, {}]", format_number(sp.min), format_number(sp.max));
}
std::string pgpgin_spread(const RunResult& r) { return spread_cell(r, "pgpgin"); }
std::string majflt_spread(const RunResult& r) { return spread_cell(r, "majflt"); }

// The cause that read the most of pgpgin and its share, then the pages read
// ahead that the workload never touched (evicted, or still cached at the
// end) as a share of pgpgin: "around 83% / 82%".
std::string read_causes(const RunResult& r) {
  struct Cause {
    const char* counter;
    const char* label;
  };
  static constexpr Cause kCauses[] = {
      {"model.pgpgin_readaround", "around"}, {"model.pgpgin_sync_ra", "sync-ra"},
      {"model.pgpgin_async_ra", "async-ra"}, {"model.pgpgin_read_ra", "read-ra"},
      {"model.pgpgin_single", "single"},     {"model.pgpgin_willneed", "willneed"},
  };
  const double pgpgin = r.get("pgpgin");
  if (!(pgpgin > 0)) return "-";
  const Cause* top = &kCauses[0];
  for (const Cause& c : kCauses) {
    if (r.get(c.counter) > r.get(top->counter)) top = &c;
  }
  const double wasted_kb =
      (r.get("model.ra_wasted_evicted") + r.get("model.ra_wasted_unused")) * 4.0;
  return fmt::format("{} {:.0f}% / {:.0f}%", top->label, 100.0 * r.get(top->counter) / pgpgin,
                     100.0 * wasted_kb / pgpgin);
}

std::string transfers(const RunResult& r) {
  return fmt::format("{:.3f}", r.get("model.coherence_transfers_per_fault"));
}
std::string rss_updates(const RunResult& r) {
  return fmt::format("{:.2f}/{}", r.get("model.rss_updates_per_fault"),
                     format_number(r.get("model.rss_folds")));
}
std::string est_rate(const RunResult& r) {
  return fmt::format("{:.2f}M", r.get("model.est_faults_per_s") / 1e6);
}

std::string est_page_ns(const RunResult& r) {
  return fmt::format("{:.0f}", r.get("model.est_ns_per_page"));
}

}  // namespace

std::string format_number(double v) {
  if (std::isfinite(v) && std::fabs(v) < 9e15 && v == std::floor(v)) {
    return fmt::format("{}", static_cast<long long>(v));
  }
  return fmt::format("{:.6g}", v);
}

std::string counter_unit(const std::string& counter) {
  if (counter == "pgpgin" || counter == "pgpgout") return "GiB";
  if (counter == "elapsed_s") return "s";
  return "";
}

double counter_in_unit(const std::string& counter, double value) {
  return counter_unit(counter) == "GiB" ? value / (1024.0 * 1024.0) : value;
}

std::string format_counter(const std::string& counter, double value) {
  const std::string unit = counter_unit(counter);
  if (unit == "GiB") return fmt::format("{:.3f} GiB", counter_in_unit(counter, value));
  if (unit == "s") return fmt::format("{:.3f}s", value);
  return format_number(value);
}

void describe_outcomes(std::string& out, const std::string& what,
                       const std::vector<uint64_t>& seeds, const std::vector<double>& values,
                       bool always) {
  std::vector<std::vector<size_t>> groups = split_by_factor(values, kOutcomeFactor);
  if (groups.size() < 2 && !always) return;
  for (std::vector<size_t>& g : groups) std::sort(g.begin(), g.end());
  if (groups.size() < 2) {
    out += fmt::format("{}: one outcome over {} seeds\n", what, values.size());
    return;
  }
  out += fmt::format(
      "{}: the {} seeds fall into {} outcomes ({} differs by more than {}x); the "
      "median hides them:\n",
      what, values.size(), groups.size(), kOutcomeCounter, format_number(kOutcomeFactor));
  for (const std::vector<size_t>& g : groups) {
    double lo = values[g.front()], hi = lo;
    for (size_t k : g) {
      lo = std::min(lo, values[k]);
      hi = std::max(hi, values[k]);
    }
    std::string list;
    for (size_t k = 0; k < g.size(); ++k) {
      if (k == 8 && g.size() > 10) {
        list += fmt::format(", ... ({} more)", g.size() - k);
        break;
      }
      list += (k ? ", " : "") + std::to_string(seeds[g[k]]);
    }
    out += fmt::format("  {} {}: {} of {} runs ({:.0f} %), seed{} {}\n", kOutcomeCounter,
                       lo == hi ? format_counter(kOutcomeCounter, lo)
                                : format_counter(kOutcomeCounter, lo) + " to " +
                                      format_counter(kOutcomeCounter, hi),
                       g.size(), values.size(),
                       100.0 * static_cast<double>(g.size()) / static_cast<double>(values.size()),
                       g.size() == 1 ? "" : "s", list);
  }
}

void outcome_notes(std::string& out, const std::vector<RunResult>& runs) {
  for (const RunResult& r : runs) {
    if (r.outcomes().size() < 2) continue;
    std::vector<uint64_t> seeds;
    std::vector<double> values;
    for (const Repetition& rep : r.repetitions) {
      seeds.push_back(rep.seed);
      values.push_back(rep.get(kOutcomeCounter));
    }
    describe_outcomes(out, r.case_name + "/" + r.variant, seeds, values, false);
    out += fmt::format("  (faultline run --only '{}/{}' --set access.seed=S runs one seed)\n\n",
                       r.case_name, r.variant);
  }
}

std::string format_table(const Meta& meta, const std::vector<RunResult>& runs) {
  std::string out;
  out += fmt::format("{}: {}\n", meta.scenario, meta.description);
  if (!runs.empty()) {
    auto key = [&](const char* k) {
      const std::string* v = runs.front().config_value(k);
      return v ? *v : std::string("?");
    };
    if (meta.probe) {
      out += fmt::format(
          "kernel {} on this machine (medians), seed {}, {} run(s); every counter: "
          "--format json\n\n",
          key("host.kernel_release"), key("access.seed"), runs.size());
    } else {
      uint64_t reps = 1;
      for (const RunResult& r : runs) reps = std::max<uint64_t>(reps, r.repetitions.size());
      if (reps > 1) {
        const uint64_t seed = std::strtoull(key("access.seed").c_str(), nullptr, 10);
        out += fmt::format(
            "model of kernel {}, seeds {} to {}: medians of {} runs where the stream depends on "
            "the seed, {} run(s); every seed's counters: --format json\n\n",
            key("kernel.profile"), seed, seed + reps - 1, reps, runs.size());
      } else {
        out += fmt::format("model of kernel {}, seed {}, {} run(s); every key: --format json\n\n",
                           key("kernel.profile"), key("access.seed"), runs.size());
      }
    }
  }
  const bool concurrent = std::any_of(
      runs.begin(), runs.end(), [](const RunResult& r) { return r.get("model.threads", -1) >= 0; });
  if (concurrent) {
    // The concurrent engine (seeds 2 and 3): what the fault path costs per fault.
    matrix(out, "cache-line transfers per fault (misses + upgrades)", runs, transfers);
    matrix(out, "RSS counter updates per fault / shared-count folds", runs, rss_updates);
    matrix(out, "estimated faults per second (illustrative costs, docs/concurrency.md)", runs,
           est_rate);
    if (std::any_of(runs.begin(), runs.end(),
                    [](const RunResult& r) { return r.get("model.est_ns_per_page", -1) >= 0; })) {
      matrix(out, "estimated ns per page loaded (lat_pagefault's own figure)", runs, est_page_ns);
    }
    return out;
  }
  matrix(out,
         meta.probe ? "pgpgin GiB / elapsed seconds of the access loop"
                    : "pgpgin GiB / estimated elapsed seconds",
         runs, gib_time);
  matrix(out, "major / minor faults (majflt/minflt)", runs, faults);
  if (meta.probe && std::any_of(runs.begin(), runs.end(), [](const RunResult& r) {
        return r.get("program.pgpgin", -1) >= 0;
      })) {
    // A recording's program itself, run after its replay (program.* counters).
    std::vector<RunResult> program = runs;
    for (RunResult& r : program) {
      std::vector<Counter> own;
      for (const Counter& c : r.counters) {
        if (c.name.rfind("program.", 0) == 0) own.push_back({c.name.substr(8), c.value});
      }
      r.counters = std::move(own);
    }
    matrix(out, "the program itself: pgpgin GiB / elapsed seconds", program, gib_time);
    matrix(out, "the program itself: major / minor faults (minflt counts its libraries and heap)",
           program, faults);
  }
  if (!meta.probe) {
    matrix(out, "read-around windows / async windows / mmap_miss max", runs, readahead);
    if (std::any_of(runs.begin(), runs.end(),
                    [](const RunResult& r) { return r.get("model.pgpgin_single", -1) >= 0; })) {
      matrix(out,
             "where pgpgin went: the cause that read most, its share / read ahead and never "
             "touched, share",
             runs, read_causes);
      out +=
          "(around: mmap read-around; sync-ra, async-ra: readahead of a fault; read-ra: "
          "read(2) readahead;\n single: one-folio reads; willneed: WILLNEED hints. "
          "faultline explain --only CASE/VARIANT tells\n one run's story and the change "
          "that would cut its pgpgin most.)\n\n";
    }
  }
  if (std::any_of(runs.begin(), runs.end(),
                  [](const RunResult& r) { return r.repetitions.size() > 1; })) {
    matrix(out, "pgpgin GiB over the seeds: [min, max] (-: ran once, not seed-dependent)", runs,
           pgpgin_spread);
    matrix(out, "majflt over the seeds: [min, max]", runs, majflt_spread);
    outcome_notes(out, runs);
  }
  if (std::any_of(runs.begin(), runs.end(),
                  [](const RunResult& r) { return r.timeline.rows.size() > 1; })) {
    out +=
        "over time (model.timeline; every sample: --format json, or --timeline-dir DIR for CSV "
        "and SVG)\n";
    for (const RunResult& r : runs) {
      const std::string m = timeline_moments(r);
      if (!m.empty()) out += fmt::format("  {}/{}: {}\n", r.case_name, r.variant, m);
    }
    out += "\n";
  }
  for (const RunResult& r : runs) {
    if (r.files.empty()) continue;
    out += fmt::format("{}/{}: per file (what the accesses to each file caused)\n", r.case_name,
                       r.variant);
    size_t w = 4;
    for (const FileResult& f : r.files) w = std::max(w, f.path.size());
    out += fmt::format("{:<{}}  {:>12}  {:>9}  {:>9}  {:>12}\n", "file", w, "pgpgin", "majflt",
                       "minflt", "cached pages");
    for (const FileResult& f : r.files) {
      out += fmt::format("{:<{}}  {:>12}  {:>9}  {:>9}  {:>12}\n", f.path, w,
                         format_counter("pgpgin", f.get("pgpgin")), format_number(f.get("majflt")),
                         format_number(f.get("minflt")),
                         format_number(f.get("model.page_cache_pages")));
    }
    out += "\n";
  }
  return out;
}

nlohmann::ordered_json counters_json(const std::vector<Counter>& counters) {
  nlohmann::ordered_json ctr = nlohmann::ordered_json::object();
  for (const Counter& c : counters) {
    if (std::isfinite(c.value) && std::fabs(c.value) < 9e15 && c.value == std::floor(c.value)) {
      ctr[c.name] = static_cast<long long>(c.value);
    } else {
      ctr[c.name] = c.value;
    }
  }
  return ctr;
}

nlohmann::ordered_json run_json(const RunResult& r) {
  nlohmann::ordered_json o;
  o["case"] = r.case_name;
  o["variant"] = r.variant;
  nlohmann::ordered_json cfg;
  for (const auto& [k, v] : r.config) cfg[k] = v;
  o["config"] = cfg;
  o["counters"] = counters_json(r.counters);
  if (r.repetitions.size() > 1) {
    // The counters above are medians: each one's range, each seed's own
    // counters, and the outcomes when the seeds fall on several sides.
    nlohmann::ordered_json spread = nlohmann::ordered_json::object();
    for (const Counter& c : r.counters) {
      const Spread sp = r.spread(c.name);
      spread[c.name] = counters_json({{"min", sp.min}, {"max", sp.max}});
    }
    o["spread"] = spread;
    nlohmann::ordered_json reps = nlohmann::ordered_json::array();
    for (const Repetition& rep : r.repetitions) {
      reps.push_back({{"seed", rep.seed}, {"counters", counters_json(rep.counters)}});
    }
    o["repetitions"] = reps;
    const auto groups = r.outcomes();
    if (groups.size() > 1) {
      nlohmann::ordered_json outcomes = nlohmann::ordered_json::array();
      for (const auto& g : groups) {
        RunResult side;
        for (size_t k : g) side.repetitions.push_back(r.repetitions[k]);
        const Spread sp = side.spread(kOutcomeCounter);
        nlohmann::ordered_json seeds = nlohmann::ordered_json::array();
        for (size_t k : g) seeds.push_back(r.repetitions[k].seed);
        outcomes.push_back({{"counter", kOutcomeCounter},
                            {"min", counters_json({{"v", sp.min}})["v"]},
                            {"max", counters_json({{"v", sp.max}})["v"]},
                            {"runs", g.size()},
                            {"seeds", seeds}});
      }
      o["outcomes"] = outcomes;
    }
  }
  if (!r.timeline.empty()) {
    nlohmann::ordered_json rows = nlohmann::ordered_json::array();
    for (const std::vector<double>& row : r.timeline.rows) {
      nlohmann::ordered_json cells = nlohmann::ordered_json::array();
      for (size_t c = 0; c < row.size(); ++c) {
        cells.push_back(counters_json({{r.timeline.columns[c], row[c]}})[r.timeline.columns[c]]);
      }
      rows.push_back(std::move(cells));
    }
    o["timeline"] = {{"every", r.timeline.every}, {"columns", r.timeline.columns}, {"rows", rows}};
  }
  if (!r.files.empty()) {
    nlohmann::ordered_json files = nlohmann::ordered_json::array();
    for (const FileResult& f : r.files) {
      files.push_back({{"path", f.path}, {"counters", counters_json(f.counters)}});
    }
    o["files"] = files;
  }
  return o;
}

std::string csv_escape(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string o = "\"";
  for (char c : s) o += c == '"' ? std::string("\"\"") : std::string(1, c);
  return o + "\"";
}

std::vector<std::string> counter_names(const std::vector<RunResult>& runs) {
  std::vector<std::string> counters;
  for (const RunResult& r : runs) {
    for (const Counter& c : r.counters) {
      if (std::find(counters.begin(), counters.end(), c.name) == counters.end())
        counters.push_back(c.name);
    }
  }
  return counters;
}

std::string format_json(const Meta& meta, const std::vector<RunResult>& runs) {
  nlohmann::ordered_json j;
  j["faultline"] = {{"version", meta.version}};
  j["scenario"] = {
      {"name", meta.scenario}, {"description", meta.description}, {"source", meta.source}};
  nlohmann::ordered_json arr = nlohmann::ordered_json::array();
  for (const RunResult& r : runs) {
    nlohmann::ordered_json o = run_json(r);
    // The command line that reruns exactly this row.
    std::string cmd = "faultline run";
    if (meta.source != "<built-in>" && !meta.source.empty()) cmd += " " + meta.source;
    cmd += " --only '" + r.case_name + "/" + r.variant + "'";
    o["rerun"] = cmd;
    arr.push_back(o);
  }
  j["runs"] = arr;
  return j.dump(2) + "\n";
}

bool any_repeated(const std::vector<RunResult>& runs) {
  return std::any_of(runs.begin(), runs.end(),
                     [](const RunResult& r) { return r.repetitions.size() > 1; });
}

std::string csv_counter_header(const std::vector<std::string>& counters, bool repeated) {
  std::string out;
  for (const auto& c : counters)
    out += repeated ? "," + c + "," + c + "_min," + c + "_max" : "," + c;
  return out;
}

std::string csv_counter_cells(const RunResult& r, const std::vector<std::string>& counters,
                              bool repeated) {
  std::string out;
  for (const auto& c : counters) {
    const double v = r.get(c, NAN);
    out += "," + format_number(v);
    if (!repeated) continue;
    const Spread sp = std::isnan(v) ? Spread{NAN, NAN, NAN} : r.spread(c);
    out += "," + format_number(sp.min) + "," + format_number(sp.max);
  }
  return out;
}

std::string format_csv(const std::vector<RunResult>& runs) {
  std::string out;
  if (runs.empty()) return out;
  const std::vector<std::string> counters = counter_names(runs);
  // Repeated runs: each counter is a median, with NAME_min and NAME_max
  // beside it (equal to it for a run that ran once).
  const bool repeated = std::any_of(runs.begin(), runs.end(),
                                    [](const RunResult& r) { return r.repetitions.size() > 1; });
  out += "case,variant";
  for (const auto& [k, v] : runs.front().config) out += "," + k;
  out += csv_counter_header(counters, repeated) + "\n";
  for (const RunResult& r : runs) {
    out += csv_escape(r.case_name) + "," + csv_escape(r.variant);
    for (const auto& [k, v] : r.config) out += "," + csv_escape(v);
    out += csv_counter_cells(r, counters, repeated) + "\n";
  }
  return out;
}

}  // namespace faultline::report
