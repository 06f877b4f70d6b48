// lru_test.cc — LruList, the LRU list kept as runs, against the list it
// stands for: one entry per folio in a deque.
#include <gtest/gtest.h>

#include <deque>
#include <random>
#include <vector>

#include "mm/mm.h"

namespace faultline::mm {
namespace {

// The reference: one entry per push, numbered as LruList numbers them.
struct PerFolioList {
  explicit PerFolioList(uint32_t first_seq) : next_seq(first_seq) {}
  uint32_t push_front(uint32_t ino, pgoff_t index) {
    const uint32_t seq = next_seq;
    next_seq += 2;
    if (next_seq == 0) next_seq = 2;
    entries.push_front({ino, index, seq});
    return seq;
  }
  bool pop_back(LruEntry* e) {
    if (entries.empty()) return false;
    *e = entries.back();
    entries.pop_back();
    return true;
  }
  std::deque<LruEntry> entries;
  uint32_t next_seq;
};

bool same(const LruEntry& a, const LruEntry& b) {
  return a.ino == b.ino && a.index == b.index && a.seq == b.seq;
}

std::vector<LruEntry> all(const LruList& l) {
  std::vector<LruEntry> v;
  l.for_each([&](const LruEntry& e) { v.push_back(e); });
  return v;
}

TEST(LruList, AWindowPushedInOrderIsOneRun) {
  LruList l(1);
  for (pgoff_t i = 100; i < 2148; ++i) l.push_front(3, i, 0);
  EXPECT_EQ(l.nr_runs(), 1u);
  // Order-2 folios at consecutive heads, then a gap: two runs more.
  for (pgoff_t i = 4096; i < 4096 + 64; i += 4) l.push_front(3, i, 2);
  l.push_front(3, 9000, 0);
  EXPECT_EQ(l.nr_runs(), 3u);
  LruEntry e;
  ASSERT_TRUE(l.pop_back(&e));
  EXPECT_EQ(e.index, 100u);  // the oldest
  EXPECT_EQ(e.seq, 1u);
  ASSERT_TRUE(l.pop_back(&e));
  EXPECT_EQ(e.index, 101u);
  EXPECT_EQ(e.seq, 3u);
}

TEST(LruList, TheOtherInodeOrAnotherPushBetweenStartsARun) {
  LruList l(2);
  l.push_front(1, 10, 0);
  l.push_front(2, 11, 0);  // another inode
  l.push_front(2, 12, 0);
  l.push_front(2, 14, 0);  // not the next index
  l.push_front(2, 13, 0);  // backwards
  EXPECT_EQ(l.nr_runs(), 4u);
  const std::vector<LruEntry> v = all(l);
  ASSERT_EQ(v.size(), 5u);
  EXPECT_EQ(v.front().index, 13u);  // head first
  EXPECT_EQ(v.back().index, 10u);
}

TEST(LruList, RandomPushesAndPopsMatchTheOneEntryPerFolioList) {
  for (uint64_t seed = 1; seed <= 200; ++seed) {
    std::mt19937_64 rng(seed);
    const uint32_t first = 1 + static_cast<uint32_t>(seed % 2);
    LruList runs(first);
    PerFolioList ref(first);
    pgoff_t next = rng() % 64;
    for (int step = 0; step < 2000; ++step) {
      const uint64_t what = rng() % 10;
      if (what < 6) {
        // Mostly windows in order, now and then a jump or another inode.
        const unsigned order = rng() % 8 == 0 ? 2 : 0;
        if (rng() % 16 == 0) next = rng() % 4096;
        const uint32_t ino = rng() % 20 == 0 ? 1u : 0u;
        next = round_down(next, pgoff_t{1} << order);
        const uint32_t a = runs.push_front(ino, next, order);
        const uint32_t b = ref.push_front(ino, next);
        ASSERT_EQ(a, b) << "seed " << seed << " step " << step;
        next += pgoff_t{1} << order;
      } else {
        LruEntry a{}, b{};
        const bool ra = runs.pop_back(&a);
        const bool rb = ref.pop_back(&b);
        ASSERT_EQ(ra, rb) << "seed " << seed << " step " << step;
        if (ra) {
          ASSERT_TRUE(same(a, b)) << "seed " << seed << " step " << step;
        }
      }
      ASSERT_EQ(runs.empty(), ref.entries.empty());
    }
    const std::vector<LruEntry> v = all(runs);
    ASSERT_EQ(v.size(), ref.entries.size()) << "seed " << seed;
    for (size_t i = 0; i < v.size(); ++i) ASSERT_TRUE(same(v[i], ref.entries[i])) << seed;
    EXPECT_LE(runs.nr_runs(), ref.entries.size());
  }
}

TEST(LruList, SequenceNumbersSkipZeroWhenTheyWrap) {
  LruList l(0xfffffffe);  // the even space, at its last number
  ASSERT_EQ(l.next_seq(), 0xfffffffeu);
  EXPECT_EQ(l.push_front(0, 5, 0), 0xfffffffeu);
  EXPECT_EQ(l.push_front(0, 6, 0), 2u);  // never 0: that marks a folio off the lists
  EXPECT_EQ(l.nr_runs(), 2u);
}

}  // namespace
}  // namespace faultline::mm
