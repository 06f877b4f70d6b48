// generated_scenario.h — scenarios drawn from a seed, for the tests that
// run the model over cases nobody wrote (the invariants in property_test,
// the two engines against each other in engines_test), and the shrinking
// of a failing one to the smallest scenario that still fails.
//
// A case is one file or a set of files and streams, file systems, sizes,
// memory limits, read_ahead_kb, request sizes, fault_around_bytes, madvise and fadvise
// hints, patterns and traces, reads and writes, MAP_PRIVATE, kernel
// profiles and switches, both model engines, with the model's invariants
// checked every N accesses.
#pragma once

#include <unistd.h>

#include <array>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

namespace faultline::testing {

// A generated scenario: entries of [[files]] and [[streams]], and every
// key as one KEY=VALUE of a single case.
struct Gen {
  std::vector<std::string> files;
  std::vector<std::string> streams;
  std::vector<std::string> sets;
};

inline std::string render(const Gen& g) {
  std::string t = "name = \"property\"\n";
  for (const std::string& f : g.files) t += "[[files]]\nname = \"" + f + "\"\n";
  for (const std::string& s : g.streams) t += "[[streams]]\nname = \"" + s + "\"\n";
  t += "[[case]]\nname = \"generated\"\nset = [\n";
  for (const std::string& s : g.sets) t += "  \"" + s + "\",\n";
  t += "]\n";
  return t;
}

// A trace of page indices below `pages` in a file of its own (named by the
// seed, so the same seed writes the same trace): forward and backward
// sequential stretches, random pages and repeats, which no pattern makes.
// The directory of this process's traces, removed when it exits.
struct TraceDir {
  std::filesystem::path path =
      std::filesystem::temp_directory_path() / ("faultline-traces." + std::to_string(::getpid()));
  ~TraceDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
};
inline TraceDir trace_dir;

inline std::string write_trace(uint64_t seed, uint64_t pages, std::mt19937_64& rng) {
  const std::filesystem::path& dir = trace_dir.path;
  std::filesystem::create_directories(dir);
  const std::filesystem::path path = dir / ("seed-" + std::to_string(seed) + ".pages");
  std::ofstream out(path);
  uint64_t at = rng() % pages;
  for (int n = 0, lines = 50 + static_cast<int>(rng() % 700); n < lines;) {
    const uint64_t len = 1 + rng() % 64;
    switch (rng() % 4) {
      case 0:  // forward
        for (uint64_t i = 0; i < len && n < lines; ++i, ++n) out << (at = (at + 1) % pages) << "\n";
        break;
      case 1:  // backward
        for (uint64_t i = 0; i < len && n < lines; ++i, ++n)
          out << (at = at ? at - 1 : pages - 1) << "\n";
        break;
      case 2:  // a random page
        out << (at = rng() % pages) << "\n";
        ++n;
        break;
      default:  // the same page again
        out << at << "\n";
        ++n;
    }
  }
  return path.string();
}

inline Gen generate(uint64_t seed) {
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
  set("model.engine", pick("pages", "runs"));
  set("kernel.profile", pick("6.9", "6.15", "6.18", "7.1", "7.4"));
  const std::string memory = pick("256MiB", "1GiB");
  set("machine.memory", memory);
  const bool limited = chance(60);
  if (limited) set("machine.memory_limit", pick("4MiB", "8MiB", "12MiB", "24MiB"));
  set("device.read_ahead_kb", pick("4", "32", "128", "512", "2048", "8192"));
  if (chance(30)) set("kernel.fault_around_bytes", pick("4096", "16384", "65536", "262144"));
  // Requests smaller than a window: fault-around maps pages whose reads are
  // still in flight, and later loads through their PTEs wait for them.
  if (chance(25)) set("device.max_sectors_kb", pick("4", "16", "64"));
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
    if (chance(15)) {
      set("access.pattern", "trace");
      set("access.trace_format", "pages");
      set("access.trace", write_trace(seed, mib * 256, rng));
      if (chance(30)) {
        set("access.method", "read");
        set("access.read_size", pick("4KiB", "64KiB"));
      } else if (chance(25)) {
        set("access.op", "write");
      }
    } else {
      pattern_keys("access.", false, mib);
    }
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
  if (chance(40)) {
    // A second CPU: kswapd reclaims beside the task when the pressure is
    // the machine's, not a cgroup's; a machine that leaves the cache 8 or
    // 16 MiB puts it under that pressure.
    set("machine.cpus", "2");
    if (!limited) {
      set("machine.kernel_reserved",
          memory == "1GiB" ? pick("1008MiB", "1016MiB") : pick("240MiB", "248MiB"));
    }
  }
  // A hypervisor that shadows the page tables: PTEs carry its mapping.
  if (chance(25)) set("cpu.shadow_fault_ns", pick("700", "14000"));
  // Reclaim's TLB flushes cost time (the count does not depend on it).
  if (chance(25)) set("cpu.tlb_flush_ns", pick("900", "60000"));
  return g;
}

// "20MiB" -> "10MiB", "1500" -> "750"; "" when there is nothing to halve.
inline std::string halved(const std::string& v) {
  size_t digits = 0;
  while (digits < v.size() && v[digits] >= '0' && v[digits] <= '9') ++digits;
  if (digits == 0 || (digits < v.size() && v[digits] == '.')) return "";
  const uint64_t n = std::stoull(v.substr(0, digits));
  if (n < 2) return "";
  return std::to_string(n / 2) + v.substr(digits);
}

// The smallest scenario derived from g that still fails (fails(g) is
// true): drop a key, a stream or a file, or halve a number, while the
// failure remains. Keys named in `keep` (prefixes) stay.
template <typename Fails>
Gen shrink(Gen g, Fails&& fails) {
  for (int round = 0; round < 50; ++round) {
    bool smaller = false;
    for (size_t i = 0; i < g.sets.size(); ++i) {
      if (g.sets[i].rfind("model.invariants=", 0) == 0) continue;
      Gen t = g;
      t.sets.erase(t.sets.begin() + static_cast<std::ptrdiff_t>(i));
      if (fails(t)) {
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
        if (fails(t)) {
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
      if (fails(t)) {
        g = std::move(t);
        smaller = true;
      }
    }
    if (!smaller) break;
  }
  return g;
}

}  // namespace faultline::testing
