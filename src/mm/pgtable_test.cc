// pgtable_test.cc — the PTE table's walks against a dense array of PTEs,
// in both representations, with the runs engine's memo of recent walks.
#include "mm/pgtable.h"

#include <gtest/gtest.h>

#include <random>
#include <tuple>
#include <vector>

namespace faultline::mm {
namespace {

using Call = std::tuple<uint64_t, uint64_t, uint8_t>;  // (first, last, pte)

// What a walk of [first, last) reports, stopping after `stop` calls: the
// maximal stretches of one non-zero PTE (runs) or the pages one by one.
std::vector<Call> expected(const std::vector<uint8_t>& dense, uint64_t first, uint64_t last,
                           bool runs, size_t stop) {
  std::vector<Call> out;
  for (uint64_t v = first; v < last && out.size() < stop;) {
    if (!dense[v]) {
      ++v;
      continue;
    }
    uint64_t e = v + 1;
    if (runs) {
      while (e < last && dense[e] == dense[v]) ++e;
    }
    out.emplace_back(v, e, dense[v]);
    v = e;
  }
  return out;
}

std::vector<Call> walk(const PteTable& t, uint64_t first, uint64_t last, size_t stop) {
  std::vector<Call> out;
  t.for_each_set_while(first, last, [&](uint64_t a, uint64_t b, uint8_t pte) {
    out.emplace_back(a, b, pte);
    return out.size() < stop;
  });
  return out;
}

class PteTableWalks : public ::testing::TestWithParam<ModelEngine> {};

TEST_P(PteTableWalks, MatchADenseArrayWhetherStoppedOrRepeated) {
  constexpr uint64_t kPages = 2048;
  const bool runs = GetParam() == ModelEngine::kRuns;
  std::mt19937_64 rng(7);
  auto below = [&rng](uint64_t n) {
    return std::uniform_int_distribution<uint64_t>(0, n - 1)(rng);
  };
  PteTable t(kPages, GetParam());
  std::vector<uint8_t> dense(kPages, 0);
  const uint8_t values[] = {0, kPtePresent, kPtePresent | kPteYoung,
                            kPtePresent | kPteYoung | kPteWrite};
  for (int step = 0; step < 4000; ++step) {
    const uint64_t first = below(kPages);
    const uint64_t n = 1 + below(std::min<uint64_t>(64, kPages - first));
    switch (below(4)) {
      case 0: {  // a fault-around block
        const uint8_t pte = values[below(4)];
        t.set_range(first, n, pte);
        std::fill(dense.begin() + first, dense.begin() + first + n, pte);
        break;
      }
      case 1: {  // one PTE
        const uint8_t pte = values[below(4)];
        t.set(first, pte);
        dense[first] = pte;
        break;
      }
      case 2: {  // reclaim's clearing of the young bits
        auto old = [](uint8_t p) { return static_cast<uint8_t>(p & ~kPteYoung); };
        t.transform(first, first + n, old);
        for (uint64_t v = first; v < first + n; ++v) dense[v] = old(dense[v]);
        break;
      }
      default:
        break;  // walks only: the memo stays
    }
    // Two ranges asked in turn, each a few times, stopped after different
    // numbers of calls: later walks may be answered from the memo.
    const uint64_t lo[2] = {below(kPages), below(kPages)};
    uint64_t hi[2];
    for (int i = 0; i < 2; ++i) hi[i] = lo[i] + 1 + below(std::min<uint64_t>(200, kPages - lo[i]));
    for (int rep = 0; rep < 3; ++rep) {
      for (int i = 0; i < 2; ++i) {
        const size_t stop = rep == 1 ? SIZE_MAX : 1 + below(8);
        ASSERT_EQ(walk(t, lo[i], hi[i], stop), expected(dense, lo[i], hi[i], runs, stop))
            << "step " << step << " range [" << lo[i] << ", " << hi[i] << ") stop " << stop;
      }
    }
    std::vector<Call> all;
    t.for_each_set(lo[0], hi[0],
                   [&](uint64_t a, uint64_t b, uint8_t pte) { all.emplace_back(a, b, pte); });
    ASSERT_EQ(all, expected(dense, lo[0], hi[0], runs, SIZE_MAX)) << "step " << step;
  }
}

INSTANTIATE_TEST_SUITE_P(Engines, PteTableWalks,
                         ::testing::Values(ModelEngine::kPages, ModelEngine::kRuns),
                         [](const ::testing::TestParamInfo<ModelEngine>& engine) {
                           return engine.param == ModelEngine::kRuns ? "runs" : "pages";
                         });

}  // namespace
}  // namespace faultline::mm
