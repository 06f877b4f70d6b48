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

namespace faultline {
namespace {

// A generated scenario: entries of [[files]] and [[streams]], and every
// key as one KEY=VALUE of a single case.
struct Gen {
  std::vector<std::string> files;
  std::vector<std::string> streams;
  std::vector<std::string> sets;
};

std::string render(const Gen& g) {
  std::string t = "name = \"property\"\n";
  for (const std::string& f : g.files) t += "[[files]]\nname = \"" + f + "\"\n";
  for (const std::string& s : g.streams) t += "[[streams]]\nname = \"" + s + "\"\n";
  t += "[[case]]\nname = \"generated\"\nset = [\n";
  for (const std::string& s : g.sets) t += "  \"" + s + "\",\n";
  t += "]\n";
  return t;
}

Gen generate(uint64_t seed) {
  std::mt19937_64 rng(seed);
  auto pick = [&](auto... v) {
    const std::array all{v...};
    return all[rng() % all.size()];
  };
  auto chance = [&](unsigned percent) { return rng() % 100 < percent; };
  Gen g;
  auto set = [&g](const std::string& k, const std::string& v) { g.sets.push_back(k + "=" + v); };
  const std::string fs = pick("ext4", "ext4", "xfs", "tmpfs");
  set("file.fs", fs);
  set("model.invariants", pick("1", "13", "97"));
  set("kernel.profile", pick("6.9", "6.15", "6.18", "7.1", "7.4"));
  set("machine.memory", pick("256MiB", "1GiB"));
  if (chance(60)) set("machine.memory_limit", pick("4MiB", "8MiB", "12MiB", "24MiB"));
  set("device.read_ahead_kb", pick("4", "32", "128", "512", "2048", "8192"));
  if (chance(30)) set("kernel.fault_around_bytes", pick("4096", "16384", "65536", "262144"));
  if (chance(30)) set("file.large_folios", pick("auto", "on", "off"));
  if (chance(20)) set("file.cache", pick("warm-read", "warm-write"));
  for (const char* sw : {"kernel.mmap_miss_p1", "kernel.mmap_miss_p2", "kernel.ra_order_plus2",
                         "kernel.workingset_exclusion", "kernel.whole_folio_fault_around"}) {
    if (chance(15)) set(sw, pick("true", "false"));
  }
  // The keys of one access stream over a file of mib MiB.
  auto pattern_keys = [&](const std::string& p, bool stream, uint64_t mib) {
    const std::string pattern = pick("random", "random", "sequential", "stride");
    set(p + "pattern", pattern);
    double span = 1;
    if (chance(20)) {
      span = pick(0.25, 0.5);
      set(p + "span", span == 0.25 ? "0.25" : "0.5");
    }
    if (pattern == "stride") {
      const double pages = static_cast<double>(mib * 256) * span;
      uint64_t stride = 0;
      while (stride == 0 || static_cast<double>(stride) >= pages)
        stride = pick(2, 7, 33, 571, 1021);
      set(p + "stride", std::to_string(stride));
    }
    set(p + "count", std::to_string(pick(50, 300, 1500)));
    set(p + "seed", std::to_string(1 + rng() % 1000));
    bool mapped = true;
    if (chance(25)) {
      set(p + "op", "write");
    } else if (chance(33)) {
      mapped = false;
      set(p + "method", "read");
      set(p + "read_size", pick("4KiB", "64KiB", "1MiB"));
    }
    if (!stream && mapped && chance(10)) {
      set("access.dontneed_every", std::to_string(pick(64, 500)));
    }
  };
  auto size = [&](const std::string& key, uint64_t mib) {
    set(key, std::to_string(mib) + "MiB");
    return mib;
  };
  if (chance(70)) {
    const uint64_t mib = size("file.size", pick(1, 6, 20, 40));
    if (chance(20)) set("mapping.shared", "false");
    if (chance(40)) {
      set("mapping.madvise", pick("random", "sequential", "willneed", "dontneed", "hugepage"));
    }
    if (chance(40)) {
      set("file.fadvise", pick("random", "sequential", "willneed", "dontneed", "noreuse"));
    }
    pattern_keys("access.", false, mib);
  } else {
    const int nfiles = pick(1, 2, 3);
    std::vector<uint64_t> mibs;
    for (int i = 0; i < nfiles; ++i) {
      const std::string f = "f" + std::to_string(i);
      g.files.push_back(f);
      mibs.push_back(size("files." + f + ".size", pick(1, 6, 20)));
      if (chance(30)) set("files." + f + ".madvise", pick("random", "sequential", "willneed"));
      if (chance(30)) set("files." + f + ".fadvise", pick("random", "sequential", "noreuse"));
      if (chance(15)) set("files." + f + ".shared", "false");
    }
    const int nstreams = pick(1, 2, 3);
    for (int i = 0; i < nstreams; ++i) {
      const std::string s = "s" + std::to_string(i);
      g.streams.push_back(s);
      const std::string p = "streams." + s + ".";
      const size_t file = rng() % g.files.size();
      set(p + "file", g.files[file]);
      if (chance(40)) set(p + "process", pick("p0", "p1"));
      if (chance(15)) set(p + "anon", pick("1MiB", "4MiB"));
      pattern_keys(p, true, mibs[file]);
    }
  }
  return g;
}

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

// "20MiB" -> "10MiB", "1500" -> "750"; "" when there is nothing to halve.
std::string halved(const std::string& v) {
  size_t digits = 0;
  while (digits < v.size() && v[digits] >= '0' && v[digits] <= '9') ++digits;
  if (digits == 0 || (digits < v.size() && v[digits] == '.')) return "";
  const uint64_t n = std::stoull(v.substr(0, digits));
  if (n < 2) return "";
  return std::to_string(n / 2) + v.substr(digits);
}

// The smallest scenario derived from g that still fails: drop a key, a
// stream or a file, or halve a number, while the failure remains.
Gen shrink(Gen g) {
  for (int round = 0; round < 50; ++round) {
    bool smaller = false;
    for (size_t i = 0; i < g.sets.size(); ++i) {
      if (g.sets[i].rfind("model.invariants=", 0) == 0) continue;
      Gen t = g;
      t.sets.erase(t.sets.begin() + static_cast<std::ptrdiff_t>(i));
      if (check(t).outcome == Outcome::kFail) {
        g = std::move(t);
        smaller = true;
        --i;
      }
    }
    auto drop_entry = [&](std::vector<std::string> Gen::*list, const std::string& prefix) {
      for (size_t i = 0; i < (g.*list).size(); ++i) {
        Gen t = g;
        const std::string name = (t.*list)[i];
        (t.*list).erase((t.*list).begin() + static_cast<std::ptrdiff_t>(i));
        std::erase_if(t.sets, [&](const std::string& s) {
          return s.rfind(prefix + name + ".", 0) == 0 ||
                 (prefix == "files." && s.find(".file=" + name) != std::string::npos);
        });
        if (check(t).outcome == Outcome::kFail) {
          g = std::move(t);
          smaller = true;
          --i;
        }
      }
    };
    drop_entry(&Gen::streams, "streams.");
    drop_entry(&Gen::files, "files.");
    for (size_t i = 0; i < g.sets.size(); ++i) {
      const size_t eq = g.sets[i].find('=');
      const std::string half = halved(g.sets[i].substr(eq + 1));
      if (half.empty() || g.sets[i].rfind("model.invariants=", 0) == 0) continue;
      Gen t = g;
      t.sets[i] = g.sets[i].substr(0, eq + 1) + half;
      if (check(t).outcome == Outcome::kFail) {
        g = std::move(t);
        smaller = true;
      }
    }
    if (!smaller) break;
  }
  return g;
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
    const Gen small = shrink(g);
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
