// import_test.cc — the importers on excerpts of what valgrind 3.19 lackey,
// perf 6.18, tracefs and trace-cmd 3.1 printed on Linux 6.18 on this
// project's machine, each with the /proc/PID/maps its process had (padding
// between fields shortened), and on strace lines in strace 6.1's shape and
// fio iologs. The canned lines were made in /tmp/flh/; a test writes them
// with its own directory in its place. Also: a recording exported as a fio
// iolog and imported again keeps its reads, malformed lines are named
// FILE:LINE, missing inputs are NotFound, and an error leaves no output.
#include "record/import.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <tuple>

#include "workload/recording.h"

namespace faultline::record {
namespace {

namespace fs = std::filesystem;
using workload::Event;
using workload::EventOp;
using workload::kNone32;

// A touch: task, map, page of the mapping, a store.
using TouchRow = std::tuple<uint32_t, uint32_t, uint64_t, bool>;
// An mmap: handle, first page of the file, pages, PROT_* bits, MAP_SHARED.
using MmapRow = std::tuple<uint32_t, uint64_t, uint64_t, uint32_t, bool>;

std::string lines(std::initializer_list<const char*> l) {
  std::string s;
  for (const char* x : l) (s += x) += '\n';
  return s;
}

class Import : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() /
           ("faultline-import-test-" + std::to_string(::getpid()) + "-" + info->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  // dir/name holding text, with the directory the canned lines were made in
  // replaced by dir.
  std::string write(const std::string& name, std::string text) {
    const std::string from = "/tmp/flh/", to = dir_.string() + "/";
    for (size_t p = text.find(from); p != std::string::npos; p = text.find(from, p + to.size())) {
      text.replace(p, from.size(), to);
    }
    const std::string path = (dir_ / name).string();
    std::ofstream(path, std::ios::binary) << text;
    return path;
  }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  std::string out() const { return path("out.flr"); }
  void make_file(const std::string& name, uint64_t size) {
    std::ofstream f(path(name), std::ios::binary);
    f.seekp(static_cast<std::streamoff>(size - 1));
    f.put('x');
  }

  Result<ImportReport> import(ImportFormat f, const std::string& in, ImportOptions o = {}) {
    o.version = "test";
    return import_recording(f, in, out(), o);
  }
  workload::Recording read(const std::string& p = "") {
    auto r = workload::read_recording(p.empty() ? out() : p);
    EXPECT_TRUE(r.ok()) << r.status().message();
    return r.ok() ? std::move(*r) : workload::Recording{};
  }

  static std::vector<Event> of(const workload::Recording& r, EventOp op) {
    std::vector<Event> v;
    for (const Event& e : r.events) {
      if (e.op == op) v.push_back(e);
    }
    return v;
  }
  static std::vector<TouchRow> touches(const workload::Recording& r) {
    std::vector<TouchRow> v;
    for (const Event& e : of(r, EventOp::kTouch)) v.emplace_back(e.task, e.map, e.offset, e.write);
    return v;
  }
  static std::vector<MmapRow> mmaps(const workload::Recording& r) {
    std::vector<MmapRow> v;
    for (const Event& e : of(r, EventOp::kMmap)) {
      v.emplace_back(e.handle, e.offset, e.length, e.arg & 0xff, (e.arg & workload::kMapShared));
    }
    return v;
  }
  static std::string condition(const workload::Recording& r, const std::string& key) {
    const std::string* v = r.info.condition(key);
    return v ? *v : "(none)";
  }
  // The output, or what a writer left of it (out.flr.tmp.PID).
  bool any_output() const {
    for (const auto& e : fs::directory_iterator(dir_)) {
      if (e.path().filename().string().rfind("out.flr", 0) == 0) return true;
    }
    return false;
  }
  static bool has(const Status& s, const std::string& text) {
    return s.message().find(text) != std::string::npos;
  }

  fs::path dir_;
};

// ---- strace ----

const std::string kStraceLog = lines({
    "15017 1796246206.457122 openat(AT_FDCWD</tmp>, \"/tmp/flh/data.bin\", O_RDONLY|O_CLOEXEC) = "
    "3</tmp/flh/data.bin>",
    "15017 1796246206.457161 read(3</tmp/flh/data.bin>, \"\"..., 4096) = 4096",
    "15017 1796246206.457932 pread64(3</tmp/flh/data.bin>, \"\"..., 4096, 8192) = 4096",
    "15017 1796246206.458311 mmap(NULL, 1048576, PROT_READ, MAP_SHARED, 3</tmp/flh/data.bin>, "
    "0x1000) = 0x7f36695df000",
    "15017 1796246206.458400 openat(AT_FDCWD</tmp>, \"/usr/lib/x86_64-linux-gnu/libc.so.6\", "
    "O_RDONLY|O_CLOEXEC) = 4</usr/lib/x86_64-linux-gnu/libc.so.6>",
    "15017 1796246206.458498 close(3</tmp/flh/data.bin>) = 0",
    "15017 1796246206.458600 +++ exited with 0 +++",
});

TEST_F(Import, StraceReadsAndMappingsOfDataFiles) {
  make_file("data.bin", 2 << 20);
  auto rep = import(ImportFormat::kStrace, write("strace.log", kStraceLog));
  ASSERT_TRUE(rep.ok()) << rep.status().message();
  EXPECT_EQ(rep->lines, 7u);
  const workload::Recording r = read();
  ASSERT_EQ(r.info.files.size(), 1u);  // libc is the system's
  EXPECT_EQ(r.info.files[0].path, path("data.bin"));
  EXPECT_EQ(r.info.files[0].size, 2u << 20);
  const auto reads = of(r, EventOp::kRead);
  ASSERT_EQ(reads.size(), 2u);
  EXPECT_EQ(reads[0].offset, 0u);
  EXPECT_EQ(reads[0].length, 4096u);
  EXPECT_EQ(reads[1].offset, 8192u);
  EXPECT_EQ(reads[1].time_ns, 810000u);  // 457932 - 457122 microseconds
  EXPECT_EQ(mmaps(r), (std::vector<MmapRow>{{0, 1, 256, 1, true}}));
  EXPECT_EQ(condition(r, "import.sees"), "system calls; no access through a mapping");
  EXPECT_EQ(condition(r, "source").rfind("strace log ", 0), 0u);
}

// git opens directories to list them: no pages, not files of the recording.
TEST_F(Import, StraceDirectoriesAreNotFiles) {
  make_file("data.bin", 8192);
  std::filesystem::create_directories(path("objects"));
  const std::string log = lines({
      "7 1.000000 openat(AT_FDCWD</tmp>, \"/tmp/flh/refs\", O_RDONLY|O_NONBLOCK|O_CLOEXEC|"
      "O_DIRECTORY) = 3</tmp/flh/refs>",
      "7 1.000100 openat(AT_FDCWD</tmp>, \"/tmp/flh/objects\", O_RDONLY|O_CLOEXEC) = "
      "4</tmp/flh/objects>",
      "7 1.000200 openat(AT_FDCWD</tmp>, \"/tmp/flh/data.bin\", O_RDONLY) = 5</tmp/flh/data.bin>",
      "7 1.000300 read(5</tmp/flh/data.bin>, \"\"..., 4096) = 4096",
      "7 1.000400 +++ exited with 0 +++",
  });
  auto rep = import(ImportFormat::kStrace, write("strace.log", log));
  ASSERT_TRUE(rep.ok()) << rep.status().message();
  const workload::Recording r = read();
  ASSERT_EQ(r.info.files.size(), 1u);
  EXPECT_EQ(r.info.files[0].path, path("data.bin"));
  EXPECT_EQ(of(r, EventOp::kRead).size(), 1u);
}

TEST_F(Import, StraceLogThatIsNotOneNamesItsFirstLine) {
  const std::string in = write("strace.log", "hello\nworld\n");
  auto rep = import(ImportFormat::kStrace, in);
  ASSERT_FALSE(rep.ok());
  EXPECT_EQ(rep.status().code(), Status::Code::kInvalidArgument);
  EXPECT_TRUE(has(rep.status(), in + ":1:")) << rep.status().message();
  EXPECT_FALSE(any_output());
}

// ---- fio ----

TEST_F(Import, FioIologV2ReadsWaitsAndSkippedWrites) {
  const std::string iolog = lines({
      "fio version 2 iolog",
      "/tmp/flh/data.bin add",
      "/tmp/flh/data.bin open",
      "/tmp/flh/data.bin read 25976832 4096",
      "/tmp/flh/data.bin wait 1500 0",
      "/tmp/flh/data.bin write 0 4096",
      "/tmp/flh/data.bin read 0 8192",
      "/tmp/flh/data.bin close",
  });
  auto rep = import(ImportFormat::kFio, write("job.iolog", iolog));
  ASSERT_TRUE(rep.ok()) << rep.status().message();
  EXPECT_EQ(rep->skipped, 1u);  // the write
  const workload::Recording r = read();
  ASSERT_EQ(r.info.files.size(), 1u);
  EXPECT_EQ(r.info.files[0].size, 25976832u + 4096);  // gone here: as far as fio reached
  const auto reads = of(r, EventOp::kRead);
  ASSERT_EQ(reads.size(), 2u);
  EXPECT_EQ(reads[0].offset, 25976832u);
  EXPECT_EQ(reads[1].offset, 0u);
  EXPECT_EQ(reads[1].length, 8192u);
  EXPECT_EQ(reads[1].time_ns, 1500000u);  // wait 1500 microseconds
  EXPECT_EQ(of(r, EventOp::kClose).size(), 1u);
}

TEST_F(Import, FioRoundTripThroughExportKeepsTheReads) {
  const std::string job = lines({
      "fio version 3 iolog",
      "0 /tmp/flh/a.bin add",
      "0 /tmp/flh/b.bin add",
      "0 /tmp/flh/a.bin open",
      "3 /tmp/flh/a.bin read 4096 4096",
      "5 /tmp/flh/b.bin read 1048576 131072",
      "9 /tmp/flh/a.bin read 0 512",
      "12 /tmp/flh/a.bin close",
  });
  const std::string v3 = write("job.iolog", job);
  ASSERT_TRUE(import(ImportFormat::kFio, v3).ok());
  const workload::Recording first = read();
  const std::string iolog = path("exported.iolog");
  ASSERT_TRUE(export_fio_iolog(out(), iolog).ok());
  auto again = import_recording(ImportFormat::kFio, iolog, path("again.flr"), {});
  ASSERT_TRUE(again.ok()) << again.status().message();
  const workload::Recording second = read(path("again.flr"));

  using ReadRow = std::tuple<std::string, uint64_t, uint64_t, uint64_t>;  // path, offset, len, ms
  auto reads = [](const workload::Recording& r) {
    std::vector<uint32_t> handle_file;
    std::vector<ReadRow> v;
    for (const Event& e : r.events) {
      if (e.op == EventOp::kOpen) handle_file.push_back(e.file);
      if (e.op == EventOp::kRead) {
        v.emplace_back(r.info.files[handle_file[e.handle]].path, e.offset, e.length,
                       e.time_ns / 1000000);
      }
    }
    return v;
  };
  const std::vector<ReadRow> want = {{path("a.bin"), 4096, 4096, 3},
                                     {path("b.bin"), 1048576, 131072, 5},
                                     {path("a.bin"), 0, 512, 9}};
  EXPECT_EQ(reads(first), want);
  EXPECT_EQ(reads(second), want);
  EXPECT_EQ(second.info.files.size(), 2u);
}

TEST_F(Import, FioMalformedLinesNameFileAndLine) {
  std::string in = write("bad.iolog", "fio version 2 iolog\nf add\nf read 12x 4096\n");
  auto rep = import(ImportFormat::kFio, in);
  ASSERT_FALSE(rep.ok());
  EXPECT_TRUE(has(rep.status(), in + ":3:")) << rep.status().message();
  in = write("bad.iolog", "fio version 3 iolog\n0 f add\n1 f frobnicate\n");
  rep = import(ImportFormat::kFio, in);
  ASSERT_FALSE(rep.ok());
  EXPECT_TRUE(has(rep.status(), in + ":3: unknown action 'frobnicate'")) << rep.status().message();
  in = write("bad.iolog", "f read 0 4096\n");
  rep = import(ImportFormat::kFio, in);
  ASSERT_FALSE(rep.ok());
  EXPECT_TRUE(has(rep.status(), in + ":1: not a fio iolog")) << rep.status().message();
}

// ---- lackey ----

// /proc/PID/maps of ./t under valgrind (t.c maps 32 pages of data.bin from
// page 1 MAP_SHARED read-only, and 16 from page 0 MAP_PRIVATE read-write).
const std::string kLackeyMaps = lines({
    "00108000-00109000 r--p 00000000 fe:00 10977765 /tmp/flh/t",
    "00109000-0010a000 r-xp 00001000 fe:00 10977765 /tmp/flh/t",
    "0010a000-0010b000 r--p 00002000 fe:00 10977765 /tmp/flh/t",
    "0010b000-0010c000 r--p 00002000 fe:00 10977765 /tmp/flh/t",
    "0010c000-0010d000 rw-p 00003000 fe:00 10977765 /tmp/flh/t",
    "04000000-04001000 r--p 00000000 fe:00 332383 /usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2",
    "04001000-04027000 r-xp 00001000 fe:00 332383 /usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2",
    "04035000-04056000 rwxp 00000000 00:00 0 ",
    "04a1a000-04a1c000 rw-p 001d3000 fe:00 332835 /usr/lib/x86_64-linux-gnu/libc.so.6",
    "04a1c000-04a2c000 rw-p 00000000 00:00 0 ",
    "04a2c000-04a4c000 r--s 00001000 fe:00 10977763 /tmp/flh/data.bin",
    "04a4c000-04a5c000 rw-p 00000000 fe:00 10977763 /tmp/flh/data.bin",
    "58000000-58001000 r--p 00000000 fe:00 335458 /usr/libexec/valgrind/lackey-amd64-linux",
    "1002890000-1002891000 rw-s 00000000 fe:00 10952791 "
    "/tmp/vgdb-pipe-shared-mem-vgdb-27468-by-\?\?\?-on-\?\?\?",
    "1ffeffe000-1fff001000 rw-p 00000000 00:00 0 ",
    "7ffc43a18000-7ffc43a39000 rw-p 00000000 00:00 0 [stack]",
});

// valgrind --tool=lackey --trace-mem=yes ./t: the loads of every third
// page of the shared mapping, the modifies of pages 0-3 of the private one,
// and an 8-byte load and store across its pages 4 and 5 (fewer I lines).
const std::string kLackeyOut = lines({
    "==27468== Lackey, an example Valgrind tool",
    "==27468== Copyright (C) 2002-2017, and GNU GPL'd, by Nicholas Nethercote.",
    "==27468== Using Valgrind-3.19.0 and LibVEX; rerun with -h for copyright info",
    "==27468== Command: ./t",
    "==27468== Parent PID: 27465",
    "==27468== ",
    "I  0401ab70,3",
    " S 04a1b868,16",  // libc's data
    " L 0010c038,8",   // the program's own data
    "I  00109249,8",
    " L 1fff0005e8,8",  // the stack
    "I  00109251,4",
    " L 04a2c000,1",
    "I  00109255,3",
    " S 1fff0005e8,8",
    " L 04a2f000,1",
    " L 04a32000,1",
    " L 04a35000,1",
    " L 04a38000,1",
    " L 04a3b000,1",
    " L 04a3e000,1",
    " L 04a41000,1",
    " L 04a44000,1",
    " L 04a47000,1",
    " L 04a4a000,1",
    "I  0010926b,4",
    " M 04a4c007,1",
    "I  0010926f,7",
    " M 04a4d007,1",
    " M 04a4e007,1",
    " M 04a4f007,1",
    "I  00109284,7",
    " L 04a50ffc,8",
    "I  0010928b,4",
    "I  0010928f,7",
    " S 04a50ffc,8",
    " S 1002890010,4",  // valgrind's gdbserver page
    "I  00109296,5",
    "==27468== ",
    "==27468== Exit code:       0",
});

TEST_F(Import, LackeyTouchesPagesOfDataFileMappings) {
  make_file("data.bin", 64 * 4096);
  ImportOptions o;
  o.maps = write("maps.txt", kLackeyMaps);
  auto rep = import(ImportFormat::kLackey, write("lackey.out", kLackeyOut), o);
  ASSERT_TRUE(rep.ok()) << rep.status().message();
  EXPECT_EQ(rep->lines, 40u);
  const workload::Recording r = read();
  // Only data.bin: not the program, its libraries, valgrind's own files.
  ASSERT_EQ(r.info.files.size(), 1u);
  EXPECT_EQ(r.info.files[0].path, path("data.bin"));
  EXPECT_EQ(r.info.files[0].size, 64u * 4096);
  ASSERT_EQ(r.info.tasks.size(), 1u);
  EXPECT_EQ(r.info.tasks[0].tid, 27468u);
  EXPECT_EQ(r.info.tasks[0].comm, "t");
  EXPECT_EQ(of(r, EventOp::kOpen).size(), 1u);
  const uint32_t kRead = 1, kReadWrite = 3;
  EXPECT_EQ(mmaps(r),
            (std::vector<MmapRow>{{0, 1, 32, kRead, true}, {0, 0, 16, kReadWrite, false}}));
  std::vector<TouchRow> want;
  for (uint64_t p = 0; p < 32; p += 3) want.emplace_back(0, 0, p, false);
  for (uint64_t p = 0; p < 4; ++p) want.emplace_back(0, 1, p, true);
  want.emplace_back(0, 1, 4, false);  // the load across pages 4 and 5 touches both;
  want.emplace_back(0, 1, 5, false);  // the store after it is in the same epoch
  EXPECT_EQ(touches(r), want);
  // Times are access numbers: the first data touch follows 3 accesses elsewhere.
  const auto t = of(r, EventOp::kTouch);
  EXPECT_EQ(t.front().time_ns, 3u);
  for (size_t i = 1; i < t.size(); ++i) EXPECT_LE(t[i - 1].time_ns, t[i].time_ns);
  EXPECT_EQ(t[1].time_ns, 5u);  // the stack store between them counts
  EXPECT_EQ(condition(r, "epoch_pages"), "8192");
  EXPECT_EQ(r.events.front().op, EventOp::kTaskStart);
}

TEST_F(Import, LackeyTouchesAPageOncePerEpochOf8192Pages) {
  ImportOptions o;
  o.maps = write("maps.txt", "10000000-12800000 r--s 00000000 fe:00 12 /tmp/flh/big.bin\n");
  std::string in = "==1== Command: /usr/bin/big-reader --fast\n";
  auto access = [&](char op, uint64_t page) {
    char buf[64];
    std::snprintf(buf, sizeof buf, " %c %08llx,4\n", op,
                  static_cast<unsigned long long>(0x10000000 + page * 4096));
    in += buf;
  };
  access('L', 0);
  access('L', 0);  // the same epoch: not again
  access('S', 1);
  access('L', 1);
  for (uint64_t p = 2; p < 8192; ++p) access('L', p);
  access('L', 0);     // 8192 pages touched, but not a new one: still the same epoch
  access('L', 8192);  // a new page: it starts the next epoch
  access('L', 0);
  access('S', 1);
  auto rep = import(ImportFormat::kLackey, write("lackey.out", in), o);
  ASSERT_TRUE(rep.ok()) << rep.status().message();
  const workload::Recording r = read();
  EXPECT_EQ(r.info.tasks[0].comm, "big-reader");
  const auto t = touches(r);
  ASSERT_EQ(t.size(), 8195u);
  EXPECT_EQ(t[0], (TouchRow{0, 0, 0, false}));
  EXPECT_EQ(t[1], (TouchRow{0, 0, 1, true}));
  EXPECT_EQ(t[2], (TouchRow{0, 0, 2, false}));
  EXPECT_EQ(t[8191], (TouchRow{0, 0, 8191, false}));
  EXPECT_EQ(t[8192], (TouchRow{0, 0, 8192, false}));
  EXPECT_EQ(t[8193], (TouchRow{0, 0, 0, false}));
  EXPECT_EQ(t[8194], (TouchRow{0, 0, 1, true}));
  EXPECT_EQ(r.info.files[0].size, 8193u * 4096);  // gone here: the furthest page touched
}

TEST_F(Import, LackeyNeedsMapsAndNamesBadLines) {
  const std::string in = write("lackey.out", kLackeyOut);
  auto rep = import(ImportFormat::kLackey, in);
  ASSERT_FALSE(rep.ok());
  EXPECT_EQ(rep.status().code(), Status::Code::kInvalidArgument);
  EXPECT_TRUE(has(rep.status(), "--maps")) << rep.status().message();

  ImportOptions o;
  o.maps = write("maps.txt", kLackeyMaps + "04a5c000-04a5d000 rw-q 00000000 00:00 0\n");
  rep = import(ImportFormat::kLackey, in, o);
  ASSERT_FALSE(rep.ok());
  EXPECT_TRUE(has(rep.status(), o.maps + ":17: expected permissions")) << rep.status().message();
  o.maps = write("maps.txt", "04a2c000 r--s 00001000 fe:00 10977763 /tmp/flh/data.bin\n");
  rep = import(ImportFormat::kLackey, in, o);
  ASSERT_FALSE(rep.ok());
  EXPECT_TRUE(has(rep.status(), o.maps + ":1: expected START-END")) << rep.status().message();

  o.maps = write("maps.txt", kLackeyMaps);
  const std::string bad = write("bad.out", "==1== Command: ./t\nI  0401ab70,3\n L 04a2c0zz,1\n");
  rep = import(ImportFormat::kLackey, bad, o);
  ASSERT_FALSE(rep.ok());
  EXPECT_TRUE(has(rep.status(), bad + ":3: expected ' L|S|M ADDRESS,SIZE'"))
      << rep.status().message();
  rep = import(ImportFormat::kLackey, write("other.out", "hello\n"), o);
  ASSERT_FALSE(rep.ok());
  EXPECT_TRUE(has(rep.status(), "no lackey lines")) << rep.status().message();
  rep = import(ImportFormat::kLackey, path("missing.out"), o);
  ASSERT_FALSE(rep.ok());
  EXPECT_EQ(rep.status().code(), Status::Code::kNotFound);
  EXPECT_TRUE(has(rep.status(), path("missing.out") + ": cannot open lackey output"))
      << rep.status().message();
  EXPECT_FALSE(any_output());
}

// ---- perf ----

// /proc/PID/maps of ./t under perf record -e page-faults -c 1 -d.
const std::string kPerfMaps = lines({
    "5592e64ee000-5592e64ef000 r--p 00000000 fe:00 10977765 /tmp/flh/t",
    "5592e64ef000-5592e64f0000 r-xp 00001000 fe:00 10977765 /tmp/flh/t",
    "5592e64f2000-5592e64f3000 rw-p 00003000 fe:00 10977765 /tmp/flh/t",
    "5592f3fdf000-5592f4000000 rw-p 00000000 00:00 0 [heap]",
    "7f69c2999000-7f69c29a9000 rw-p 00000000 fe:00 10977763 /tmp/flh/data.bin",
    "7f69c29a9000-7f69c29c9000 r--s 00001000 fe:00 10977763 /tmp/flh/data.bin",
    "7f69c29c9000-7f69c29cc000 rw-p 00000000 00:00 0 ",
    "7f69c29cc000-7f69c29f2000 r--p 00000000 fe:00 332835 /usr/lib/x86_64-linux-gnu/libc.so.6",
    "7f69c29f2000-7f69c2b48000 r-xp 00026000 fe:00 332835 /usr/lib/x86_64-linux-gnu/libc.so.6",
    "7f69c2bf6000-7f69c2bf8000 rw-p 00033000 fe:00 332383 "
    "/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2",
    "7ffe27043000-7ffe27064000 rw-p 00000000 00:00 0 [stack]",
});

// perf script -F tid,time,addr.
const std::string kPerfScript = lines({
    "24964  6146.969728:     5592e64f2058", "24964  6146.969761:     7f69c2bf7110",
    "24964  6146.969779:     7ffe27062f60", "24964  6146.970270:     7f69c29cc318",
    "24964  6146.970293:     7f69c29c9740", "24964  6146.970503:     7f69c29a9000",
    "24964  6146.970509:     7f69c29bb000", "24964  6146.970513:     7f69c29c1000",
    "24964  6146.970516:     7f69c2999007", "24964  6146.970521:     7f69c299a007",
    "24964  6146.970525:     7f69c299b007", "24964  6146.970529:     7f69c299c007",
    "24964  6146.970532:     7f69c299dffc", "24964  6146.970535:     7f69c299dffc",
    "24964  6146.970539:     7f69c299e000", "24964  6146.970580:     5592f3fdf008",
    "24964  6146.971037:     7f0000001000",  // in no line of the maps
});

TEST_F(Import, PerfFaultsOfDataFileMappings) {
  ImportOptions o;
  o.maps = write("maps.txt", kPerfMaps);
  auto rep = import(ImportFormat::kPerf, write("perf.txt", kPerfScript), o);
  ASSERT_TRUE(rep.ok()) << rep.status().message();
  EXPECT_EQ(rep->lines, 17u);
  EXPECT_EQ(rep->skipped, 7u);
  const workload::Recording r = read();
  ASSERT_EQ(r.info.files.size(), 1u);
  EXPECT_EQ(r.info.files[0].path, path("data.bin"));
  EXPECT_EQ(r.info.files[0].size, 26u * 4096);  // gone here: the furthest page faulted (1 + 24)
  ASSERT_EQ(r.info.tasks.size(), 1u);
  EXPECT_EQ(r.info.tasks[0].tid, 24964u);
  EXPECT_EQ(mmaps(r), (std::vector<MmapRow>{{0, 0, 16, 3, false}, {0, 1, 32, 1, true}}));
  EXPECT_EQ(touches(r), (std::vector<TouchRow>{{0, 1, 0, false},
                                               {0, 1, 18, false},
                                               {0, 1, 24, false},
                                               {0, 0, 0, false},
                                               {0, 0, 1, false},
                                               {0, 0, 2, false},
                                               {0, 0, 3, false},
                                               {0, 0, 4, false},
                                               {0, 0, 4, false},
                                               {0, 0, 5, false}}));
  const auto t = of(r, EventOp::kTouch);
  EXPECT_EQ(t.front().time_ns, 775000u);  // 6146.970503 - 6146.969728
  EXPECT_EQ(condition(r, "import.sees"),
            "page faults only: accesses that did not fault (cached PTEs, fault-around) are not "
            "in the recording");
  EXPECT_EQ(condition(r, "faults_outside_maps"), "1");
  EXPECT_EQ(condition(r, "limit.perf_sampled"), "(none)");
}

TEST_F(Import, PerfFaultsExportedForFioAreReadsOfTheirPages) {
  ImportOptions o;
  o.maps = write("maps.txt", kPerfMaps);
  ASSERT_TRUE(import(ImportFormat::kPerf, write("perf.txt", kPerfScript), o).ok());
  const std::string iolog = path("faults.iolog");
  ASSERT_TRUE(export_fio_iolog(out(), iolog).ok());
  ASSERT_TRUE(import_recording(ImportFormat::kFio, iolog, path("fio.flr"), {}).ok());
  std::vector<uint64_t> offsets;
  for (const Event& e : of(read(path("fio.flr")), EventOp::kRead)) {
    EXPECT_EQ(e.length, 4096u);
    offsets.push_back(e.offset / 4096);
  }
  // The file's pages: the shared mapping starts at page 1, the private at 0.
  EXPECT_EQ(offsets, (std::vector<uint64_t>{1, 19, 25, 0, 1, 2, 3, 4, 4, 5}));
}

TEST_F(Import, PerfThreadsAndForkedProcesses) {
  // t2.c: main faults page 0, a thread pages 8-11, a forked child page 20,
  // main page 30; the shell its system() ran is another program (its fault's
  // address moved into the data mapping here, to show it is left out).
  ImportOptions o;
  const std::string maps = lines({
      "560eab78e000-560eab78f000 r--p 00000000 fe:00 10977547 /tmp/flh/t2",
      "560eab78f000-560eab790000 r-xp 00001000 fe:00 10977547 /tmp/flh/t2",
      "7f2594f17000-7f2594f57000 r--s 00000000 fe:00 10977763 /tmp/flh/data.bin",
      "7f2594f5a000-7f2594f80000 r--p 00000000 fe:00 332835 "
      "/usr/lib/x86_64-linux-gnu/libc.so.6",
  });
  o.maps = write("maps.txt", maps);
  const std::string script = lines({
      "              t2 27524/27524  6580.993522: page-faults:     560eab792070 __TMC_END__ "
      "(/tmp/flh/t2) ffffffff8177821a elf_load ([kernel.kallsyms])",
      "              t2 27524/27524  6581.010338: page-faults:     7f2594f17000 [unknown] "
      "(/tmp/flh/data.bin)     560eab78f2b9 main (/tmp/flh/t2)",
      "              sh 27526/27526  6581.010400: page-faults:     7f2594f18000 [unknown] "
      "(//anon) ffffffff8177821a elf_load ([kernel.kallsyms])",
      "              t2 27524/27528  6581.010686: page-faults:     7f2594f1f000 [unknown] "
      "(/tmp/flh/data.bin)     560eab78f1f0 th (/tmp/flh/t2)",
      "              t2 27524/27528  6581.011581: page-faults:     7f2594f20000 [unknown] "
      "(/tmp/flh/data.bin)     560eab78f1f7 th (/tmp/flh/t2)",
      "              t2 27524/27528  6581.013638: page-faults:     7f2594f21000 [unknown] "
      "(/tmp/flh/data.bin)     560eab78f1fe th (/tmp/flh/t2)",
      "              t2 27524/27528  6581.013811: page-faults:     7f2594f22000 [unknown] "
      "(/tmp/flh/data.bin)     560eab78f205 th (/tmp/flh/t2)",
      "              t2 27529/27529  6581.014332: page-faults:     7f2594f2b000 [unknown] "
      "(/tmp/flh/data.bin)     560eab78f2f6 main (/tmp/flh/t2)",
      "              t2 27524/27524  6581.015792: page-faults:     7f2594f35000 [unknown] "
      "(/tmp/flh/data.bin)     560eab78f318 main (/tmp/flh/t2)",
  });
  const std::string in = write("perf.txt", script);
  auto rep = import(ImportFormat::kPerf, in, o);
  ASSERT_TRUE(rep.ok()) << rep.status().message();
  const workload::Recording r = read();
  EXPECT_EQ(rep->skipped, 2u);  // the program's own page, sh's fault
  ASSERT_EQ(r.info.tasks.size(), 3u);
  EXPECT_EQ(r.info.tasks[0].tid, 27524u);
  EXPECT_EQ(r.info.tasks[0].comm, "t2");
  EXPECT_EQ(r.info.tasks[1].tid, 27528u);
  EXPECT_EQ(r.info.tasks[1].pid, 27524u);
  EXPECT_EQ(r.info.tasks[2].tid, 27529u);
  EXPECT_EQ(r.info.tasks[2].pid, 27529u);
  const auto starts = of(r, EventOp::kTaskStart);
  ASSERT_EQ(starts.size(), 3u);
  EXPECT_EQ(starts[0].arg, kNone32);
  EXPECT_EQ(starts[1].task, 1u);
  EXPECT_TRUE(starts[1].thread);  // 27528 is a thread of 27524
  EXPECT_EQ(starts[1].arg, 0u);
  EXPECT_EQ(starts[2].task, 2u);
  EXPECT_FALSE(starts[2].thread);  // 27529 a process forked from it
  EXPECT_EQ(starts[2].arg, 0u);
  EXPECT_EQ(touches(r), (std::vector<TouchRow>{{0, 0, 0, false},
                                               {1, 0, 8, false},
                                               {1, 0, 9, false},
                                               {1, 0, 10, false},
                                               {1, 0, 11, false},
                                               {2, 0, 20, false},
                                               {0, 0, 30, false}}));
}

TEST_F(Import, PerfExceptionsTracepointSaysWhichFaultsAreStores) {
  ImportOptions o;
  const std::string maps = lines({
      "56471eba9000-56471ebaa000 r-xp 00001000 fe:00 10977765 /tmp/flh/t",
      "7f9677400000-7f9677410000 rw-p 00000000 fe:00 10977763 /tmp/flh/data.bin",
      "7f9677410000-7f9677430000 r--s 00001000 fe:00 10977763 /tmp/flh/data.bin",
  });
  o.maps = write("maps.txt", maps);
  const std::string script = lines({
      "               t 26234 [001]  6320.635309: exceptions:page_fault_user: "
      "address=0x7f9677410000 ip=0x56471eba9251 error_code=0x4",
      "               t 26234 [001]  6320.635497: exceptions:page_fault_user: "
      "address=0x7f9677400007 ip=0x56471eba926b error_code=0x6",
      "               t 26234 [001]  6320.635512: exceptions:page_fault_user: "
      "address=0x7f9677404ffc ip=0x56471eba9284 error_code=0x4",
      "               t 26234 [001]  6320.635516: exceptions:page_fault_user: "
      "address=0x7f9677404ffc ip=0x56471eba928f error_code=0x7",
      "               t 26234 [001]  6320.635520: sched:sched_switch: prev_comm=t",
  });
  const std::string in = write("perf.txt", script);
  auto rep = import(ImportFormat::kPerf, in, o);
  ASSERT_TRUE(rep.ok()) << rep.status().message();
  EXPECT_EQ(rep->skipped, 1u);  // another event
  const workload::Recording r = read();
  EXPECT_EQ(r.info.tasks[0].comm, "t");
  EXPECT_EQ(touches(r), (std::vector<TouchRow>{
                            {0, 1, 0, false}, {0, 0, 0, true}, {0, 0, 4, false}, {0, 0, 4, true}}));
}

TEST_F(Import, PerfNeedsTheDataAddressAndNamesBadLines) {
  ImportOptions o;
  o.maps = write("maps.txt", kPerfMaps);
  // perf script's default fields: the kernel's instruction address, no data address.
  const std::string script = lines({
      "               t 24964  6146.969728:          1 "
      "page-faults:  ffffffff8177821a elf_load+0x28a "
      "([kernel.kallsyms])",
  });
  std::string in = write("perf.txt", script);
  auto rep = import(ImportFormat::kPerf, in, o);
  ASSERT_FALSE(rep.ok());
  EXPECT_TRUE(has(rep.status(), in + ":1: ffffffff8177821a is a kernel address"))
      << rep.status().message();
  EXPECT_TRUE(has(rep.status(), "-F tid,time,addr")) << rep.status().message();
  in = write("perf.txt", "24964  6146.969728:     5592e64f2058\n24964  6146.969761:     zz\n");
  rep = import(ImportFormat::kPerf, in, o);
  ASSERT_FALSE(rep.ok());
  EXPECT_TRUE(has(rep.status(), in + ":2: expected the fault's data address"))
      << rep.status().message();
  in = write("perf.txt", "6146.969728:     5592e64f2058\n");
  rep = import(ImportFormat::kPerf, in, o);
  ASSERT_FALSE(rep.ok());
  EXPECT_TRUE(has(rep.status(), in + ":1: expected the thread id")) << rep.status().message();
  rep = import(ImportFormat::kPerf, write("perf.txt", kPerfScript));
  ASSERT_FALSE(rep.ok());
  EXPECT_TRUE(has(rep.status(), "perf prints virtual addresses: --maps")) << rep.status().message();
  rep = import(ImportFormat::kPerf, path("missing.txt"), o);
  ASSERT_FALSE(rep.ok());
  EXPECT_EQ(rep.status().code(), Status::Code::kNotFound);
  EXPECT_TRUE(has(rep.status(), path("missing.txt") + ": cannot open perf script output"))
      << rep.status().message();
  EXPECT_FALSE(any_output());
  // A period above 1: perf sampled the faults.
  rep = import(ImportFormat::kPerf,
               write("perf.txt", "t 24964  6146.970503:  3 page-faults:  7f69c29a9000\n"), o);
  ASSERT_TRUE(rep.ok()) << rep.status().message();
  EXPECT_NE(condition(read(), "limit.perf_sampled"), "(none)");
}

// ---- tracepoints ----

// The trace file of a tracefs instance with filemap:mm_filemap_fault and
// mm_filemap_map_pages enabled while ./t ran.
const std::string kTracefs = lines({
    "# tracer: nop",
    "#",
    "# entries-in-buffer/entries-written: 67/67   #P:2",
    "#",
    "#           TASK-PID     CPU#  |||||  TIMESTAMP  FUNCTION",
    "#              | |         |   |||||     |         |",
    "               t-25229   [000] .....  6225.415503: mm_filemap_map_pages: dev=254:0 "
    "ino=51423 ofs=811008-876543",
    "               t-25229   [000] .....  6225.415817: mm_filemap_fault: dev=254:0 ino=a781e5 "
    "ofs=12288",
    "               t-25229   [000] .....  6225.415837: mm_filemap_fault: dev=254:0 ino=5125f "
    "ofs=212992",
    "               t-25229   [000] .....  6225.415856: mm_filemap_fault: dev=254:0 ino=5125f "
    "ofs=208896",
    "               t-25229   [000] .....  6225.416411: mm_filemap_map_pages: dev=254:0 "
    "ino=a781e3 ofs=4096-69631",
    "               t-25229   [000] .....  6225.416420: mm_filemap_fault: dev=254:0 ino=a781e3 "
    "ofs=0",
    "               t-25229   [000] .....  6225.416423: mm_filemap_fault: dev=254:0 ino=a781e3 "
    "ofs=4096",
    "               t-25229   [000] .....  6225.416431: mm_filemap_fault: dev=254:0 ino=a781e3 "
    "ofs=8192",
    "               t-25229   [000] .....  6225.417091: mm_filemap_fault: dev=254:0 ino=a781e3 "
    "ofs=8192",
    "               t-25229   [000] .....  6225.417096: mm_filemap_fault: dev=254:0 ino=a781e3 "
    "ofs=12288",
});

TEST_F(Import, TracepointsFaultsOfEachFile) {
  auto rep = import(ImportFormat::kTracepoints, write("trace", kTracefs));
  ASSERT_TRUE(rep.ok()) << rep.status().message();
  EXPECT_EQ(rep->lines, 16u);
  EXPECT_EQ(rep->skipped, 8u);  // the header and mm_filemap_map_pages
  const workload::Recording r = read();
  ASSERT_EQ(r.info.files.size(), 3u);
  EXPECT_EQ(r.info.files[0].path, "dev:254:0 ino:10977765");  // 0xa781e5
  EXPECT_EQ(r.info.files[0].size, 4u * 4096);
  EXPECT_EQ(r.info.files[1].path, "dev:254:0 ino:332383");
  EXPECT_EQ(r.info.files[1].size, 53u * 4096);
  EXPECT_EQ(r.info.files[2].path, "dev:254:0 ino:10977763");
  ASSERT_EQ(r.info.tasks.size(), 1u);
  EXPECT_EQ(r.info.tasks[0].tid, 25229u);
  EXPECT_EQ(r.info.tasks[0].comm, "t");
  EXPECT_EQ(of(r, EventOp::kOpen).size(), 3u);
  EXPECT_EQ(mmaps(r),
            (std::vector<MmapRow>{{0, 0, 4, 1, true}, {1, 0, 53, 1, true}, {2, 0, 4, 1, true}}));
  for (const Event& e : of(r, EventOp::kMmap)) EXPECT_EQ(e.time_ns, 0u);
  EXPECT_EQ(touches(r), (std::vector<TouchRow>{{0, 0, 3, false},
                                               {0, 1, 52, false},
                                               {0, 1, 51, false},
                                               {0, 2, 0, false},
                                               {0, 2, 1, false},
                                               {0, 2, 2, false},
                                               {0, 2, 2, false},
                                               {0, 2, 3, false}}));
  const auto t = of(r, EventOp::kTouch);
  EXPECT_EQ(t[0].time_ns, 0u);
  EXPECT_EQ(t[1].time_ns, 20000u);
  EXPECT_EQ(t.back().time_ns, 1279000u);  // 6225.417096 - 6225.415817
  EXPECT_EQ(condition(r, "import.sees"),
            "faults only (mm_filemap_fault): accesses that did not fault are not in the "
            "recording");
}

TEST_F(Import, TracepointsOfTraceCmdReportAndItsVariants) {
  // The faults as trace-cmd report prints them: plain, -l, -t, --ts-diff,
  // from an instance's buffer; perf script of the tracepoint; a kworker, and
  // the spelling without '=' (those two lines made up in the same shape).
  const std::string report = lines({
      "cpus=2",
      "flhelper:                t-25646 [001]  6250.464086: mm_filemap_fault:     "
      "dev=254:0 ino=a781e3 ofs=0",
      "flhelper:        t-25646   1.....  6250.464089: mm_filemap_fault:     dev=254:0 "
      "ino=a781e3 ofs=4096",
      "flhelper:                t-25646 [001]  6250.464091123: mm_filemap_fault:     "
      "dev=254:0 ino=a781e3 ofs=8192",
      "flhelper:                t-25646 [001]  6250.464094: (+3)   mm_filemap_fault:     "
      "dev=254:0 ino=a781e3 ofs=12288",
      "           t-25646 [001]  6250.464100: mm_filemap_fault:     dev=254:0 ino=a781e3 "
      "ofs=16384",
      "        kworker/u4:2-25700 [000]  6250.464200: mm_filemap_fault: dev 254:0 ino 10021 "
      "ofs=8192",
      "               t 25646 [001]  6250.464300: filemap:mm_filemap_fault: dev=254:0 "
      "ino=a781e3 ofs=20480",
      "CPU:1 [LOST 12 EVENTS]",
  });
  const std::string in = write("report.txt", report);
  auto rep = import(ImportFormat::kTracepoints, in);
  ASSERT_TRUE(rep.ok()) << rep.status().message();
  const workload::Recording r = read();
  ASSERT_EQ(r.info.files.size(), 2u);
  EXPECT_EQ(r.info.files[1].path, "dev:254:0 ino:65569");  // older kernels: "dev 254:0 ino 10021"
  ASSERT_EQ(r.info.tasks.size(), 2u);
  EXPECT_EQ(r.info.tasks[0].comm, "t");
  EXPECT_EQ(r.info.tasks[1].tid, 25700u);
  EXPECT_EQ(r.info.tasks[1].comm, "kworker/u4:2");
  EXPECT_EQ(touches(r), (std::vector<TouchRow>{{0, 0, 0, false},
                                               {0, 0, 1, false},
                                               {0, 0, 2, false},
                                               {0, 0, 3, false},
                                               {0, 0, 4, false},
                                               {1, 1, 2, false},
                                               {0, 0, 5, false}}));
  const auto t = of(r, EventOp::kTouch);
  EXPECT_EQ(t[2].time_ns, 5123u);  // trace-cmd -t: nanoseconds
  EXPECT_EQ(t[3].time_ns, 8000u);
  EXPECT_NE(condition(r, "limit.lost_events").find("12 events"), std::string::npos);
}

TEST_F(Import, TracepointsTgidMakesThreads) {
  // record-tgid (tids renumbered): 25300 and 25301 are threads of 25300;
  // 25400 is a process; 25500's tgid was not recorded.
  const std::string trace = lines({
      "#           TASK-PID       TGID    CPU#  |||||  TIMESTAMP  FUNCTION",
      "               t-25300   (  25300) [000] .....  6227.296143: mm_filemap_fault: "
      "dev=254:0 ino=a781e3 ofs=0",
      "               t-25301   (  25300) [001] .....  6227.296146: mm_filemap_fault: "
      "dev=254:0 ino=a781e3 ofs=4096",
      "               t-25400   (  25400) [001] .....  6227.296148: mm_filemap_fault: "
      "dev=254:0 ino=a781e3 ofs=8192",
      "           <...>-25500   (-------) [001] .....  6227.296151: mm_filemap_fault: "
      "dev=254:0 ino=a781e3 ofs=12288",
  });
  const std::string in = write("trace", trace);
  ASSERT_TRUE(import(ImportFormat::kTracepoints, in).ok());
  const workload::Recording r = read();
  ASSERT_EQ(r.info.tasks.size(), 4u);
  EXPECT_EQ(r.info.tasks[1].pid, 25300u);
  EXPECT_EQ(r.info.tasks[3].comm, "<...>");
  const auto starts = of(r, EventOp::kTaskStart);
  ASSERT_EQ(starts.size(), 4u);
  EXPECT_TRUE(starts[1].thread);
  EXPECT_EQ(starts[1].arg, 0u);
  EXPECT_FALSE(starts[2].thread);  // forked from the first task: it has the mapping
  EXPECT_EQ(starts[2].arg, 0u);
  EXPECT_FALSE(starts[3].thread);  // no tgid: a process
  EXPECT_EQ(touches(r),
            (std::vector<TouchRow>{
                {0, 0, 0, false}, {1, 0, 1, false}, {2, 0, 2, false}, {3, 0, 3, false}}));
}

TEST_F(Import, TracepointsNameFilesFoundUnderDataDirectories) {
  make_file("data.bin", 16 * 4096);
  struct stat st {};
  ASSERT_EQ(::stat(path("data.bin").c_str(), &st), 0);
  char line[512];
  std::snprintf(line, sizeof line,
                "  reader-7  [000] .....  1.000000: mm_filemap_fault: dev=%u:%u ino=%llx ofs=8192\n"
                "  reader-7  [000] .....  1.000010: mm_filemap_fault: dev=%u:%u ino=%llx ofs=0\n",
                major(st.st_dev), minor(st.st_dev), static_cast<unsigned long long>(st.st_ino),
                major(st.st_dev), minor(st.st_dev),
                static_cast<unsigned long long>(st.st_ino + 1000003));
  ImportOptions o;
  o.data_dirs = {dir_.string()};
  auto rep = import(ImportFormat::kTracepoints, write("trace", line), o);
  ASSERT_TRUE(rep.ok()) << rep.status().message();
  EXPECT_EQ(rep->skipped, 1u);  // a file under no data directory
  const workload::Recording r = read();
  ASSERT_EQ(r.info.files.size(), 1u);
  EXPECT_EQ(r.info.files[0].path, path("data.bin"));
  EXPECT_EQ(r.info.files[0].size, 16u * 4096);  // its size here, past the furthest fault
  EXPECT_EQ(mmaps(r), (std::vector<MmapRow>{{0, 0, 3, 1, true}}));
  EXPECT_EQ(touches(r), (std::vector<TouchRow>{{0, 0, 2, false}}));
}

TEST_F(Import, TracepointsMalformedLinesAndPipes) {
  const std::string trace = lines({
      "  t-1 [000] .....  1.000000: mm_filemap_fault: dev=254:0 "
      "ino=a781e3 ofs=0",
      "  t-1 [000] .....  1.000001: mm_filemap_fault: dev=254:0 "
      "ofs=4096",
  });
  std::string in = write("trace", trace);
  auto rep = import(ImportFormat::kTracepoints, in);
  ASSERT_FALSE(rep.ok());
  EXPECT_TRUE(has(rep.status(), in + ":2: mm_filemap_fault: expected dev=MAJ:MIN ino=INODE"))
      << rep.status().message();
  in = write("trace", "  t-1 [000] .....  soon: mm_filemap_fault: dev=254:0 ino=a ofs=0\n");
  rep = import(ImportFormat::kTracepoints, in);
  ASSERT_FALSE(rep.ok());
  EXPECT_TRUE(has(rep.status(), in + ":1: expected the time")) << rep.status().message();
  rep = import(ImportFormat::kTracepoints,
               write("trace", "# tracer: nop\n  t-1 [000] .....  1.0: sys_enter: x\n"));
  ASSERT_FALSE(rep.ok());
  EXPECT_TRUE(has(rep.status(), "no mm_filemap_fault events")) << rep.status().message();
  EXPECT_FALSE(any_output());
  ASSERT_EQ(::mkfifo(path("fifo").c_str(), 0600), 0);
  rep = import(ImportFormat::kTracepoints, path("fifo"));
  ASSERT_FALSE(rep.ok());
  EXPECT_TRUE(has(rep.status(), "not a regular file")) << rep.status().message();
}

// ---- all ----

TEST_F(Import, MissingInputsAreNotFound) {
  ImportOptions o;
  o.maps = write("maps.txt", kPerfMaps);
  for (ImportFormat f : {ImportFormat::kStrace, ImportFormat::kFio, ImportFormat::kLackey,
                         ImportFormat::kPerf, ImportFormat::kTracepoints}) {
    auto rep = import(f, path("missing"), o);
    ASSERT_FALSE(rep.ok());
    EXPECT_EQ(rep.status().code(), Status::Code::kNotFound) << rep.status().message();
    EXPECT_TRUE(has(rep.status(), path("missing") + ": cannot open")) << rep.status().message();
  }
  o.maps = path("no-maps");
  for (ImportFormat f : {ImportFormat::kLackey, ImportFormat::kPerf}) {
    auto rep = import(f, write("in.txt", kPerfScript), o);
    ASSERT_FALSE(rep.ok());
    EXPECT_EQ(rep.status().code(), Status::Code::kNotFound) << rep.status().message();
    EXPECT_TRUE(has(rep.status(), o.maps + ": cannot open")) << rep.status().message();
  }
  EXPECT_FALSE(any_output());
}

}  // namespace
}  // namespace faultline::record
