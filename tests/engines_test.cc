// engines_test.cc — model.engine=runs against model.engine=pages, the
// reference: the same scenario must give the same counters (every one, of
// every seed and every file) and the same tracepoints, byte for byte.
//
// Over the committed scenarios (golden, tests/scenarios, the examples) and
// over scenarios drawn from seeds (harness/generated_scenario.h): a
// difference is a bug in one engine, reported with the seed that draws it
// and the smallest scenario that still shows it.
//
// FAULTLINE_ENGINES_CASES (default 200) and FAULTLINE_ENGINES_SEED (default
// 1) size the generated run: CI runs the default, bench/engines_long.sh
// 10,000 plus the fidelity matrix and the seeds' scenarios
// (FAULTLINE_ENGINES_FILES: scenario files or directories, colon-separated).
#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "faultline/scenario.h"
#include "faultline/simulator.h"
#include "harness/generated_scenario.h"

namespace faultline {
namespace {

namespace fs = std::filesystem;
using testing::Gen;

uint64_t env_u64(const char* name, uint64_t fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::strtoull(v, nullptr, 10) : fallback;
}

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

struct TempDir {
  fs::path path;
  TempDir() {
    std::string t = (fs::temp_directory_path() / "faultline-engines.XXXXXX").string();
    path = ::mkdtemp(t.data());
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

// One engine's runs of the scenario, and its tracepoint files by name.
struct EngineRuns {
  Status status = Status::Ok();
  std::vector<RunResult> runs;
  std::vector<std::pair<std::string, std::string>> traces;
};

EngineRuns run_engine(const Scenario& sc, const char* engine, bool trace) {
  EngineRuns out;
  auto plan = plan_runs(sc, {std::string("model.engine=") + engine});
  if (!plan.ok()) {
    out.status = plan.status();
    return out;
  }
  TempDir dir;
  SimOptions opts;
  opts.jobs = 1;
  opts.progress = false;
  if (trace) opts.trace_dir = dir.path.string();
  auto runs = simulate(*plan, opts);
  if (!runs.ok()) {
    out.status = runs.status();
    return out;
  }
  out.runs = std::move(*runs);
  if (trace) {
    std::vector<fs::path> files;
    for (const auto& e : fs::directory_iterator(dir.path)) files.push_back(e.path());
    std::sort(files.begin(), files.end());
    for (const fs::path& f : files) out.traces.emplace_back(f.filename().string(), read_file(f));
  }
  return out;
}

std::string counters_diff(const std::string& where, const std::vector<Counter>& a,
                          const std::vector<Counter>& b) {
  if (a.size() != b.size()) {
    return where + ": " + std::to_string(a.size()) + " counters against " +
           std::to_string(b.size());
  }
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].name != b[i].name) return where + ": counter " + a[i].name + " against " + b[i].name;
    // Bit for bit: both engines compute every value the same way.
    if (std::memcmp(&a[i].value, &b[i].value, sizeof(double)) != 0) {
      std::ostringstream s;
      s.precision(17);
      s << where << ": " << a[i].name << " pages " << a[i].value << ", runs " << b[i].value;
      return s.str();
    }
  }
  return "";
}

// The first difference between the engines' results, or "" when they agree
// (or when both refuse the scenario alike).
std::string engines_diff(const Scenario& sc, bool trace) {
  const EngineRuns pages = run_engine(sc, "pages", trace);
  const EngineRuns runs = run_engine(sc, "runs", trace);
  if (!pages.status.ok() || !runs.status.ok()) {
    if (pages.status.ok() != runs.status.ok() || pages.status.message() != runs.status.message()) {
      return "pages: " + (pages.status.ok() ? "ok" : pages.status.message()) +
             "; runs: " + (runs.status.ok() ? "ok" : runs.status.message());
    }
    return "";
  }
  if (pages.runs.size() != runs.runs.size()) return "a different number of runs";
  for (size_t i = 0; i < pages.runs.size(); ++i) {
    const RunResult& a = pages.runs[i];
    const RunResult& b = runs.runs[i];
    const std::string where = a.case_name + "/" + a.variant;
    std::string d = counters_diff(where, a.counters, b.counters);
    if (!d.empty()) return d;
    if (a.repetitions.size() != b.repetitions.size()) return where + ": repetitions differ";
    for (size_t r = 0; r < a.repetitions.size(); ++r) {
      d = counters_diff(where + " seed " + std::to_string(r), a.repetitions[r].counters,
                        b.repetitions[r].counters);
      if (!d.empty()) return d;
    }
    if (a.files.size() != b.files.size()) return where + ": per-file results differ";
    for (size_t f = 0; f < a.files.size(); ++f) {
      d = counters_diff(where + " file " + a.files[f].path, a.files[f].counters,
                        b.files[f].counters);
      if (!d.empty()) return d;
    }
  }
  if (pages.traces.size() != runs.traces.size()) return "a different number of trace files";
  for (size_t i = 0; i < pages.traces.size(); ++i) {
    const std::string& a = pages.traces[i].second;
    const std::string& b = runs.traces[i].second;
    if (a == b) continue;
    size_t at = 0;
    while (at < a.size() && at < b.size() && a[at] == b[at]) ++at;
    const size_t line_start = a.rfind('\n', at) == std::string::npos ? 0 : a.rfind('\n', at) + 1;
    auto line = [&](const std::string& s) {
      return s.substr(line_start, s.find('\n', at) - line_start);
    };
    return "tracepoints " + pages.traces[i].first + " differ at line " +
           std::to_string(std::count(a.begin(), a.begin() + static_cast<ptrdiff_t>(at), '\n') + 1) +
           ":\n  pages: " + line(a) + "\n  runs:  " + line(b);
  }
  return "";
}

std::string gen_diff(const Gen& g) {
  auto sc = parse_scenario(testing::render(g), "generated");
  if (!sc.ok()) return "";  // refused alike by both: not an engine's business
  return engines_diff(*sc, /*trace=*/true);
}

TEST(Engines, GeneratedScenariosGiveTheSameCountersAndTracepoints) {
  const uint64_t cases = env_u64("FAULTLINE_ENGINES_CASES", 200);
  const uint64_t first = env_u64("FAULTLINE_ENGINES_SEED", 1);
  uint64_t failed = 0, compared = 0;
  for (uint64_t seed = first; seed < first + cases; ++seed) {
    const Gen g = testing::generate(seed);
    auto sc = parse_scenario(testing::render(g), "generated");
    if (!sc.ok()) continue;
    ++compared;
    const std::string d = engines_diff(*sc, /*trace=*/true);
    if (d.empty()) continue;
    ++failed;
    const Gen small = testing::shrink(g, [](const Gen& t) { return !gen_diff(t).empty(); });
    ADD_FAILURE() << "seed " << seed << " (FAULTLINE_ENGINES_SEED=" << seed
                  << " FAULTLINE_ENGINES_CASES=1): " << d << "\nshrunk to:\n"
                  << testing::render(small) << "which differs with: " << gen_diff(small);
    if (failed >= 3) break;
  }
  std::printf("%llu cases from seed %llu: %llu compared, %llu differ\n",
              static_cast<unsigned long long>(cases), static_cast<unsigned long long>(first),
              static_cast<unsigned long long>(compared), static_cast<unsigned long long>(failed));
}

// Scenario files: the committed small ones, or FAULTLINE_ENGINES_FILES.
std::vector<fs::path> scenario_files() {
  std::vector<std::string> roots;
  if (const char* v = std::getenv("FAULTLINE_ENGINES_FILES"); v && *v) {
    std::stringstream ss(v);
    for (std::string p; std::getline(ss, p, ':');) roots.push_back(p);
  } else {
    roots = {FAULTLINE_TESTS_DIR "/golden", FAULTLINE_TESTS_DIR "/scenarios",
             FAULTLINE_SOURCE_DIR "/scenarios/examples"};
  }
  std::vector<fs::path> files;
  for (const std::string& r : roots) {
    if (fs::is_directory(r)) {
      for (const auto& e : fs::recursive_directory_iterator(r)) {
        if (e.path().extension() == ".toml") files.push_back(e.path());
      }
    } else {
      files.emplace_back(r);
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

TEST(Engines, ScenarioFilesGiveTheSameCountersAndTracepoints) {
  const bool trace = env_u64("FAULTLINE_ENGINES_TRACE", 1) != 0;
  for (const fs::path& f : scenario_files()) {
    auto sc = load_scenario(f.string());
    if (!sc.ok()) continue;  // a fixture that is meant to be refused
    const std::string d = engines_diff(*sc, trace);
    EXPECT_EQ(d, "") << f.string();
    std::printf("%s: %s\n", f.filename().string().c_str(), d.empty() ? "same" : "DIFFERENT");
  }
}

}  // namespace
}  // namespace faultline
