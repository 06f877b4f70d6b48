// compare_live_test.cc — the model against this machine's kernel, live.
//
// Each case runs the probe (root, loop devices, a memory cgroup) and the
// model of the host's kernel on the same access stream, and asserts that
// pgpgin, majflt and minflt agree within the scenario's tolerances. Where
// the machine cannot run the probe, every test says why and skips.
#include <gtest/gtest.h>
#include <unistd.h>

#include "faultline/compare.h"
#include "faultline/scenario.h"
#include "probe/probe.h"

namespace faultline {
namespace {

std::string why_not_live() {
  if (::geteuid() != 0) return "not root";
  if (::access("/dev/loop-control", F_OK) != 0) return "no /dev/loop-control";
  if (::access("/sys/fs/cgroup/memory", F_OK) != 0 &&
      ::access("/sys/fs/cgroup/cgroup.controllers", F_OK) != 0) {
    return "no memory cgroup";
  }
  return "";
}

void expect_agreement(const char* toml) {
  const std::string why = why_not_live();
  if (!why.empty()) GTEST_SKIP() << "live probe unavailable: " << why;
  auto sc = parse_scenario(toml, "<live test>");
  ASSERT_TRUE(sc.ok()) << sc.status().message();
  CompareOptions opts;
  opts.repetitions = 1;
  auto cases = compare_scenario(*sc, {}, opts);
  ASSERT_TRUE(cases.ok()) << cases.status().message();
  ASSERT_FALSE(cases->empty());
  for (const CompareCase& c : *cases) {
    EXPECT_TRUE(c.judged);
    EXPECT_TRUE(c.pass) << c.case_name;
    // Seconds are judged apart from the counters (time_pass) and depend on
    // the machine's profile; a live test asserts that they were measured.
    EXPECT_TRUE(c.time_judged) << c.case_name;
    for (const CompareRow& r : c.rows) {
      if (r.tolerance < 0 || r.counter == "elapsed_s") continue;
      EXPECT_TRUE(r.within) << c.case_name << ": " << r.counter << " model " << r.model
                            << " kernel " << r.kernel.median << " (tolerance " << r.tolerance
                            << ")";
    }
  }
}

TEST(CompareLive, ColdRandomAndSequentialExt4) {
  expect_agreement(R"(
    name = "live-cold"
    [device]
    read_ahead_kb = 128
    [file]
    size = "32MiB"
    [[case]]
    name = "random"
    set = ["access.pattern=random", "access.fraction=0.05"]
    [[case]]
    name = "sequential"
    set = ["access.pattern=sequential", "access.fraction=1"]
  )");
}

TEST(CompareLive, ReadAroundOf8MiBAndMadviseRandom) {
  expect_agreement(R"(
    name = "live-ra8192"
    [device]
    read_ahead_kb = 8192
    [file]
    size = "64MiB"
    [access]
    pattern = "random"
    fraction = 0.01
    [[case]]
    name = "normal"
    set = ["mapping.madvise=normal"]
    [[case]]
    name = "random-hint"
    set = ["mapping.madvise=random"]
  )");
}

TEST(CompareLive, LargerThanTheCgroupLimit) {
  expect_agreement(R"(
    name = "live-limit"
    [machine]
    memory_limit = "48MiB"
    [device]
    read_ahead_kb = 128
    [file]
    size = "128MiB"
    [access]
    pattern = "random"
    fraction = 0.05
  )");
}

TEST(CompareLive, HotTmpfsFaultAround) {
  expect_agreement(R"(
    name = "live-tmpfs"
    [file]
    size = "32MiB"
    fs = "tmpfs"
    [access]
    pattern = "sequential"
    fraction = 1.0
  )");
}

}  // namespace
}  // namespace faultline
