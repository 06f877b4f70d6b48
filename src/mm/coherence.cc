#include "mm/coherence.h"

#include <algorithm>

#include "util/check.h"

namespace faultline::mm {

CoherenceTracker::CoherenceTracker(unsigned nr_cpus, const std::vector<uint32_t>& domains)
    : nr_cpus_(nr_cpus), cpus_(std::make_unique<CpuView[]>(nr_cpus)) {
  FAULTLINE_CHECK(nr_cpus >= 1 && nr_cpus <= kMaxCoherenceCpus);
  FAULTLINE_CHECK(domains.empty() || domains.size() == nr_cpus);
  for (unsigned c = 0; c < nr_cpus; ++c) {
    for (unsigned o = 0; o < nr_cpus; ++o) {
      if (domains.empty() || domains[o] == domains[c]) cpus_[c].domain_mask |= uint64_t{1} << o;
    }
  }
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
      cpus_[c].far.push_back(0);
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

LineOutcome CoherenceTracker::access(unsigned cpu, LineId id, bool write, bool* far) {
  FAULTLINE_DCHECK(cpu < nr_cpus_ && id < lines_.size());
  Line& line = lines_[id];
  CpuView& view = cpus_[cpu];
  const uint64_t me = uint64_t{1} << cpu;
  const uint32_t g = line.group;
  ++view.accesses[g];
  uint64_t v = line.version.load(std::memory_order_acquire);
  const bool valid = view.seen[id] == v;
  LineOutcome out = LineOutcome::kHit;
  bool crossed = false;
  if (!write) {
    const uint64_t holders = line.sharers.fetch_or(me, std::memory_order_acq_rel);
    if (!valid) {
      out = LineOutcome::kMiss;
      crossed = !(holders & view.domain_mask);  // no copy in this domain's cache
    }
  } else {
    const uint64_t holders = line.sharers.load(std::memory_order_acquire);
    if (!valid) {
      out = LineOutcome::kMiss;
      crossed = !(holders & view.domain_mask);
    } else if (holders & ~me) {
      out = LineOutcome::kUpgrade;
      crossed = (holders & ~view.domain_mask) != 0;  // a copy outside the domain
    }
    v = line.version.fetch_add(1, std::memory_order_acq_rel) + 1;
    line.sharers.store(me, std::memory_order_release);
  }
  view.seen[id] = v;
  if (out == LineOutcome::kMiss) ++view.misses[g];
  if (out == LineOutcome::kUpgrade) ++view.upgrades[g];
  if (crossed) ++view.far[g];
  if (far) *far = crossed;
  return out;
}

double CoherenceTracker::occupy(LineId id, double at_ns, double hold_ns) {
  Line& line = lines_[id];
  const double start = std::max(at_ns, line.free_at_ns);
  line.free_at_ns = start + hold_ns;
  return start;
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
      out[g].far += cpus_[c].far[g];
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
    t.far += g.far;
  }
  return t;
}

}  // namespace faultline::mm
