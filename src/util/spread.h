// spread.h — the median, minimum and maximum of repeated measurements, as
// the probe reports each counter of its repetitions.
#pragma once

#include <cstddef>
#include <vector>

namespace faultline {

struct Spread {
  double median = 0, min = 0, max = 0;
  // (max - min) / median: how far apart the repetitions fell; 0 when the
  // median is 0.
  double relative() const { return median != 0 ? (max - min) / median : 0; }
};

// The spread of values (taken by value: it sorts them); all zero when empty.
// An even count has the mean of the two middle values as its median.
Spread spread_of(std::vector<double> values);

// The values as groups of indices, ordered by value, split wherever one
// value is more than `factor` times the one below it and apart from it by
// more than a hundredth of the largest (so 0 against a few pages is one
// group): outcomes that fall on different sides of a threshold. One group
// when nothing splits; none when empty.
std::vector<std::vector<size_t>> split_by_factor(const std::vector<double>& values, double factor);

}  // namespace faultline
