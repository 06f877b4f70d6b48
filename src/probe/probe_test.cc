// probe_test.cc — the probe's parts that need no kernel privileges: the fake
// probe, spread(), request checks, names, and the sys helpers. The parsers of
// kernel text are tested in procfs_test.cc.
#include "probe/probe.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "probe/pft.h"
#include "probe/sys.h"

namespace faultline::probe {
namespace {

Request valid_request() {
  Request req;
  req.name = "unit";
  req.file_bytes = 64 << 20;
  req.pages = {0, 1, 2, 16383};
  req.repetitions = 2;
  return req;
}

TEST(FakeProbe, ReturnsCannedCountersPerRepetitionAndReportsProgress) {
  Counters canned{{"pgpgin", 65536}, {"majflt", 512}};
  auto probe = make_fake_probe(canned);
  Request req = valid_request();
  req.repetitions = 3;
  Result out;
  std::vector<std::pair<int, int>> calls;
  Status st = probe->run(req, &out, [&](int done, int total) { calls.emplace_back(done, total); });
  ASSERT_TRUE(st.ok()) << st.message();
  ASSERT_EQ(out.runs.size(), 3u);
  for (const auto& run : out.runs) EXPECT_EQ(run, canned);
  EXPECT_EQ(out.host.kernel_release, "fake");
  EXPECT_EQ(out.host.lru_gen, "fake");
  EXPECT_EQ(out.host.thp_enabled, "fake");
  EXPECT_EQ(calls, (std::vector<std::pair<int, int>>{{1, 3}, {2, 3}, {3, 3}}));
}

TEST(FakeProbe, WorksWithoutProgressCallbackAndRejectsNullOut) {
  auto probe = make_fake_probe({{"x", 1}});
  Request req = valid_request();
  Result out;
  EXPECT_TRUE(probe->run(req, &out, nullptr).ok());
  EXPECT_EQ(out.runs.size(), 2u);
  EXPECT_EQ(probe->run(req, nullptr, nullptr).code(), Status::Code::kInvalidArgument);
  req.repetitions = 0;
  EXPECT_EQ(probe->run(req, &out, nullptr).code(), Status::Code::kInvalidArgument);
}

TEST(Spread, OddCount) {
  std::vector<Counters> runs = {{{"a", 5}}, {{"a", 1}}, {{"a", 3}}};
  Spread s = spread(runs, "a");
  EXPECT_DOUBLE_EQ(s.median, 3);
  EXPECT_DOUBLE_EQ(s.min, 1);
  EXPECT_DOUBLE_EQ(s.max, 5);
}

TEST(Spread, EvenCountAveragesTheMiddlePair) {
  std::vector<Counters> runs = {{{"a", 10}}, {{"a", 1}}, {{"a", 4}}, {{"a", 2}}};
  Spread s = spread(runs, "a");
  EXPECT_DOUBLE_EQ(s.median, 3);
  EXPECT_DOUBLE_EQ(s.min, 1);
  EXPECT_DOUBLE_EQ(s.max, 10);
}

TEST(Spread, SkipsRunsWithoutTheKey) {
  std::vector<Counters> runs = {{{"a", 7}}, {{"b", 100}}, {{"a", 9}, {"b", 1}}};
  Spread s = spread(runs, "a");
  EXPECT_DOUBLE_EQ(s.median, 8);
  EXPECT_DOUBLE_EQ(s.min, 7);
  EXPECT_DOUBLE_EQ(s.max, 9);
  Spread none = spread(runs, "missing");
  EXPECT_DOUBLE_EQ(none.median, 0);
  EXPECT_DOUBLE_EQ(none.min, 0);
  EXPECT_DOUBLE_EQ(none.max, 0);
  EXPECT_DOUBLE_EQ(spread({}, "a").median, 0);
}

TEST(Prerequisites, ZeroFileSize) {
  Request req = valid_request();
  req.file_bytes = 0;
  Status st = check_live_prerequisites(req);
  EXPECT_EQ(st.code(), Status::Code::kInvalidArgument);
  EXPECT_NE(st.message().find("file_bytes"), std::string::npos) << st.message();
}

TEST(Prerequisites, PageBeyondTheFile) {
  Request req = valid_request();
  req.pages = {0, 16384};  // 64 MiB = pages 0..16383
  Status st = check_live_prerequisites(req);
  EXPECT_EQ(st.code(), Status::Code::kInvalidArgument);
  EXPECT_NE(st.message().find("pages[1]"), std::string::npos) << st.message();
}

TEST(Prerequisites, LastPartialPageIsInside) {
  Request req = valid_request();
  req.file_bytes = 4096 * 3 + 1;  // 4 pages, the last one partial
  req.pages = {3};
  Status st = check_live_prerequisites(req);
  EXPECT_NE(st.code(), Status::Code::kInvalidArgument) << st.message();
}

TEST(Prerequisites, NoPages) {
  Request req = valid_request();
  req.pages.clear();
  Status st = check_live_prerequisites(req);
  EXPECT_EQ(st.code(), Status::Code::kInvalidArgument);
  EXPECT_NE(st.message().find("pages"), std::string::npos) << st.message();
}

TEST(Prerequisites, NoRepetitions) {
  Request req = valid_request();
  req.repetitions = 0;
  Status st = check_live_prerequisites(req);
  EXPECT_EQ(st.code(), Status::Code::kInvalidArgument);
  EXPECT_NE(st.message().find("repetitions"), std::string::npos) << st.message();
}

TEST(Prerequisites, NameMustNotBeAPath) {
  Request req = valid_request();
  req.name = "../etc";
  Status st = check_live_prerequisites(req);
  EXPECT_EQ(st.code(), Status::Code::kInvalidArgument);
  EXPECT_NE(st.message().find("name"), std::string::npos) << st.message();
}

TEST(Prerequisites, ZeroChunks) {
  Request req = valid_request();
  req.write_chunk_bytes = 0;
  EXPECT_EQ(check_live_prerequisites(req).code(), Status::Code::kInvalidArgument);
  req = valid_request();
  req.warm_chunk_bytes = 0;
  EXPECT_EQ(check_live_prerequisites(req).code(), Status::Code::kInvalidArgument);
}

TEST(Prerequisites, NonRootGetsPermission) {
  if (::geteuid() == 0) GTEST_SKIP() << "running as root";
  Status st = check_live_prerequisites(valid_request());
  EXPECT_EQ(st.code(), Status::Code::kPermission);
  EXPECT_NE(st.message().find("root"), std::string::npos) << st.message();
}

TEST(Prerequisites, LiveProbeRunRejectsBadRequestBeforeTouchingAnything) {
  Request req = valid_request();
  req.repetitions = 0;
  req.workspace_root = "/nonexistent/faultline-probe-test";
  Result out;
  Status st = make_live_probe()->run(req, &out, nullptr);
  EXPECT_EQ(st.code(), Status::Code::kInvalidArgument);
  EXPECT_TRUE(out.runs.empty());
}

// The file-system names are the types mount(2) and mkfs.<type> take.
TEST(Names, FileSystemNamesAreMountTypes) {
  EXPECT_EQ(enum_name(FsType::kExt4), "ext4");
  EXPECT_EQ(enum_name(FsType::kXfs), "xfs");
  EXPECT_EQ(enum_name(FsType::kTmpfs), "tmpfs");
}

TEST(Sys, RunCommandCapturesOutputAndExitCode) {
  auto res = sys::run_command({"sh", "-c", "echo out; echo err >&2; exit 3"});
  ASSERT_TRUE(res.ok()) << res.status().message();
  EXPECT_EQ(res->exit_code, 3);
  EXPECT_EQ(res->out, "out\n");
  EXPECT_EQ(res->err, "err\n");
  auto missing = sys::run_command({"faultline-no-such-program"});
  EXPECT_EQ(missing.status().code(), Status::Code::kNotFound);
  auto failed = sys::run_checked({"sh", "-c", "echo boom >&2; exit 1"});
  EXPECT_EQ(failed.status().code(), Status::Code::kIoError);
  EXPECT_NE(failed.status().message().find("boom"), std::string::npos);
}

}  // namespace
}  // namespace faultline::probe

namespace faultline::probe {
namespace {

// pft needs no root: it faults anonymous memory of its own.
TEST(Pft, EveryPageOfEveryPassIsOneMinorFault) {
  for (const auto& [tasks, name] : enum_names(workload::TaskSharing{})) {
    SCOPED_TRACE(name);
    PftRequest req;
    req.threads = 2;
    req.tasks = tasks;
    req.region_bytes = 2 << 20;  // 256 pages per task
    req.passes = 3;
    req.repetitions = 1;
    Result out;
    ASSERT_TRUE(run_pft(req, &out, nullptr).ok());
    ASSERT_EQ(out.runs.size(), 1u);
    const double expected = 2 * 256 * 3;
    EXPECT_GE(out.runs[0]["minflt"], expected);
    EXPECT_LE(out.runs[0]["minflt"], expected + 16);  // a stack page or two
    EXPECT_EQ(out.runs[0]["majflt"], 0);
    EXPECT_GT(out.runs[0]["faults_per_s"], 0);
  }
}

// pft's timed phase: one pass, no zap; the warm pass before it is zapped,
// so the counted pass faults every page again.
TEST(Pft, OnePassWithoutTheZap) {
  PftRequest req;
  req.threads = 2;
  req.region_bytes = 2 << 20;
  req.passes = 1;
  req.zap = false;
  req.repetitions = 1;
  Result out;
  ASSERT_TRUE(run_pft(req, &out, nullptr).ok());
  EXPECT_GE(out.runs[0]["minflt"], 2 * 256);
  EXPECT_LE(out.runs[0]["minflt"], 2 * 256 + 16);
}

TEST(Pft, RejectsBadRequests) {
  Result out;
  PftRequest req;
  req.threads = 0;
  EXPECT_FALSE(run_pft(req, &out, nullptr).ok());
  req.threads = 2;
  req.region_bytes = 4096;
  EXPECT_FALSE(run_pft(req, &out, nullptr).ok());
  req.region_bytes = 2 << 20;
  req.zap = false;  // a second pass would find every page mapped
  const Status st = run_pft(req, &out, nullptr);
  EXPECT_NE(st.message().find("access.zap"), std::string::npos) << st.message();
}

}  // namespace
}  // namespace faultline::probe
