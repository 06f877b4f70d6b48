// util_test.cc — Status context, the name tables of enums, Spread, and pids.
#include <gtest/gtest.h>
#include <unistd.h>

#include "util/enum_names.h"
#include "util/process.h"
#include "util/spread.h"
#include "util/status.h"

namespace faultline {
namespace {

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

}  // namespace
}  // namespace faultline
