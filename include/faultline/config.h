// config.h — the configuration of one faultline run.
//
// Plain structs with the kernel's defaults. Every field has a dotted key
// ("device.read_ahead_kb") that works the same in a scenario file, on the
// command line (--set KEY=VALUE) and in scenario tests; keys are validated
// once, at the edge, and the model trusts its configuration afterwards.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "mm/advice.h"
#include "mm/costs.h"
#include "mm/profile.h"
#include "mm/smp_costs.h"
#include "mm/types.h"
#include "util/enum_names.h"
#include "util/status.h"
#include "workload/access.h"

namespace faultline {

// file.large_folios: large folios in the page cache.
#define FAULTLINE_LARGE_FOLIOS(X)                                          \
  X(kAuto, "auto", "ext4 from 6.16, xfs; tmpfs per file.tmpfs_huge_order") \
  X(kOn, "on") X(kOff, "off")
FAULTLINE_NAMED_ENUM(LargeFolios, FAULTLINE_LARGE_FOLIOS)

// access.interleave: how the concurrent engine orders the tasks' steps.
#define FAULTLINE_INTERLEAVES(X)                                             \
  X(kTimed, "timed", "the task with the smallest modelled clock steps next") \
  X(kLockstep, "lockstep", "round-robin, one step per task per round")       \
  X(kReal, "real", "one OS thread per task (wall-clock throughput)")
FAULTLINE_NAMED_ENUM(Interleave, FAULTLINE_INTERLEAVES)

// access.placement: which CPUs the concurrent engine's tasks run on, given
// machine.cpus_per_domain (CPUs are numbered domain after domain, as Linux
// numbers an EPYC's cores CCD after CCD).
#define FAULTLINE_PLACEMENTS(X)                                            \
  X(kPacked, "packed", "task i on CPU i: a domain filled before the next") \
  X(kSpread, "spread", "task i in domain i mod the domains: one per domain first")
FAULTLINE_NAMED_ENUM(Placement, FAULTLINE_PLACEMENTS)

// model.engine: which representation of the page cache, LRU and page
// tables a run uses (mm/types.h; docs/architecture.md). They give the same
// counters and tracepoints; only the time and memory of the run differ.
#define FAULTLINE_ENGINE_CHOICES(X)                                                    \
  X(kAuto, "auto", "runs where readahead windows reach 2 MiB or a file passes 64 GiB") \
  X(kPages, "pages", "an entry per page and per folio: the reference")                 \
  X(kRuns, "runs", "an entry per run of folios or PTEs in one state")
FAULTLINE_NAMED_ENUM(EngineChoice, FAULTLINE_ENGINE_CHOICES)

struct MachineConfig {
  uint64_t memory = 8ULL << 30;             // RAM of the machine (bytes)
  uint64_t memory_limit = 0;                // cgroup memory limit of the workload; 0: none
  std::optional<uint64_t> kernel_reserved;  // memory not available to caches; unset: estimated
  uint64_t cgroup_overhead = 1ULL << 20;    // non-cache charges of the workload under a limit
  // Online CPUs: percpu_counter_batch, and with 2 or more kswapd reclaims
  // beside a stream's task; 0: access.threads.
  uint32_t cpus = 0;
  uint32_t cpus_per_domain = 0;  // CPUs sharing a last-level cache; 0: all
};

struct DeviceConfig {
  uint32_t read_ahead_kb = 128;        // /sys/block/DEV/queue/read_ahead_kb (VM_READAHEAD_PAGES)
  uint32_t max_sectors_kb = 1280;      // bdi->io_pages = max_sectors_kb / 4
  uint64_t bandwidth = 2000ULL << 20;  // bytes per second (estimate of elapsed time only)
  double latency_us = 100;             // per read request, after its transfer (estimate only)
  double request_us = 0;               // per read request, the device busy besides the transfer
  uint32_t queue_depth = 0;            // requests in flight at once; 0: no limit (estimate only)
  bool shared_batches = false;         // a batch's requests served at once (estimate only)
};

struct FileConfig {
  uint64_t size = 1ULL << 30;
  workload::FsType fs = workload::FsType::kExt4;
  workload::CacheState cache = workload::CacheState::kCold;
  uint64_t write_chunk = 1ULL << 20;  // write(2) size that created the file (folio sizes)
  uint64_t warm_chunk = 1ULL << 20;   // read(2) size of the warm-read pass
  LargeFolios large_folios = LargeFolios::kAuto;
  uint32_t tmpfs_huge_order = 0;  // tmpfs huge=: 0 = never
  // posix_fadvise() over the whole file before the accesses.
  mm::Fadvise fadvise = mm::Fadvise::kNormal;
};

struct MappingConfig {
  bool shared = true;                          // MAP_SHARED, else MAP_PRIVATE
  mm::Madvise madvise = mm::Madvise::kNormal;  // madvise() over the whole mapping first
  uint64_t offset = 0;                         // file offset of the mapping (bytes, page aligned)
  uint64_t length = 0;                         // bytes; 0: to the end of the file
  uint64_t align_offset = 0;                   // pages past a 2 MiB boundary where the VMA starts
};

struct AccessConfig {
  workload::Pattern pattern = workload::Pattern::kRandom;
  double fraction = 0.01;  // accesses = fraction x pages of the mapping
  uint64_t count = 0;      // accesses; overrides fraction when > 0 (trace: truncates)
  uint64_t stride = 1;     // pages between accesses (stride pattern)
  uint64_t start = 0;      // first page (sequential and stride)
  uint64_t seed = 1;
  workload::AccessOp op = workload::AccessOp::kRead;
  workload::AccessMethod method = workload::AccessMethod::kMmap;
  uint64_t read_size = 4096;    // bytes per pread(2) (method = read)
  double span = 1.0;            // the pattern covers the first span x pages of the mapping
  uint64_t dontneed_every = 0;  // MADV_DONTNEED the whole mapping after every N accesses
  // A recorded trace (pattern trace; formats in src/workload/trace.h).
  std::string trace;  // path; relative: to the scenario file (--set: to the current directory)
  workload::TraceFormat trace_format = workload::TraceFormat::kPages;
  // Concurrent workloads (docs/concurrency.md); kStream replays the pattern above.
  workload::Kind workload = workload::Kind::kStream;
  uint32_t threads = 1;  // tasks faulting at once, one per CPU
  workload::TaskSharing tasks = workload::TaskSharing::kThreads;
  uint64_t region = 64ULL << 20;  // bytes faulted per pass, split between the tasks
  uint64_t passes = 4;            // fault the region, MADV_DONTNEED it; repeat
  bool zap = true;                // false: one pass, the pages left mapped (pft's timed phase)
  Interleave interleave = Interleave::kTimed;
  Placement placement = Placement::kPacked;
  bool coherence = true;          // count cache-line transfers
  bool allow_incomplete = false;  // recording: replay one marked incomplete
};

// Kernel behaviour: a release's profile, and any switch set explicitly on
// top of it (one optional per entry of FAULTLINE_KERNEL_SWITCHES).
struct KernelConfig {
  mm::Release profile = mm::kDefaultRelease;
#define FAULTLINE_X(type, name, by_release, doc) std::optional<type> name;
  FAULTLINE_KERNEL_SWITCHES(FAULTLINE_X)
#undef FAULTLINE_X
};

// A workload of several files and streams ([[files]] and [[streams]] of a
// scenario; keys files.NAME.KEY and streams.NAME.KEY). Each file has its own
// size and hints on the configuration's file system (file.fs, file.cache,
// file.large_folios); each stream is a pattern of accesses to one file by
// one task, or a recording whose files and tasks join the workload. The
// streams run interleaved, sharing the machine's memory and cgroup limit
// (engine/file_set.h says how).
struct FileDecl {
  std::string name;
  uint64_t size = 1ULL << 30;
  mm::Madvise madvise = mm::Madvise::kNormal;  // madvise() over each mapping of the file
  mm::Fadvise fadvise = mm::Fadvise::kNormal;  // posix_fadvise() on each open of it
  bool shared = true;                          // its mappings are MAP_SHARED, else MAP_PRIVATE
};

struct StreamDecl {
  std::string name;
  std::string file;       // a [[files]] name (a pattern's file)
  std::string recording;  // or a recording (faultline record) replayed as this stream
  // Streams with the same process are its threads and share its mappings;
  // empty: a process of the stream's own.
  std::string process;
  workload::Pattern pattern = workload::Pattern::kRandom;
  double fraction = 0.01;  // accesses = fraction x pages of the file
  uint64_t count = 0;      // accesses; overrides fraction when > 0
  uint64_t stride = 1;
  uint64_t start = 0;
  uint64_t seed = 0;  // 0: access.seed plus the stream's index
  workload::AccessOp op = workload::AccessOp::kRead;
  workload::AccessMethod method = workload::AccessMethod::kMmap;
  uint64_t read_size = 4096;
  double span = 1.0;
  uint64_t anon = 0;  // bytes of anonymous memory the stream's process holds
};

// How the model itself is run, apart from what it models.
struct ModelConfig {
  // Runs of each case and variant with seeds access.seed, access.seed + 1,
  // ...; reports give the median and [min, max]. A run whose stream does
  // not depend on the seed runs once (depends_on_seed).
  uint32_t repetitions = 1;
  // model.timeline: a sample of the run's gauges every timeline_accesses
  // accesses, or every timeline_interval_s of modelled time; both 0: off.
  uint64_t timeline_accesses = 0;
  double timeline_interval_s = 0;
  bool timeline() const { return timeline_accesses > 0 || timeline_interval_s > 0; }
  // model.invariants: check the model's state every N accesses and at the
  // end (mm/invariants.h); 0: never. A violation fails the run.
  uint64_t invariants = 0;
  // model.engine (engine/machine.h: model_engine resolves auto).
  EngineChoice engine = EngineChoice::kAuto;
};

struct Config {
  MachineConfig machine;
  DeviceConfig device;
  mm::CpuCosts cpu;       // cpu.*: the fault path's CPU costs (time estimate only)
  mm::smp::SmpCosts smp;  // smp.*: the concurrent model's costs (time estimate only)
  FileConfig file;
  MappingConfig mapping;
  AccessConfig access;
  KernelConfig kernel;
  std::vector<FileDecl> files;
  std::vector<StreamDecl> streams;
  ModelConfig model;
};

// The largest model.repetitions.
inline constexpr uint32_t kMaxRepetitions = 1000;
// Whether cfg is a workload of the concurrent engine (pft, lat_pagefault:
// tasks faulting an anonymous region or a cached file), not of the serial
// engine's access streams.
bool is_concurrent_workload(const Config& c);
// Whether a run depends on access.seed (a random pattern of the stream or
// of one of [[streams]], or the concurrent engine's timed order with
// smp.line_spread); repetitions of others are identical.
bool depends_on_seed(const Config& c);
// The configuration of repetition k (0-based): every seed of the run plus k
// (access.seed, and each stream's own seed where it has one).
Config with_repetition(const Config& c, uint32_t k);

// The lists of named entries, and adding one ("files" or "streams"): its
// keys are then set as LIST.NAME.KEY. Names are letters, digits, '-' and
// '_', unique in their list.
inline constexpr const char* kFileList = "files";
inline constexpr const char* kStreamList = "streams";
Status add_entry(Config& cfg, const std::string& list, const std::string& name);
// LIST.NAME.KEY split into its parts; false for a key of no list. Its
// documentation (key_docs) is under LIST.NAME.KEY with NAME as it is.
bool split_entry_key(const std::string& key, std::string* list, std::string* name,
                     std::string* field);

// Sets one dotted key from its text form ("8GiB", "true", "random").
// Errors name the key: "device.read_ahead_kb: expected an integer, got 'abc'".
Status set_key(Config& cfg, const std::string& key, const std::string& value);
// Applies "KEY=VALUE" assignments in order.
Status apply_assignments(Config& cfg, const std::vector<std::string>& assignments);
// Checks the values together (sizes of zero, a stride beyond the file, ...).
Status validate(const Config& cfg);

// Every key with its effective value, in a stable order; kernel switches are
// shown resolved from the profile.
std::vector<std::pair<std::string, std::string>> effective_keys(const Config& cfg);

struct KeyDoc {
  std::string key;
  std::string type;
  std::string default_value;
  std::string doc;
};
const std::vector<KeyDoc>& key_docs();

// The named release's profile with every explicitly set kernel.* switch on top.
mm::KernelProfile resolve_profile(const KernelConfig& kc);

// One kernel switch: its key, meaning, and value under each release (in
// FAULTLINE_KERNEL_RELEASES order), as text ("on", "off", "65536").
struct SwitchDoc {
  std::string key;
  std::string doc;
  std::vector<std::string> values;
};
std::vector<SwitchDoc> switch_docs();

}  // namespace faultline
