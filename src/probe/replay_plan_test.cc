// replay_plan_test.cc — the steps a recording becomes for the probe's
// replayer: what a forked process inherits, what a thread shares.
#include "probe/replay_plan.h"

#include <gtest/gtest.h>
#include <sys/mman.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "workload/recording.h"

namespace faultline::probe {
namespace {

using workload::Event;
using workload::EventOp;
using workload::kNone32;
using Kind = ReplayOp::Kind;

class ReplayPlanTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/faultline-plan.XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // A parent (task 0) that maps a file of 64 pages, advises it, then forks a
  // child (task 1) that touches page 7, with `advice` applied by the parent
  // over [advice_page, advice_page + advice_pages) before the fork.
  std::string write(uint32_t advice, uint64_t advice_page, uint64_t advice_pages, bool thread) {
    const std::string path = dir_ + "/r.flr";
    auto w = workload::RecordingWriter::create(path);
    EXPECT_TRUE(w.ok());
    (*w)->add_file({"/data/f", 64 * 4096});
    (*w)->add_task({100, 100, "p"});
    (*w)->add_task({101, thread ? 100u : 101u, "p"});
    uint64_t t = 0;
    auto at = [&](Event e) {
      e.time_ns = ++t;
      (*w)->append(e);
    };
    at({.op = EventOp::kTaskStart, .task = 0, .arg = kNone32});
    at({.op = EventOp::kOpen, .task = 0, .file = 0});
    at({.op = EventOp::kMmap,
        .task = 0,
        .handle = 0,
        .map = 0,
        .arg = workload::map_arg(PROT_READ, true, 0),
        .offset = 0,
        .length = 64});
    at({.op = EventOp::kMadvise,
        .task = 0,
        .map = 0,
        .arg = advice,
        .offset = advice_page,
        .length = advice_pages});
    at({.op = EventOp::kMadvise,
        .task = 0,
        .map = 0,
        .arg = MADV_WILLNEED,
        .offset = 0,
        .length = 64});
    at({.op = EventOp::kTaskStart, .thread = thread, .task = 1, .arg = 0});
    at({.op = EventOp::kTouch, .task = 1, .map = 0, .offset = 7});
    at({.op = EventOp::kTaskExit, .task = 1});
    at({.op = EventOp::kTaskExit, .task = 0});
    EXPECT_TRUE((*w)->finish(true, {}).ok());
    return path;
  }

  std::string dir_;
};

std::vector<ReplayOp> of_kind(const ReplayPlan& p, Kind k) {
  std::vector<ReplayOp> out;
  for (const ReplayOp& op : p.ops) {
    if (op.kind == k) out.push_back(op);
  }
  return out;
}

// dup_mmap() copies the VMA with its flags: the child's mapping is
// VM_RAND_READ as the parent's was, and its touch goes to its own mapping.
TEST_F(ReplayPlanTest, AForkedChildInheritsTheMappingsAdvice) {
  auto plan = plan_replay(write(MADV_RANDOM, 8, 16, false), false);
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  const auto maps = of_kind(*plan, Kind::kMmap);
  ASSERT_EQ(maps.size(), 2u);
  EXPECT_EQ(maps[1].offset, 0u);
  EXPECT_EQ(maps[1].length, 64u);
  const auto advice = of_kind(*plan, Kind::kMadvise);
  // The parent's two calls, then MADV_RANDOM again on the child's mapping;
  // MADV_WILLNEED acts once on the pages and is not carried over.
  ASSERT_EQ(advice.size(), 3u);
  EXPECT_EQ(advice[2].slot, maps[1].slot);
  EXPECT_EQ(advice[2].arg, static_cast<uint32_t>(MADV_RANDOM));
  EXPECT_EQ(advice[2].offset, 8u);
  EXPECT_EQ(advice[2].length, 16u);
  const auto touches = of_kind(*plan, Kind::kTouch);
  ASSERT_EQ(touches.size(), 1u);
  EXPECT_EQ(touches[0].slot, maps[1].slot);
  // Each process unmaps its own mapping when its last task exits.
  EXPECT_EQ(of_kind(*plan, Kind::kMunmap).size(), 2u);
}

TEST_F(ReplayPlanTest, MadvDontforkKeepsTheMappingFromTheChild) {
  auto plan = plan_replay(write(MADV_DONTFORK, 0, 64, false), false);
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  EXPECT_EQ(of_kind(*plan, Kind::kMmap).size(), 1u);
  // The child's touch has no mapping to land in (it would have faulted).
  EXPECT_TRUE(of_kind(*plan, Kind::kTouch).empty());
}

TEST_F(ReplayPlanTest, AThreadSharesTheMapping) {
  auto plan = plan_replay(write(MADV_RANDOM, 0, 64, true), false);
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  const auto maps = of_kind(*plan, Kind::kMmap);
  ASSERT_EQ(maps.size(), 1u);
  EXPECT_EQ(of_kind(*plan, Kind::kMadvise).size(), 2u);
  const auto touches = of_kind(*plan, Kind::kTouch);
  ASSERT_EQ(touches.size(), 1u);
  EXPECT_EQ(touches[0].slot, maps[0].slot);
}

}  // namespace
}  // namespace faultline::probe
