// golden_test.cc — golden runs (tests/golden/): small committed scenarios
// with every counter of every run recorded next to them in NAME.golden.
//
// The counters are compared exactly. On a mismatch the test prints the
// changed lines and the whole actual block, ready to paste; an intended
// change of the model is then a reviewed update of the .golden file, or
//   FAULTLINE_UPDATE_GOLDEN=1 ctest --test-dir build/debug -R golden_test
// which rewrites every .golden file from the current model.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "faultline/scenario.h"
#include "faultline/simulator.h"
#include "harness/run_scenario.h"
#include "report/report.h"

#ifndef FAULTLINE_TESTS_DIR
#error "FAULTLINE_TESTS_DIR must point at tests/"
#endif

namespace faultline {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> golden_scenarios() {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(fs::path(FAULTLINE_TESTS_DIR) / "golden", ec)) {
    if (e.path().extension() == ".toml") out.push_back(e.path().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string golden_path(const std::string& toml) {
  return fs::path(toml).replace_extension(".golden").string();
}

// Every counter of every run, one "name = value" line each, under a
// "[case/variant]" header, numbers printed as the reports print them.
std::string render(const std::string& toml, const std::vector<RunResult>& runs) {
  std::string out = "# Golden counters of tests/golden/" + fs::path(toml).filename().string() +
                    "\n# Regenerate: FAULTLINE_UPDATE_GOLDEN=1 ctest -R golden_test\n";
  for (const RunResult& r : runs) {
    out += "\n[" + r.case_name + "/" + r.variant + "]\n";
    for (const Counter& c : r.counters)
      out += c.name + " = " + report::format_number(c.value) + "\n";
    for (const FileResult& f : r.files) {
      out += "\n[" + r.case_name + "/" + r.variant + " file " + f.path + "]\n";
      for (const Counter& c : f.counters)
        out += c.name + " = " + report::format_number(c.value) + "\n";
    }
  }
  return out;
}

std::string read_file(const std::string& path, bool* found) {
  std::ifstream in(path);
  *found = static_cast<bool>(in);
  std::ostringstream os;
  os << in.rdbuf();
  return os.str();
}

// "[run] line" -> present, for a readable list of what changed.
std::map<std::string, std::string> keyed_lines(const std::string& text) {
  std::map<std::string, std::string> out;
  std::istringstream in(text);
  std::string line, section;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    if (line[0] == '[') {
      section = line;
      continue;
    }
    const size_t eq = line.find(" = ");
    out[section + " " + line.substr(0, eq)] = eq == std::string::npos ? "" : line.substr(eq + 3);
  }
  return out;
}

std::string changes(const std::string& want, const std::string& got) {
  const auto w = keyed_lines(want), g = keyed_lines(got);
  std::string out;
  for (const auto& [k, v] : w) {
    auto it = g.find(k);
    if (it == g.end()) {
      out += "  " + k + ": " + v + " -> (gone)\n";
    } else if (it->second != v) {
      out += "  " + k + ": " + v + " -> " + it->second + "\n";
    }
  }
  for (const auto& [k, v] : g) {
    if (!w.count(k)) out += "  " + k + ": (new) " + v + "\n";
  }
  return out;
}

class Golden : public ::testing::TestWithParam<std::string> {};

TEST_P(Golden, CountersAreUnchanged) {
  const std::string& toml = GetParam();
  auto run = testing::run_scenario_file(toml);
  ASSERT_TRUE(run.ok()) << run.status().message();
  const std::string actual = render(toml, run->runs);

  const std::string path = golden_path(toml);
  const char* update = std::getenv("FAULTLINE_UPDATE_GOLDEN");
  if (update && *update && std::string(update) != "0") {
    std::ofstream(path) << actual;
    std::cout << "rewrote " << path << "\n";
    return;
  }
  bool found = false;
  const std::string expected = read_file(path, &found);
  ASSERT_TRUE(found) << path << " is missing; the actual counters are:\n" << actual;
  if (expected != actual) {
    ADD_FAILURE() << path << " differs from the model:\n"
                  << changes(expected, actual) << "\nactual block, ready to paste into " << path
                  << ":\n"
                  << actual;
  }
}

std::string test_name(const ::testing::TestParamInfo<std::string>& p) {
  std::string n = fs::path(p.param).stem().string();
  for (char& c : n) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return n;
}

INSTANTIATE_TEST_SUITE_P(Files, Golden, ::testing::ValuesIn(golden_scenarios()), test_name);

TEST(GoldenFiles, AreFound) {
  const auto files = golden_scenarios();
  EXPECT_GE(files.size(), 2u);
  for (const auto& f : files) EXPECT_TRUE(fs::exists(golden_path(f))) << golden_path(f);
}

}  // namespace
}  // namespace faultline
