// calibrate_test.cc — the fit of `faultline calibrate` recovers a machine it
// did not start from: "kernel" times are the model's own with known keys,
// and the fit, starting from the defaults, must bring every workload's time
// back to them; a profile it writes loads again with the same keys.
#include "faultline/calibrate.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "faultline/config.h"
#include "faultline/simulator.h"

namespace faultline {
namespace {

// The calibration workloads at 1/32 of their size, so a fit takes seconds.
std::vector<PlannedRun> small_workloads() {
  auto sc = parse_scenario(kCalibrationScenarioToml, "<calibrate>");
  EXPECT_TRUE(sc.ok()) << sc.status().message();
  auto plan = plan_runs(*sc, {});
  EXPECT_TRUE(plan.ok()) << plan.status().message();
  for (PlannedRun& r : *plan) {
    r.cfg.file.size /= 32;
    r.cfg.machine.memory_limit /= 32;
    if (r.cfg.access.count > 0) r.cfg.access.count = std::max<uint64_t>(2, r.cfg.access.count / 8);
  }
  return *plan;
}

const std::vector<std::string> kTruth = {
    "device.bandwidth=700000000",
    "device.latency_us=45",
    "device.request_us=20",
    "device.queue_depth=2",
    "device.shared_batches=true",
    "cpu.fault_ns=1300",
    "cpu.map_page_ns=30",
    "cpu.map_folio_ns=60",
    "cpu.add_folio_ns=600",
    "cpu.evict_folio_ns=450",
    "cpu.access_ns=4",
    "cpu.read_call_ns=250",
    "cpu.copy_page_ns=180",
    "cpu.shadow_fault_ns=5000",
    "cpu.tlb_flush_ns=20000",
};

std::vector<FitPoint> points_of_truth() {
  std::vector<PlannedRun> plan = small_workloads();
  std::vector<PlannedRun> truth = plan;
  for (PlannedRun& r : truth) {
    Status st = apply_assignments(r.cfg, kTruth);
    EXPECT_TRUE(st.ok()) << st.message();
  }
  SimOptions sim;
  sim.progress = false;
  auto runs = simulate(truth, sim);
  EXPECT_TRUE(runs.ok()) << runs.status().message();
  std::vector<FitPoint> points;
  for (size_t i = 0; i < plan.size(); ++i) {
    const double t = (*runs)[i].get("elapsed_s");
    points.push_back({plan[i].case_name, plan[i], {t, t, t}});
  }
  return points;
}

TEST(Calibrate, FitRecoversTheTimesOfAKnownMachine) {
  const std::vector<FitPoint> points = points_of_truth();
  FitOptions opts;
  opts.jobs = 2;
  // As calibrate has it from the kernel's tracepoints: held, not searched.
  opts.measured = {{"cpu.add_folio_ns", 600}};
  auto fit = fit_machine(points, opts);
  ASSERT_TRUE(fit.ok()) << fit.status().message();
  // The defaults are far from the truth; the fit is not.
  EXPECT_GT(fit->rms_start, 0.2);
  EXPECT_LT(fit->rms, 0.03);
  for (size_t i = 0; i < points.size(); ++i) {
    const double k = points[i].kernel_s.median;
    EXPECT_LT(std::fabs(std::log(fit->model_s[i] / k)), 0.06)
        << points[i].name << ": model " << fit->model_s[i] << " s, truth " << k << " s";
  }
  // Bandwidth and latency are what the cold workloads measure, the
  // hypervisor's exit what tmpfs at strides 1 and 16 and a second pass do,
  // the flush what a pass under a limit through a mapping and by read(2) do.
  // The device serves a batch's requests together, as the truth does.
  double bandwidth = 0, latency = 0, exit = 0, flush = 0;
  std::string shared, add_folio;
  for (const auto& [k, v] : fit->keys) {
    if (k == "device.shared_batches") shared = v;
    if (k == "cpu.add_folio_ns") add_folio = v;
    if (k == "device.bandwidth") bandwidth = std::stod(v);
    if (k == "device.latency_us") latency = std::stod(v);
    if (k == "cpu.shadow_fault_ns") exit = std::stod(v);
    if (k == "cpu.tlb_flush_ns") flush = std::stod(v);
  }
  EXPECT_NEAR(bandwidth / 700e6, 1.0, 0.25);
  EXPECT_NEAR(latency / 45, 1.0, 0.25);
  EXPECT_NEAR(exit / 5000, 1.0, 0.25);
  EXPECT_NEAR(flush / 20000, 1.0, 0.25);
  EXPECT_EQ(shared, "true");
  EXPECT_EQ(add_folio, "600");
}

TEST(Calibrate, AMeasuredKeyMustBeAFittedOne) {
  FitOptions opts;
  opts.measured = {{"cpu.no_such_ns", 5}};
  auto fit = fit_machine(points_of_truth(), opts);
  ASSERT_FALSE(fit.ok());
  EXPECT_NE(fit.status().message().find("cpu.no_such_ns"), std::string::npos);
}

// tracefs text of readahead windows: n insertions of order-0 folios from
// index `first`, `us` microseconds apart, from time t (seconds).
std::string window_lines(uint64_t first, int n, double t, int us) {
  std::string out;
  for (int i = 0; i < n; ++i) {
    char line[200];
    std::snprintf(line, sizeof line,
                  "       faultline-10156   [001] ..... %.6f: mm_filemap_add_to_page_cache: dev "
                  "7:0 ino c pfn=0x11f722 ofs=%llu order=0\n",
                  t + i * us * 1e-6, static_cast<unsigned long long>((first + i) * 4096));
    out += line;
  }
  return out;
}

TEST(Calibrate, InsertionTimingIsTheSpacingOfAWindowsInsertions) {
  const std::string path =
      ::testing::TempDir() + "/calibrate_trace_" + std::to_string(getpid()) + ".trace";
  {
    std::ofstream out(path);
    out << "# tracer: nop\n#\n";
    out << "       faultline-10156   [001] ..... 22800.762781: mm_filemap_fault: dev=7:0 ino=c "
           "ofs=0\n";
    out << window_lines(0, 300, 22800.0, 1);  // 1 us a folio
    out << "       faultline-10156   [001] ..... 22801.000000: page_cache_ra_order: dev=7:0 "
           "ino=c index=5000 order=0 size=2048 async_size=512 ra_pages=2048\n";
    out << window_lines(5000, 400, 22801.0, 2);  // 2 us
    // Right after it, at an index that does not follow: a window of its own.
    out << window_lines(9000, 300, 22802.0, 3);   // 3 us
    out << window_lines(20000, 100, 22803.0, 9);  // too few folios to time
  }
  auto t = insertion_timing({path});
  std::remove(path.c_str());
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(t->windows, 3u);
  EXPECT_EQ(t->folios, 1000u);
  EXPECT_NEAR(t->median_ns, 2000, 1);
  EXPECT_NEAR(t->q1_ns, 1500, 1);
  EXPECT_NEAR(t->q3_ns, 2500, 1);

  auto missing = insertion_timing({path});
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find(path), std::string::npos);
}

TEST(Calibrate, ProfileLoadsBackWithTheFittedKeys) {
  const std::vector<FitPoint> points = points_of_truth();
  Calibration c;
  c.host = "testhost";
  c.kernel_release = "6.0.0-test";
  c.points = points;
  for (const FitPoint& p : points) {
    c.fit.model_s.push_back(p.kernel_s.median * 1.1);
    c.fit.model_s_start.push_back(p.kernel_s.median * 2);
  }
  for (const std::string& kv : kTruth) {
    c.fit.keys.emplace_back(kv.substr(0, kv.find('=')), kv.substr(kv.find('=') + 1));
  }
  const std::string path =
      ::testing::TempDir() + "/calibrate_test_" + std::to_string(getpid()) + ".toml";
  {
    std::ofstream out(path);
    out << format_machine_profile(c);
  }
  auto m = load_machine_profile(path);
  std::remove(path.c_str());
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ(m->name, "testhost");
  std::vector<std::string> want = kTruth, got = m->set;
  std::sort(want.begin(), want.end());
  std::sort(got.begin(), got.end());
  EXPECT_EQ(got, want);
  const std::string table = format_calibration_table(c);
  EXPECT_NE(table.find("20 of 20 workloads within 15%"), std::string::npos) << table;
}

}  // namespace
}  // namespace faultline
