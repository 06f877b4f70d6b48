// file_set_test.cc — [[files]] and [[streams]] as one program's recording:
// one file and one stream give what the single-file stream replay gives
// (its oracle) on generated configurations; several streams interleave by
// time, threads share their process's mappings, and a recording stream's
// ids are renumbered into the workload's.
#include "engine/file_set.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <array>
#include <filesystem>
#include <random>

#include "engine/engine.h"
#include "engine/stream_recording.h"
#include "workload/recording.h"

namespace faultline::engine {
namespace {

namespace fs = std::filesystem;
using workload::Event;
using workload::EventOp;

class FileSet : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("faultline-fileset-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  static RunResult run(const Config& c) {
    auto r = make_serial_engine()->run(c, nullptr, {});
    EXPECT_TRUE(r.ok()) << r.status().message();
    return r.ok() ? *r : RunResult{};
  }
  workload::Recording recorded(const Config& c) {
    const std::string p = path("set.flr");
    EXPECT_TRUE(validate(c).ok()) << validate(c).message();
    const Status st = record_file_set(c, p);
    EXPECT_TRUE(st.ok()) << st.message();
    auto r = workload::read_recording(p);
    EXPECT_TRUE(r.ok()) << r.status().message();
    return r.ok() ? *r : workload::Recording{};
  }

  fs::path dir_;
};

std::vector<Event> of(const workload::Recording& r, EventOp op) {
  std::vector<Event> out;
  for (const Event& e : r.events) {
    if (e.op == op) out.push_back(e);
  }
  return out;
}

Config with_files(std::initializer_list<std::pair<const char*, uint64_t>> files) {
  Config c;
  for (const auto& [name, size] : files) {
    EXPECT_TRUE(add_entry(c, kFileList, name).ok());
    c.files.back().size = size;
  }
  return c;
}

StreamDecl& add_stream(Config& c, const char* name, const char* file) {
  EXPECT_TRUE(add_entry(c, kStreamList, name).ok());
  c.streams.back().file = file;
  return c.streams.back();
}

// A random single-file stream configuration (what both forms can express).
Config generated(std::mt19937_64& rng) {
  auto pick = [&](auto... v) {
    const std::array all{v...};
    return all[rng() % all.size()];
  };
  Config c;
  c.machine.memory = 1ull << 30;
  c.machine.memory_limit = pick(0ull, 0ull, 24ull << 20, 48ull << 20);
  c.file.size = pick(16ull << 20, 40ull << 20, (40ull << 20) + 12288);
  c.file.fs = pick(workload::FsType::kExt4, workload::FsType::kXfs, workload::FsType::kTmpfs);
  c.file.cache = pick(workload::CacheState::kCold, workload::CacheState::kWarmRead);
  c.device.read_ahead_kb = pick(128u, 512u, 8192u);
  c.kernel.profile = pick(mm::Release::k6_9, mm::Release::k6_15, mm::Release::k6_18);
  c.mapping.shared = pick(true, true, false);
  c.mapping.madvise = pick(mm::Madvise::kNormal, mm::Madvise::kRandom, mm::Madvise::kSequential,
                           mm::Madvise::kWillneed);
  c.file.fadvise = pick(mm::Fadvise::kNormal, mm::Fadvise::kNormal, mm::Fadvise::kRandom,
                        mm::Fadvise::kDontneed);
  c.access.pattern =
      pick(workload::Pattern::kRandom, workload::Pattern::kSequential, workload::Pattern::kStride);
  c.access.stride = pick(7ull, 1021ull);
  c.access.fraction = pick(0.05, 0.3, 1.0);
  c.access.span = pick(1.0, 1.0, 0.5);
  c.access.seed = 1 + rng() % 1000;
  c.access.method = pick(workload::AccessMethod::kMmap, workload::AccessMethod::kRead);
  if (c.access.method == workload::AccessMethod::kRead) {
    c.access.read_size = pick(4096ull, 65536ull);
    // A pread stream of a file set maps nothing, so has no mapping to advise
    // (the single-file stream maps its file whatever the method).
    c.mapping.madvise = mm::Madvise::kNormal;
  } else {
    c.access.op = pick(workload::AccessOp::kRead, workload::AccessOp::kWrite);
  }
  return c;
}

// The same workload as one [[files]] entry and one [[streams]] entry.
Config as_file_set(const Config& c) {
  Config s = c;
  EXPECT_TRUE(add_entry(s, kFileList, "data").ok());
  FileDecl& f = s.files.back();
  f.size = c.file.size;
  f.madvise = c.mapping.madvise;
  f.fadvise = c.file.fadvise;
  f.shared = c.mapping.shared;
  StreamDecl& st = add_stream(s, "only", "data");
  st.pattern = c.access.pattern;
  st.fraction = c.access.fraction;
  st.stride = c.access.stride;
  st.seed = c.access.seed;
  st.op = c.access.op;
  st.method = c.access.method;
  st.read_size = c.access.read_size;
  st.span = c.access.span;
  // The hints are the file's now, not the whole run's.
  s.mapping.madvise = mm::Madvise::kNormal;
  s.file.fadvise = mm::Fadvise::kNormal;
  return s;
}

// The counters both report (what only the recording replay has aside).
std::vector<Counter> common(const RunResult& r) {
  std::vector<Counter> out;
  for (const Counter& c : r.counters) {
    if (c.name == "model.mmap_miss_max" || c.name.rfind("model.replay_", 0) == 0 ||
        c.name == "model.mmap_miss_final" || c.name == "model.cache_capacity_pages" ||
        c.name == "model.page_cache_pages") {
      continue;
    }
    out.push_back(c);
  }
  return out;
}

TEST_F(FileSet, OneFileAndOneStreamIsTheSingleFileStream) {
  std::mt19937_64 rng(1202);
  int checked = 0;
  for (int i = 0; i < 80; ++i) {
    const Config c = generated(rng);
    if (!validate(c).ok()) continue;
    SCOPED_TRACE("generated scenario " + std::to_string(i));
    const Config s = as_file_set(c);
    ASSERT_TRUE(validate(s).ok()) << validate(s).message();
    const auto a = common(run(c)), b = common(run(s));
    ASSERT_EQ(a.size(), b.size());
    for (size_t j = 0; j < a.size(); ++j) {
      EXPECT_EQ(a[j].name, b[j].name);
      EXPECT_EQ(a[j].value, b[j].value) << a[j].name;
    }
    ++checked;
  }
  EXPECT_GT(checked, 60);
}

// The i-th of a stream's n accesses is at (i + 1/2) / n of the stretch.
TEST_F(FileSet, StreamsInterleaveByTime) {
  Config c = with_files({{"a", 1 << 20}, {"b", 1 << 20}});
  add_stream(c, "two", "a").count = 2;
  add_stream(c, "four", "b").count = 4;
  const workload::Recording r = recorded(c);
  const auto touches = of(r, EventOp::kTouch);
  ASSERT_EQ(touches.size(), 6u);
  // Task 0 is "two", task 1 "four": at 1/8, 2/8 (two), 3/8, 5/8, 6/8 (two), 7/8.
  const std::vector<uint32_t> order = {1, 0, 1, 1, 0, 1};
  for (size_t i = 0; i < order.size(); ++i) EXPECT_EQ(touches[i].task, order[i]) << i;
  EXPECT_EQ(touches[0].time_ns, 125000000u);
  EXPECT_EQ(touches[1].time_ns, 250000000u);
  EXPECT_TRUE(of(r, EventOp::kTaskExit).empty());  // alive at the end, as a stream's task is
  EXPECT_EQ(r.info.files.size(), 2u);
  EXPECT_EQ(r.info.files[1].path, "b");
}

TEST_F(FileSet, ThreadsShareTheirProcesssMappings) {
  Config c = with_files({{"a", 1 << 20}});
  StreamDecl& s1 = add_stream(c, "t1", "a");
  s1.process = "app";
  s1.count = 10;
  s1.anon = 5 * 4096;
  StreamDecl& s2 = add_stream(c, "t2", "a");
  s2.process = "app";
  s2.count = 10;
  s2.op = workload::AccessOp::kWrite;
  add_stream(c, "other", "a").count = 10;
  const workload::Recording r = recorded(c);
  const auto starts = of(r, EventOp::kTaskStart);
  ASSERT_EQ(starts.size(), 3u);
  EXPECT_FALSE(starts[0].thread);
  EXPECT_TRUE(starts[1].thread);
  EXPECT_EQ(starts[1].arg, 0u);
  EXPECT_FALSE(starts[2].thread);
  // One mapping for the process (writable: a thread of it stores), one for the other.
  const auto maps = of(r, EventOp::kMmap);
  ASSERT_EQ(maps.size(), 2u);
  EXPECT_EQ(maps[0].arg & 2u, 2u);
  EXPECT_EQ(maps[1].arg & 2u, 0u);
  EXPECT_EQ(of(r, EventOp::kOpen).size(), 3u);  // an open file (f_ra) per stream
  const auto anon = of(r, EventOp::kAnon);
  ASSERT_EQ(anon.size(), 1u);
  EXPECT_EQ(anon[0].length, 5u);
  for (const Event& e : of(r, EventOp::kTouch)) {
    EXPECT_EQ(e.map, e.task == 2 ? 1u : 0u);
    EXPECT_EQ(e.write, e.task == 1);
  }
}

// A recording stream keeps its events, renumbered after the pattern
// streams' tasks, open files and mappings.
TEST_F(FileSet, ARecordingStreamJoinsWithItsOwnIds) {
  Config one;
  one.file.size = 1 << 20;
  one.access.count = 30;
  one.mapping.madvise = mm::Madvise::kRandom;
  const std::string rec = path("one.flr");
  ASSERT_TRUE(record_stream(one, rec).ok());
  Config c = with_files({{"a", 2 << 20}});
  add_stream(c, "mine", "a").count = 20;
  ASSERT_TRUE(add_entry(c, kStreamList, "theirs").ok());
  c.streams.back().recording = rec;
  const workload::Recording r = recorded(c);
  ASSERT_EQ(r.info.files.size(), 2u);
  EXPECT_EQ(r.info.files[1].path, "file");  // as record_stream names it
  ASSERT_EQ(r.info.tasks.size(), 2u);
  const auto touches = of(r, EventOp::kTouch);
  EXPECT_EQ(touches.size(), 50u);
  for (const Event& e : touches) EXPECT_EQ(e.map, e.task);  // each task's own mapping
  const auto opens = of(r, EventOp::kOpen);
  ASSERT_EQ(opens.size(), 2u);
  EXPECT_EQ(opens[1].file, 1u);
  const auto madv = of(r, EventOp::kMadvise);
  ASSERT_EQ(madv.size(), 1u);
  EXPECT_EQ(madv[0].map, 1u);
  // The model replays all of it.
  const RunResult res = run(c);
  EXPECT_EQ(res.get("model.replay_skipped", -1), 0.0);
  ASSERT_EQ(res.files.size(), 2u);
  EXPECT_GT(res.files[0].get("majflt"), 0.0);
  EXPECT_GT(res.files[1].get("majflt"), 0.0);
}

TEST_F(FileSet, BadEntriesNameTheirKey) {
  Config c = with_files({{"a", 1 << 20}});
  add_stream(c, "s", "b");
  Status st = validate(c);
  EXPECT_NE(st.message().find("streams.s.file"), std::string::npos) << st.message();
  c.streams.back().file = "a";
  c.streams.back().recording = "x.flr";
  st = validate(c);
  EXPECT_NE(st.message().find("streams.s:"), std::string::npos) << st.message();
  c.streams.back().recording.clear();
  c.streams.back().pattern = workload::Pattern::kTrace;
  EXPECT_NE(validate(c).message().find("streams.s.pattern"), std::string::npos);
  c.streams.back().pattern = workload::Pattern::kRandom;
  EXPECT_TRUE(validate(c).ok()) << validate(c).message();
  st = set_key(c, "files.nope.size", "1MiB");
  EXPECT_NE(st.message().find("no [[files]] entry named 'nope' (there are a)"), std::string::npos)
      << st.message();
  EXPECT_NE(set_key(c, "files.a.colour", "red").message().find("unknown key 'files.a.colour'"),
            std::string::npos);
  EXPECT_TRUE(set_key(c, "files.a.size", "8MiB").ok());
  EXPECT_EQ(c.files[0].size, 8u << 20);
  EXPECT_NE(add_entry(c, kFileList, "a").message().find("two entries named 'a'"),
            std::string::npos);
  EXPECT_FALSE(add_entry(c, kFileList, "has.dot").ok());
  c.files[0].size = 0;
  EXPECT_NE(validate(c).message().find("files.a.size"), std::string::npos);
  Config lone = with_files({{"a", 1 << 20}});
  EXPECT_NE(validate(lone).message().find("without [[streams]]"), std::string::npos);
}

}  // namespace
}  // namespace faultline::engine
