// sweep_args_test.cc — --vary parsing (lists, ranges by factor and by step,
// sizes), errors that name the key, the cartesian product, and the sweep's
// plan applied on top of a scenario's runs.
#include "cli/sweep_args.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace faultline::cli {
namespace {

using Values = std::vector<std::string>;

::testing::AssertionResult FailsWith(const std::string& arg, const std::string& needle) {
  auto r = parse_vary(arg);
  if (r.ok()) return ::testing::AssertionFailure() << arg << " parsed";
  if (r.status().code() != Status::Code::kInvalidArgument)
    return ::testing::AssertionFailure() << "not an input error: " << r.status().message();
  if (r.status().message().find(needle) == std::string::npos)
    return ::testing::AssertionFailure()
           << "'" << r.status().message() << "' lacks '" << needle << "'";
  return ::testing::AssertionSuccess();
}

TEST(SweepArgs, List) {
  auto a = parse_vary("access.stride=1021,2053,4099");
  ASSERT_TRUE(a.ok()) << a.status().message();
  EXPECT_EQ(a->key, "access.stride");
  EXPECT_EQ(a->values, (Values{"1021", "2053", "4099"}));
  EXPECT_EQ(a->numbers, (std::vector<double>{1021, 2053, 4099}));
  EXPECT_TRUE(a->numeric());
  EXPECT_FALSE(a->bytes);
}

TEST(SweepArgs, RangeByFactorAndByStep) {
  auto f = parse_vary("access.stride=1..4099*2");
  ASSERT_TRUE(f.ok()) << f.status().message();
  EXPECT_EQ(f->values, (Values{"1", "2", "4", "8", "16", "32", "64", "128", "256", "512", "1024",
                               "2048", "4096"}));
  auto s = parse_vary("device.read_ahead_kb=128..512+128,8192");
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->values, (Values{"128", "256", "384", "512", "8192"}));
  // Whole-number keys round a fractional factor and always move on.
  auto r = parse_vary("access.stride=1..10*1.5");
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->values, (Values{"1", "2", "3", "5", "8"}));
  auto d = parse_vary("access.fraction=0.001..0.1*10");
  ASSERT_TRUE(d.ok()) << d.status().message();
  EXPECT_EQ(d->values, (Values{"0.001", "0.01", "0.1"}));
}

TEST(SweepArgs, SizeRanges) {
  auto m = parse_vary("machine.memory=2GiB..8GiB+2GiB");
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ(m->values, (Values{"2GiB", "4GiB", "6GiB", "8GiB"}));
  EXPECT_TRUE(m->bytes);
  EXPECT_DOUBLE_EQ(m->numbers[1], 4.0 * (1 << 30));
  auto f = parse_vary("file.size=512MiB..2GiB*2");
  ASSERT_TRUE(f.ok()) << f.status().message();
  EXPECT_EQ(f->values, (Values{"512MiB", "1GiB", "2GiB"}));
}

TEST(SweepArgs, NonNumericKeys) {
  auto a = parse_vary("mapping.madvise=normal,random");
  ASSERT_TRUE(a.ok()) << a.status().message();
  EXPECT_FALSE(a->numeric());
  EXPECT_TRUE(FailsWith("mapping.madvise=normal,randon", "mapping.madvise"));
  EXPECT_TRUE(FailsWith("mapping.madvise=a..b*2", "not numeric"));
}

// A key of a [[files]] or [[streams]] entry, by its name.
TEST(SweepArgs, EntryKeys) {
  auto a = parse_vary("files.index.size=16MiB..64MiB*2");
  ASSERT_TRUE(a.ok()) << a.status().message();
  EXPECT_EQ(a->values, (Values{"16MiB", "32MiB", "64MiB"}));
  EXPECT_TRUE(a->bytes);
  auto b = parse_vary("streams.scan.method=mmap,read");
  ASSERT_TRUE(b.ok()) << b.status().message();
  EXPECT_EQ(b->values, (Values{"mmap", "read"}));
  EXPECT_TRUE(FailsWith("files.index.colour=1,2", "unknown key 'files.index.colour'"));
  EXPECT_TRUE(FailsWith("streams.scan.method=mmap,sideways", "streams.scan.method"));
  EXPECT_TRUE(FailsWith("files.has.dot.size=1MiB", "unknown key"));
}

TEST(SweepArgs, BadInputNamesTheKey) {
  EXPECT_TRUE(FailsWith("access.strid=1,2", "unknown key 'access.strid'"));
  EXPECT_TRUE(FailsWith("access.stride=", "access.stride: empty value list"));
  EXPECT_TRUE(FailsWith("access.stride=1,,2", "access.stride: empty value"));
  EXPECT_TRUE(FailsWith("access.stride", "expected KEY=V1,V2"));
  EXPECT_TRUE(FailsWith("access.stride=abc", "access.stride"));
  EXPECT_TRUE(FailsWith("access.stride=1..8", "malformed range '1..8'"));
  EXPECT_TRUE(FailsWith("access.stride=1..8*", "malformed range"));
  EXPECT_TRUE(FailsWith("access.stride=1..8*1", "factor must be above 1"));
  EXPECT_TRUE(FailsWith("access.stride=8..1*2", "END is below START"));
  EXPECT_TRUE(FailsWith("access.stride=0..8*2", "start above 0"));
  EXPECT_TRUE(FailsWith("access.stride=1..8+0", "step must be above 0"));
  EXPECT_TRUE(FailsWith("access.stride=x..8+1", "START 'x'"));
  EXPECT_TRUE(FailsWith("access.stride=1..100000+1", "more than 1000 values"));
  EXPECT_TRUE(FailsWith("access.stride=4,1..8*2", "'4' is given twice"));
  EXPECT_TRUE(FailsWith("machine.memory=1GiB,1024MiB", "given twice"));
}

TEST(SweepArgs, PointsAreTheCartesianProduct) {
  auto a = parse_vary("access.stride=1,2,3");
  auto b = parse_vary("mapping.madvise=normal,random");
  ASSERT_TRUE(a.ok() && b.ok());
  const auto pts = sweep_points({*a, *b});
  ASSERT_EQ(pts.size(), 6u);
  EXPECT_EQ(pts[0], (std::vector<size_t>{0, 0}));
  EXPECT_EQ(pts[1], (std::vector<size_t>{0, 1}));
  EXPECT_EQ(pts[5], (std::vector<size_t>{2, 1}));
}

Scenario two_by_two() {
  auto sc = parse_scenario(R"(
name = "t"
[file]
size = "64MiB"
[access]
pattern = "stride"
[[case]]
name = "c1"
set = ["access.stride=3"]
[[case]]
name = "c2"
set = ["access.pattern=random"]
[[variant]]
name = "v1"
set = []
[[variant]]
name = "v2"
set = ["kernel.mmap_miss_p1=true"]
)",
                           "t.toml");
  EXPECT_TRUE(sc.ok()) << sc.status().message();
  return *sc;
}

TEST(SweepArgs, PlanIsByCaseThenPointThenVariant) {
  auto plan = plan_runs(two_by_two(), {});
  ASSERT_TRUE(plan.ok());
  auto a = parse_vary("access.stride=16,64,256");
  ASSERT_TRUE(a.ok());
  const auto pts = sweep_points({*a});
  auto sp = expand_sweep(*plan, {*a}, pts);
  ASSERT_TRUE(sp.ok()) << sp.status().message();
  ASSERT_EQ(sp->runs.size(), 12u);
  EXPECT_EQ(sp->runs[0].case_name, "c1");
  EXPECT_EQ(sp->runs[0].variant, "v1");
  EXPECT_EQ(sp->runs[1].variant, "v2");
  EXPECT_EQ(sp->run_point[1], 0u);
  EXPECT_EQ(sp->run_point[2], 1u);
  EXPECT_EQ(sp->runs[6].case_name, "c2");
  // The swept value overrides the case's own setting; the variant's stays.
  EXPECT_EQ(sp->runs[5].cfg.access.stride, 256u);
  EXPECT_EQ(sp->runs[5].cfg.kernel.mmap_miss_p1, true);
  EXPECT_EQ(sp->runs[0].cfg.access.stride, 16u);
}

TEST(SweepArgs, InvalidPointNamesValueCaseAndVariant) {
  auto plan = plan_runs(two_by_two(), {});
  ASSERT_TRUE(plan.ok());
  auto a = parse_vary("access.stride=16,99999999");  // beyond the 64 MiB file
  ASSERT_TRUE(a.ok());
  auto sp = expand_sweep(*plan, {*a}, sweep_points({*a}));
  ASSERT_FALSE(sp.ok());
  EXPECT_EQ(sp.status().code(), Status::Code::kInvalidArgument);
  EXPECT_NE(sp.status().message().find("--vary access.stride=99999999: case 'c1', variant 'v1'"),
            std::string::npos)
      << sp.status().message();
}

}  // namespace
}  // namespace faultline::cli
