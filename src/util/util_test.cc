// util_test.cc — Status context, the name tables of enums, Spread, pids,
// the sparse array and the text readers.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <vector>

#include "util/enum_names.h"
#include "util/node_arena.h"
#include "util/process.h"
#include "util/random.h"
#include "util/run_map.h"
#include "util/sparse_array.h"
#include "util/spread.h"
#include "util/status.h"
#include "util/text.h"

namespace faultline {
namespace {

// The sparse array reads as a dense one under any sequence of writes.
TEST(SparseArray, ReadsAsADenseArray) {
  struct Slot {
    uint16_t a = 0;
    uint32_t b = 0;
    bool operator==(const Slot&) const = default;
  };
  for (const uint64_t size :
       {uint64_t{1}, uint64_t{63}, uint64_t{64}, uint64_t{1000}, uint64_t{4097}}) {
    util::SparseArray<Slot, 6> sparse(size);
    std::vector<Slot> dense(size);
    Rng rng(size, 1);
    for (int op = 0; op < 2000; ++op) {
      const uint64_t i = rng.below(size);
      if (rng.below(3) == 0) {
        const Slot v{static_cast<uint16_t>(rng.below(7)), static_cast<uint32_t>(rng.below(1000))};
        sparse.mut(i) = v;
        dense[i] = v;
      }
      ASSERT_EQ(sparse[i], dense[i]) << "size " << size << " index " << i;
      // next_written never skips a written value.
      const uint64_t n = sparse.next_written(i);
      ASSERT_GE(n, i);
      ASSERT_LE(n, size);
      for (uint64_t j = i; j < n; ++j) ASSERT_EQ(dense[j], Slot{}) << j;
      if (n < size) {
        ASSERT_NE(sparse.leaf(n), nullptr);
      }
    }
    uint64_t seen = 0, leaves = 0;
    sparse.for_each_leaf([&](uint64_t first, const Slot* leaf, uint64_t count) {
      ++leaves;
      EXPECT_LE(first + count, size);
      for (uint64_t j = 0; j < count; ++j, ++seen) {
        ASSERT_EQ(leaf[j], dense[first + j]);
      }
    });
    for (uint64_t j = 0; j < size; ++j) ASSERT_EQ(sparse[j], dense[j]);
    EXPECT_EQ(leaves, sparse.nr_leaves());
    EXPECT_LE(seen, size);
  }
}

// The run map reads as a dense array under any sequence of assignments,
// updates and transforms, and holds exactly one run per maximal stretch of
// one value.
TEST(RunMap, ReadsAsADenseArrayAndMergesEqualNeighbours) {
  for (const uint64_t size : {uint64_t{1}, uint64_t{17}, uint64_t{300}}) {
    util::RunMap<uint8_t> runs;
    std::vector<uint8_t> dense(size);
    Rng rng(size, 2);
    for (int op = 0; op < 20000; ++op) {
      const uint64_t a = rng.below(size), b = a + rng.below(size - a + 1);
      const auto v = static_cast<uint8_t>(rng.below(4));
      switch (rng.below(4)) {
        case 0: {
          const uint64_t had = static_cast<uint64_t>(std::count_if(
              dense.begin() + static_cast<std::ptrdiff_t>(a),
              dense.begin() + static_cast<std::ptrdiff_t>(b), [](uint8_t x) { return x != 0; }));
          ASSERT_EQ(runs.assign(a, b, v), had);
          for (uint64_t i = a; i < b; ++i) dense[i] = v;
          break;
        }
        case 1:
          runs.set(a, v);
          dense[a] = v;
          break;
        case 2: {
          // A read-modify-write of one index (f(0) is called too).
          auto f = [v](uint8_t x) { return static_cast<uint8_t>(x ^ v); };
          ASSERT_EQ(runs.update(a, f), dense[a]);
          dense[a] = f(dense[a]);
          break;
        }
        default: {
          auto f = [](uint8_t x) { return static_cast<uint8_t>((x + 1) % 4); };
          runs.transform(a, b, f);
          for (uint64_t i = a; i < b; ++i) dense[i] = dense[i] ? f(dense[i]) : 0;
        }
      }
      // Equal neighbours are merged after every operation.
      uint64_t maximal = 0;
      for (uint64_t j = 0; j < size; ++j)
        maximal += dense[j] && (j == 0 || dense[j - 1] != dense[j]);
      ASSERT_EQ(runs.nr_runs(), maximal) << "size " << size << " op " << op;
      const uint64_t i = rng.below(size);
      ASSERT_EQ(runs.get(i), dense[i]) << "size " << size << " op " << op;
      uint64_t next = i;
      while (next < size && !dense[next]) ++next;
      ASSERT_EQ(std::min(runs.next_set(i), size), next);
      // for_each_while stops after the first run whose value is 3: it has
      // seen exactly the runs of [i, size) up to the first page holding 3.
      uint64_t seen = 0, stop = size;
      runs.for_each_while(i, size, [&](uint64_t s, uint64_t e, uint8_t x) {
        seen += e - s;
        if (x == 3) stop = s;
        return x != 3;
      });
      uint64_t want = 0, three = i;
      while (three < size && dense[three] != 3) want += dense[three++] != 0;
      if (three < size) {
        while (three < size && dense[three] == 3) ++three, ++want;
      }
      ASSERT_EQ(seen, want) << "size " << size << " op " << op;
      ASSERT_EQ(stop == size, std::find(dense.begin() + static_cast<std::ptrdiff_t>(i), dense.end(),
                                        3) == dense.end());
    }
    uint64_t expected_runs = 0;
    for (uint64_t i = 0; i < size; ++i) {
      ASSERT_EQ(runs.get(i), dense[i]);
      if (dense[i] && (i == 0 || dense[i - 1] != dense[i])) ++expected_runs;
    }
    EXPECT_EQ(runs.nr_runs(), expected_runs);
    uint64_t covered = 0;
    runs.for_each(0, size, [&](uint64_t s, uint64_t e, uint8_t v) {
      for (uint64_t j = s; j < e; ++j) EXPECT_EQ(dense[j], v);
      covered += e - s;
    });
    EXPECT_EQ(covered, static_cast<uint64_t>(std::count_if(dense.begin(), dense.end(),
                                                           [](uint8_t x) { return x != 0; })));
  }
}

TEST(RunMap, CopiesAndMovesOwnTheirRuns) {
  util::RunMap<uint8_t> a;
  for (uint64_t i = 0; i < 5000; ++i) a.assign(i * 4, i * 4 + 2, static_cast<uint8_t>(1 + i % 3));
  util::RunMap<uint8_t> b(a);  // a copy: its own nodes
  a.assign(0, 20000, 0);
  EXPECT_EQ(a.nr_runs(), 0u);
  ASSERT_EQ(b.nr_runs(), 5000u);
  util::RunMap<uint8_t> c(std::move(b));
  b = util::RunMap<uint8_t>();  // the moved-from map is usable again
  b.set(7, 2);
  EXPECT_EQ(b.nr_runs(), 1u);
  {
    util::RunMap<uint8_t> d;
    d.set(3, 1);
    c = std::move(d);  // what c held dies with d
  }
  EXPECT_EQ(c.get(3), 1);
  EXPECT_EQ(c.nr_runs(), 1u);
  b = c;
  c.set(3, 0);
  EXPECT_EQ(b.get(3), 1);
}

TEST(NodeArena, TakesHugeBlocksPastItsFirstTwoMegabytes) {
  util::NodeArena arena;
  constexpr size_t kNode = 1536;
  std::vector<char*> pieces;
  for (int i = 0; i < 5000; ++i) {  // 7.3 MiB of nodes
    auto* p = static_cast<char*>(arena.allocate(kNode));
    ASSERT_EQ(reinterpret_cast<uintptr_t>(p) % util::NodeArena::kGrain, 0u);
    std::fill(p, p + kNode, static_cast<char>(i));
    pieces.push_back(p);
  }
  for (int i = 0; i < 5000; ++i) ASSERT_EQ(pieces[i][kNode - 1], static_cast<char>(i));
  // 2 MiB from malloc, then 5.3 MiB in blocks of 2 MiB.
  EXPECT_EQ(arena.huge_blocks(), 3u);
  // A piece freed is the next one of its size handed out, whether it came
  // from a block or from malloc.
  arena.deallocate(pieces.back(), kNode);
  EXPECT_EQ(arena.allocate(kNode), pieces.back());
  arena.deallocate(pieces.front(), kNode);
  EXPECT_EQ(arena.allocate(kNode), pieces.front());
  arena.deallocate(pieces.front(), kNode);
  void* chunk = arena.allocate(32 << 10, 32 << 10);  // a piece with an alignment of its own
  EXPECT_EQ(reinterpret_cast<uintptr_t>(chunk) % (32 << 10), 0u);
  arena.deallocate(chunk, 32 << 10, 32 << 10);
  for (size_t i = 1; i < pieces.size(); ++i) arena.deallocate(pieces[i], kNode);
}

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define FAULTLINE_TEST_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define FAULTLINE_TEST_ASAN 1
#endif
#ifdef FAULTLINE_TEST_ASAN
// Under AddressSanitizer a freed piece reads as freed memory.
TEST(NodeArenaDeathTest, AFreedPieceIsPoisoned) {
  util::NodeArena arena;
  std::vector<void*> pieces;
  while (arena.huge_blocks() == 0) pieces.push_back(arena.allocate(1024));
  auto* p = static_cast<volatile char*>(pieces.back());
  p[100] = 1;
  arena.deallocate(pieces.back(), 1024);
  EXPECT_DEATH(p[100] = 2, "use-after-poison");
  // So does one from malloc, which the arena keeps for its next node.
  auto* q = static_cast<volatile char*>(pieces.front());
  arena.deallocate(pieces.front(), 1024);
  EXPECT_DEATH(q[100] = 2, "use-after-poison");
  for (size_t i = 1; i + 1 < pieces.size(); ++i) arena.deallocate(pieces[i], 1024);
}
#endif

TEST(SparseArray, HoldsOnlyWhatWasWritten) {
  util::SparseArray<uint8_t, 9> a(uint64_t{1} << 30);  // 4 TiB worth of 4 KiB pages
  EXPECT_EQ(a[12345], 0);
  EXPECT_EQ(a.nr_leaves(), 0u);
  EXPECT_EQ(a.bytes(), (uint64_t{1} << 21) / 8);  // the bitmap: a bit per leaf
  a.mut((uint64_t{1} << 29) + 7) = 3;
  EXPECT_EQ(a[(uint64_t{1} << 29) + 7], 3);
  EXPECT_EQ(a.nr_leaves(), 1u);
  EXPECT_EQ(a.bytes(), (uint64_t{1} << 21) / 8 + 512);
  EXPECT_EQ(a.next_written(0), uint64_t{1} << 29);
  EXPECT_EQ(a.next_written((uint64_t{1} << 29) + 512), a.size());
}

// Reads of leaves never written leave the mapping alone (mincore: no page
// of it is mapped), so a later first write is not a copy-on-write fault of
// the zero page; a first write gives its whole leaf memory at once.
TEST(SparseArray, ReadsOfUnwrittenLeavesMapNothing) {
  util::SparseArray<uint8_t, 12> a(uint64_t{1} << 30);  // leaves of one page
  const long page = ::sysconf(_SC_PAGESIZE);
  ASSERT_EQ(page, 4096);
  uint8_t* base = &a.mut(0);                 // the mapping's start (index 0's leaf written)
  const uint64_t far = uint64_t{256} << 20;  // a 2 MiB-aligned stretch far from it
  const uint64_t len = uint64_t{1} << 20;
  uint64_t sum = 0;
  for (uint64_t i = far; i < far + len; i += 512) sum += a[i];
  EXPECT_EQ(sum, 0u);
  std::vector<unsigned char> vec(len / page);
  ASSERT_EQ(::mincore(base + far, len, vec.data()), 0);
  for (size_t p = 0; p < vec.size(); ++p) ASSERT_EQ(vec[p] & 1, 0) << "page " << p;
  a.mut(far + 5) = 1;  // the first write of the stretch's first leaf
  ASSERT_EQ(::mincore(base + far, len, vec.data()), 0);
  EXPECT_EQ(vec[0] & 1, 1);
  for (size_t p = 1; p < vec.size(); ++p) ASSERT_EQ(vec[p] & 1, 0) << "page " << p;
  EXPECT_EQ(a[far + 5], 1);
  EXPECT_EQ(a[far + 6], 0);
}

TEST(Process, PidFromName) {
  EXPECT_EQ(util::pid_from_name("run-123", "run-"), 123);
  EXPECT_EQ(util::pid_from_name("run-", "run-"), -1);
  EXPECT_EQ(util::pid_from_name("run-12x", "run-"), -1);
  EXPECT_EQ(util::pid_from_name("run-0", "run-"), -1);
  EXPECT_EQ(util::pid_from_name("faultline-probe-77", "faultline-"), -1);
  EXPECT_EQ(util::pid_from_name("faultline-probe-77", "faultline-probe-"), 77);
  EXPECT_EQ(util::pid_from_name("a.flr.tmp.4242", "a.flr.tmp."), 4242);
}

TEST(Process, PidAlive) {
  EXPECT_TRUE(util::pid_alive(::getpid()));
  EXPECT_FALSE(util::pid_alive(-1));
  EXPECT_FALSE(util::pid_alive(0));
}

TEST(Status, ContextKeepsTheCode) {
  const Status io = Status::IoError("write /x: No space left on device");
  const Status st = io.with_context("probe").with_context("scenarios/a.toml");
  EXPECT_EQ(st.code(), Status::Code::kIoError);
  EXPECT_EQ(st.message(), "scenarios/a.toml: probe: write /x: No space left on device");
  const Status perm = Status::Permission("the probe needs root");
  const Status more = perm.with_suffix("; cleaned up");
  EXPECT_EQ(more.code(), Status::Code::kPermission);
  EXPECT_EQ(more.message(), "the probe needs root; cleaned up");
  // Context on success is still success.
  EXPECT_TRUE(Status::Ok().with_context("x").ok());
  EXPECT_TRUE(Status::Ok().with_context("x").message().empty());
}

#define FAULTLINE_TEST_COLOURS(X) X(kRed, "red") X(kGreen, "green", "extra column") X(kBlue, "blue")
FAULTLINE_NAMED_ENUM(Colour, FAULTLINE_TEST_COLOURS)
#define FAULTLINE_TEST_ABI(X) X(kZero, 0, "zero") X(kFourteen, 14, "fourteen")
FAULTLINE_NAMED_ENUM_VALUES(Abi, FAULTLINE_TEST_ABI)

TEST(EnumNames, OneTableGivesNamesParsingAndLists) {
  static_assert(enum_count<Colour>() == 3);
  static_assert(enum_name(Colour::kGreen) == "green");
  static_assert(parse_enum<Colour>("blue") == Colour::kBlue);
  static_assert(!parse_enum<Colour>("Blue").has_value());
  static_assert(enum_index(Colour::kBlue) == 2);
  EXPECT_EQ(enum_choices<Colour>(), "red|green|blue");
  EXPECT_EQ(enum_choices<Colour>(", "), "red, green, blue");
  EXPECT_EQ(enum_name(static_cast<Colour>(7)), "?");
}

TEST(EnumNames, ValuesAreTheGivenNumbers) {
  static_assert(static_cast<int>(Abi::kFourteen) == 14);
  static_assert(enum_index(Abi::kFourteen) == 1);
  EXPECT_EQ(parse_enum<Abi>("fourteen"), Abi::kFourteen);
  EXPECT_EQ(enum_name(Abi::kZero), "zero");
}

TEST(Spread, MedianMinMax) {
  const Spread odd = spread_of({5, 1, 3});
  EXPECT_DOUBLE_EQ(odd.median, 3);
  EXPECT_DOUBLE_EQ(odd.min, 1);
  EXPECT_DOUBLE_EQ(odd.max, 5);
  const Spread even = spread_of({4, 1, 3, 2});
  EXPECT_DOUBLE_EQ(even.median, 2.5);
  const Spread none = spread_of({});
  EXPECT_DOUBLE_EQ(none.median, 0);
  EXPECT_DOUBLE_EQ(none.max, 0);
}

TEST(SplitByFactor, SeparatesOutcomesAcrossAThreshold) {
  // Seed 1's random/P2 over seeds: one run reads ~1 GiB, the others ~223.
  const auto two = split_by_factor({223.0, 1.09, 222.6, 227.5}, 2);
  ASSERT_EQ(two.size(), 2u);
  EXPECT_EQ(two[0], (std::vector<size_t>{1}));
  EXPECT_EQ(two[1], (std::vector<size_t>{2, 0, 3}));
  // Spread within a factor of 2 is one outcome.
  EXPECT_EQ(split_by_factor({100, 150, 199}, 2).size(), 1u);
  // 0 against a hundredth of the largest or less is noise, not an outcome.
  EXPECT_EQ(split_by_factor({0, 4, 1000, 1010}, 2).size(), 2u);
  EXPECT_EQ(split_by_factor({0, 4, 1000, 1010}, 2)[0], (std::vector<size_t>{0, 1}));
  EXPECT_EQ(split_by_factor({0, 0, 0}, 2).size(), 1u);
  EXPECT_TRUE(split_by_factor({}, 2).empty());
}

TEST(Text, FieldValueReadsATracepointsNamedFields) {
  using util::field_value;
  const std::string_view s = "dev 253:0 ino 2a pfn=0x1f00 ofs=8192 order=2";
  EXPECT_EQ(field_value(s, "dev"), "253:0");
  EXPECT_EQ(field_value(s, "ino"), "2a");
  EXPECT_EQ(field_value(s, "ofs"), "8192");
  EXPECT_EQ(field_value(s, "order"), "2");
  // A key must start a token and end at '=' or a blank.
  EXPECT_EQ(field_value(s, "fs"), "");
  EXPECT_EQ(field_value(s, "or"), "");
  EXPECT_EQ(field_value("xofs=1 ofs=2", "ofs"), "2");
  EXPECT_EQ(field_value(s, "index"), "");
  EXPECT_EQ(field_value("ofs=", "ofs"), "");
}

}  // namespace
}  // namespace faultline
