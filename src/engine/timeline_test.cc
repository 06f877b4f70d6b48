// timeline_test.cc — model.timeline: the first sample is before the first
// access and the last after the last, where every counter column equals the
// run's counter; samples come at the asked step, in accesses or in modelled
// time; a long run is thinned to at most kMaxTimelineRows rows; a timeline
// changes no counter.
#include "engine/timeline.h"

#include <gtest/gtest.h>

#include "engine/engine.h"

namespace faultline::engine {
namespace {

RunResult run(const std::vector<std::string>& sets) {
  Config c;
  EXPECT_TRUE(apply_assignments(c, sets).ok());
  EXPECT_TRUE(validate(c).ok()) << validate(c).message();
  auto r = make_serial_engine()->run(c, nullptr, {});
  EXPECT_TRUE(r.ok()) << r.status().message();
  return r.ok() ? *r : RunResult{};
}

double cell(const Timeline& t, size_t row, const std::string& column) {
  const size_t c = t.column(column);
  EXPECT_LT(c, t.columns.size()) << column;
  return c < t.columns.size() ? t.rows[row][c] : -1;
}

const std::vector<std::string> kRandom = {"file.size=256MiB",           "machine.memory=1GiB",
                                          "machine.memory_limit=64MiB", "access.pattern=random",
                                          "access.count=20000",         "device.read_ahead_kb=512"};

std::vector<std::string> with(std::vector<std::string> sets, const std::string& s) {
  sets.push_back(s);
  return sets;
}

TEST(Timeline, EndsAtTheRunsCounters) {
  const RunResult r = run(with(kRandom, "model.timeline=1000"));
  const Timeline& t = r.timeline;
  ASSERT_EQ(t.columns, timeline_columns());
  ASSERT_EQ(t.rows.size(), 21u);  // 0, 1000, ..., 20000
  EXPECT_EQ(t.every, "1000 accesses");
  for (size_t i = 0; i < t.rows.size(); ++i)
    EXPECT_EQ(cell(t, i, "accesses"), 1000.0 * static_cast<double>(i));
  for (const char* c : {"pgpgin", "majflt", "minflt", "workingset_refault_file"}) {
    EXPECT_EQ(cell(t, 0, c), 0) << c;
    EXPECT_EQ(cell(t, t.rows.size() - 1, c), r.get(c)) << c;
  }
  EXPECT_EQ(cell(t, t.rows.size() - 1, "ra_readaround_windows"),
            r.get("model.ra_readaround_windows"));
  EXPECT_EQ(cell(t, t.rows.size() - 1, "page_cache_pages"), r.get("model.page_cache_pages"));
  EXPECT_DOUBLE_EQ(cell(t, t.rows.size() - 1, "elapsed_s"), r.get("elapsed_s"));
  // Counters never fall; the cache stays within its capacity.
  for (size_t i = 1; i < t.rows.size(); ++i) {
    EXPECT_GE(cell(t, i, "pgpgin"), cell(t, i - 1, "pgpgin"));
    EXPECT_GE(cell(t, i, "elapsed_s"), cell(t, i - 1, "elapsed_s"));
    EXPECT_LE(cell(t, i, "page_cache_pages"), r.get("model.cache_capacity_pages"));
    EXPECT_EQ(cell(t, i, "active_pages") + cell(t, i, "inactive_pages"),
              cell(t, i, "page_cache_pages"));
  }
}

TEST(Timeline, ChangesNoCounter) {
  const RunResult off = run(kRandom);
  const RunResult on = run(with(kRandom, "model.timeline=7"));
  EXPECT_TRUE(off.timeline.empty());
  ASSERT_EQ(off.counters.size(), on.counters.size());
  for (size_t i = 0; i < off.counters.size(); ++i) {
    EXPECT_EQ(off.counters[i].value, on.counters[i].value) << off.counters[i].name;
  }
}

TEST(Timeline, ModelledTimeSteps) {
  const RunResult r = run(with(kRandom, "model.timeline=100ms"));
  const Timeline& t = r.timeline;
  ASSERT_GE(t.rows.size(), 3u);
  EXPECT_EQ(t.every, "0.1 s");
  // Each sample but the last is the first access at or past its step.
  for (size_t i = 1; i + 1 < t.rows.size(); ++i) {
    EXPECT_GE(cell(t, i, "elapsed_s"), 0.1 * static_cast<double>(i) - 1e-9) << i;
  }
  EXPECT_EQ(cell(t, t.rows.size() - 1, "accesses"), 20000);
}

TEST(Timeline, LongRunsAreThinned) {
  const RunResult r = run(with(kRandom, "model.timeline=1"));
  const Timeline& t = r.timeline;
  EXPECT_LE(t.rows.size(), kMaxTimelineRows + 1);
  EXPECT_GT(t.rows.size(), kMaxTimelineRows / 4);
  EXPECT_EQ(t.every, "8 accesses");  // 20000 samples: halved three times
  for (size_t i = 0; i + 1 < t.rows.size(); ++i)
    EXPECT_EQ(cell(t, i, "accesses"), 8.0 * static_cast<double>(i));
  EXPECT_EQ(cell(t, t.rows.size() - 1, "accesses"), 20000);
  EXPECT_EQ(cell(t, t.rows.size() - 1, "pgpgin"), r.get("pgpgin"));
}

TEST(Timeline, BadValuesNameTheKey) {
  for (const char* v : {"0", "0s", "-1", "x", "10", "ms", "1.5"}) {
    Config c;
    const Status st = set_key(c, "model.timeline", v);
    if (std::string(v) == "10") {
      EXPECT_TRUE(st.ok());
      continue;
    }
    EXPECT_FALSE(st.ok()) << v;
    EXPECT_NE(st.message().find("model.timeline"), std::string::npos) << st.message();
  }
}

}  // namespace
}  // namespace faultline::engine
