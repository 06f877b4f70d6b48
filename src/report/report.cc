#include "report/report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
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
      out += fmt::format("model of kernel {}, seed {}, {} run(s); every key: --format json\n\n",
                         key("kernel.profile"), key("access.seed"), runs.size());
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

std::string format_csv(const std::vector<RunResult>& runs) {
  std::string out;
  if (runs.empty()) return out;
  const std::vector<std::string> counters = counter_names(runs);
  out += "case,variant";
  for (const auto& [k, v] : runs.front().config) out += "," + k;
  for (const auto& c : counters) out += "," + c;
  out += "\n";
  for (const RunResult& r : runs) {
    out += csv_escape(r.case_name) + "," + csv_escape(r.variant);
    for (const auto& [k, v] : r.config) out += "," + csv_escape(v);
    for (const auto& c : counters) out += "," + format_number(r.get(c, NAN));
    out += "\n";
  }
  return out;
}

}  // namespace faultline::report
