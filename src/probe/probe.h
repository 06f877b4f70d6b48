// probe.h — runs a workload on the host kernel and reads its counters.
//
// The probe is the model's ground truth: the same access stream the model
// replays is executed by a child process against a real file on a private
// loop-device file system, with the scenario's read_ahead_kb, a cold (or
// warmed) page cache and an optional memory cgroup. It shares nothing with
// mm/ but counter names: pgpgin, pgfault, pgmajfault, minflt, majflt, ...
//
// Probe is the one virtual seam (leveldb's Env): LiveProbe talks to the
// kernel, FakeProbe returns canned counters for tests.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "util/spread.h"
#include "util/status.h"
#include "workload/access.h"

namespace faultline::probe {

// The workload's words (workload/access.h) are the probe's.
using workload::AccessMethod;
using workload::CacheState;
using workload::FsType;

// One pread(2): bytes at a file offset.
struct ReadRange {
  uint64_t offset = 0;
  uint64_t length = 0;
};

// A file of a replay or a program run (Request::files), made on the probe's
// file system: bytes of data, or a copy of `source`, which the program
// (Request::command) then sees at that path (a bind mount of the copy).
struct FileSpec {
  uint64_t bytes = 0;
  std::string source;
};

// One step of a replay (replay_plan.h), every id resolved to a slot of the
// replayer's tables.
struct ReplayOp {
  enum class Kind : uint8_t {
    kOpen,
    kClose,
    kMmap,
    kMunmap,
    kMadvise,
    kFadvise,
    kRead,
    kTouch,
    kAnon
  };
  Kind kind = Kind::kTouch;
  bool write = false;   // kTouch: a store; kOpen: O_RDWR
  uint32_t slot = 0;    // kOpen, kClose, kRead, kFadvise: open file; kMmap, kMunmap,
                        // kMadvise, kTouch: mapping; kAnon: process
  uint32_t other = 0;   // kMmap: the open file
  uint32_t file = 0;    // kOpen, kMmap: the file (kMmap reopens it if its open file is closed)
  uint32_t arg = 0;     // kMmap: workload::map_arg(); kMadvise, kFadvise: the uapi advice
  uint64_t offset = 0;  // pages (mmap, munmap, madvise, touch) or bytes (read, fadvise)
  uint64_t length = 0;  // pages (mmap, munmap, madvise, anon) or bytes (read, fadvise)
};

struct Request {
  std::string name;                 // case name: used in file names, never a path
  uint64_t file_bytes = 0;          // > 0
  FsType fs = FsType::kExt4;        // the probe's own file system (mkfs, mount(2) type)
  uint32_t read_ahead_kb = 128;     // set on the loop device (ignored for tmpfs)
  uint64_t memory_limit_bytes = 0;  // 0: no cgroup limit
  bool map_shared = true;           // MAP_SHARED, else MAP_PRIVATE
  // madvise() over the whole mapping, by its MADV_* value (MADV_NORMAL, 0: no call).
  int madvise_advice = 0;
  // posix_fadvise() over the whole file, on the file the mapping and the
  // read(2) loop use, by its POSIX_FADV_* value (POSIX_FADV_NORMAL, 0: no
  // call; a fresh open file is already NORMAL).
  int fadvise_advice = 0;
  // How the loop makes its accesses: a one-byte load or store through the
  // mapping at each of `pages`, or one pread(2) per entry of `reads`.
  AccessMethod method = AccessMethod::kMmap;
  std::vector<ReadRange> reads;  // AccessMethod::kRead: the preads, in order
  bool write = false;            // store one byte per access instead of loading it
  // kCold: no page of the file cached when the access loop starts;
  // kWarmRead: read once with read(2) in warm_chunk_bytes calls (folios from
  // on-demand readahead); kWarmWrite: just written with write(2) in
  // write_chunk_bytes calls and fsync'ed (folios from the write path).
  CacheState cache = CacheState::kCold;
  uint32_t write_chunk_bytes = 1 << 20;  // write(2) size when creating the file
  uint32_t warm_chunk_bytes = 1 << 20;   // read(2) size of the kWarmRead pass
  std::vector<uint64_t> pages;           // page indices of the file, in access order
  int repetitions = 3;                   // >= 1
  // A replay of a recording (ops not empty): these files and steps instead
  // of file_bytes, pages and reads (replay_plan.h).
  std::vector<FileSpec> files;
  std::vector<ReplayOp> ops;
  uint32_t open_slots = 0, map_slots = 0, anon_slots = 0;
  std::vector<uint64_t> anon_max_pages;
  uint64_t largest_read = 0;
  // A program run (command not empty): argv run in cwd, in the memory cgroup,
  // with each of `files` (a copy of its source) mounted over its source in a
  // mount namespace of its own. Counters are the program's.
  std::vector<std::string> command;
  std::string cwd;
  bool trace_events = false;  // record filemap/readahead tracepoints
  std::string workspace_root = "/var/tmp/faultline-probe";
  std::string output_dir;  // where event traces are saved ("" = none)
};

// One repetition. Keys are kernel counter names:
//   pgpgin        KiB read from the probe's own block device (sectors / 2)
//   pgfault, pgmajfault, workingset_refault_file, workingset_activate_file,
//   vmstat.pgpgin (the global /proc/vmstat figure, for reference)
//                 /proc/vmstat deltas around the access loop
//   minflt, majflt  the child's rusage deltas around the access loop
//   elapsed_s     wall time of the access loop
using Counters = std::map<std::string, double>;

struct HostInfo {
  std::string kernel_release;       // uname -r
  int64_t fault_around_bytes = -1;  // debugfs value, -1 if unreadable
  std::string lru_gen;              // /sys/kernel/mm/lru_gen/enabled or "absent"
  std::string thp_enabled;          // /sys/kernel/mm/transparent_hugepage/enabled
  uint64_t page_size = 4096;
};

struct Result {
  std::vector<Counters> runs;  // one per repetition
  HostInfo host;
  std::vector<std::string> notes;        // degradations ("no tracefs: events not recorded")
  std::vector<std::string> event_files;  // saved trace files, one per repetition
};

// Progress callback: (repetition done, repetitions total).
using ProgressFn = std::function<void(int, int)>;

class Probe {
 public:
  virtual ~Probe() = default;
  // Runs req on the kernel. Never leaves a loop device, mount, cgroup or file
  // behind, whatever the outcome.
  virtual Status run(const Request& req, Result* out, const ProgressFn& progress) = 0;
};

// The probe on this machine's kernel. Requires root, loop devices and mkfs.
std::unique_ptr<Probe> make_live_probe();

// Checks what a live probe needs (root, /dev/loop-control, mkfs.<fs>,
// cgroup memory controller when a limit is asked for) and names what is missing.
Status check_live_prerequisites(const Request& req);

// Removes what an earlier, killed run left under workspace_root: unmounts,
// detaches loop devices backed by files there, removes its cgroups and files.
Status cleanup_stale(const std::string& workspace_root);

// A probe that returns the given counters for every repetition (tests).
std::unique_ptr<Probe> make_fake_probe(Counters canned);

// Median, min and max of one counter over the repetitions that have it.
Spread spread(const std::vector<Counters>& runs, const std::string& key);

}  // namespace faultline::probe
