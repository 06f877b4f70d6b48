// recording_test.cc — the recording format: every event round-trips, the
// reader streams in batches of any size, and damaged files are refused with
// the file and byte offset named.
#include "workload/recording.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <random>

namespace faultline::workload {
namespace {

namespace fs = std::filesystem;

class RecordingTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("faultline-recording-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
    path_ = (dir_ / "r.flr").string();
  }
  void TearDown() override { fs::remove_all(dir_); }

  // A recording of two processes, one with a second thread, using every op.
  std::vector<Event> sample() {
    std::vector<Event> ev;
    uint64_t t = 1000;
    auto add = [&](Event e) {
      e.time_ns = t;
      t += 250;
      ev.push_back(e);
    };
    add({.op = EventOp::kTaskStart, .task = 0, .arg = kNone32});
    add({.op = EventOp::kOpen, .task = 0, .file = 0});
    add({.op = EventOp::kOpen, .write = true, .task = 0, .file = 1});
    add({.op = EventOp::kMmap,
         .task = 0,
         .handle = 0,
         .arg = 1 | kMapShared,
         .offset = 16,
         .length = 4096});
    add({.op = EventOp::kMadvise, .task = 0, .map = 0, .arg = 1, .offset = 0, .length = 4096});
    for (uint64_t p = 0; p < 40; ++p)
      add({.op = EventOp::kTouch, .task = 0, .map = 0, .offset = p});
    add({.op = EventOp::kTouch, .write = true, .task = 0, .map = 0, .offset = 4000});
    add({.op = EventOp::kTouch, .task = 0, .map = 0, .offset = 3});
    add({.op = EventOp::kTaskStart, .thread = true, .task = 1, .arg = 0});
    add({.op = EventOp::kRead, .task = 1, .handle = 1, .offset = 0, .length = 65536});
    add({.op = EventOp::kRead, .task = 1, .handle = 1, .offset = 65536, .length = 65536});
    add({.op = EventOp::kRead, .task = 1, .handle = 1, .offset = 7, .length = 1});
    add({.op = EventOp::kFadvise, .task = 1, .handle = 1, .arg = 4, .offset = 0, .length = 0});
    add({.op = EventOp::kTaskStart, .task = 2, .arg = 0});
    add({.op = EventOp::kMmap, .task = 2, .handle = kNone32, .arg = 3, .offset = 0, .length = 10});
    add({.op = EventOp::kTouch, .task = 2, .map = 0, .offset = 17});
    add({.op = EventOp::kTouch, .task = 2, .map = 1, .offset = 2});
    add({.op = EventOp::kAnon, .task = 2, .length = 123456});
    add({.op = EventOp::kMunmap, .task = 0, .map = 0, .offset = 100, .length = 50});
    add({.op = EventOp::kClose, .task = 0, .handle = 0});
    add({.op = EventOp::kTaskExit, .task = 1});
    return ev;
  }

  void write(const std::vector<Event>& ev, bool complete = true) {
    auto w = RecordingWriter::create(path_);
    ASSERT_TRUE(w.ok()) << w.status().message();
    (*w)->add_file({"/data/index", 64 << 20});
    (*w)->add_file({"/data/log", 1 << 20});
    (*w)->add_task({100, 100, "db"});
    (*w)->add_task({101, 100, "db-reader"});
    (*w)->add_task({200, 200, "child"});
    for (const Event& e : ev) (*w)->append(e);
    ASSERT_TRUE((*w)->finish(complete, {{"command", "db --serve"}, {"epoch", "10ms"}}).ok());
  }

  std::string read_error(bool allow_incomplete = false) {
    auto r = read_recording(path_, allow_incomplete);
    return r.ok() ? "" : r.status().message();
  }

  fs::path dir_;
  std::string path_;
};

bool same(const Event& a, const Event& b) {
  return a.op == b.op && a.write == b.write && a.task == b.task && a.time_ns == b.time_ns &&
         a.file == b.file && a.handle == b.handle && a.map == b.map && a.offset == b.offset &&
         a.length == b.length && a.arg == b.arg && a.thread == b.thread;
}

TEST_F(RecordingTest, EveryEventRoundTrips) {
  const auto ev = sample();
  write(ev);
  auto r = read_recording(path_);
  ASSERT_TRUE(r.ok()) << r.status().message();
  const RecordingInfo& info = r->info;
  EXPECT_TRUE(info.complete);
  EXPECT_EQ(info.nr_events, ev.size());
  EXPECT_EQ(info.duration_ns, ev.back().time_ns);
  ASSERT_EQ(info.files.size(), 2u);
  EXPECT_EQ(info.files[0].path, "/data/index");
  EXPECT_EQ(info.files[1].size, 1u << 20);
  ASSERT_EQ(info.tasks.size(), 3u);
  EXPECT_EQ(info.tasks[1].tid, 101u);
  EXPECT_EQ(info.tasks[1].pid, 100u);
  EXPECT_EQ(info.tasks[2].comm, "child");
  ASSERT_NE(info.condition("epoch"), nullptr);
  EXPECT_EQ(*info.condition("epoch"), "10ms");
  ASSERT_EQ(r->events.size(), ev.size());
  for (size_t i = 0; i < ev.size(); ++i) {
    // The writer assigns handles and maps in order of kOpen and kMmap.
    Event want = ev[i];
    if (want.op == EventOp::kOpen) want.handle = want.file;
    if (want.op == EventOp::kMmap) want.map = want.handle == kNone32 ? 1 : 0;
    EXPECT_TRUE(same(r->events[i], want)) << i << ": " << format_event(info, r->events[i]);
  }
}

// A sequential touch costs a few bytes: the page and the map are coded from
// the previous touch.
TEST_F(RecordingTest, SequentialTouchesAreCompact) {
  std::vector<Event> ev = {{.op = EventOp::kTaskStart, .task = 0, .arg = kNone32},
                           {.op = EventOp::kOpen, .task = 0, .file = 0},
                           {.op = EventOp::kMmap, .task = 0, .handle = 0, .length = 1 << 20}};
  for (uint64_t p = 0; p < 100000; ++p) {
    ev.push_back({.op = EventOp::kTouch, .task = 0, .time_ns = p * 100, .map = 0, .offset = p});
  }
  write(ev);
  EXPECT_LT(fs::file_size(path_), 100000u * 3 + 1024);
}

TEST_F(RecordingTest, BatchesOfAnySizeGiveTheSameEvents) {
  std::mt19937_64 rng(7);
  std::vector<Event> ev = {{.op = EventOp::kTaskStart, .task = 0, .arg = kNone32},
                           {.op = EventOp::kOpen, .task = 0, .file = 0},
                           {.op = EventOp::kMmap, .task = 0, .handle = 0, .length = 1 << 24}};
  uint64_t t = 0;
  for (int i = 0; i < 300000; ++i) {
    t += rng() % 5000;
    if (i % 7 == 0) {
      ev.push_back({.op = EventOp::kRead,
                    .task = 0,
                    .time_ns = t,
                    .handle = 0,
                    .offset = rng() % (1ull << 36),
                    .length = 1 + rng() % (1 << 20)});
    } else {
      ev.push_back({.op = EventOp::kTouch,
                    .write = (i % 3) == 0,
                    .task = 0,
                    .time_ns = t,
                    .map = 0,
                    .offset = rng() % (1 << 24)});
    }
  }
  write(ev);
  for (const size_t batch : {size_t{1}, size_t{7}, size_t{4096}, size_t{1} << 20}) {
    auto r = RecordingReader::open(path_);
    ASSERT_TRUE(r.ok()) << r.status().message();
    std::vector<Event> got(batch);
    size_t i = 0;
    bool all_same = true;
    while (const size_t n = (*r)->next(got)) {
      for (size_t j = 0; j < n; ++j, ++i) {
        Event want = ev[i];
        if (want.op == EventOp::kOpen) want.handle = 0;
        all_same = all_same && i < ev.size() && same(got[j], want);
      }
    }
    EXPECT_TRUE((*r)->status().ok()) << (*r)->status().message();
    EXPECT_EQ(i, ev.size()) << batch;
    EXPECT_TRUE(all_same) << batch;
  }
}

TEST_F(RecordingTest, DamagedFilesNameTheFileAndTheByte) {
  write(sample());
  const auto size = fs::file_size(path_);
  // Cut short: the header promises more than the file holds.
  fs::resize_file(path_, size - 10);
  std::string e = read_error();
  EXPECT_NE(e.find(path_ + ": truncated or damaged"), std::string::npos) << e;

  std::ofstream(path_, std::ios::binary) << "not a recording at all, but long enough to read its "
                                            "header, which is sixty-four bytes";
  e = read_error();
  EXPECT_NE(e.find("not a faultline recording"), std::string::npos) << e;

  std::ofstream(path_, std::ios::binary) << "short";
  EXPECT_NE(read_error().find("too short"), std::string::npos);

  EXPECT_EQ(read_recording((dir_ / "missing.flr").string()).status().code(),
            Status::Code::kNotFound);
}

TEST_F(RecordingTest, ACorruptEventIsRefusedWithItsOffset) {
  write(sample());
  // The first event starts at byte 64: make its op invalid.
  {
    std::fstream f(path_, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(64);
    f.put(static_cast<char>(0x0f));
  }
  const std::string e = read_error();
  EXPECT_NE(e.find(path_ + ": byte 64: not an event (0x0f)"), std::string::npos) << e;
}

TEST_F(RecordingTest, AnEventNamingAMissingMapIsRefused) {
  std::vector<Event> ev = {{.op = EventOp::kTaskStart, .task = 0, .arg = kNone32},
                           {.op = EventOp::kTouch, .task = 0, .map = 3, .offset = 1}};
  write(ev);
  const std::string e = read_error();
  EXPECT_NE(e.find("names mapping 3, the recording has 0"), std::string::npos) << e;
}

TEST_F(RecordingTest, VersionAndIncompleteRecordings) {
  write(sample(), /*complete=*/false);
  std::string e = read_error();
  EXPECT_NE(e.find("incomplete"), std::string::npos) << e;
  EXPECT_EQ(read_error(/*allow_incomplete=*/true), "");
  auto r = read_recording(path_, true);
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->info.complete);

  {
    std::fstream f(path_, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(8);
    f.put(static_cast<char>(9));
  }
  e = read_error(true);
  EXPECT_NE(e.find("version 9, this faultline reads 1"), std::string::npos) << e;
}

TEST_F(RecordingTest, AFailedWriterLeavesNothing) {
  {
    auto w = RecordingWriter::create(path_);
    ASSERT_TRUE(w.ok());
    (*w)->add_task({1, 1, "x"});
    (*w)->append({.op = EventOp::kTaskStart, .task = 0, .arg = kNone32});
    // Destroyed without finish(): the program was killed, say.
  }
  EXPECT_FALSE(fs::exists(path_));
  EXPECT_TRUE(fs::is_empty(dir_));
  auto w = RecordingWriter::create((dir_ / "no-such-dir" / "r.flr").string());
  EXPECT_EQ(w.status().code(), Status::Code::kIoError);
}

TEST_F(RecordingTest, EventsPrintAsText) {
  write(sample());
  auto r = read_recording(path_);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(format_event(r->info, r->events[1]),
            "0.000001250 task 0 (tid 100) open handle=0 file=0 path=/data/index");
  EXPECT_EQ(format_event(r->info, r->events[3]),
            "0.000001750 task 0 (tid 100) mmap map=0 handle=0 pgoff=16 pages=4096 prot=1 shared");
}

}  // namespace
}  // namespace faultline::workload
