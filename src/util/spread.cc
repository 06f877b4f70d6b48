#include "util/spread.h"

#include <algorithm>

namespace faultline {

Spread spread_of(std::vector<double> values) {
  Spread s;
  if (values.empty()) return s;
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  s.min = values.front();
  s.max = values.back();
  s.median = n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
  return s;
}

std::vector<std::vector<size_t>> split_by_factor(const std::vector<double>& values, double factor) {
  std::vector<std::vector<size_t>> groups;
  if (values.empty()) return groups;
  std::vector<size_t> order(values.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return values[a] < values[b]; });
  const double floor = values[order.back()] / 100;
  groups.push_back({order.front()});
  for (size_t k = 1; k < order.size(); ++k) {
    const double lo = values[order[k - 1]], hi = values[order[k]];
    if (hi > factor * lo && hi - lo > floor) groups.emplace_back();
    groups.back().push_back(order[k]);
  }
  return groups;
}

}  // namespace faultline
