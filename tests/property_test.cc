// property_test.cc — the model's invariants (model.invariants, mm/invariants.h)
// over generated scenarios nobody wrote.
//
// Each case is a scenario drawn from a seed: one file or a set of files and
// streams, file systems, sizes, memory limits, read_ahead_kb,
// fault_around_bytes, madvise and fadvise hints, patterns, reads and
// writes, MAP_PRIVATE, kernel profiles and switches, checked every N
// accesses. A case the scenario loader refuses is counted and skipped (the
// generator must keep most cases valid). A failing case is shrunk, one key
// and one halving at a time, to the smallest scenario that still fails, and
// printed as TOML with the seed that drew it.
//
// FAULTLINE_PROPERTY_CASES (default 300) and FAULTLINE_PROPERTY_SEED (default
// 1, the first seed) size the run: CI runs the default, the labelled
// bench/property_long.sh 10,000. FAULTLINE_PROPERTY_VERBOSE=1 prints why each
// refused case was refused.
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "faultline/scenario.h"
#include "faultline/simulator.h"
#include "harness/generated_scenario.h"

namespace faultline {
namespace {

using testing::Gen;
using testing::generate;
using testing::halved;
using testing::render;

enum class Outcome { kPass, kInvalid, kFail };

struct Checked {
  Outcome outcome;
  std::string message;
};

Checked check(const Gen& g) {
  auto sc = parse_scenario(render(g), "generated");
  if (!sc.ok()) return {Outcome::kInvalid, sc.status().message()};
  auto plan = plan_runs(*sc, {});
  if (!plan.ok()) return {Outcome::kInvalid, plan.status().message()};
  SimOptions opts;
  opts.jobs = 1;
  opts.progress = false;
  auto runs = simulate(*plan, opts);
  if (runs.ok()) return {Outcome::kPass, ""};
  if (runs.status().code() == Status::Code::kInvalidArgument) {
    return {Outcome::kInvalid, runs.status().message()};
  }
  return {Outcome::kFail, runs.status().message()};
}

uint64_t env_u64(const char* name, uint64_t fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::strtoull(v, nullptr, 10) : fallback;
}

TEST(Property, GeneratedScenariosKeepTheModelsInvariants) {
  const uint64_t cases = env_u64("FAULTLINE_PROPERTY_CASES", 300);
  const uint64_t first = env_u64("FAULTLINE_PROPERTY_SEED", 1);
  uint64_t invalid = 0, failed = 0;
  std::string first_invalid;
  for (uint64_t seed = first; seed < first + cases; ++seed) {
    const Gen g = generate(seed);
    const Checked c = check(g);
    if (c.outcome == Outcome::kInvalid) {
      if (first_invalid.empty()) first_invalid = "seed " + std::to_string(seed) + ": " + c.message;
      if (std::getenv("FAULTLINE_PROPERTY_VERBOSE"))
        std::printf("invalid %llu: %s\n", static_cast<unsigned long long>(seed), c.message.c_str());
      ++invalid;
      continue;
    }
    if (c.outcome == Outcome::kPass) continue;
    ++failed;
    const Gen small =
        testing::shrink(g, [](const Gen& t) { return check(t).outcome == Outcome::kFail; });
    ADD_FAILURE() << "seed " << seed << " (FAULTLINE_PROPERTY_SEED=" << seed
                  << " FAULTLINE_PROPERTY_CASES=1): " << c.message << "\nshrunk to:\n"
                  << render(small) << "which fails with: " << check(small).message;
    if (failed >= 5) break;
  }
  std::printf("%llu cases from seed %llu: %llu invalid, %llu failed\n",
              static_cast<unsigned long long>(cases), static_cast<unsigned long long>(first),
              static_cast<unsigned long long>(invalid), static_cast<unsigned long long>(failed));
  // The generator is only worth its cases if most of them run.
  EXPECT_LE(invalid * 10, cases) << "over 10 % of generated scenarios invalid, first: "
                                 << first_invalid;
}

TEST(Property, ShrinkingHalvesNumbersAndKeepsUnits) {
  EXPECT_EQ(halved("20MiB"), "10MiB");
  EXPECT_EQ(halved("1500"), "750");
  EXPECT_EQ(halved("1"), "");
  EXPECT_EQ(halved("0.5"), "");
  EXPECT_EQ(halved("random"), "");
}

}  // namespace
}  // namespace faultline
