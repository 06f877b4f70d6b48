// trace_test.cc — replay of recorded traces: each format gives the pages it
// names, in order; accesses spanning pages expand to every page; comments
// and blank lines are skipped; bad input is an error naming FILE:LINE.
#include "workload/trace.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "workload/generator.h"

namespace faultline::workload {
namespace {

namespace fs = std::filesystem;

class Trace : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::path(::testing::TempDir()) /
           ("faultline-trace-test-" + std::to_string(::getpid()) + "-" + info->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Writes `text` to a file of the test's directory; returns its path.
  std::string write(const std::string& name, const std::string& text) {
    const std::string path = (dir_ / name).string();
    std::ofstream(path, std::ios::binary) << text;
    return path;
  }

  static AccessSpec spec(const std::string& path, TraceFormat format, uint64_t pages = 64,
                         uint64_t count = 0) {
    AccessSpec s;
    s.pattern = Pattern::kTrace;
    s.pages = pages;
    s.count = count;
    s.trace = path;
    s.trace_format = format;
    return s;
  }

  static std::vector<uint64_t> all(const AccessSpec& s) {
    auto r = generate_all(s);
    EXPECT_TRUE(r.ok()) << r.status().message();
    return r.ok() ? *r : std::vector<uint64_t>{};
  }

  static std::string error(const AccessSpec& s) {
    auto r = make_generator(s);
    EXPECT_FALSE(generate_all(s).ok());
    return r.ok() ? "" : r.status().message();
  }

  fs::path dir_;
};

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

TEST_F(Trace, PagesInFileOrderWithRepeats) {
  const auto path = write("p.trace", "# hot pages\n\n5\n3\n  5  # again\n0x3f\r\n\t0\n");
  EXPECT_EQ(all(spec(path, TraceFormat::kPages)), (std::vector<uint64_t>{5, 3, 5, 63, 0}));
}

TEST_F(Trace, OffsetsExpandToEveryPageTheyTouch) {
  const auto path = write("o.trace",
                          "0\n"                // one byte of page 0
                          "4095,2\n"           // the last byte of page 0, the first of page 1
                          "8000 8192\n"        // bytes 8000..16191: pages 1, 2, 3
                          "0x5000 , 0x1000\n"  // exactly page 5
                          "  # comment\n"
                          "40960,1  # page 10\n");
  EXPECT_EQ(all(spec(path, TraceFormat::kOffsets)),
            (std::vector<uint64_t>{0, 0, 1, 1, 2, 3, 5, 10}));
}

// For replay by read(2): each access as its bytes, a page index without a
// length; count keeps the first accesses, not pages.
TEST_F(Trace, RangesKeepEachAccessWhole) {
  const auto offsets = write("o.trace", "4095,2\n8000 8192\n40960\n");
  auto r = read_trace_ranges(spec(offsets, TraceFormat::kOffsets));
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->size(), 3u);
  EXPECT_EQ((*r)[0].offset, 4095u);
  EXPECT_EQ((*r)[0].length, 2u);
  EXPECT_EQ((*r)[1].offset, 8000u);
  EXPECT_EQ((*r)[1].length, 8192u);
  EXPECT_EQ((*r)[2].length, 1u);
  EXPECT_EQ(read_trace_ranges(spec(offsets, TraceFormat::kOffsets, 64, 2))->size(), 2u);
  const auto pages = write("p.trace", "7\n");
  auto p = read_trace_ranges(spec(pages, TraceFormat::kPages));
  ASSERT_TRUE(p.ok());
  EXPECT_EQ((*p)[0].offset, 7u * 4096);
  EXPECT_EQ((*p)[0].length, 0u);
  EXPECT_FALSE(read_trace_ranges(spec(write("e.trace", "# none\n"), TraceFormat::kOffsets)).ok());
}

TEST_F(Trace, CsvPicksColumnsByHeaderName) {
  const auto path = write("c.csv",
                          "timestamp,op,Size,\"offset\",pid\n"
                          "0.001,read,4096,0,17\n"
                          "0.002,\"read, direct\",8192,12288,17\n"
                          "\n"
                          "0.003,write,1,0x10000,18\n");
  EXPECT_EQ(all(spec(path, TraceFormat::kCsv)), (std::vector<uint64_t>{0, 3, 4, 16}));
}

TEST_F(Trace, CsvLengthIsOneByteWithoutALengthColumn) {
  const auto path = write("c.csv", "op,offset\nread,4096\nread,4097\nread,8191\nread,8192\n");
  EXPECT_EQ(all(spec(path, TraceFormat::kCsv)), (std::vector<uint64_t>{1, 1, 1, 2}));
}

// Spreadsheets write a byte-order mark and CRLF line ends.
TEST_F(Trace, CsvFromASpreadsheet) {
  const auto path = write("c.csv", "\xEF\xBB\xBFOffset,Length\r\n4096,4096\r\n0,1\r\n");
  EXPECT_EQ(all(spec(path, TraceFormat::kCsv)), (std::vector<uint64_t>{1, 0}));
}

TEST_F(Trace, CsvPrefersLengthToSize) {
  const auto path = write("c.csv", "size,offset,length\n1,0,8192\n");
  EXPECT_EQ(all(spec(path, TraceFormat::kCsv)), (std::vector<uint64_t>{0, 1}));
}

TEST_F(Trace, CsvWithoutAnOffsetColumnNamesTheFile) {
  const auto path = write("noofs.csv", "time,addr,len\n1,2,3\n");
  const std::string e = error(spec(path, TraceFormat::kCsv));
  EXPECT_TRUE(contains(e, path + ":1:")) << e;
  EXPECT_TRUE(contains(e, "'offset'")) << e;
}

TEST_F(Trace, MalformedLineNamesFileAndLine) {
  struct Case {
    TraceFormat format;
    const char* text;
    const char* line;
    const char* what;
  };
  const Case cases[] = {
      {TraceFormat::kPages, "1\n# c\nseven\n", ":3:", "expected a page index, got 'seven'"},
      {TraceFormat::kPages, "1\n-2\n", ":2:", "'-2'"},
      {TraceFormat::kPages, "1 2\n", ":1:", "'1 2'"},
      {TraceFormat::kOffsets, "0\n4096,abc\n", ":2:", "'4096,abc'"},
      {TraceFormat::kOffsets, "4096,\n", ":1:", "OFFSET[,LENGTH]"},
      {TraceFormat::kOffsets, "1 2 3\n", ":1:", "'1 2 3'"},
      {TraceFormat::kOffsets, "0x\n", ":1:", "'0x'"},
      {TraceFormat::kOffsets, "4096,0\n", ":1:", "length 0"},
      {TraceFormat::kCsv, "offset,length\n0,1\n0\n", ":3:", "at least 2 columns"},
      {TraceFormat::kCsv, "offset,length\n12k,1\n",
       ":2:", "offset: expected a byte offset, got '12k'"},
      {TraceFormat::kCsv, "offset,length\n0,\n", ":2:", "length: expected a byte count"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(enum_name(c.format)) + ": " + c.text);
    const auto path = write("bad.trace", c.text);
    const std::string e = error(spec(path, c.format));
    EXPECT_TRUE(contains(e, path + c.line)) << e;
    EXPECT_TRUE(contains(e, c.what)) << e;
  }
}

TEST_F(Trace, PagesBeyondTheMappingNameFileAndLine) {
  const auto pages = write("p.trace", "63\n64\n");
  std::string e = error(spec(pages, TraceFormat::kPages, 64));
  EXPECT_TRUE(contains(e, pages + ":2: page 64 is beyond the mapping (64 pages)")) << e;

  // The access starts inside the mapping but its last byte is past it.
  const auto offsets = write("o.trace", "0\n262143,1\n262143,2\n");
  e = error(spec(offsets, TraceFormat::kOffsets, 64));
  EXPECT_TRUE(contains(e, offsets + ":3:")) << e;
  EXPECT_TRUE(contains(e, "past the end of the mapping")) << e;

  // No overflow when OFFSET + LENGTH does not fit in 64 bits.
  const auto huge = write("h.trace", "4096,0xffffffffffffffff\n");
  EXPECT_TRUE(contains(error(spec(huge, TraceFormat::kOffsets, 64)), huge + ":1:"));
}

TEST_F(Trace, EmptyMissingAndUnknownAreErrors) {
  const auto empty = write("empty.trace", "# nothing\n\n");
  std::string e = error(spec(empty, TraceFormat::kPages));
  EXPECT_TRUE(contains(e, empty + ": the trace has no accesses")) << e;
  const auto header_only = write("h.csv", "offset\n");
  EXPECT_TRUE(contains(error(spec(header_only, TraceFormat::kCsv)), "no accesses"));

  const std::string missing = (dir_ / "nope.trace").string();
  auto r = make_generator(spec(missing, TraceFormat::kPages));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Status::Code::kNotFound);
  EXPECT_TRUE(contains(r.status().message(), missing)) << r.status().message();

  EXPECT_TRUE(contains(error(spec(dir_.string(), TraceFormat::kPages)), "is a directory"));
  EXPECT_TRUE(contains(error(spec("", TraceFormat::kPages)), "access.trace"));
}

// count > 0 replays the first count pages (cutting an access short) and
// reads no further: a bad line after them is never reached.
TEST_F(Trace, CountTruncatesTheTrace) {
  const auto path = write("o.trace", "0,12288\n40960\nnot a line\n");
  auto gen = make_generator(spec(path, TraceFormat::kOffsets, 64, 2));
  ASSERT_TRUE(gen.ok()) << gen.status().message();
  EXPECT_EQ((*gen)->total(), 2u);
  EXPECT_EQ(all(spec(path, TraceFormat::kOffsets, 64, 2)), (std::vector<uint64_t>{0, 1}));
  EXPECT_EQ(all(spec(path, TraceFormat::kOffsets, 64, 4)), (std::vector<uint64_t>{0, 1, 2, 10}));
  EXPECT_FALSE(
      make_generator(spec(path, TraceFormat::kOffsets, 64, 5)).ok());  // reaches the bad line

  // A count beyond the trace replays the whole trace once.
  const auto short_trace = write("p.trace", "1\n2\n");
  auto g2 = make_generator(spec(short_trace, TraceFormat::kPages, 64, 1000));
  ASSERT_TRUE(g2.ok());
  EXPECT_EQ((*g2)->total(), 2u);
  EXPECT_EQ(all(spec(short_trace, TraceFormat::kPages, 64, 1000)), (std::vector<uint64_t>{1, 2}));
}

// The model streams the trace in batches; an access of many pages crosses
// batches, and total() is exactly what next() hands out.
TEST_F(Trace, StreamDoesNotDependOnBatchSize) {
  const auto path = write("o.trace", "0,40000\n4096\n100000 20000\n0x3f000\n");
  const AccessSpec s = spec(path, TraceFormat::kOffsets);
  const auto whole = all(s);
  ASSERT_EQ(whole.size(), 10u + 1 + 6 + 1);
  for (size_t batch : {1, 3, 7, 4096}) {
    SCOPED_TRACE(batch);
    auto gen = make_generator(s);
    ASSERT_TRUE(gen.ok());
    EXPECT_EQ((*gen)->total(), whole.size());
    std::vector<uint64_t> buf(batch), got;
    while (const size_t n = (*gen)->next(buf)) got.insert(got.end(), buf.begin(), buf.begin() + n);
    EXPECT_EQ(got, whole);
    EXPECT_EQ((*gen)->next(buf), 0u);  // exhausted stays exhausted
    EXPECT_TRUE((*gen)->status().ok());
  }
}

// One line of 1 GiB is 262144 pages, handed out batch by batch.
TEST_F(Trace, LongAccessIsStreamed) {
  const auto path = write("o.trace", "0 1073741824\n");
  auto gen = make_generator(spec(path, TraceFormat::kOffsets, 262144));
  ASSERT_TRUE(gen.ok()) << gen.status().message();
  EXPECT_EQ((*gen)->total(), 262144u);
  std::array<uint64_t, 4096> buf;
  uint64_t expect = 0;
  while (const size_t n = (*gen)->next(buf)) {
    for (size_t i = 0; i < n; ++i) ASSERT_EQ(buf[i], expect++);
  }
  EXPECT_EQ(expect, 262144u);
}

// The replay reads the file a second time; if it lost lines since the
// counting pass, the stream ends early with an error rather than silently.
TEST_F(Trace, TraceChangedUnderTheReplayIsAnError) {
  const auto path = write("p.trace", "1\n2\n3\n");
  auto gen = make_generator(spec(path, TraceFormat::kPages));
  ASSERT_TRUE(gen.ok());
  write("p.trace", "1\n");
  std::array<uint64_t, 16> buf;
  EXPECT_EQ((*gen)->next(buf), 1u);
  EXPECT_EQ((*gen)->next(buf), 0u);
  EXPECT_FALSE((*gen)->status().ok());
  EXPECT_TRUE(contains((*gen)->status().message(), path)) << (*gen)->status().message();
}

}  // namespace
}  // namespace faultline::workload
