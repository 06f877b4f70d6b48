// spread.h — the median, minimum and maximum of repeated measurements, as
// the probe reports each counter of its repetitions.
#pragma once

#include <vector>

namespace faultline {

struct Spread {
  double median = 0, min = 0, max = 0;
};

// The spread of values (taken by value: it sorts them); all zero when empty.
// An even count has the mean of the two middle values as its median.
Spread spread_of(std::vector<double> values);

}  // namespace faultline
