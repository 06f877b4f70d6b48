#include "mm/coherence.h"

#include "util/check.h"

namespace faultline::mm {

CoherenceTracker::CoherenceTracker(unsigned nr_cpus)
    : nr_cpus_(nr_cpus), cpus_(std::make_unique<CpuView[]>(nr_cpus)) {
  FAULTLINE_CHECK(nr_cpus >= 1 && nr_cpus <= kMaxCoherenceCpus);
}

LineId CoherenceTracker::add_line(std::string_view group) {
  uint32_t g = 0;
  while (g < group_names_.size() && group_names_[g] != group) ++g;
  if (g == group_names_.size()) {
    group_names_.emplace_back(group);
    group_lines_.push_back(0);
    for (unsigned c = 0; c < nr_cpus_; ++c) {
      cpus_[c].accesses.push_back(0);
      cpus_[c].misses.push_back(0);
      cpus_[c].upgrades.push_back(0);
    }
  }
  ++group_lines_[g];
  lines_.emplace_back();
  lines_.back().group = g;
  for (unsigned c = 0; c < nr_cpus_; ++c) cpus_[c].seen.push_back(0);
  return static_cast<LineId>(lines_.size() - 1);
}

LineId CoherenceTracker::add_lines(std::string_view group, unsigned n) {
  FAULTLINE_CHECK(n > 0);
  const LineId first = add_line(group);
  for (unsigned i = 1; i < n; ++i) add_line(group);
  return first;
}

LineOutcome CoherenceTracker::access(unsigned cpu, LineId id, bool write) {
  FAULTLINE_DCHECK(cpu < nr_cpus_ && id < lines_.size());
  Line& line = lines_[id];
  CpuView& view = cpus_[cpu];
  const uint64_t me = uint64_t{1} << cpu;
  const uint32_t g = line.group;
  ++view.accesses[g];
  uint64_t v = line.version.load(std::memory_order_acquire);
  const bool valid = view.seen[id] == v;
  LineOutcome out = LineOutcome::kHit;
  if (!write) {
    if (!valid) out = LineOutcome::kMiss;
    line.sharers.fetch_or(me, std::memory_order_acq_rel);
  } else {
    if (!valid) {
      out = LineOutcome::kMiss;
    } else if (line.sharers.load(std::memory_order_acquire) & ~me) {
      out = LineOutcome::kUpgrade;
    }
    v = line.version.fetch_add(1, std::memory_order_acq_rel) + 1;
    line.sharers.store(me, std::memory_order_release);
  }
  view.seen[id] = v;
  if (out == LineOutcome::kMiss) ++view.misses[g];
  if (out == LineOutcome::kUpgrade) ++view.upgrades[g];
  return out;
}

std::vector<LineGroupStats> CoherenceTracker::groups() const {
  std::vector<LineGroupStats> out(group_names_.size());
  for (size_t g = 0; g < out.size(); ++g) {
    out[g].name = group_names_[g];
    out[g].lines = group_lines_[g];
    for (unsigned c = 0; c < nr_cpus_; ++c) {
      out[g].accesses += cpus_[c].accesses[g];
      out[g].misses += cpus_[c].misses[g];
      out[g].upgrades += cpus_[c].upgrades[g];
    }
  }
  return out;
}

LineGroupStats CoherenceTracker::total() const {
  LineGroupStats t;
  t.name = "total";
  for (const LineGroupStats& g : groups()) {
    t.lines += g.lines;
    t.accesses += g.accesses;
    t.misses += g.misses;
    t.upgrades += g.upgrades;
  }
  return t;
}

}  // namespace faultline::mm
