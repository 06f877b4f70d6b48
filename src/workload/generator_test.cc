// generator_test.cc — access streams: deterministic, the right pages in the
// right order, the right count, and bad specs rejected with the key named.
#include "workload/generator.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <set>
#include <vector>

namespace faultline::workload {
namespace {

AccessSpec spec(Pattern pattern, uint64_t pages, uint64_t count, uint64_t seed = 1) {
  AccessSpec s;
  s.pattern = pattern;
  s.pages = pages;
  s.count = count;
  s.seed = seed;
  return s;
}

std::vector<uint64_t> all(const AccessSpec& s) {
  auto r = generate_all(s);
  EXPECT_TRUE(r.ok()) << r.status().message();
  return r.ok() ? *r : std::vector<uint64_t>{};
}

TEST(Generator, SameSeedGivesTheSameStream) {
  const AccessSpec s = spec(Pattern::kRandom, 5'242'880, 10'000, 7);
  EXPECT_EQ(all(s), all(s));
}

TEST(Generator, DifferentSeedsGiveDifferentStreams) {
  const auto a = all(spec(Pattern::kRandom, 5'242'880, 1000, 1));
  const auto b = all(spec(Pattern::kRandom, 5'242'880, 1000, 2));
  ASSERT_EQ(a.size(), b.size());
  size_t same = 0;
  for (size_t i = 0; i < a.size(); ++i) same += a[i] == b[i];
  EXPECT_LT(same, 5u);
}

// The stream does not depend on how the caller batches it.
TEST(Generator, StreamDoesNotDependOnBatchSize) {
  const AccessSpec s = spec(Pattern::kRandom, 1000, 777, 3);
  auto gen = make_generator(s);
  ASSERT_TRUE(gen.ok());
  std::vector<uint64_t> got;
  std::array<uint64_t, 10> buf;
  while (const size_t n = (*gen)->next(buf)) got.insert(got.end(), buf.begin(), buf.begin() + n);
  EXPECT_EQ(got, all(s));
}

TEST(Generator, RandomStaysInsideTheMappingAndSpreads) {
  const auto pages = all(spec(Pattern::kRandom, 100, 10'000, 5));
  ASSERT_EQ(pages.size(), 10'000u);
  EXPECT_LT(*std::max_element(pages.begin(), pages.end()), 100u);
  EXPECT_EQ(std::set<uint64_t>(pages.begin(), pages.end()).size(), 100u);
}

TEST(Generator, CountIsExact) {
  for (const Pattern p : {Pattern::kRandom, Pattern::kSequential, Pattern::kStride}) {
    SCOPED_TRACE(enum_name(p));
    AccessSpec s = spec(p, 64, 1000);
    s.stride = 3;
    auto gen = make_generator(s);
    ASSERT_TRUE(gen.ok());
    EXPECT_EQ((*gen)->total(), 1000u);
    EXPECT_EQ(all(s).size(), 1000u);
    std::array<uint64_t, 16> buf;
    while ((*gen)->next(buf) > 0) {
    }
    EXPECT_EQ((*gen)->next(buf), 0u);  // exhausted stays exhausted
  }
}

TEST(Generator, SequentialStartsAtStartAndWrapsAround) {
  AccessSpec s = spec(Pattern::kSequential, 5, 8);
  s.start = 3;
  EXPECT_EQ(all(s), (std::vector<uint64_t>{3, 4, 0, 1, 2, 3, 4, 0}));
}

TEST(Generator, StrideStepsModuloTheMapping) {
  AccessSpec s = spec(Pattern::kStride, 10, 6);
  s.stride = 4;
  s.start = 1;
  EXPECT_EQ(all(s), (std::vector<uint64_t>{1, 5, 9, 3, 7, 1}));
}

// Seed 2's shape: (i x 1021) mod N.
TEST(Generator, StrideOfSeedTwo) {
  AccessSpec s = spec(Pattern::kStride, 5'242'880, 6000);
  s.stride = 1021;
  const auto pages = all(s);
  for (uint64_t i = 0; i < pages.size(); ++i) EXPECT_EQ(pages[i], (i * 1021) % 5'242'880) << i;
}

TEST(Generator, RejectsZeroPages) {
  auto r = make_generator(spec(Pattern::kRandom, 0, 10));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Status::Code::kInvalidArgument);
}

TEST(Generator, RejectsZeroStride) {
  AccessSpec s = spec(Pattern::kStride, 10, 10);
  s.stride = 0;
  auto r = make_generator(s);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("access.stride"), std::string::npos);
  EXPECT_FALSE(generate_all(s).ok());
}

// Every pattern of the name table has a generator; names are unique.
TEST(Generator, EveryPatternOfTheTableGenerates) {
  std::set<std::string_view> names;
  for (const auto& [pattern, name] : enum_names(Pattern{})) {
    EXPECT_TRUE(names.insert(name).second) << name;
    EXPECT_EQ(parse_enum<Pattern>(name), pattern) << name;
    if (pattern == Pattern::kTrace) continue;  // needs a file: trace_test.cc
    EXPECT_TRUE(make_generator(spec(pattern, 10, 1)).ok()) << name;
  }
  EXPECT_EQ(names.size(), enum_count<Pattern>());
  EXPECT_FALSE(parse_enum<Pattern>("zipf").has_value());
  // A trace without a file is rejected, naming the key.
  auto r = make_generator(spec(Pattern::kTrace, 10, 1));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("access.trace"), std::string::npos);
}

}  // namespace
}  // namespace faultline::workload
