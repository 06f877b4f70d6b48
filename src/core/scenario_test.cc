// scenario_test.cc — scenario files and keys: parsing, errors that name the
// file and the key, validation, the run matrix, and the built-in default
// being the same as scenarios/seed1-mmap-miss.toml.
#include "faultline/scenario.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "engine/engine.h"
#include "faultline/config.h"
#include "workload/generator.h"

#ifndef FAULTLINE_SOURCE_DIR
#error "FAULTLINE_SOURCE_DIR must point at the source tree"
#endif

namespace faultline {
namespace {

// "haystack contains needle", printing the haystack when it does not.
::testing::AssertionResult Contains(const std::string& haystack, const std::string& needle) {
  if (haystack.find(needle) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << "'" << haystack << "' does not contain '" << needle << "'";
}

constexpr const char* kSrc = "tests/bad.toml";

// The error of parsing `text` as kSrc ("" if it parsed).
std::string parse_error(const std::string& text) {
  auto r = parse_scenario(text, kSrc);
  return r.ok() ? "" : r.status().message();
}

Scenario parse_ok(const std::string& text) {
  auto r = parse_scenario(text, kSrc);
  EXPECT_TRUE(r.ok()) << r.status().message();
  return r.ok() ? *r : Scenario{};
}

std::string validate_error(const std::vector<std::string>& sets) {
  Config cfg;
  Status st = apply_assignments(cfg, sets);
  if (!st.ok()) return "apply: " + st.message();
  st = validate(cfg);
  return st.ok() ? "" : st.message();
}

const std::string* key(const std::vector<std::pair<std::string, std::string>>& keys,
                       const std::string& k) {
  for (const auto& [name, value] : keys) {
    if (name == k) return &value;
  }
  return nullptr;
}

// --- parsing -------------------------------------------------------------------

TEST(ScenarioParse, ReadsSectionsIntoTheBaseConfig) {
  const Scenario sc = parse_ok(R"(
name = "mini"
description = "a small one"
[machine]
memory = "2GiB"
[device]
read_ahead_kb = 8192
[file]
size = "64MiB"
fs = "xfs"
[mapping]
shared = false
[access]
pattern = "stride"
stride = 1021
fraction = 0.25
[kernel]
profile = "6.9"
mmap_miss_p1 = true
)");
  EXPECT_EQ(sc.name, "mini");
  EXPECT_EQ(sc.description, "a small one");
  EXPECT_EQ(sc.source, kSrc);
  EXPECT_EQ(sc.base.machine.memory, 2ULL << 30);
  EXPECT_EQ(sc.base.device.read_ahead_kb, 8192u);
  EXPECT_EQ(sc.base.file.size, 64ULL << 20);
  EXPECT_EQ(sc.base.file.fs, workload::FsType::kXfs);
  EXPECT_FALSE(sc.base.mapping.shared);
  EXPECT_EQ(sc.base.access.pattern, workload::Pattern::kStride);
  EXPECT_EQ(sc.base.access.stride, 1021u);
  EXPECT_DOUBLE_EQ(sc.base.access.fraction, 0.25);
  EXPECT_EQ(sc.base.kernel.profile, mm::Release::k6_9);
  EXPECT_EQ(sc.base.kernel.mmap_miss_p1, true);
  EXPECT_FALSE(sc.base.kernel.mmap_miss_p2.has_value());
}

TEST(ScenarioParse, NameDefaultsToTheFileName) {
  auto r = parse_scenario("[file]\nsize = \"1MiB\"\n", "some/dir/my-case.toml");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->name, "my-case");
}

TEST(ScenarioParse, ReadsCasesVariantsAndExpectations) {
  const Scenario sc = parse_ok(R"(
[[case]]
name = "random"
set = ["access.pattern=random"]
[[variant]]
name = "P1+P2"
set = ["kernel.mmap_miss_p1=true", "kernel.mmap_miss_p2=true"]
[[expect]]
case = "random"
variant = "P1+P2"
counter = "pgmajfault"
min = 10
max = 20.5
[[expect]]
counter = "pgpgin"
eq = 0
)");
  ASSERT_EQ(sc.cases.size(), 1u);
  EXPECT_EQ(sc.cases[0].name, "random");
  EXPECT_EQ(sc.cases[0].set, std::vector<std::string>{"access.pattern=random"});
  ASSERT_EQ(sc.variants.size(), 1u);
  EXPECT_EQ(sc.variants[0].set.size(), 2u);
  ASSERT_EQ(sc.expectations.size(), 2u);
  const Expectation& e = sc.expectations[0];
  EXPECT_EQ(e.case_name, "random");
  EXPECT_EQ(e.variant, "P1+P2");
  EXPECT_EQ(e.counter, "pgmajfault");
  EXPECT_EQ(e.min, 10.0);
  EXPECT_EQ(e.max, 20.5);
  EXPECT_FALSE(e.eq.has_value());
  EXPECT_EQ(sc.expectations[1].case_name, "");
  EXPECT_EQ(sc.expectations[1].eq, 0.0);
}

TEST(ScenarioParse, UnknownSectionNamesFileAndKey) {
  const std::string err = parse_error("[machin]\nmemory = \"1GiB\"\n");
  EXPECT_TRUE(Contains(err, kSrc));
  EXPECT_TRUE(Contains(err, "machin"));
}

TEST(ScenarioParse, UnknownKeyNamesFileAndDottedKey) {
  const std::string err = parse_error("[machine]\nmemroy = \"1GiB\"\n");
  EXPECT_TRUE(Contains(err, kSrc));
  EXPECT_TRUE(Contains(err, "machine.memroy"));
}

TEST(ScenarioParse, UnknownKeyInCaseNamesIt) {
  const std::string err = parse_error("[[case]]\nname = \"a\"\nsett = []\n");
  EXPECT_TRUE(Contains(err, kSrc));
  EXPECT_TRUE(Contains(err, "sett"));
}

TEST(ScenarioParse, UnknownKeyInExpectNamesIt) {
  const std::string err = parse_error("[[expect]]\ncounter = \"pgfault\"\nequals = 1\n");
  EXPECT_TRUE(Contains(err, kSrc));
  EXPECT_TRUE(Contains(err, "equals"));
}

TEST(ScenarioParse, MalformedTomlNamesFileAndLine) {
  const std::string err = parse_error("name = \"x\"\n\n[machine\nmemory = 1\n");
  EXPECT_TRUE(Contains(err, std::string(kSrc) + ":3:"));
  EXPECT_TRUE(Contains(err, "malformed TOML"));
}

TEST(ScenarioParse, BadValueNamesFileAndKey) {
  const std::string err = parse_error("[device]\nread_ahead_kb = \"lots\"\n");
  EXPECT_TRUE(Contains(err, kSrc));
  EXPECT_TRUE(Contains(err, "device.read_ahead_kb: expected"));
  EXPECT_TRUE(Contains(err, "'lots'"));
}

TEST(ScenarioParse, NegativeIntegerIsRejected) {
  EXPECT_TRUE(Contains(parse_error("[access]\nseed = -1\n"), "access.seed"));
}

TEST(ScenarioParse, DuplicateCaseNamesAreRejected) {
  EXPECT_TRUE(Contains(parse_error("[[case]]\nname = \"a\"\n[[case]]\nname = \"a\"\n"),
                       "duplicate case name 'a'"));
}

TEST(ScenarioParse, ExpectationNeedsABound) {
  EXPECT_TRUE(Contains(parse_error("[[expect]]\ncounter = \"pgfault\"\n"), "pgfault"));
  EXPECT_TRUE(Contains(parse_error("[[expect]]\neq = 1\n"), "no counter"));
}

TEST(ScenarioParse, MissingFileIsNotFound) {
  auto r = load_scenario("/nonexistent/scenario.toml");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Status::Code::kNotFound);
  EXPECT_TRUE(Contains(r.status().message(), "/nonexistent/scenario.toml"));
}

// --- keys ------------------------------------------------------------------------

TEST(ConfigKeys, SetKeyErrorNamesTheKey) {
  Config cfg;
  Status st = set_key(cfg, "device.read_ahead_kb", "abc");
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.message().rfind("device.read_ahead_kb: expected ", 0), 0u) << st.message();
  EXPECT_TRUE(Contains(st.message(), "'abc'"));
  EXPECT_EQ(cfg.device.read_ahead_kb, 128u);  // unchanged
}

TEST(ConfigKeys, ErrorsNameEveryKindOfKey) {
  Config cfg;
  for (const auto& [k, v] :
       std::vector<std::pair<std::string, std::string>>{{"file.size", "big"},
                                                        {"file.fs", "ntfs"},
                                                        {"mapping.shared", "maybe"},
                                                        {"access.fraction", "1/2"},
                                                        {"kernel.profile", "2.6"},
                                                        {"kernel.mmap_miss_p2", "yes please"}}) {
    Status st = set_key(cfg, k, v);
    ASSERT_FALSE(st.ok()) << k;
    EXPECT_EQ(st.message().rfind(k + ": expected", 0), 0u) << st.message();
  }
}

TEST(ConfigKeys, UnknownKeyIsNamed) {
  Config cfg;
  Status st = set_key(cfg, "device.readahead_kb", "128");
  ASSERT_FALSE(st.ok());
  EXPECT_TRUE(Contains(st.message(), "device.readahead_kb"));
}

TEST(ConfigKeys, AssignmentNeedsKeyEqualsValue) {
  Config cfg;
  EXPECT_FALSE(apply_assignments(cfg, {"file.size"}).ok());
  EXPECT_FALSE(apply_assignments(cfg, {"=1"}).ok());
  ASSERT_TRUE(apply_assignments(cfg, {"file.size=2GiB", "file.size=3GiB"}).ok());
  EXPECT_EQ(cfg.file.size, 3ULL << 30);  // in order: the last wins
}

TEST(ConfigKeys, EffectiveKeysResolveKernelSwitchesFromTheProfile) {
  Config cfg;
  ASSERT_TRUE(apply_assignments(cfg, {"kernel.profile=6.9"}).ok());
  auto keys = effective_keys(cfg);
  ASSERT_NE(key(keys, "kernel.workingset_exclusion"), nullptr);
  EXPECT_EQ(*key(keys, "kernel.workingset_exclusion"), "false");
  EXPECT_EQ(*key(keys, "kernel.fault_around_bytes"), "65536");
  ASSERT_TRUE(apply_assignments(cfg, {"kernel.workingset_exclusion=true"}).ok());
  keys = effective_keys(cfg);
  EXPECT_EQ(*key(keys, "kernel.workingset_exclusion"), "true");
}

// --- validate() ---------------------------------------------------------------------

TEST(ConfigValidate, DefaultsAreValid) { EXPECT_EQ(validate_error({}), ""); }

TEST(ConfigValidate, ZeroFileSizeIsRejected) {
  EXPECT_TRUE(Contains(validate_error({"file.size=0"}), "file.size"));
}

TEST(ConfigValidate, StrideAtLeastTheMappingIsRejected) {
  EXPECT_TRUE(
      Contains(validate_error({"file.size=4MiB", "access.pattern=stride", "access.stride=1024"}),
               "access.stride"));
  EXPECT_EQ(validate_error({"file.size=4MiB", "access.pattern=stride", "access.stride=1023"}), "");
  // The stride only matters to the stride pattern.
  EXPECT_EQ(validate_error({"file.size=4MiB", "access.pattern=random", "access.stride=5000"}), "");
  EXPECT_TRUE(
      Contains(validate_error({"access.pattern=stride", "access.stride=0"}), "access.stride"));
}

TEST(ConfigValidate, FaultAroundBeyondOnePageTableIsRejected) {
  EXPECT_TRUE(
      Contains(validate_error({"kernel.fault_around_bytes=4194304"}), "kernel.fault_around_bytes"));
  EXPECT_TRUE(
      Contains(validate_error({"kernel.fault_around_bytes=2097153"}), "kernel.fault_around_bytes"));
  EXPECT_EQ(validate_error({"kernel.fault_around_bytes=2097152"}), "");
  EXPECT_EQ(validate_error({"kernel.fault_around_bytes=4096"}), "");
}

TEST(ConfigValidate, FractionOutOfRangeIsRejected) {
  EXPECT_TRUE(Contains(validate_error({"access.fraction=0"}), "access.fraction"));
  EXPECT_TRUE(Contains(validate_error({"access.fraction=1.5"}), "access.fraction"));
  EXPECT_TRUE(Contains(validate_error({"access.fraction=-0.1"}), "access.fraction"));
  EXPECT_EQ(validate_error({"access.fraction=1"}), "");
  // access.count overrides the fraction.
  EXPECT_EQ(validate_error({"access.fraction=0", "access.count=10"}), "");
}

TEST(ConfigValidate, TraceNeedsAFile) {
  EXPECT_TRUE(Contains(validate_error({"access.pattern=trace"}), "access.trace"));
  EXPECT_EQ(validate_error({"access.pattern=trace", "access.trace=t.trace"}), "");
  // A trace has its own length: access.fraction does not apply to it.
  EXPECT_EQ(validate_error({"access.pattern=trace", "access.trace=t.trace", "access.fraction=0"}),
            "");
  // Like access.stride, access.trace only matters to its pattern.
  EXPECT_EQ(validate_error({"access.pattern=random", "access.trace=t.trace"}), "");
  EXPECT_TRUE(Contains(validate_error({"access.trace_format=blkparse"}), "access.trace_format"));
}

// compare and probe replay workload::generate_all(make_access_spec(cfg)) on
// the host: for a trace, exactly the file's pages, cut at access.count.
TEST(AccessSpec, CarriesTheTraceToTheProbe) {
  const std::string path =
      ::testing::TempDir() + "faultline-spec-" + std::to_string(::getpid()) + ".csv";
  std::ofstream(path) << "ts,offset,length\n1,8192,8192\n2,0,1\n";
  Config cfg;
  ASSERT_TRUE(
      apply_assignments(cfg, {"file.size=1MiB", "access.pattern=trace", "access.trace=" + path,
                              "access.trace_format=csv", "access.span=0.5", "access.fraction=0.5"})
          .ok());
  ASSERT_EQ(validate(cfg).message(), "");
  const workload::AccessSpec spec = engine::make_access_spec(cfg);
  EXPECT_EQ(spec.trace, path);
  EXPECT_EQ(spec.trace_format, workload::TraceFormat::kCsv);
  EXPECT_EQ(spec.pages, 256u);  // the whole mapping, whatever access.span says
  auto pages = workload::generate_all(spec);
  ASSERT_TRUE(pages.ok()) << pages.status().message();
  EXPECT_EQ(*pages, (std::vector<uint64_t>{2, 3, 0}));
  ASSERT_TRUE(set_key(cfg, "access.count", "2").ok());
  pages = workload::generate_all(engine::make_access_spec(cfg));
  ASSERT_TRUE(pages.ok()) << pages.status().message();
  EXPECT_EQ(*pages, (std::vector<uint64_t>{2, 3}));
  std::remove(path.c_str());
}

TEST(ConfigValidate, MappingMustStayInsideTheFile) {
  EXPECT_TRUE(
      Contains(validate_error({"file.size=1MiB", "mapping.offset=1MiB"}), "mapping.offset"));
  EXPECT_TRUE(
      Contains(validate_error({"file.size=1MiB", "mapping.offset=4096", "mapping.length=1MiB"}),
               "mapping.length"));
  EXPECT_TRUE(Contains(validate_error({"mapping.offset=100"}), "mapping.offset"));
  EXPECT_TRUE(Contains(validate_error({"mapping.align_offset=512"}), "mapping.align_offset"));
}

// --- plan_runs() ----------------------------------------------------------------------

constexpr const char* kMatrix = R"(
name = "matrix"
[file]
size = "64MiB"
[access]
seed = 1
[[case]]
name = "c1"
set = ["access.seed=10"]
[[case]]
name = "c2"
set = ["access.pattern=sequential"]
[[variant]]
name = "v1"
set = []
[[variant]]
name = "v2"
set = ["access.seed=20", "kernel.mmap_miss_p1=true"]
[[variant]]
name = "v3"
set = ["kernel.mmap_miss_p2=true"]
)";

TEST(PlanRuns, ExpandsCasesTimesVariantsInOrder) {
  const Scenario sc = parse_ok(kMatrix);
  auto runs = plan_runs(sc, {});
  ASSERT_TRUE(runs.ok()) << runs.status().message();
  std::vector<std::string> names;
  for (const PlannedRun& r : *runs) names.push_back(r.case_name + "/" + r.variant);
  EXPECT_EQ(names,
            (std::vector<std::string>{"c1/v1", "c1/v2", "c1/v3", "c2/v1", "c2/v2", "c2/v3"}));
  // The case applies, then the variant.
  EXPECT_EQ((*runs)[0].cfg.access.seed, 10u);
  EXPECT_EQ((*runs)[1].cfg.access.seed, 20u);
  EXPECT_EQ((*runs)[3].cfg.access.seed, 1u);
  EXPECT_EQ((*runs)[3].cfg.access.pattern, workload::Pattern::kSequential);
  EXPECT_EQ((*runs)[1].cfg.kernel.mmap_miss_p1, true);
  EXPECT_FALSE((*runs)[2].cfg.kernel.mmap_miss_p1.has_value());
  // The base is untouched.
  EXPECT_EQ(sc.base.access.seed, 1u);
}

TEST(PlanRuns, OverridesApplyLastToEveryRun) {
  auto runs = plan_runs(parse_ok(kMatrix), {"access.seed=99", "kernel.mmap_miss_p1=false"});
  ASSERT_TRUE(runs.ok()) << runs.status().message();
  ASSERT_EQ(runs->size(), 6u);
  for (const PlannedRun& r : *runs) {
    EXPECT_EQ(r.cfg.access.seed, 99u) << r.case_name << "/" << r.variant;
    EXPECT_EQ(r.cfg.kernel.mmap_miss_p1, false) << r.case_name << "/" << r.variant;
  }
}

TEST(PlanRuns, NoCasesOrVariantsIsOneDefaultRun) {
  auto runs = plan_runs(parse_ok("[file]\nsize = \"64MiB\"\n"), {});
  ASSERT_TRUE(runs.ok());
  ASSERT_EQ(runs->size(), 1u);
  EXPECT_EQ((*runs)[0].case_name, "default");
  EXPECT_EQ((*runs)[0].variant, "default");
}

TEST(PlanRuns, BadOverrideIsReportedAsSet) {
  auto runs = plan_runs(parse_ok(kMatrix), {"access.seed=many"});
  ASSERT_FALSE(runs.ok());
  EXPECT_TRUE(Contains(runs.status().message(), "--set"));
  EXPECT_TRUE(Contains(runs.status().message(), "access.seed"));
}

TEST(PlanRuns, InvalidRunNamesCaseAndVariant) {
  auto runs = plan_runs(parse_ok(kMatrix), {"access.pattern=stride", "access.stride=16384"});
  ASSERT_FALSE(runs.ok());
  EXPECT_TRUE(Contains(runs.status().message(), "case 'c1', variant 'v1'"));
  EXPECT_TRUE(Contains(runs.status().message(), "access.stride"));
}

TEST(PlanRuns, BadCaseAssignmentNamesTheCase) {
  auto runs = plan_runs(parse_ok("[[case]]\nname = \"broken\"\nset = [\"file.size=huge\"]\n"), {});
  ASSERT_FALSE(runs.ok());
  EXPECT_TRUE(Contains(runs.status().message(), "case 'broken'"));
  EXPECT_TRUE(Contains(runs.status().message(), "file.size"));
}

// --- machine profiles ------------------------------------------------------------------

TEST(MachineProfile, SetsTheBaseAndCasesAndSetStillOverride) {
  const std::string path = ::testing::TempDir() + "/machine_" + std::to_string(getpid()) + ".toml";
  {
    std::ofstream out(path);
    out << "name = \"m\"\n[device]\nbandwidth = 1000000\nqueue_depth = 2\n[cpu]\nfault_ns = 9\n";
  }
  auto m = load_machine_profile(path);
  std::remove(path.c_str());
  ASSERT_TRUE(m.ok()) << m.status().message();
  Scenario sc = parse_ok(
      "[[case]]\nname = \"a\"\n[[case]]\nname = \"b\"\nset = [\"device.bandwidth=5000000\"]\n");
  ASSERT_TRUE(apply_machine_profile(*m, &sc).ok());
  EXPECT_EQ(sc.machine_profile, "m");
  auto runs = plan_runs(sc, {"cpu.fault_ns=11"});
  ASSERT_TRUE(runs.ok()) << runs.status().message();
  ASSERT_EQ(runs->size(), 2u);
  EXPECT_EQ((*runs)[0].cfg.device.bandwidth, 1000000u);
  EXPECT_EQ((*runs)[0].cfg.device.queue_depth, 2u);
  EXPECT_EQ((*runs)[1].cfg.device.bandwidth, 5000000u);  // the case wins
  EXPECT_EQ((*runs)[0].cfg.cpu.fault_ns, 11);            // --set wins
}

TEST(MachineProfile, ErrorsNameTheFileAndTheKey) {
  auto err = [](const std::string& text) {
    const std::string path =
        ::testing::TempDir() + "/machine_bad_" + std::to_string(getpid()) + ".toml";
    {
      std::ofstream out(path);
      out << text;
    }
    auto m = load_machine_profile(path);
    std::remove(path.c_str());
    return m.ok() ? std::string() : m.status().message();
  };
  EXPECT_TRUE(Contains(err("[file]\nsize = 5\n"), "'file.size' is not a key of a machine profile"));
  EXPECT_TRUE(Contains(err("[device]\nbandwidth = \"fast\"\n"), "device.bandwidth"));
  EXPECT_TRUE(Contains(err("name = 3\n"), "'name' must be a string"));
  EXPECT_TRUE(Contains(err("[device\n"), "malformed TOML"));
  EXPECT_TRUE(Contains(err("[cpu]\nwarp_ns = 1\n"), "cpu.warp_ns"));
  auto missing = load_machine_profile("/nonexistent/machine.toml");
  ASSERT_FALSE(missing.ok());
  EXPECT_TRUE(Contains(missing.status().message(), "/nonexistent/machine.toml: cannot open"));
}

// --- the built-in default --------------------------------------------------------------

TEST(DefaultScenario, IsTheSeedOneFile) {
  const std::string path = std::string(FAULTLINE_SOURCE_DIR) + "/scenarios/seed1-mmap-miss.toml";
  auto file = load_scenario(path);
  ASSERT_TRUE(file.ok()) << file.status().message();
  const Scenario builtin = default_scenario();
  EXPECT_EQ(builtin.source, "<built-in>");
  EXPECT_EQ(builtin.name, file->name);
  EXPECT_EQ(builtin.description, file->description);
  ASSERT_EQ(builtin.cases.size(), file->cases.size());
  for (size_t i = 0; i < builtin.cases.size(); ++i) {
    EXPECT_EQ(builtin.cases[i].name, file->cases[i].name);
    EXPECT_EQ(builtin.cases[i].set, file->cases[i].set);
  }
  ASSERT_EQ(builtin.variants.size(), file->variants.size());
  for (size_t i = 0; i < builtin.variants.size(); ++i) {
    EXPECT_EQ(builtin.variants[i].name, file->variants[i].name);
    EXPECT_EQ(builtin.variants[i].set, file->variants[i].set);
  }
  EXPECT_EQ(builtin.expectations.size(), file->expectations.size());
  EXPECT_EQ(builtin.probe.repetitions, file->probe.repetitions);
  EXPECT_EQ(builtin.probe.tolerance, file->probe.tolerance);

  auto a = plan_runs(builtin, {});
  auto b = plan_runs(*file, {});
  ASSERT_TRUE(a.ok()) << a.status().message();
  ASSERT_TRUE(b.ok()) << b.status().message();
  ASSERT_EQ(a->size(), b->size());
  EXPECT_EQ(a->size(), 20u);  // 5 cases x 4 variants
  for (size_t i = 0; i < a->size(); ++i) {
    SCOPED_TRACE((*a)[i].case_name + "/" + (*a)[i].variant);
    EXPECT_EQ((*a)[i].case_name, (*b)[i].case_name);
    EXPECT_EQ((*a)[i].variant, (*b)[i].variant);
    EXPECT_EQ(effective_keys((*a)[i].cfg), effective_keys((*b)[i].cfg));
  }
}

// The default is seed 1 (docs/fault-path.md, 'Seed 1: random and strided reads').
TEST(DefaultScenario, IsSeedOneOfTheSpec) {
  const Scenario sc = default_scenario();
  EXPECT_EQ(sc.base.file.size, 20ULL << 30);
  EXPECT_EQ(sc.base.machine.memory, 8ULL << 30);
  EXPECT_EQ(sc.base.device.read_ahead_kb, 8192u);
  EXPECT_DOUBLE_EQ(sc.base.access.fraction, 0.01);
  EXPECT_EQ(sc.base.kernel.profile, mm::Release::k7_1);
  EXPECT_EQ(sc.base.file.cache, workload::CacheState::kCold);
  EXPECT_TRUE(sc.base.mapping.shared);
}

}  // namespace
}  // namespace faultline
