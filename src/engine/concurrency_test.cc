// concurrency_test.cc — the concurrent model on real threads (label
// "concurrency"; CI runs it under ThreadSanitizer, cmake --preset tsan).
#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "engine/concurrent_engine.h"
#include "mm/vma_lock.h"

namespace faultline::engine {
namespace {

RunResult run_real(Config c) {
  c.access.interleave = Interleave::kReal;
  auto r = make_concurrent_engine()->run(c, nullptr, {});
  EXPECT_TRUE(r.ok());
  return r.ok() ? *r : RunResult{};
}

Config small(workload::Kind kind, unsigned threads) {
  Config c;
  c.kernel.profile = mm::Release::k7_4;
  c.access.workload = kind;
  c.access.op = workload::AccessOp::kWrite;
  c.access.threads = threads;
  c.access.region = uint64_t{threads} << 20;  // 256 pages per thread
  c.access.passes = 3;
  return c;
}

TEST(Concurrency, PftThreadsOnOneVma) {
  for (bool track : {false, true}) {
    Config c = small(workload::Kind::kPft, 4);
    c.access.coherence = track;
    const RunResult r = run_real(c);
    EXPECT_EQ(r.get("pgfault"), 4 * 256 * 3);
    EXPECT_EQ(r.get("vma_lock_success"), 4 * 256 * 3);
    EXPECT_EQ(r.get("model.zaps"), 4 * 3);
    EXPECT_EQ(r.get("rss_anon_kb"), 0);  // exact sum after the last zap
    EXPECT_GT(r.get("model.wall_faults_per_s"), 0);
  }
}

TEST(Concurrency, PftMmapLockPathAndSharingModes) {
  Config c = small(workload::Kind::kPft, 3);
  c.kernel.per_vma_lock = false;
  EXPECT_EQ(run_real(c).get("model.mmap_lock_faults"), 3 * 256 * 3);
  for (const auto tasks :
       {workload::TaskSharing::kThreadsVmaEach, workload::TaskSharing::kProcesses}) {
    Config d = small(workload::Kind::kPft, 3);
    d.access.tasks = tasks;
    const RunResult r = run_real(d);
    EXPECT_EQ(r.get("pgfault"), 3 * 256 * 3);
    EXPECT_EQ(r.get("rss_anon_kb"), 0);
  }
}

TEST(Concurrency, LatPagefaultThreads) {
  for (bool batched : {false, true}) {
    Config c = small(workload::Kind::kLatPagefault, 3);
    c.access.op = workload::AccessOp::kRead;
    c.kernel.batched_rss = batched;
    const RunResult r = run_real(c);
    EXPECT_EQ(r.get("pgfault"), 3 * (256 / 16) * 3);
    EXPECT_EQ(r.get("rss_file_kb"), 0);
  }
}

// Readers taking and dropping the VMA lock while a writer write-locks the
// VMA over and over: readers only ever get in between write cycles.
TEST(Concurrency, VmaLockReadersAgainstAWriter) {
  using namespace mm::smp;
  MmStruct mm(3, 32);
  VmAreaStruct vma;
  vma.vm_start = 1ull << 30;
  vma.vm_end = vma.vm_start + 4096;
  vma.vm_mm = &mm;
  vma_mark_attached(vma);
  mm.vmas.push_back(&vma);
  mm.vma_lines.resize(1);
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> reads{0};
  std::atomic<int> writing{0};
  std::vector<std::thread> readers;
  for (unsigned i = 0; i < 2; ++i) {
    readers.emplace_back([&, i] {
      mm::CpuCtx cpu{i};
      while (!stop.load(std::memory_order_relaxed)) {
        if (lock_vma_under_rcu(cpu, mm, vma.vm_start, nullptr) == 0) {
          EXPECT_EQ(writing.load(std::memory_order_acquire), 0);
          reads.fetch_add(1, std::memory_order_relaxed);
          vma_end_read(cpu, vma, mm.vma_lines[0]);
        }
      }
    });
  }
  mm::CpuCtx cpu{2};
  for (int i = 0; i < 200; ++i) {
    mm.mmap_lock.write_lock(cpu);
    vma_start_write(cpu, mm, vma, mm.vma_lines[0]);
    writing.store(1, std::memory_order_release);
    std::this_thread::yield();
    writing.store(0, std::memory_order_release);
    mm.mmap_lock.write_unlock(cpu);
    std::this_thread::yield();
  }
  while (reads.load() < 100) std::this_thread::yield();
  stop = true;
  for (auto& t : readers) t.join();
  EXPECT_EQ(vma.vm_refcnt.load(), 1u);
}

}  // namespace
}  // namespace faultline::engine
