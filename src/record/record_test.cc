// record_test.cc — `faultline record` on a program whose file accesses are
// known (record_test_program.cc): every read at its offset, every page
// touch in its mapping, the thread and the forked child as tasks, the
// libraries left out; and a program that fails or is killed leaves an
// incomplete recording. Skips itself where strace cannot trace (no ptrace).
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>

#include "probe/sys.h"
#include "record/recorder.h"
#include "workload/recording.h"

#ifndef FAULTLINE_TEST_PROGRAM
#error "FAULTLINE_TEST_PROGRAM must name record_test_program"
#endif

namespace faultline::record {
namespace {

namespace fs = std::filesystem;
using workload::Event;
using workload::EventOp;

class Record : public ::testing::Test {
 protected:
  void SetUp() override {
    if (probe::sys::find_program("strace").empty()) GTEST_SKIP() << "no strace";
    auto r = probe::sys::run_command({"strace", "-o", "/dev/null", "true"}, false);
    if (!r.ok() || r->exit_code != 0) GTEST_SKIP() << "strace cannot trace here (ptrace)";
    dir_ = fs::temp_directory_path() / ("faultline-record-test-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
    data_ = (dir_ / "data.bin").string();
    std::ofstream out(data_, std::ios::binary);
    std::string page(4096, 'x');
    for (int i = 0; i < 256; ++i) out << page;  // 1 MiB
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  Result<RecordReport> record(std::vector<std::string> extra = {}) {
    RecordOptions o;
    o.command = {FAULTLINE_TEST_PROGRAM, data_};
    o.command.insert(o.command.end(), extra.begin(), extra.end());
    o.output = (dir_ / "r.flr").string();
    o.preload = FAULTLINE_PRELOAD_SO;
    o.version = "test";
    return record_command(o);
  }

  fs::path dir_;
  std::string data_;
};

TEST_F(Record, SeesEveryReadAndTouchOfTheProgram) {
  auto rep = record();
  ASSERT_TRUE(rep.ok()) << rep.status().message();
  EXPECT_EQ(rep->exit_status, 0);
  EXPECT_TRUE(rep->complete);
  auto rec = workload::read_recording((dir_ / "r.flr").string());
  ASSERT_TRUE(rec.ok()) << rec.status().message();
  const workload::RecordingInfo& info = rec->info;
  // Only the data file: the program's libraries are the system's.
  ASSERT_EQ(info.files.size(), 1u);
  EXPECT_EQ(info.files[0].path, data_);
  EXPECT_EQ(info.files[0].size, 1u << 20);
  // The main task, its thread, its forked child.
  ASSERT_EQ(info.tasks.size(), 3u);
  EXPECT_EQ(info.tasks[1].pid, info.tasks[0].pid);
  EXPECT_NE(info.tasks[2].pid, info.tasks[0].pid);

  std::vector<std::pair<uint64_t, uint64_t>> reads;  // (offset, length)
  std::set<uint64_t> shared_touches, private_writes, child_touches;
  int opens = 0, mmaps = 0, madvises = 0, munmaps = 0;
  for (const Event& e : rec->events) {
    switch (e.op) {
      case EventOp::kRead:
        reads.emplace_back(e.offset, e.length);
        break;
      case EventOp::kOpen:
        ++opens;
        break;
      case EventOp::kMmap:
        ++mmaps;
        break;
      case EventOp::kMadvise:
        ++madvises;
        EXPECT_EQ(e.arg, 1u);  // MADV_RANDOM
        break;
      case EventOp::kMunmap:
        ++munmaps;
        break;
      case EventOp::kTouch:
        if (e.task == 2) {
          child_touches.insert(e.offset);
        } else if (e.map == 0) {
          shared_touches.insert(e.offset);
          EXPECT_FALSE(e.write);
        } else if (e.write) {
          private_writes.insert(e.offset);
        }
        break;
      default:
        break;
    }
  }
  // pread at 8192, two reads from the start, a read at 100 after lseek, a
  // readv after it, and the thread's pread through its own open.
  const std::vector<std::pair<uint64_t, uint64_t>> want = {{8192, 4096}, {0, 4096},  {4096, 4096},
                                                           {100, 10},    {110, 300}, {40960, 4096}};
  EXPECT_EQ(reads, want);
  EXPECT_EQ(opens, 2);
  EXPECT_EQ(mmaps, 2);
  EXPECT_EQ(madvises, 1);
  EXPECT_GE(munmaps, 2);
  EXPECT_EQ(shared_touches, (std::set<uint64_t>{0, 5, 100}));
  EXPECT_EQ(private_writes, (std::set<uint64_t>{3}));
  EXPECT_EQ(child_touches, (std::set<uint64_t>{7}));
  EXPECT_EQ(rep->touches_outside, 0u);
  EXPECT_TRUE(rep->limits.empty());
  ASSERT_NE(info.condition("command"), nullptr);
  EXPECT_NE(info.condition("command")->find("record-test-program"), std::string::npos);
  EXPECT_EQ(info.tasks[0].comm, "record-test-program");
}

TEST_F(Record, AFailingProgramLeavesAnIncompleteRecording) {
  auto rep = record({"fail"});
  ASSERT_TRUE(rep.ok()) << rep.status().message();
  EXPECT_EQ(rep->exit_status, 3);
  EXPECT_FALSE(rep->complete);
  EXPECT_FALSE(workload::read_recording((dir_ / "r.flr").string()).ok());
  auto rec = workload::read_recording((dir_ / "r.flr").string(), /*allow_incomplete=*/true);
  ASSERT_TRUE(rec.ok());
  EXPECT_EQ(*rec->info.condition("exit"), "3");

  rep = record({"kill"});
  ASSERT_TRUE(rep.ok()) << rep.status().message();
  EXPECT_EQ(rep->signal, 9);
  EXPECT_FALSE(rep->complete);
}

TEST_F(Record, ACommandThatDoesNotExistIsNamed) {
  RecordOptions o;
  o.command = {"faultline-no-such-command"};
  o.output = (dir_ / "r.flr").string();
  auto rep = record_command(o);
  ASSERT_FALSE(rep.ok());
  EXPECT_EQ(rep.status().code(), Status::Code::kProgramFailed);
  EXPECT_NE(rep.status().message().find("faultline-no-such-command"), std::string::npos);
  EXPECT_FALSE(fs::exists(o.output));
}

}  // namespace
}  // namespace faultline::record
