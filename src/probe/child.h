// child.h — the live probe's forked child, internal to the probe: it maps the
// test file, touches the pages and sends back what it measured.
//
// Async-signal-safety contract: between fork() and _exit() the child makes
// only async-signal-safe calls. No allocation, no locks, no stdio, no
// exceptions: the fork may have copied a malloc or stdio lock held by
// another thread of the parent. Every buffer the child uses is made by the
// parent before fork() and named in ChildPlan. The child is forked, not
// exec'ed, because the page list is already in its memory. It must not
// allocate or fault anything of its own between its two counter snapshots,
// so it sends back raw kernel text (/proc/vmstat, /sys/block/*/stat,
// memory.stat, /proc/self/status) for the parent to parse (probe/procfs.h),
// and it pre-faults its copy of the report and its stack first.
#pragma once

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/types.h>

#include <cstddef>
#include <cstdint>

#include "probe/fault_inject.h"
#include "probe/probe.h"

namespace faultline::probe {

inline constexpr size_t kVmstatBytes = 32 * 1024;  // /proc/vmstat is ~4 KiB on 6.x
inline constexpr size_t kDiskStatBytes = 512;
inline constexpr size_t kStatusBytes = 8 * 1024;
inline constexpr size_t kMemcgStatBytes = 8 * 1024;  // v1 memory.stat is ~1 KiB, v2 ~2 KiB

// What the child sends back over the pipe, as is.
struct ChildReport {
  int32_t failed;  // 0: measured; 1: a step failed (what, err)
  int32_t err;     // errno of the failed step
  char what[256];  // the failed step, with the file it touched
  int64_t minflt0, minflt1, majflt0, majflt1;
  int64_t t0_ns, t1_ns;
  int64_t cache_before, cache_after;  // pages of the file in the page cache, -1 unknown
  uint64_t sink;                      // sum of the loaded bytes, so the loads stay
  char vmstat0[kVmstatBytes], vmstat1[kVmstatBytes];
  char disk0[kDiskStatBytes], disk1[kDiskStatBytes];
  char memcg0[kMemcgStatBytes], memcg1[kMemcgStatBytes];  // the cgroup's memory.stat
  char status[kStatusBytes];                              // /proc/self/status after the loop
  int64_t skipped;       // replay: steps the host could not take (a touch past a mapping)
  int64_t anon_faults;   // replay: faults of the anonymous memory it charged as recorded
  int32_t program_exit;  // program run: the wait status of the program
};

// Everything the child uses, made before fork().
struct ChildPlan {
  const uint64_t* pages = nullptr;
  size_t n_pages = 0;
  size_t page_size = 4096;
  uint64_t file_bytes = 0;
  const char* file = nullptr;
  const char* cgroup_procs = nullptr;  // null: no cgroup
  const char* disk_stat = nullptr;     // null: tmpfs, no block device
  const char* memcg_stat = nullptr;    // the cgroup's memory.stat, null: no cgroup
  int tracing_on_fd = -1;
  bool write = false;
  bool map_shared = true;
  int advice = MADV_NORMAL;
  int fadvice = POSIX_FADV_NORMAL;
  const ReadRange* reads = nullptr;  // non-null: the loop preads these instead
  size_t n_reads = 0;
  char* read_buf = nullptr;  // as large as the largest read
  size_t read_size = 0;
  CacheState cache = CacheState::kCold;
  char* write_buf = nullptr;  // write_chunk bytes, pattern-filled
  size_t write_chunk = 0;
  char* warm_buf = nullptr;  // warm_chunk bytes
  size_t warm_chunk = 0;
  pid_t parent = 0;
  int report_fd = -1;
  ChildReport* report = nullptr;
  KillPoint kill = KillPoint::kNone;  // FAULTLINE_PROBE_KILL: where the child kills itself

  // A replay (ops != null): the steps, the files' paths, and the tables the
  // steps fill (open files, mappings and their sizes in pages, each
  // process's anonymous memory), all made by the parent.
  const ReplayOp* ops = nullptr;
  size_t n_ops = 0;
  const char* const* file_paths = nullptr;
  int* fds = nullptr;
  size_t n_fds = 0;
  char** maps = nullptr;
  uint64_t* map_pages = nullptr;
  size_t n_maps = 0;
  char** anon = nullptr;           // by process: a region of anon_max pages
  uint64_t* anon_pages = nullptr;  // by process: pages touched so far
  const uint64_t* anon_max = nullptr;
  size_t n_anon = 0;

  // A program run (argv != null): argv exec'ed in cwd, after each bind_from
  // file is mounted over bind_to in a mount namespace of its own.
  char* const* argv = nullptr;
  const char* cwd = nullptr;
  const char* const* bind_from = nullptr;
  const char* const* bind_to = nullptr;
  size_t n_binds = 0;
};

// Pages of fd in the page cache by cachestat(2); -1 when the kernel lacks it.
// Async-signal-safe (one syscall); the parent uses it too.
int64_t cachestat_pages(int fd);

// Writes file_bytes of non-zero data with write(2) calls of chunk bytes:
// every page starts with its index + 1, the rest is the buffer's fill.
// Returns 0 or an errno (EINTR when a SignalGuard saw a signal). Used by the
// parent (file creation) and the child (kWarmWrite), hence async-signal-safe.
int write_pattern(int fd, uint64_t file_bytes, char* buf, size_t chunk, size_t page_size);

// The child's whole life after fork(): joins the cgroup, brings the cache to
// p.cache, maps the file at a 2 MiB boundary, snapshots the counters around
// the access loop into *p.report and writes the report to p.report_fd.
// Exits 0 when it measured, 1 when a step failed (report.failed, what and
// err say which), 3 when the parent was already gone.
// REQUIRES: called in the child of fork(), with p and everything it points
// to made before the fork.
[[noreturn]] void child_main(const ChildPlan& p);

}  // namespace faultline::probe
