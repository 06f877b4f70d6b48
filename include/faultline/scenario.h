// scenario.h — a scenario file: a base configuration, the cases (rows) and
// variants (columns) run on identical input, probe settings, and optional
// expectations used by scenario tests.
//
//   name = "seed1"
//   [file]
//   size = "20GiB"
//   [[case]]
//   name = "random"
//   set = ["access.pattern=random"]
//   [[variant]]
//   name = "P1+P2"
//   set = ["kernel.mmap_miss_p1=true", "kernel.mmap_miss_p2=true"]
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "faultline/config.h"
#include "util/status.h"

namespace faultline {

struct NamedOverrides {
  std::string name;
  std::vector<std::string> set;  // KEY=VALUE assignments
};

// An expectation on one counter of one run (scenario tests).
struct Expectation {
  std::string case_name;  // "" = every case
  std::string variant;    // "" = every variant
  std::string counter;
  std::optional<double> eq, min, max;
};

struct ProbeSettings {
  int repetitions = 3;
  bool trace_events = false;
  // Relative tolerance per counter for compare (pgpgin 5 %, majflt 10 %, minflt 15 %).
  std::vector<std::pair<std::string, double>> tolerance = {
      {"pgpgin", 0.05}, {"majflt", 0.10}, {"minflt", 0.15}};
  // Relative tolerance of elapsed_s against the kernel's median, judged
  // apart from the counters (CompareCase::time_pass).
  double time_tolerance = 0.15;
};

struct Scenario {
  std::string name;
  std::string description;
  std::string source;  // file path, or "<built-in>"
  Config base;
  std::vector<NamedOverrides> cases;
  std::vector<NamedOverrides> variants;
  ProbeSettings probe;
  std::vector<Expectation> expectations;
  std::string machine_profile;  // the name of the machine profile applied, if any
};

// A machine profile (`faultline calibrate` writes one): the keys that say
// how fast a machine is, as a TOML file with a name, a description and the
// tables [device] (bandwidth, latency_us, queue_depth, max_sectors_kb),
// [machine] (cpus, memory) and [cpu] (the fault path's costs, cpu.*).
struct MachineProfile {
  std::string name, description, source;
  std::vector<std::string> set;  // KEY=VALUE, validated
};
Result<MachineProfile> load_machine_profile(const std::string& path);
// Sets the profile's keys in the scenario's base: its cases and variants,
// and --set, still override them.
Status apply_machine_profile(const MachineProfile& m, Scenario* sc);

// Parses TOML text; errors name `source` and the offending key.
Result<Scenario> parse_scenario(const std::string& text, const std::string& source);
Result<Scenario> load_scenario(const std::string& path);
// The built-in default: seed 1's matrix (scenarios/seed1-mmap-miss.toml).
Scenario default_scenario();
extern const char* const kDefaultScenarioToml;

// One run of the matrix: its names and its fully resolved configuration.
struct PlannedRun {
  std::string case_name;
  std::string variant;
  Config cfg;
};
// Expands cases x variants; `overrides` (--set) apply last, to every run.
// Every run's configuration is validated.
Result<std::vector<PlannedRun>> plan_runs(const Scenario& sc,
                                          const std::vector<std::string>& overrides);

}  // namespace faultline
