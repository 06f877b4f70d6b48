// recording_replay_test.cc — the recording replay against the stream
// replay, its oracle: a generated stream written as a recording (one file,
// one task) gives the same counters, event for event, on generated
// configurations; and what only recordings have (several files, processes,
// fork, munmap, anonymous memory) on small hand-made recordings.
#include "engine/recording_replay.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <random>

#include "engine/stream_recording.h"
#include "workload/recording.h"

namespace faultline::engine {
namespace {

namespace fs = std::filesystem;
using workload::Event;
using workload::EventOp;

class RecordingReplay : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("faultline-replay-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  static RunResult run(const Config& c) {
    auto r = make_serial_engine()->run(c, nullptr, {});
    EXPECT_TRUE(r.ok()) << r.status().message();
    return r.ok() ? *r : RunResult{};
  }

  fs::path dir_;
};

// A random configuration of the stream engine on a small file.
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
  c.file.cache = pick(workload::CacheState::kCold, workload::CacheState::kWarmRead,
                      workload::CacheState::kWarmWrite);
  c.device.read_ahead_kb = pick(128u, 512u, 8192u);
  c.kernel.profile = pick(mm::Release::k6_9, mm::Release::k6_15, mm::Release::k6_18,
                          mm::Release::k7_1, mm::Release::k7_4);
  c.kernel.mmap_miss_p1 = pick(false, true);
  c.kernel.mmap_miss_p2 = pick(false, true);
  c.mapping.shared = pick(true, true, false);
  c.mapping.madvise =
      pick(mm::Madvise::kNormal, mm::Madvise::kNormal, mm::Madvise::kRandom,
           mm::Madvise::kSequential, mm::Madvise::kWillneed, mm::Madvise::kHugepage);
  c.mapping.align_offset = pick(0ull, 0ull, 100ull);
  c.file.fadvise = pick(mm::Fadvise::kNormal, mm::Fadvise::kNormal, mm::Fadvise::kRandom,
                        mm::Fadvise::kSequential, mm::Fadvise::kWillneed, mm::Fadvise::kDontneed);
  c.access.pattern =
      pick(workload::Pattern::kRandom, workload::Pattern::kSequential, workload::Pattern::kStride);
  c.access.stride = pick(7ull, 1021ull);
  c.access.fraction = pick(0.05, 0.3, 1.0);
  c.access.seed = rng() % 1000;
  c.access.method = pick(workload::AccessMethod::kMmap, workload::AccessMethod::kMmap,
                         workload::AccessMethod::kRead);
  if (c.access.method == workload::AccessMethod::kRead) {
    c.access.read_size = pick(4096ull, 65536ull, 1ull << 20);
  } else {
    c.access.op =
        pick(workload::AccessOp::kRead, workload::AccessOp::kRead, workload::AccessOp::kWrite);
    c.access.dontneed_every = pick(0ull, 0ull, 500ull);
  }
  return c;
}

// The counters both replays report (the recording replay's extras aside).
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

TEST_F(RecordingReplay, AStreamAndItsRecordingGiveTheSameCounters) {
  std::mt19937_64 rng(2026);
  int checked = 0;
  for (int i = 0; i < 120; ++i) {
    Config c = generated(rng);
    if (!validate(c).ok()) continue;
    SCOPED_TRACE("generated scenario " + std::to_string(i));
    const RunResult stream = run(c);
    const std::string rec = path("s" + std::to_string(i) + ".flr");
    ASSERT_TRUE(record_stream(c, rec).ok());
    Config replay = c;
    replay.access.workload = workload::Kind::kRecording;
    replay.access.trace = rec;
    // The hints are events of the recording now.
    replay.mapping.madvise = mm::Madvise::kNormal;
    replay.file.fadvise = mm::Fadvise::kNormal;
    const RunResult recorded = run(replay);
    const auto a = common(stream), b = common(recorded);
    ASSERT_EQ(a.size(), b.size());
    for (size_t j = 0; j < a.size(); ++j) {
      EXPECT_EQ(a[j].name, b[j].name);
      EXPECT_EQ(a[j].value, b[j].value) << a[j].name;
    }
    EXPECT_EQ(stream.get("model.mmap_miss_max"), recorded.get("model.mmap_miss_max"));
    EXPECT_EQ(stream.get("model.page_cache_pages"), recorded.get("model.page_cache_pages"));
    EXPECT_EQ(recorded.get("model.replay_skipped"), 0);
    // One file: its share is the whole run.
    ASSERT_EQ(recorded.files.size(), 1u);
    EXPECT_EQ(recorded.files[0].get("pgpgin"), stream.get("pgpgin"));
    EXPECT_EQ(recorded.files[0].get("majflt"), stream.get("majflt"));
    ++checked;
  }
  EXPECT_GT(checked, 80);
}

// Two processes read two files: each file's counters are its own, and they
// add up to the run's.
TEST_F(RecordingReplay, CountersPerFileAddUpToTheRun) {
  const std::string rec = path("two.flr");
  {
    auto w = workload::RecordingWriter::create(rec);
    ASSERT_TRUE(w.ok());
    (*w)->add_file({"/d/a", 8 << 20});
    (*w)->add_file({"/d/b", 8 << 20});
    (*w)->add_task({10, 10, "p"});
    (*w)->add_task({11, 11, "q"});
    uint64_t t = 0;
    auto add = [&](Event e) {
      e.time_ns = t++;
      (*w)->append(e);
    };
    add({.op = EventOp::kTaskStart, .task = 0, .arg = workload::kNone32});
    add({.op = EventOp::kOpen, .task = 0, .file = 0});
    add({.op = EventOp::kMmap, .task = 0, .handle = 0, .arg = 1, .length = 2048});
    add({.op = EventOp::kTaskStart, .task = 1, .arg = 0});  // forked: inherits map 0
    add({.op = EventOp::kOpen, .task = 1, .file = 1});
    for (uint64_t p = 0; p < 2048; p += 64) {
      add({.op = EventOp::kTouch, .task = 0, .map = 0, .offset = p});
      add({.op = EventOp::kRead, .task = 1, .handle = 1, .offset = p << 12, .length = 4096});
    }
    add({.op = EventOp::kTouch, .task = 1, .map = 0, .offset = 0});  // the child's own PTE
    ASSERT_TRUE((*w)->finish(true, {}).ok());
  }
  Config c;
  c.access.workload = workload::Kind::kRecording;
  c.access.trace = rec;
  const RunResult r = run(c);
  ASSERT_EQ(r.files.size(), 2u);
  EXPECT_EQ(r.files[0].path, "/d/a");
  for (const char* name : {"pgpgin", "pgfault", "pgmajfault", "minflt", "majflt"}) {
    EXPECT_EQ(r.files[0].get(name) + r.files[1].get(name), r.get(name)) << name;
  }
  EXPECT_GT(r.files[0].get("pgpgin"), 0);
  EXPECT_GT(r.files[1].get("pgpgin"), 0);
  // File b is only read(2): no fault is its.
  EXPECT_EQ(r.files[1].get("pgfault"), 0);
  // The forked child faults on its own mapping of a (minor: the page is cached).
  EXPECT_EQ(r.files[0].get("majflt"), r.get("majflt"));
  EXPECT_EQ(r.get("model.replay_skipped"), 0);
}

// munmap ends a mapping: a touch after it is skipped, as the program would
// have died of SIGSEGV; a touch past the end of the file is a SIGBUS.
TEST_F(RecordingReplay, TouchesOutsideAMappingAreSkipped) {
  const std::string rec = path("unmap.flr");
  {
    auto w = workload::RecordingWriter::create(rec);
    ASSERT_TRUE(w.ok());
    (*w)->add_file({"/d/a", 1 << 20});
    (*w)->add_task({10, 10, "p"});
    uint64_t t = 0;
    auto add = [&](Event e) {
      e.time_ns = t++;
      (*w)->append(e);
    };
    add({.op = EventOp::kOpen, .task = 0, .file = 0});
    add({.op = EventOp::kMmap, .task = 0, .handle = 0, .arg = 1, .length = 512});
    add({.op = EventOp::kTouch, .task = 0, .map = 0, .offset = 0});
    add({.op = EventOp::kTouch, .task = 0, .map = 0, .offset = 300});  // past EOF (256 pages)
    add({.op = EventOp::kMunmap, .task = 0, .map = 0, .offset = 0, .length = 512});
    add({.op = EventOp::kTouch, .task = 0, .map = 0, .offset = 1});
    ASSERT_TRUE((*w)->finish(true, {}).ok());
  }
  Config c;
  c.access.workload = workload::Kind::kRecording;
  c.access.trace = rec;
  const RunResult r = run(c);
  EXPECT_EQ(r.get("model.replay_skipped"), 2);
  EXPECT_EQ(r.get("majflt"), 1);
  EXPECT_EQ(r.get("rss_file_kb"), 0);  // unmapped
}

TEST_F(RecordingReplay, AnonymousMemoryTakesTheCachesRoom) {
  // A 32 MiB file read twice under a 40 MiB limit: it fits, unless the
  // process holds 16 MiB of anonymous memory.
  auto recording = [&](const std::string& name, uint64_t anon_pages) {
    const std::string rec = path(name);
    auto w = workload::RecordingWriter::create(rec);
    EXPECT_TRUE(w.ok());
    (*w)->add_file({"/d/a", 32 << 20});
    (*w)->add_task({10, 10, "p"});
    uint64_t t = 0;
    auto add = [&](Event e) {
      e.time_ns = t++;
      (*w)->append(e);
    };
    add({.op = EventOp::kAnon, .task = 0, .length = anon_pages});
    add({.op = EventOp::kOpen, .task = 0, .file = 0});
    for (int pass = 0; pass < 2; ++pass) {
      for (uint64_t off = 0; off < (32u << 20); off += 1 << 20) {
        add({.op = EventOp::kRead, .task = 0, .handle = 0, .offset = off, .length = 1 << 20});
      }
    }
    EXPECT_TRUE((*w)->finish(true, {}).ok());
    return rec;
  };
  Config c;
  c.machine.memory_limit = 40ull << 20;
  c.access.workload = workload::Kind::kRecording;
  c.access.trace = recording("small.flr", 0);
  const double fits = run(c).get("pgpgin");
  c.access.trace = recording("anon.flr", 4096);
  const double squeezed = run(c).get("pgpgin");
  EXPECT_EQ(fits, 32 * 1024);
  EXPECT_GT(squeezed, 1.5 * fits);
}

TEST_F(RecordingReplay, AMissingRecordingIsNamed) {
  Config c;
  c.access.workload = workload::Kind::kRecording;
  c.access.trace = path("none.flr");
  auto r = make_serial_engine()->run(c, nullptr, {});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Status::Code::kNotFound);
  EXPECT_NE(r.status().message().find("none.flr"), std::string::npos);
}

}  // namespace
}  // namespace faultline::engine
