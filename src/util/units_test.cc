#include "util/units.h"

#include <gtest/gtest.h>

namespace faultline {

TEST(Units, ParsesBinarySuffixes) {
  EXPECT_EQ(*parse_size("20GiB"), 20ULL << 30);
  EXPECT_EQ(*parse_size("8192 KiB"), 8192ULL << 10);
  EXPECT_EQ(*parse_size("4k"), 4096u);
  EXPECT_EQ(*parse_size("1.5G"), 3ULL << 29);
  EXPECT_EQ(*parse_size("123"), 123u);
  EXPECT_EQ(*parse_size("16TiB"), 16ULL << 40);
  EXPECT_EQ(*parse_size("1PiB"), 1ULL << 50);
  EXPECT_EQ(*parse_size("2p"), 2ULL << 50);
}

TEST(Units, RejectsMalformedSizes) {
  EXPECT_FALSE(parse_size("").ok());
  EXPECT_FALSE(parse_size("GiB").ok());
  EXPECT_FALSE(parse_size("12 parsecs").ok());
  EXPECT_FALSE(parse_size("1.2.3G").ok());
  EXPECT_FALSE(parse_size("0.3B").ok());
}

TEST(Units, FormatsExactUnits) {
  EXPECT_EQ(format_size(20ULL << 30), "20 GiB");
  EXPECT_EQ(format_size(4096), "4 KiB");
  EXPECT_EQ(format_size(100), "100 B");
  EXPECT_EQ(format_size(1ULL << 50), "1 PiB");
  EXPECT_EQ(format_size(200ULL << 40), "200 TiB");
}

}  // namespace faultline
