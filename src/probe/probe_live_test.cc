// probe_live_test.cc — the live probe against this machine's kernel.
//
// Needs root and loop devices (every test skips itself otherwise). Each test
// uses its own workspace root under /var/tmp and checks that nothing is left
// afterwards: no loop device backed there, no mount, no cgroup, no trace
// instance, no run directory. Files stay at or under 256 MiB.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "probe/cgroup.h"
#include "probe/probe.h"
#include "probe/sys.h"
#include "probe/tracing.h"
#include "probe/workspace.h"

namespace faultline::probe {
namespace {

constexpr uint64_t kMiB = 1ull << 20;
constexpr uint64_t kPage = 4096;

std::string skip_reason() {
  if (::geteuid() != 0) return "live probe tests need root";
  struct stat st {};
  if (::stat("/dev/loop-control", &st) != 0) return "live probe tests need /dev/loop-control";
  // Whatever else the machine lacks (CAP_SYS_ADMIN, losetup, mkfs.ext4).
  Request req;
  req.file_bytes = 1 << 20;
  req.pages = {0};
  req.repetitions = 1;
  Status prereq = check_live_prerequisites(req);
  if (!prereq.ok()) return "live probe unavailable: " + prereq.message();
  return "";
}

#define SKIP_UNLESS_LIVE()                 \
  do {                                     \
    std::string why = skip_reason();       \
    if (!why.empty()) GTEST_SKIP() << why; \
  } while (0)

std::vector<uint64_t> sequential(uint64_t n) {
  std::vector<uint64_t> pages(n);
  for (uint64_t i = 0; i < n; ++i) pages[i] = i;
  return pages;
}

std::string print(const Counters& c) {
  std::ostringstream os;
  for (const char* key :
       {"pgpgin", "read_ios", "vmstat.pgpgin", "minflt", "majflt", "pgfault", "pgmajfault",
        "elapsed_s", "rss_file_kb", "rss_shmem_kb", "cache_pages_before", "cache_pages_after",
        "workingset_refault_file", "pgsteal_direct", "pgscan_direct", "pgsteal_kswapd"}) {
    auto it = c.find(key);
    if (it != c.end()) os << key << "=" << it->second << " ";
  }
  return os.str();
}

// A private workspace root per test, removed at the end.
class LiveProbeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fmt_root();
    std::filesystem::remove_all(root_);
    tracefs_before_ = trace::tracefs_mount_point();
  }
  void TearDown() override {
    (void)cleanup_stale(root_);
    std::error_code ec;
    std::filesystem::remove_all(root_, ec);
  }

  static std::string fmt_root() {
    static int counter = 0;
    return "/var/tmp/faultline-probe-test-" + std::to_string(::getpid()) + "-" +
           std::to_string(counter++);
  }

  Request request(const std::string& name, uint64_t file_bytes) const {
    Request req;
    req.name = name;
    req.file_bytes = file_bytes;
    req.pages = sequential(file_bytes / kPage);
    req.repetitions = 1;
    req.workspace_root = root_;
    return req;
  }

  // What a run with owner pid left behind, "" if nothing.
  std::string leftovers(pid_t owner) const {
    std::string left;
    const std::string root = ws::canonical_root(root_);
    for (const auto& dev : ws::loops_backed_under(root)) left += "loop device " + dev + "; ";
    std::ifstream mounts("/proc/mounts");
    for (std::string line; std::getline(mounts, line);) {
      if (line.find(root) != std::string::npos) left += "mount " + line + "; ";
    }
    cg::Controller c = cg::find_memory_controller();
    if (c.version != 0) {
      for (const auto& name : sys::list_dir(c.root)) {
        if (name == std::string(cg::kCgroupPrefix) + std::to_string(owner)) {
          left += "cgroup " + name + "; ";
        }
      }
    }
    const std::string tracefs = trace::tracefs_mount_point();
    if (!tracefs.empty() &&
        sys::exists(tracefs + "/instances/" + trace::kInstancePrefix + std::to_string(owner))) {
      left += "trace instance; ";
    }
    if (tracefs != tracefs_before_) left += "tracefs mount changed to \"" + tracefs + "\"; ";
    if (sys::exists(root + "/" + ws::kRunPrefix + std::to_string(owner))) left += "run dir; ";
    return left;
  }

  std::string root_;
  std::string tracefs_before_;
};

TEST_F(LiveProbeTest, ColdSequentialExt4ReadsTheFileOnce) {
  SKIP_UNLESS_LIVE();
  Request req = request("seq64", 64 * kMiB);
  req.read_ahead_kb = 128;
  req.repetitions = 2;
  Result out;
  std::vector<int> progress;
  Status st = make_live_probe()->run(req, &out, [&](int done, int total) {
    EXPECT_EQ(total, 2);
    progress.push_back(done);
  });
  ASSERT_TRUE(st.ok()) << st.message();
  ASSERT_EQ(out.runs.size(), 2u);
  EXPECT_EQ(progress, (std::vector<int>{1, 2}));
  for (const auto& run : out.runs) {
    std::cout << "[ cold seq 64 MiB ext4 ra=128 ] " << print(run) << "\n";
    EXPECT_GE(run.at("pgpgin"), 65536.0);
    EXPECT_LE(run.at("pgpgin"), 70.0 * 1024);
    EXPECT_GT(run.at("majflt"), 0.0);
    EXPECT_GT(run.at("elapsed_s"), 0.0);
    EXPECT_EQ(run.at("cache_pages_before"), 0.0);
    EXPECT_TRUE(run.count("pgfault") && run.count("pgmajfault") && run.count("vmstat.pgpgin"));
  }
  EXPECT_FALSE(out.host.kernel_release.empty());
  EXPECT_EQ(out.host.page_size, kPage);
  for (const auto& n : out.notes) std::cout << "note: " << n << "\n";
  std::cout << "host: " << out.host.kernel_release << " thp=" << out.host.thp_enabled
            << " lru_gen=" << out.host.lru_gen
            << " fault_around_bytes=" << out.host.fault_around_bytes << "\n";
  EXPECT_EQ(leftovers(::getpid()), "");
}

TEST_F(LiveProbeTest, ColdRandomWithMadvRandomReadsOnlyTheTouchedPages) {
  SKIP_UNLESS_LIVE();
  Request req = request("rand64", 64 * kMiB);
  req.madvise_advice = MADV_RANDOM;
  std::mt19937_64 rng(42);
  std::uniform_int_distribution<uint64_t> pick(0, req.file_bytes / kPage - 1);
  req.pages.clear();
  for (int i = 0; i < 164; ++i) req.pages.push_back(pick(rng));  // 1% of 16384
  const double distinct =
      static_cast<double>(std::set<uint64_t>(req.pages.begin(), req.pages.end()).size());
  Result out;
  Status st = make_live_probe()->run(req, &out, nullptr);
  ASSERT_TRUE(st.ok()) << st.message();
  ASSERT_EQ(out.runs.size(), 1u);
  const Counters& run = out.runs[0];
  std::cout << "[ cold random 1% MADV_RANDOM ] distinct=" << distinct << " " << print(run) << "\n";
  EXPECT_NEAR(run.at("pgpgin"), 4 * distinct, 0.1 * 4 * distinct);
  EXPECT_EQ(leftovers(::getpid()), "");
}

TEST_F(LiveProbeTest, MemoryLimitRunsInItsCgroupAndRemovesIt) {
  SKIP_UNLESS_LIVE();
  Request req = request("limit", 96 * kMiB);
  req.memory_limit_bytes = 32 * kMiB;
  bool cgroup_seen = false;
  Result out;
  Status st = make_live_probe()->run(req, &out, [&](int, int) {
    cg::Controller c = cg::find_memory_controller();
    cgroup_seen = sys::exists(c.root + "/" + cg::kCgroupPrefix + std::to_string(::getpid()));
  });
  ASSERT_TRUE(st.ok()) << st.message();
  ASSERT_EQ(out.runs.size(), 1u);
  const Counters& run = out.runs[0];
  std::cout << "[ cold seq 96 MiB, 32 MiB cgroup ] " << print(run) << "\n";
  EXPECT_TRUE(cgroup_seen);
  EXPECT_GE(run.at("pgpgin"), 96.0 * 1024);
  // The limit holds the file's cache well under its size.
  EXPECT_LE(run.at("cache_pages_after"), 40.0 * 256);
  EXPECT_EQ(leftovers(::getpid()), "");
}

// Forks a process running a 256 MiB, 5-repetition probe and waits until it
// has built everything (its cgroup appears after the file is written).
pid_t start_big_probe(const std::string& root, const std::string& trace_dir) {
  pid_t pid = ::fork();
  if (pid == 0) {
    Request req;
    req.name = "big";
    req.file_bytes = 256 * kMiB;
    req.pages = sequential(req.file_bytes / kPage);
    req.repetitions = 5;
    req.memory_limit_bytes = 1024 * kMiB;
    req.workspace_root = root;
    req.trace_events = true;
    req.output_dir = trace_dir;
    Result out;
    Status st = make_live_probe()->run(req, &out, nullptr);
    std::cerr << "probe in child " << ::getpid() << ": " << st.message() << "\n";
    if (st.code() != Status::Code::kInterrupted) ::_exit(10 + static_cast<int>(st.code()));
    // Interrupted, and its clean-up said nothing went wrong.
    const std::string tail = "; cleaned up";
    const std::string& msg = st.message();
    const bool clean =
        msg.size() >= tail.size() && msg.compare(msg.size() - tail.size(), tail.size(), tail) == 0;
    ::_exit(clean ? 0 : 2);
  }
  return pid;
}

bool wait_for_setup(const std::string& root, pid_t pid) {
  const std::string dir = ws::canonical_root(root) + "/" + ws::kRunPrefix + std::to_string(pid);
  cg::Controller c = cg::find_memory_controller();
  const std::string cgroup = c.root + "/" + cg::kCgroupPrefix + std::to_string(pid);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < deadline) {
    if (sys::exists(dir) && !ws::loops_backed_under(dir).empty() && sys::exists(cgroup)) {
      return true;
    }
    int status = 0;
    if (::waitpid(pid, &status, WNOHANG) == pid) return false;  // ended early
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

TEST_F(LiveProbeTest, KilledRunIsCleanedByCleanupStale) {
  SKIP_UNLESS_LIVE();
  pid_t pid = start_big_probe(root_, root_ + "-traces");
  ASSERT_GT(pid, 0);
  ASSERT_TRUE(wait_for_setup(root_, pid)) << "the probe never finished its setup";
  // Let it get into a repetition, then kill it without a chance to clean.
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  ASSERT_EQ(::kill(pid, SIGKILL), 0);
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFSIGNALED(status));
  EXPECT_NE(leftovers(pid), "") << "a SIGKILLed probe should have left something";
  Status st = cleanup_stale(root_);
  EXPECT_TRUE(st.ok()) << st.message();
  EXPECT_EQ(leftovers(pid), "");
  std::error_code ec;
  std::filesystem::remove_all(root_ + "-traces", ec);
}

TEST_F(LiveProbeTest, SigintMakesRunReturnInterruptedAndCleanUp) {
  SKIP_UNLESS_LIVE();
  pid_t pid = start_big_probe(root_, root_ + "-traces");
  ASSERT_GT(pid, 0);
  ASSERT_TRUE(wait_for_setup(root_, pid)) << "the probe never finished its setup";
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  ASSERT_EQ(::kill(pid, SIGINT), 0);
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status)) << "the probe died of the signal instead of handling it";
  EXPECT_EQ(WEXITSTATUS(status), 0)
      << "run() did not return a clean Interrupted (exit code " << WEXITSTATUS(status)
      << ": 2 = clean-up error, 10 + code = another status)";
  EXPECT_EQ(leftovers(pid), "");  // without cleanup_stale()
  std::error_code ec;
  std::filesystem::remove_all(root_ + "-traces", ec);
}

TEST_F(LiveProbeTest, SigtermDuringSetupReturnsInterruptedAndCleansUp) {
  SKIP_UNLESS_LIVE();
  pid_t pid = start_big_probe(root_, root_ + "-traces");
  ASSERT_GT(pid, 0);
  // Signal as soon as the run directory exists: mid losetup, mkfs or file write.
  const std::string dir = ws::canonical_root(root_) + "/" + ws::kRunPrefix + std::to_string(pid);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (!sys::exists(dir) && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ASSERT_TRUE(sys::exists(dir));
  ASSERT_EQ(::kill(pid, SIGTERM), 0);
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status)) << "the probe died of the signal instead of handling it";
  EXPECT_EQ(WEXITSTATUS(status), 0) << "exit code " << WEXITSTATUS(status);
  EXPECT_EQ(leftovers(pid), "");
  std::error_code ec;
  std::filesystem::remove_all(root_ + "-traces", ec);
}

TEST_F(LiveProbeTest, TmpfsRunReadsNothingFromDisk) {
  SKIP_UNLESS_LIVE();
  Request req = request("tmpfs", 32 * kMiB);
  req.fs = FsType::kTmpfs;
  Result out;
  Status st = make_live_probe()->run(req, &out, nullptr);
  ASSERT_TRUE(st.ok()) << st.message();
  ASSERT_EQ(out.runs.size(), 1u);
  std::cout << "[ tmpfs seq 32 MiB ] " << print(out.runs[0]) << "\n";
  EXPECT_EQ(out.runs[0].at("pgpgin"), 0.0);
  EXPECT_GT(out.runs[0].at("minflt"), 0.0);
  bool noted = false;
  for (const auto& n : out.notes) noted |= n.find("tmpfs") != std::string::npos;
  EXPECT_TRUE(noted) << "a cold tmpfs request should carry a note";
  EXPECT_EQ(leftovers(::getpid()), "");
}

TEST_F(LiveProbeTest, TraceEventsAreSaved) {
  SKIP_UNLESS_LIVE();
  Request req = request("traced", 16 * kMiB);
  req.trace_events = true;
  req.output_dir = root_ + "-traces";
  Result out;
  Status st = make_live_probe()->run(req, &out, nullptr);
  ASSERT_TRUE(st.ok()) << st.message();
  if (out.event_files.empty()) {
    for (const auto& n : out.notes) std::cout << "note: " << n << "\n";
    GTEST_SKIP() << "tracefs not available";
  }
  ASSERT_EQ(out.event_files.size(), 1u);
  EXPECT_EQ(out.event_files[0], req.output_dir + "/traced-rep0.trace");
  std::ifstream in(out.event_files[0]);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_NE(text.str().find("mm_filemap_fault"), std::string::npos);
  EXPECT_NE(text.str().find("mm_filemap_add_to_page_cache"), std::string::npos);
  EXPECT_EQ(leftovers(::getpid()), "");
  std::error_code ec;
  std::filesystem::remove_all(req.output_dir, ec);
}

TEST_F(LiveProbeTest, XfsColdSequential) {
  SKIP_UNLESS_LIVE();
  if (sys::find_program("mkfs.xfs").empty()) GTEST_SKIP() << "no mkfs.xfs";
  Request req = request("xfs", 32 * kMiB);
  req.fs = FsType::kXfs;
  Result out;
  Status st = make_live_probe()->run(req, &out, nullptr);
  ASSERT_TRUE(st.ok()) << st.message();
  std::cout << "[ cold seq 32 MiB xfs ] " << print(out.runs[0]) << "\n";
  EXPECT_GE(out.runs[0].at("pgpgin"), 32.0 * 1024);
  EXPECT_LE(out.runs[0].at("pgpgin"), 36.0 * 1024);
  EXPECT_EQ(leftovers(::getpid()), "");
}

TEST_F(LiveProbeTest, WarmStatesReadNothing) {
  SKIP_UNLESS_LIVE();
  for (CacheState cache : {CacheState::kWarmRead, CacheState::kWarmWrite}) {
    Request req = request(std::string(enum_name(cache)), 32 * kMiB);
    req.cache = cache;
    req.repetitions = 2;
    Result out;
    Status st = make_live_probe()->run(req, &out, nullptr);
    ASSERT_TRUE(st.ok()) << enum_name(cache) << ": " << st.message();
    for (const auto& run : out.runs) {
      std::cout << "[ " << enum_name(cache) << " seq 32 MiB ] " << print(run) << "\n";
      EXPECT_EQ(run.at("pgpgin"), 0.0);
      EXPECT_EQ(run.at("majflt"), 0.0);
      EXPECT_EQ(run.at("cache_pages_before"), 8192.0);
    }
    EXPECT_EQ(leftovers(::getpid()), "");
  }
}

TEST_F(LiveProbeTest, PrivateWriteCopiesPages) {
  SKIP_UNLESS_LIVE();
  Request req = request("cow", 8 * kMiB);
  req.map_shared = false;
  req.write = true;
  Result out;
  Status st = make_live_probe()->run(req, &out, nullptr);
  ASSERT_TRUE(st.ok()) << st.message();
  std::cout << "[ cold MAP_PRIVATE write 8 MiB ] " << print(out.runs[0]) << "\n";
  EXPECT_GE(out.runs[0].at("pgpgin"), 8.0 * 1024);
  EXPECT_GE(out.runs[0].at("minflt") + out.runs[0].at("majflt"), 2048.0);
  EXPECT_EQ(leftovers(::getpid()), "");
}

}  // namespace
}  // namespace faultline::probe
