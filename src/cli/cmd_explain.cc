// cmd_explain.cc — `faultline explain`: one run of a scenario, why it read
// what it read (pgpgin by cause, readahead waste, refaults, against the
// pages the workload touched), and the same run again with one change at a
// time (madvise and fadvise hints, read_ahead_kb, the memory limit, the
// mmap_miss series, mmap against read(2)) to say which single change reduces
// pgpgin the most. docs/causes.md describes the counters it reads.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "cli/commands.h"
#include "faultline/config.h"
#include "faultline/simulator.h"
#include "mm/vmstat.h"
#include "util/units.h"

namespace faultline::cli {
namespace {

using mm::VmEvent;

// --format of explain.
#define FAULTLINE_EXPLAIN_FORMATS(X) X(kText, "text") X(kJson, "json")
FAULTLINE_NAMED_ENUM(ExplainFormat, FAULTLINE_EXPLAIN_FORMATS)

struct ExplainArgs {
  std::string scenario;
  std::vector<std::string> sets;
  std::string only;
  ExplainFormat format = ExplainFormat::kText;
  std::string output;
  int jobs = 0;
  bool quiet = false;
};

// The causes of pgpgin, in FAULTLINE_VM_EVENTS order, in words.
struct Cause {
  VmEvent event;
  const char* words;
  const char* kernel;
};
constexpr std::array<Cause, 6> kCauses = {{
    {VmEvent::pgpgin_readaround, "mmap read-around of a fault", "do_sync_mmap_readahead"},
    {VmEvent::pgpgin_sync_ra, "sync readahead of a fault, MADV_SEQUENTIAL", "page_cache_sync_ra"},
    {VmEvent::pgpgin_async_ra, "async readahead of a fault on PG_readahead", "page_cache_async_ra"},
    {VmEvent::pgpgin_read_ra, "read(2) readahead", "filemap_get_pages"},
    {VmEvent::pgpgin_single, "one-folio reads, no readahead", "filemap_fault, ->read_folio"},
    {VmEvent::pgpgin_willneed, "MADV_WILLNEED / POSIX_FADV_WILLNEED", "force_page_cache_ra"},
}};

std::string name_of(VmEvent e) { return std::string(mm::vm_event_name(e)); }

constexpr double kPageBytes = 4096;

// One run made for the purpose: the run as asked, with these assignments after --set.
struct Change {
  std::string label;              // what is shown: "device.read_ahead_kb=4096"
  std::vector<std::string> sets;  // what is applied
};

// "4 KiB", "1.500 MiB", "225.244 GiB": a byte count for people.
std::string bytes_text(double bytes) {
  if (bytes >= double(uint64_t{1} << 30)) return fmt::format("{:.3f} GiB", bytes / (1 << 30));
  if (bytes >= double(uint64_t{1} << 20)) return fmt::format("{:.3f} MiB", bytes / (1 << 20));
  return fmt::format("{:.0f} KiB", bytes / 1024);
}

std::string percent(double part, double whole) {
  return whole > 0 ? fmt::format("{:.1f} %", 100.0 * part / whole) : std::string("-");
}

// A size as a --set value: "192MiB" where that is exact, else bytes.
std::string size_value(uint64_t bytes) {
  std::string s = format_size(bytes);
  if (s.find('.') != std::string::npos) return std::to_string(bytes);
  s.erase(std::remove(s.begin(), s.end(), ' '), s.end());
  return s;
}

// The one-change runs that make sense for this run's workload. No-ops (a
// value the run already has) are left out here or, when the configuration
// comes out the same, once planned.
std::vector<Change> changes_for(const Config& c) {
  using workload::AccessMethod;
  using workload::Kind;
  std::vector<Change> out;
  if (is_concurrent_workload(c)) {
    return out;  // the concurrent workloads read no file
  }
  const bool stream = c.access.workload == Kind::kStream && c.streams.empty();
  const bool recording = c.access.workload == Kind::kRecording;
  const bool tmpfs = c.file.fs == workload::FsType::kTmpfs;
  if (tmpfs && stream) return out;  // tmpfs is never read from a device
  // Through the mapping: the stream's mmap method, or a recording's touches.
  const bool mmap = recording || (stream && c.access.method == AccessMethod::kMmap);
  const bool pread = recording || (stream && c.access.method == AccessMethod::kRead);
  if (mmap) {
    if (c.mapping.madvise != mm::Madvise::kRandom) {
      out.push_back({"mapping.madvise=random", {"mapping.madvise=random"}});
    }
    if (c.mapping.madvise != mm::Madvise::kSequential) {
      out.push_back({"mapping.madvise=sequential", {"mapping.madvise=sequential"}});
    }
  }
  const uint32_t ra = c.device.read_ahead_kb;
  std::vector<uint32_t> ras;
  if (ra >= 8) ras.push_back(ra / 2);
  if (ra > 0) ras.push_back(ra * 2);
  if (std::find(ras.begin(), ras.end(), 128u) == ras.end() && ra != 128) ras.push_back(128);
  for (const uint32_t v : ras) {
    const std::string s = "device.read_ahead_kb=" + std::to_string(v);
    out.push_back({s, {s}});
  }
  if (pread && c.file.fadvise != mm::Fadvise::kRandom) {
    out.push_back({"file.fadvise=random", {"file.fadvise=random"}});
  }
  if (c.machine.memory_limit > 0) {
    const std::string s = "machine.memory_limit=" + size_value(c.machine.memory_limit * 2);
    out.push_back({s, {s}});
  }
  if (mmap) {
    const mm::KernelProfile p = resolve_profile(c.kernel);
    if (!p.mmap_miss_p1 || !p.mmap_miss_p2) {
      out.push_back({"kernel.mmap_miss_p1+p2=true",
                     {"kernel.mmap_miss_p1=true", "kernel.mmap_miss_p2=true"}});
    }
  }
  if (stream) {
    if (c.access.method == AccessMethod::kMmap && c.access.op == workload::AccessOp::kRead) {
      out.push_back({"access.method=read", {"access.method=read"}});
    } else if (c.access.method == AccessMethod::kRead) {
      out.push_back({"access.method=mmap", {"access.method=mmap"}});
    }
  }
  return out;
}

// model.repetitions=1 where the key exists: explain is about one run, whose
// counters add up (a median of each counter would not).
std::vector<std::string> one_run(std::vector<std::string> sets) {
  for (const KeyDoc& d : key_docs()) {
    if (d.key == "model.repetitions") {
      sets.push_back("model.repetitions=1");
      break;
    }
  }
  return sets;
}

std::string quoted(const std::string& s) { return "'" + s + "'"; }

std::string rerun(const Scenario& sc, const PlannedRun& r, const std::vector<std::string>& sets,
                  const std::vector<std::string>& extra) {
  std::string cmd = "faultline run";
  if (sc.source != "<built-in>" && !sc.source.empty()) cmd += " " + sc.source;
  cmd += " --only " + quoted(r.case_name + "/" + r.variant);
  for (const std::string& s : sets) cmd += " --set " + quoted(s);
  for (const std::string& s : extra) cmd += " --set " + quoted(s);
  return cmd;
}

struct Outcome {
  Change change;
  RunResult result;
};

uint64_t as_int(double v) { return v > 0 ? static_cast<uint64_t>(v + 0.5) : 0; }

// The account, as JSON; the text is written from it, so both say the same.
nlohmann::ordered_json account(const Scenario& sc, const PlannedRun& run,
                               const std::vector<std::string>& sets, const RunResult& r,
                               const std::vector<Outcome>& cfs,
                               const std::vector<std::pair<std::string, std::string>>& skipped) {
  nlohmann::ordered_json j;
  j["faultline"] = {{"version", kVersion}};
  j["scenario"] = {{"name", sc.name}, {"description", sc.description}, {"source", sc.source}};
  j["run"] = {{"case", run.case_name}, {"variant", run.variant}};
  j["rerun"] = rerun(sc, run, sets, {});
  nlohmann::ordered_json config = nlohmann::ordered_json::object();
  for (const auto& [k, v] : r.config) config[k] = v;
  j["config"] = config;
  const double pgpgin = r.get("pgpgin");
  const double touched = r.get(name_of(VmEvent::pages_touched));
  j["pgpgin_kb"] = as_int(pgpgin);
  j["touched_pages"] = as_int(touched);
  j["touched_kb"] = as_int(touched * 4);
  j["read_per_touched"] = touched > 0 ? pgpgin / (touched * 4) : 0.0;
  nlohmann::ordered_json causes = nlohmann::ordered_json::array();
  std::string largest;
  double largest_kb = 0;
  for (const Cause& c : kCauses) {
    const double kb = r.get(name_of(c.event));
    causes.push_back({{"counter", name_of(c.event)},
                      {"cause", c.words},
                      {"kernel", c.kernel},
                      {"kb", as_int(kb)},
                      {"share", pgpgin > 0 ? kb / pgpgin : 0.0}});
    if (kb > largest_kb) {
      largest_kb = kb;
      largest = name_of(c.event);
    }
  }
  j["causes"] = causes;
  j["largest_cause"] = largest.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(largest);
  // A workload of several files: each file's share.
  nlohmann::ordered_json files = nlohmann::ordered_json::array();
  for (const FileResult& f : r.files) {
    nlohmann::ordered_json fc = nlohmann::ordered_json::object();
    std::string top;
    double top_kb = 0;
    for (const Cause& c : kCauses) {
      const double kb = f.get(name_of(c.event));
      fc[name_of(c.event)] = as_int(kb);
      if (kb > top_kb) {
        top_kb = kb;
        top = name_of(c.event);
      }
    }
    files.push_back(
        {{"path", f.path},
         {"pgpgin_kb", as_int(f.get("pgpgin"))},
         {"touched_pages", as_int(f.get(name_of(VmEvent::pages_touched)))},
         {"largest_cause", top.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(top)},
         {"causes", fc}});
  }
  if (!files.empty()) j["files"] = files;
  const double evicted = r.get(name_of(VmEvent::ra_wasted_evicted));
  const double unused = r.get(name_of(VmEvent::ra_wasted_unused));
  j["waste"] = {{"evicted_pages", as_int(evicted)},
                {"evicted_kb", as_int(evicted * 4)},
                {"unused_pages", as_int(unused)},
                {"unused_kb", as_int(unused * 4)},
                {"share", pgpgin > 0 ? (evicted + unused) * 4 / pgpgin : 0.0}};
  const double refault = r.get(name_of(VmEvent::pgpgin_refault));
  j["refault"] = {{"kb", as_int(refault)},
                  {"share", pgpgin > 0 ? refault / pgpgin : 0.0},
                  {"workingset_refault_file", as_int(r.get("workingset_refault_file"))}};
  j["majflt"] = as_int(r.get("majflt"));
  j["minflt"] = as_int(r.get("minflt"));
  j["elapsed_s"] = r.get("elapsed_s");
  nlohmann::ordered_json arr = nlohmann::ordered_json::array();
  const Outcome* best = nullptr;
  for (const Outcome& o : cfs) {
    arr.push_back({{"change", o.change.label},
                   {"set", o.change.sets},
                   {"pgpgin_kb", as_int(o.result.get("pgpgin"))},
                   {"majflt", as_int(o.result.get("majflt"))},
                   {"elapsed_s", o.result.get("elapsed_s")},
                   {"rerun", rerun(sc, run, sets, o.change.sets)}});
    if (o.result.get("pgpgin") < pgpgin &&
        (!best || o.result.get("pgpgin") < best->result.get("pgpgin"))) {
      best = &o;
    }
  }
  j["counterfactuals"] = arr;
  nlohmann::ordered_json sk = nlohmann::ordered_json::array();
  for (const auto& [change, why] : skipped) sk.push_back({{"change", change}, {"reason", why}});
  j["skipped"] = sk;
  if (best) {
    const double b = best->result.get("pgpgin");
    j["best"] = {{"change", best->change.label},
                 {"pgpgin_kb", as_int(b)},
                 {"reduction", pgpgin > 0 ? (pgpgin - b) / pgpgin : 0.0},
                 {"rerun", rerun(sc, run, sets, best->change.sets)}};
  } else {
    j["best"] = nullptr;
  }
  return j;
}

std::string text_of(const nlohmann::ordered_json& j) {
  const double pgpgin = j["pgpgin_kb"].get<double>() * 1024;
  const double touched = j["touched_kb"].get<double>() * 1024;
  std::string out =
      fmt::format("faultline explain: {} {}/{}\n", j["scenario"]["name"].get<std::string>(),
                  j["run"]["case"].get<std::string>(), j["run"]["variant"].get<std::string>());
  if (!j["scenario"]["description"].get<std::string>().empty()) {
    out += "scenario: " + j["scenario"]["description"].get<std::string>() + "\n";
  }
  std::string conf;
  for (const char* key :
       {"access.pattern", "access.method", "file.size", "machine.memory", "machine.memory_limit",
        "device.read_ahead_kb", "mapping.madvise", "file.fadvise", "kernel.profile"}) {
    if (!j["config"].contains(key)) continue;
    std::string v = j["config"][key].get<std::string>();
    if (std::string_view(key).starts_with("file.size") ||
        std::string_view(key).starts_with("machine.")) {
      if (v == "0") continue;  // no memory limit
      if (v.find_first_not_of("0123456789") == std::string::npos) v = size_value(std::stoull(v));
    }
    conf += std::string(conf.empty() ? "" : ", ") + key + "=" + v;
  }
  if (!conf.empty()) out += "run: " + conf + "\n";
  out += "\n";
  if (pgpgin == 0) {
    out += "Nothing was read from the device (pgpgin 0)";
    out += touched > 0 ? fmt::format("; the workload touched {}.\n", bytes_text(touched)) : ".\n";
  } else {
    out += fmt::format("Read {} (pgpgin) for {} touched ({} distinct pages x 4 KiB)",
                       bytes_text(pgpgin), bytes_text(touched), j["touched_pages"].get<uint64_t>());
    out += touched > 0 ? fmt::format(": {:.1f} times what the workload touched.\n",
                                     j["read_per_touched"].get<double>())
                       : ".\n";
    out += "\nWhere the reads went:\n";
    out += fmt::format("  {:>7}  {:>11}  {:<25}  {}\n", "share", "read", "counter", "what read it");
    std::vector<nlohmann::ordered_json> causes(j["causes"].begin(), j["causes"].end());
    std::stable_sort(causes.begin(), causes.end(), [](const auto& a, const auto& b) {
      return a["kb"].template get<uint64_t>() > b["kb"].template get<uint64_t>();
    });
    for (const auto& c : causes) {
      if (c["kb"].get<uint64_t>() == 0) continue;
      out += fmt::format("  {:>7}  {:>11}  {:<25}  {} ({})\n",
                         percent(c["kb"].get<double>() * 1024, pgpgin),
                         bytes_text(c["kb"].get<double>() * 1024), c["counter"].get<std::string>(),
                         c["cause"].get<std::string>(), c["kernel"].get<std::string>());
    }
    if (j.contains("files")) {
      out += "\nBy file:\n";
      for (const auto& f : j["files"]) {
        const double p = f["pgpgin_kb"].get<double>() * 1024;
        out += fmt::format("  {:>11}  {} touched  {}", bytes_text(p),
                           bytes_text(f["touched_pages"].get<double>() * kPageBytes),
                           f["path"].get<std::string>());
        if (!f["largest_cause"].is_null()) {
          const std::string top = f["largest_cause"].get<std::string>();
          out += fmt::format(" (mostly {}, {})", top,
                             percent(f["causes"][top].get<double>() * 1024, p));
        }
        out += "\n";
      }
    }
    const auto& w = j["waste"];
    const double evicted = w["evicted_kb"].get<double>() * 1024;
    const double unused = w["unused_kb"].get<double>() * 1024;
    out += fmt::format(
        "\nWaste: {} ({} of pgpgin) was read ahead and evicted before the workload touched it; "
        "{} read ahead is still cached, untouched, at the end.\n",
        bytes_text(evicted), percent(evicted, pgpgin), bytes_text(unused));
    const double refault = j["refault"]["kb"].get<double>() * 1024;
    out += fmt::format(
        "Refaults: {} ({} of pgpgin) re-read folios that had been evicted "
        "(workingset shadow entries).\n",
        bytes_text(refault), percent(refault, pgpgin));
  }
  out += fmt::format("Faults: {} major, {} minor; estimated elapsed {:.3f} s.\n",
                     j["majflt"].get<uint64_t>(), j["minflt"].get<uint64_t>(),
                     j["elapsed_s"].get<double>());
  if (j["counterfactuals"].empty()) {
    out += "\nNo one-change run makes sense for this workload.\n";
    return out;
  }
  out += "\nThe same run with one change:\n";
  size_t w = std::string("(as run)").size();
  for (const auto& c : j["counterfactuals"]) w = std::max(w, c["change"].get<std::string>().size());
  out += fmt::format("  {:<{}}  {:>13}  {:>9}  {:>12}  {:>9}\n", "change", w, "pgpgin", "majflt",
                     "elapsed_s", "vs run");
  out +=
      fmt::format("  {:<{}}  {:>13}  {:>9}  {:>12.3f}  {:>9}\n", "(as run)", w, bytes_text(pgpgin),
                  j["majflt"].get<uint64_t>(), j["elapsed_s"].get<double>(), "");
  for (const auto& c : j["counterfactuals"]) {
    const double p = c["pgpgin_kb"].get<double>() * 1024;
    const std::string delta =
        pgpgin > 0 ? fmt::format("{:+.1f} %", 100.0 * (p - pgpgin) / pgpgin) : std::string("-");
    out += fmt::format("  {:<{}}  {:>13}  {:>9}  {:>12.3f}  {:>9}\n",
                       c["change"].get<std::string>(), w, bytes_text(p),
                       c["majflt"].get<uint64_t>(), c["elapsed_s"].get<double>(), delta);
  }
  for (const auto& s : j["skipped"]) {
    out += fmt::format("  (not run: {}: {})\n", s["change"].get<std::string>(),
                       s["reason"].get<std::string>());
  }
  if (j["best"].is_null()) {
    out += "\nNo single change tried reduces pgpgin.\n";
  } else {
    const auto& b = j["best"];
    out += fmt::format(
        "\nThe single change that reduces pgpgin the most: {} ({} -> {}, -{:.1f} %).\n",
        b["change"].get<std::string>(), bytes_text(pgpgin),
        bytes_text(b["pgpgin_kb"].get<double>() * 1024), 100.0 * b["reduction"].get<double>());
    out += "  " + b["rerun"].get<std::string>() + "\n";
  }
  return out;
}

void do_explain(const ExplainArgs& a) {
  const std::vector<std::string> sets = one_run(a.sets);
  auto planned = plan_scenario(a.scenario, sets, a.only);
  if (!planned.ok()) return fail(planned.status());
  const Scenario& sc = planned->scenario;
  if (planned->runs.size() != 1) {
    std::string names;
    for (size_t i = 0; i < planned->runs.size() && i < 8; ++i) {
      names += (i ? ", " : "") + planned->runs[i].case_name + "/" + planned->runs[i].variant;
    }
    if (planned->runs.size() > 8) names += ", ...";
    const std::string which = a.only.empty() ? "the scenario has" : "--only '" + a.only + "' names";
    return fail(Status::InvalidArgument(
        fmt::format("explain: {} {} runs ({}); name one with --only CASE/VARIANT", which,
                    planned->runs.size(), names)));
  }
  const PlannedRun& base = planned->runs[0];
  const std::string only = base.case_name + "/" + base.variant;
  // The runs to make: the run itself, then each change that plans to a
  // different configuration.
  std::vector<PlannedRun> plan{base};
  std::vector<Change> made;
  std::vector<std::pair<std::string, std::string>> skipped;
  const auto base_keys = effective_keys(base.cfg);
  for (const Change& ch : changes_for(base.cfg)) {
    std::vector<std::string> s = sets;
    s.insert(s.end(), ch.sets.begin(), ch.sets.end());
    auto p = plan_scenario(a.scenario, s, only);
    if (!p.ok()) {
      skipped.emplace_back(ch.label, p.status().message());
      continue;
    }
    if (p->runs.size() != 1 || effective_keys(p->runs[0].cfg) == base_keys) continue;
    plan.push_back(std::move(p->runs[0]));
    made.push_back(ch);
  }
  SimOptions opts;
  opts.jobs = a.jobs;
  opts.progress = !a.quiet;
  auto runs = simulate(plan, opts);
  if (!runs.ok()) return fail(runs.status());
  std::vector<Outcome> cfs;
  for (size_t i = 0; i < made.size(); ++i) cfs.push_back({made[i], (*runs)[i + 1]});
  const nlohmann::ordered_json j = account(sc, base, sets, (*runs)[0], cfs, skipped);
  const std::string text = a.format == ExplainFormat::kJson ? j.dump(2) + "\n" : text_of(j);
  if (Status st = write_output(a.output, text); !st.ok()) return fail(st);
}

}  // namespace

void add_explain_command(CLI::App& app) {
  auto a = std::make_shared<ExplainArgs>();
  CLI::App* cmd = app.add_subcommand(
      "explain",
      "one run: what it read and why (pgpgin by cause, readahead waste, refaults), and the "
      "single change that reduces pgpgin the most");
  cmd->add_option("scenario", a->scenario,
                  "scenario file (TOML) or recording (none: the seed 1 matrix)");
  cmd->add_option("--set", a->sets, "KEY=VALUE, applied to the run after the scenario")
      ->allow_extra_args(false);
  cmd->add_option("--only", a->only,
                  "the run to explain: CASE/VARIANT (or a CASE or VARIANT "
                  "that names one run)");
  std::vector<std::string> names;
  for (const auto& n : enum_names(ExplainFormat{})) names.emplace_back(n.name);
  cmd->add_option_function<std::string>(
         "--format", [a](const std::string& v) { a->format = *parse_enum<ExplainFormat>(v); },
         "text or json")
      ->check(CLI::IsMember(names));
  cmd->add_option("-o,--output", a->output, "write the account to this file (atomically)");
  cmd->add_option("-j,--jobs", a->jobs, "runs in parallel (default: one per core)");
  cmd->add_flag("-q,--quiet", a->quiet, "no progress line");
  cmd->callback([a] { do_explain(*a); });
}

}  // namespace faultline::cli
