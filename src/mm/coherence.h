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
// Topology: CPUs may be grouped in domains, the CPUs behind one last-level
// cache (an AMD CCD). A miss is near when a CPU of the requester's domain
// holds the line's current version (its L3 has it), far otherwise; an
// upgrade is near when every other copy sits in the requester's domain.
// With timing on (the deterministic interleavings), a line also has a time
// until which it is busy moving to its last requester: the next transfer of
// the same line starts after it (requests to one line are served one at a
// time), so lines that bounce between many CPUs queue. A read miss keeps the
// line busy for only part of its transfer (CpuCtx::read_hold).
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

#include "util/random.h"

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
  uint64_t far = 0;  // misses and upgrades that crossed domains
};

class CoherenceTracker {
 public:
  // domains: the domain of each CPU (empty: all in one).
  explicit CoherenceTracker(unsigned nr_cpus, const std::vector<uint32_t>& domains = {});
  CoherenceTracker(const CoherenceTracker&) = delete;
  CoherenceTracker& operator=(const CoherenceTracker&) = delete;

  // Registers one cache line in `group` ("vma.line2"). All lines are
  // registered before the first access.
  LineId add_line(std::string_view group);
  // Registers n consecutive lines; returns the first id.
  LineId add_lines(std::string_view group, unsigned n);

  // One access by `cpu`; *far (if given) says whether a miss or upgrade
  // crossed domains. Safe to call from several threads at once, each with
  // its own cpu number.
  LineOutcome access(unsigned cpu, LineId line, bool write, bool* far = nullptr);
  // A transfer of `line` asked for at time `at_ns` that takes `hold_ns`:
  // returns when it starts (at_ns, or when the line's previous transfer
  // ends). Deterministic interleavings only (not thread-safe).
  double occupy(LineId line, double at_ns, double hold_ns);

  unsigned nr_cpus() const { return nr_cpus_; }
  // Per group, in registration order, summed over CPUs. Call when no CPU runs.
  std::vector<LineGroupStats> groups() const;
  LineGroupStats total() const;

 private:
  struct alignas(64) Line {
    std::atomic<uint64_t> version{0};
    std::atomic<uint64_t> sharers{0};  // CPUs holding a copy of `version`
    uint32_t group = 0;
    double free_at_ns = 0;  // the end of its last transfer (occupy)
  };
  // One CPU's view: the version it last saw per line, its counts per group.
  // Touched only by that CPU while running, so it needs no atomics.
  struct alignas(64) CpuView {
    std::vector<uint64_t> seen;
    std::vector<uint64_t> accesses, misses, upgrades, far;  // per group
    uint64_t domain_mask = 0;  // the CPUs of its domain, itself included
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
  // What a transfer costs (ns), within the CPU's domain and across.
  double near_ns = 0;
  double far_ns = 0;
  // The part of a read miss's cost during which the line serves no other
  // request (smp.line_read_hold); a write holds it for the whole cost.
  double read_hold = 1;
  // With timing on: each transfer costs its cost times a factor drawn from
  // rng, uniform with mean 1 and coefficient of variation `spread`
  // (smp.line_spread; 0: exactly its cost).
  double spread = 0;
  Rng rng{0, 0};
  // Timing of transfers against each other (CoherenceTracker::occupy):
  // off in the interleavings without a common clock.
  bool timed = false;
  double now_ns = 0;  // when the current step started
  // Outcomes of the current step, and the time its transfers took,
  // waiting for the line included.
  uint32_t step_misses = 0;
  uint32_t step_upgrades = 0;
  double step_transfer_ns = 0;

  void begin_step(double now) {
    now_ns = now;
    step_misses = step_upgrades = 0;
    step_transfer_ns = 0;
  }
  void touch(LineId line, bool write) {
    if (!coh || line == kNoLine) return;
    bool far = false;
    switch (coh->access(cpu, line, write, &far)) {
      case LineOutcome::kMiss:
        ++step_misses;
        break;
      case LineOutcome::kUpgrade:
        ++step_upgrades;
        break;
      case LineOutcome::kHit:
        return;
    }
    double cost = far ? far_ns : near_ns;
    if (!timed) {
      step_transfer_ns += cost;
      return;
    }
    if (spread > 0) {
      // Uniform on [1 - a, 1 + a], whose coefficient of variation is a / sqrt(3).
      const double u = static_cast<double>(rng.next() >> 11) * 0x1.0p-53;
      cost *= 1 + spread * 1.7320508075688772 * (2 * u - 1);
    }
    const double asked = now_ns + step_transfer_ns;
    const double start = coh->occupy(line, asked, write ? cost : cost * read_hold);
    step_transfer_ns += start - asked + cost;
  }
  void read(LineId line) { touch(line, false); }
  void write(LineId line) { touch(line, true); }
};

}  // namespace faultline::mm
