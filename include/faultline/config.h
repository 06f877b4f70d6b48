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

#include "util/status.h"

namespace faultline {

struct MachineConfig {
  uint64_t memory = 8ULL << 30;             // RAM of the machine (bytes)
  uint64_t memory_limit = 0;                // cgroup memory limit of the workload; 0: none
  std::optional<uint64_t> kernel_reserved;  // memory not available to caches; unset: estimated
  uint64_t cgroup_overhead = 1ULL << 20;    // non-cache charges of the workload under a limit
  uint32_t cpus = 0;                        // online CPUs (percpu_counter_batch); 0: access.threads
};

struct DeviceConfig {
  uint32_t read_ahead_kb = 128;        // /sys/block/DEV/queue/read_ahead_kb (VM_READAHEAD_PAGES)
  uint32_t max_sectors_kb = 1280;      // bdi->io_pages = max_sectors_kb / 4
  uint64_t bandwidth = 2000ULL << 20;  // bytes per second (estimate of elapsed time only)
  double latency_us = 100;             // per synchronous read (estimate only)
};

struct FileConfig {
  uint64_t size = 1ULL << 30;
  std::string fs = "ext4";            // ext4 | xfs | tmpfs
  std::string cache = "cold";         // cold | warm-read | warm-write
  uint64_t write_chunk = 1ULL << 20;  // write(2) size that created the file (folio sizes)
  uint64_t warm_chunk = 1ULL << 20;   // read(2) size of the warm-read pass
  std::string large_folios = "auto";  // auto | on | off (auto: per file system and profile)
  uint32_t tmpfs_huge_order = 0;      // tmpfs huge=: 0 = never
  // posix_fadvise() over the whole file before the accesses:
  // normal | random | sequential | willneed | dontneed | noreuse
  std::string fadvise = "normal";
};

struct MappingConfig {
  bool shared = true;              // MAP_SHARED, else MAP_PRIVATE
  std::string madvise = "normal";  // normal | random | sequential | willneed | hugepage
  uint64_t offset = 0;             // file offset of the mapping (bytes, page aligned)
  uint64_t length = 0;             // bytes; 0: to the end of the file
  uint64_t align_offset = 0;       // pages past a 2 MiB boundary where the VMA starts
};

struct AccessConfig {
  std::string pattern = "random";  // random | sequential | stride | trace
  double fraction = 0.01;          // accesses = fraction x pages of the mapping
  uint64_t count = 0;              // accesses; overrides fraction when > 0 (trace: truncates)
  uint64_t stride = 1;             // pages between accesses (stride pattern)
  uint64_t start = 0;              // first page (sequential and stride)
  uint64_t seed = 1;
  std::string op = "read";      // read | write
  std::string method = "mmap";  // mmap: a load or store through the mapping; read: pread(2)
  uint64_t read_size = 4096;    // bytes per pread(2) (method = read)
  double span = 1.0;            // the pattern covers the first span x pages of the mapping
  uint64_t dontneed_every = 0;  // MADV_DONTNEED the whole mapping after every N accesses
  // A recorded trace (pattern trace; formats in src/workload/trace.h).
  std::string trace;  // path; relative: to the scenario file (--set: to the current directory)
  std::string trace_format = "pages";  // pages | offsets | csv
  // Concurrent workloads (docs/concurrency.md); "stream" replays the pattern above.
  std::string workload = "stream";   // stream | pft | lat_pagefault
  uint32_t threads = 1;              // tasks faulting at once, one per CPU
  std::string tasks = "threads";     // threads | threads-vma-each | processes
  uint64_t region = 64ULL << 20;     // bytes faulted per pass, split between the tasks
  uint64_t passes = 4;               // fault the region, MADV_DONTNEED it; repeat
  std::string interleave = "timed";  // timed | lockstep | real
  bool coherence = true;             // count cache-line transfers
};

// Kernel behaviour. The profile sets every switch; an explicit key overrides it.
struct KernelConfig {
  std::string profile = "6.18";
  std::optional<uint32_t> fault_around_bytes;
  std::optional<bool> mmap_miss_p1;
  std::optional<bool> mmap_miss_p2;
  std::optional<bool> shmem_fault_around;
  std::optional<bool> batched_rss;
  std::optional<bool> per_vma_lock;
  std::optional<bool> tried_after_major;
  std::optional<bool> workingset_exclusion;
  std::optional<bool> whole_folio_fault_around;
  std::optional<bool> file_pmd_mapping;
  std::optional<bool> prefault_young;
  std::optional<bool> anon_pgoff_hi;
  std::optional<bool> anon_rmap_assert;
  std::optional<bool> vma_refcnt_p1;
  std::optional<bool> vma_refcnt_p2;
  std::optional<bool> debug_vm;
  std::optional<bool> madvise_vma_lock;
};

struct Config {
  MachineConfig machine;
  DeviceConfig device;
  FileConfig file;
  MappingConfig mapping;
  AccessConfig access;
  KernelConfig kernel;
};

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
std::vector<KeyDoc> key_docs();

}  // namespace faultline
