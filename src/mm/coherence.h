// coherence.h — which cache lines move between CPUs: a count that needs no
// particular machine.
//
// Every cache line of the concurrent model that more than one CPU may touch
// (the VMA's three lines, the mm's mmap_lock line, the RSS counters, the
// split PTE locks, ...) is registered here under a group name. Each access
// by a logical CPU is classified the way a MESI-style protocol would:
//
//   miss     the CPU's copy is stale: the line was written by another CPU
//            since this CPU last touched it (a read or RFO that transfers
//            the line from another cache);
//   upgrade  a write to a line this CPU holds, while other CPUs hold copies
//            too (the invalidation the seed calls "the following inc/dec
//            made more expensive");
//   hit      anything else.
//
// The state per line is a version, bumped by every write, and the set of
// CPUs that read it since; each CPU remembers the version it last saw.
// Lines start clean in every cache (version 0, seen 0). With the
// deterministic interleavings of the concurrent engine the counts are exact
// and reproducible; with real threads they are approximate (each update is
// atomic, their composition is not).
//
// Simplified: no capacity or conflict misses, no prefetch, no false sharing
// beyond what the modelled layout puts on one line; up to 64 CPUs.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace faultline::mm {

using LineId = uint32_t;
inline constexpr LineId kNoLine = ~LineId{0};
inline constexpr unsigned kMaxCoherenceCpus = 64;

enum class LineOutcome : uint8_t { kHit, kMiss, kUpgrade };

struct LineGroupStats {
  std::string name;
  uint64_t lines = 0;
  uint64_t accesses = 0;
  uint64_t misses = 0;
  uint64_t upgrades = 0;
};

class CoherenceTracker {
 public:
  explicit CoherenceTracker(unsigned nr_cpus);
  CoherenceTracker(const CoherenceTracker&) = delete;
  CoherenceTracker& operator=(const CoherenceTracker&) = delete;

  // Registers one cache line in `group` ("vma.line2"). All lines are
  // registered before the first access.
  LineId add_line(std::string_view group);
  // Registers n consecutive lines; returns the first id.
  LineId add_lines(std::string_view group, unsigned n);

  // One access by `cpu`. Safe to call from several threads at once, each
  // with its own cpu number.
  LineOutcome access(unsigned cpu, LineId line, bool write);

  unsigned nr_cpus() const { return nr_cpus_; }
  // Per group, in registration order, summed over CPUs. Call when no CPU runs.
  std::vector<LineGroupStats> groups() const;
  LineGroupStats total() const;

 private:
  struct alignas(64) Line {
    std::atomic<uint64_t> version{0};
    std::atomic<uint64_t> sharers{0};  // CPUs holding a copy of `version`
    uint32_t group = 0;
  };
  // One CPU's view: the version it last saw per line, its counts per group.
  // Touched only by that CPU while running, so it needs no atomics.
  struct alignas(64) CpuView {
    std::vector<uint64_t> seen;
    std::vector<uint64_t> accesses, misses, upgrades;  // per group
  };

  unsigned nr_cpus_;
  std::deque<Line> lines_;  // a deque: lines never move once registered
  std::vector<std::string> group_names_;
  std::vector<uint64_t> group_lines_;
  std::unique_ptr<CpuView[]> cpus_;
};

// The CPU a piece of model code runs on, and the tally of the step it is in.
struct CpuCtx {
  unsigned cpu = 0;
  CoherenceTracker* coh = nullptr;  // null: lines are not tracked
  // Outcomes of the current step (the engine turns them into time).
  uint32_t step_misses = 0;
  uint32_t step_upgrades = 0;

  void touch(LineId line, bool write) {
    if (!coh || line == kNoLine) return;
    switch (coh->access(cpu, line, write)) {
      case LineOutcome::kMiss:
        ++step_misses;
        break;
      case LineOutcome::kUpgrade:
        ++step_upgrades;
        break;
      case LineOutcome::kHit:
        break;
    }
  }
  void read(LineId line) { touch(line, false); }
  void write(LineId line) { touch(line, true); }
};

}  // namespace faultline::mm
