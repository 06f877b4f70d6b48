// config.cc — the key table: one line per scenario key, in one place, so
// `git grep` finds every key and its documentation.
#include "faultline/config.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <limits>

#include "core/profile_resolve.h"
#include "mm/madvise.h"
#include "mm/profile.h"
#include "util/units.h"

namespace faultline {
namespace {

Status bad(const std::string& key, const std::string& what, const std::string& value) {
  return Status::InvalidArgument(key + ": expected " + what + ", got '" + value + "'");
}

Result<uint64_t> parse_u64(const std::string& key, const std::string& v) {
  if (v.empty() || v[0] == '-' || v[0] == '+') return bad(key, "a non-negative integer", v);
  errno = 0;
  char* end = nullptr;
  const unsigned long long x = std::strtoull(v.c_str(), &end, 10);
  if (errno || *end != '\0') return bad(key, "a non-negative integer", v);
  return static_cast<uint64_t>(x);
}

Result<uint32_t> parse_u32(const std::string& key, const std::string& v) {
  auto r = parse_u64(key, v);
  if (!r.ok()) return r.status();
  if (*r > std::numeric_limits<uint32_t>::max()) return bad(key, "an integer below 2^32", v);
  return static_cast<uint32_t>(*r);
}

Result<double> parse_double(const std::string& key, const std::string& v) {
  errno = 0;
  char* end = nullptr;
  const double x = std::strtod(v.c_str(), &end);
  if (v.empty() || errno || *end != '\0' || !std::isfinite(x)) return bad(key, "a number", v);
  return x;
}

Result<bool> parse_bool(const std::string& key, const std::string& v) {
  if (v == "true" || v == "1" || v == "on" || v == "yes") return true;
  if (v == "false" || v == "0" || v == "off" || v == "no") return false;
  return bad(key, "true or false", v);
}

Result<uint64_t> parse_bytes(const std::string& key, const std::string& v) {
  auto r = parse_size(v);
  if (!r.ok()) return bad(key, "a size such as 4KiB, 8MiB or 20GiB", v);
  return *r;
}

Status parse_choice(const std::string& key, const std::string& v,
                    std::initializer_list<const char*> allowed, std::string* out) {
  std::string list;
  for (const char* a : allowed) {
    if (v == a) {
      *out = v;
      return Status::Ok();
    }
    list += list.empty() ? a : std::string(", ") + a;
  }
  return bad(key, "one of " + list, v);
}

std::string fmt_bool(bool b) { return b ? "true" : "false"; }
std::string fmt_double(double d) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.10g", d);
  return buf;
}

using Setter = std::function<Status(Config&, const std::string& key, const std::string& v)>;
using Getter = std::function<std::string(const Config&, const mm::KernelProfile&)>;

struct KeyDef {
  const char* key;
  const char* type;
  const char* doc;
  Setter set;
  Getter get;
};

#define FL_U64(field)                                                   \
  [](Config& c, const std::string& k, const std::string& v) -> Status { \
    auto r = parse_u64(k, v);                                           \
    if (!r.ok()) return r.status();                                     \
    c.field = *r;                                                       \
    return Status::Ok();                                                \
  }
#define FL_U32(field)                                                   \
  [](Config& c, const std::string& k, const std::string& v) -> Status { \
    auto r = parse_u32(k, v);                                           \
    if (!r.ok()) return r.status();                                     \
    c.field = *r;                                                       \
    return Status::Ok();                                                \
  }
#define FL_BYTES(field)                                                 \
  [](Config& c, const std::string& k, const std::string& v) -> Status { \
    auto r = parse_bytes(k, v);                                         \
    if (!r.ok()) return r.status();                                     \
    c.field = *r;                                                       \
    return Status::Ok();                                                \
  }
#define FL_DOUBLE(field)                                                \
  [](Config& c, const std::string& k, const std::string& v) -> Status { \
    auto r = parse_double(k, v);                                        \
    if (!r.ok()) return r.status();                                     \
    c.field = *r;                                                       \
    return Status::Ok();                                                \
  }
#define FL_BOOL(field)                                                  \
  [](Config& c, const std::string& k, const std::string& v) -> Status { \
    auto r = parse_bool(k, v);                                          \
    if (!r.ok()) return r.status();                                     \
    c.field = *r;                                                       \
    return Status::Ok();                                                \
  }
#define FL_CHOICE(field, ...)                                           \
  [](Config& c, const std::string& k, const std::string& v) -> Status { \
    return parse_choice(k, v, {__VA_ARGS__}, &c.field);                 \
  }
#define FL_GET(expr)                                               \
  [](const Config& c, const mm::KernelProfile& p) -> std::string { \
    (void)c;                                                       \
    (void)p;                                                       \
    return expr;                                                   \
  }

const std::vector<KeyDef>& key_table() {
  static const std::vector<KeyDef> kKeys = {
      {"machine.memory", "size", "RAM of the modelled machine", FL_BYTES(machine.memory),
       FL_GET(std::to_string(c.machine.memory))},
      {"machine.memory_limit", "size", "cgroup memory limit of the workload (0: none)",
       FL_BYTES(machine.memory_limit), FL_GET(std::to_string(c.machine.memory_limit))},
      {"machine.kernel_reserved", "size|auto",
       "memory the page cache cannot use (kernel, memmap, watermarks, user space); auto: estimated",
       [](Config& c, const std::string& k, const std::string& v) -> Status {
         if (v == "auto") {
           c.machine.kernel_reserved.reset();
           return Status::Ok();
         }
         auto r = parse_bytes(k, v);
         if (!r.ok()) return r.status();
         c.machine.kernel_reserved = *r;
         return Status::Ok();
       },
       FL_GET(c.machine.kernel_reserved ? std::to_string(*c.machine.kernel_reserved) : "auto")},
      {"machine.cgroup_overhead", "size",
       "charges of the workload under a memory limit that are not page cache",
       FL_BYTES(machine.cgroup_overhead), FL_GET(std::to_string(c.machine.cgroup_overhead))},
      {"device.read_ahead_kb", "int", "read_ahead_kb of the device (ra_pages = value / 4)",
       FL_U32(device.read_ahead_kb), FL_GET(std::to_string(c.device.read_ahead_kb))},
      {"device.max_sectors_kb", "int", "max_sectors_kb of the device (io_pages = value / 4)",
       FL_U32(device.max_sectors_kb), FL_GET(std::to_string(c.device.max_sectors_kb))},
      {"device.bandwidth", "size", "read bandwidth per second (elapsed-time estimate)",
       FL_BYTES(device.bandwidth), FL_GET(std::to_string(c.device.bandwidth))},
      {"device.latency_us", "number", "latency of a synchronous read (elapsed-time estimate)",
       FL_DOUBLE(device.latency_us), FL_GET(fmt_double(c.device.latency_us))},
      {"file.size", "size", "size of the file", FL_BYTES(file.size),
       FL_GET(std::to_string(c.file.size))},
      {"file.fs", "ext4|xfs|tmpfs", "file system holding the file",
       FL_CHOICE(file.fs, "ext4", "xfs", "tmpfs"), FL_GET(c.file.fs)},
      {"file.cache", "cold|warm-read|warm-write",
       "page cache before the accesses: empty, filled by read(2), or by the write(2) that made it",
       FL_CHOICE(file.cache, "cold", "warm-read", "warm-write"), FL_GET(c.file.cache)},
      {"file.write_chunk", "size", "write(2) size used to create the file (decides folio sizes)",
       FL_BYTES(file.write_chunk), FL_GET(std::to_string(c.file.write_chunk))},
      {"file.warm_chunk", "size", "read(2) size of the warm-read pass", FL_BYTES(file.warm_chunk),
       FL_GET(std::to_string(c.file.warm_chunk))},
      {"file.large_folios", "auto|on|off",
       "large folios in the page cache (auto: ext4 from 6.16, xfs; tmpfs per huge order)",
       FL_CHOICE(file.large_folios, "auto", "on", "off"), FL_GET(c.file.large_folios)},
      {"file.tmpfs_huge_order", "int", "folio order of tmpfs allocations (huge=; 0: never)",
       FL_U32(file.tmpfs_huge_order), FL_GET(std::to_string(c.file.tmpfs_huge_order))},
      {"mapping.shared", "bool", "MAP_SHARED (true) or MAP_PRIVATE (false)",
       FL_BOOL(mapping.shared), FL_GET(fmt_bool(c.mapping.shared))},
      {"file.fadvise", "normal|random|sequential|willneed|dontneed|noreuse",
       "posix_fadvise() on the whole file before the accesses (the file the mapping uses)",
       FL_CHOICE(file.fadvise, "normal", "random", "sequential", "willneed", "dontneed", "noreuse"),
       FL_GET(c.file.fadvise)},
      {"mapping.madvise", "normal|random|sequential|willneed|hugepage",
       "madvise() applied to the whole mapping before the accesses",
       FL_CHOICE(mapping.madvise, "normal", "random", "sequential", "willneed", "hugepage"),
       FL_GET(c.mapping.madvise)},
      {"mapping.offset", "size", "file offset of the mapping (page aligned)",
       FL_BYTES(mapping.offset), FL_GET(std::to_string(c.mapping.offset))},
      {"mapping.length", "size", "length of the mapping (0: to the end of the file)",
       FL_BYTES(mapping.length), FL_GET(std::to_string(c.mapping.length))},
      {"mapping.align_offset", "int", "pages past a 2 MiB boundary at which the VMA starts",
       FL_U64(mapping.align_offset), FL_GET(std::to_string(c.mapping.align_offset))},
      {"access.pattern", "random|sequential|stride|trace",
       "order of the pages touched (trace: replay access.trace)",
       FL_CHOICE(access.pattern, "random", "sequential", "stride", "trace"),
       FL_GET(c.access.pattern)},
      {"access.fraction", "number", "accesses as a fraction of the mapping's pages",
       FL_DOUBLE(access.fraction), FL_GET(fmt_double(c.access.fraction))},
      {"access.count", "int",
       "number of accesses (overrides fraction when > 0; trace: replay at most this many)",
       FL_U64(access.count), FL_GET(std::to_string(c.access.count))},
      {"access.trace", "path",
       "trace file replayed by access.pattern=trace (relative: to the scenario file; from --set, "
       "to the current directory)",
       [](Config& c, const std::string& k, const std::string& v) -> Status {
         (void)k;
         c.access.trace = v;
         return Status::Ok();
       },
       FL_GET(c.access.trace)},
      {"access.trace_format", "pages|offsets|csv",
       "pages: a page index per line; offsets: OFFSET[,LENGTH] bytes per line; csv: columns "
       "offset and length or size",
       FL_CHOICE(access.trace_format, "pages", "offsets", "csv"), FL_GET(c.access.trace_format)},
      {"access.stride", "int", "pages between consecutive accesses (stride pattern)",
       FL_U64(access.stride), FL_GET(std::to_string(c.access.stride))},
      {"access.start", "int", "first page touched (sequential and stride)", FL_U64(access.start),
       FL_GET(std::to_string(c.access.start))},
      {"access.seed", "int", "seed of the random pattern", FL_U64(access.seed),
       FL_GET(std::to_string(c.access.seed))},
      {"access.span", "number", "fraction of the mapping (from its start) the pattern covers",
       FL_DOUBLE(access.span), FL_GET(fmt_double(c.access.span))},
      {"access.dontneed_every", "int",
       "MADV_DONTNEED over the whole mapping after every N accesses (0: never)",
       FL_U64(access.dontneed_every), FL_GET(std::to_string(c.access.dontneed_every))},
      {"access.op", "read|write", "one-byte load or store per access",
       FL_CHOICE(access.op, "read", "write"), FL_GET(c.access.op)},
      {"access.method", "mmap|read",
       "how an access reaches the page: through the mapping, or by pread(2) of access.read_size",
       FL_CHOICE(access.method, "mmap", "read"), FL_GET(c.access.method)},
      {"access.read_size", "size", "bytes per pread(2) when access.method = read",
       FL_BYTES(access.read_size), FL_GET(std::to_string(c.access.read_size))},
      {"kernel.profile", "6.18|7.1|7.4|6.15|6.9", "kernel release whose behaviour is modelled",
       [](Config& c, const std::string& k, const std::string& v) -> Status {
         mm::KernelProfile p;
         if (!mm::lookup_profile(v, &p)) {
           std::string list;
           for (auto n : mm::profile_names()) list += (list.empty() ? "" : ", ") + std::string(n);
           return bad(k, "one of " + list, v);
         }
         c.kernel.profile = v;
         return Status::Ok();
       },
       FL_GET(c.kernel.profile)},
      {"kernel.fault_around_bytes", "int", "fault_around_bytes (4096 disables fault-around)",
       [](Config& c, const std::string& k, const std::string& v) -> Status {
         auto r = parse_u32(k, v);
         if (!r.ok()) return r.status();
         c.kernel.fault_around_bytes = *r;
         return Status::Ok();
       },
       FL_GET(std::to_string(p.fault_around_bytes))},
      {"kernel.mmap_miss_p1", "bool", "seed 1 patch 1: credit only the faulting address",
       FL_BOOL(kernel.mmap_miss_p1), FL_GET(fmt_bool(p.mmap_miss_p1))},
      {"kernel.mmap_miss_p2", "bool", "seed 1 patch 2: no credit on FAULT_FLAG_TRIED retries",
       FL_BOOL(kernel.mmap_miss_p2), FL_GET(fmt_bool(p.mmap_miss_p2))},
      {"kernel.shmem_fault_around", "bool", "seed 4: shmem maps pages around the fault",
       FL_BOOL(kernel.shmem_fault_around), FL_GET(fmt_bool(p.shmem_fault_around))},
      {"kernel.batched_rss", "bool", "seed 3: one RSS update per filemap_map_pages call",
       FL_BOOL(kernel.batched_rss), FL_GET(fmt_bool(p.batched_rss))},
      {"kernel.per_vma_lock", "bool", "faults try the per-VMA lock first",
       FL_BOOL(kernel.per_vma_lock), FL_GET(fmt_bool(p.per_vma_lock))},
      {"kernel.tried_after_major", "bool", "a major VMA-lock attempt retries with TRIED",
       FL_BOOL(kernel.tried_after_major), FL_GET(fmt_bool(p.tried_after_major))},
      {"kernel.workingset_exclusion", "bool", "no mmap_miss credit for PG_workingset folios",
       FL_BOOL(kernel.workingset_exclusion), FL_GET(fmt_bool(p.map_pages_workingset_exclusion))},
      {"kernel.whole_folio_fault_around", "bool", "fault-around maps whole large folios",
       FL_BOOL(kernel.whole_folio_fault_around), FL_GET(fmt_bool(p.map_pages_whole_folio))},
      {"kernel.file_pmd_mapping", "bool", "PMD-order file folios are mapped with one PMD",
       FL_BOOL(kernel.file_pmd_mapping), FL_GET(fmt_bool(p.file_pmd_mapping))},
      {"kernel.prefault_young", "bool", "PTEs set by fault-around are young (x86)",
       FL_BOOL(kernel.prefault_young), FL_GET(fmt_bool(p.prefault_young))},
      {"kernel.anon_pgoff_hi", "bool",
       "7.4-rc1: the anonymous page index reads __vm_anon_pgoff_hi, next to vm_refcnt",
       FL_BOOL(kernel.anon_pgoff_hi), FL_GET(fmt_bool(p.anon_pgoff_hi))},
      {"kernel.anon_rmap_assert", "bool",
       "7.4-rc1: vma_has_anon_rmap() loads vm_refcnt to assert VMA stability",
       FL_BOOL(kernel.anon_rmap_assert), FL_GET(fmt_bool(p.anon_rmap_assert))},
      {"kernel.vma_refcnt_p1", "bool", "seed 2 patch 1: anonymous page index from vm_pgoff",
       FL_BOOL(kernel.vma_refcnt_p1), FL_GET(fmt_bool(p.vma_refcnt_p1))},
      {"kernel.vma_refcnt_p2", "bool",
       "seed 2 patch 2: the VMA stability assertion only with DEBUG_VM",
       FL_BOOL(kernel.vma_refcnt_p2), FL_GET(fmt_bool(p.vma_refcnt_p2))},
      {"kernel.debug_vm", "bool", "CONFIG_DEBUG_VM", FL_BOOL(kernel.debug_vm),
       FL_GET(fmt_bool(p.debug_vm))},
      {"kernel.madvise_vma_lock", "bool", "MADV_DONTNEED under the per-VMA lock (6.16+)",
       FL_BOOL(kernel.madvise_vma_lock), FL_GET(fmt_bool(p.madvise_vma_lock))},
      {"machine.cpus", "int",
       "online CPUs: percpu_counter_batch, and the CPUs the tasks share in the time "
       "estimate (0: one per task)",
       FL_U32(machine.cpus), FL_GET(std::to_string(c.machine.cpus))},
      {"access.workload", "stream|pft|lat_pagefault",
       "stream: replay access.pattern; pft: threads write-fault slices of one anonymous "
       "region; lat_pagefault: read faults with fault-around on a cached file",
       FL_CHOICE(access.workload, "stream", "pft", "lat_pagefault"), FL_GET(c.access.workload)},
      {"access.threads", "int", "tasks faulting at once (pft, lat_pagefault), one per CPU",
       FL_U32(access.threads), FL_GET(std::to_string(c.access.threads))},
      {"access.tasks", "threads|threads-vma-each|processes",
       "threads share one VMA, or each maps its own VMA, or are processes",
       FL_CHOICE(access.tasks, "threads", "threads-vma-each", "processes"), FL_GET(c.access.tasks)},
      {"access.region", "size", "bytes faulted per pass, split between the tasks",
       FL_BYTES(access.region), FL_GET(std::to_string(c.access.region))},
      {"access.passes", "int", "passes: fault the slice, then MADV_DONTNEED it",
       FL_U64(access.passes), FL_GET(std::to_string(c.access.passes))},
      {"access.interleave", "timed|lockstep|real",
       "timed/lockstep: the tasks' steps interleaved deterministically on one thread; real: "
       "one OS thread per task (wall-clock throughput)",
       FL_CHOICE(access.interleave, "timed", "lockstep", "real"), FL_GET(c.access.interleave)},
      {"access.coherence", "bool", "count cache-line transfers between the tasks' CPUs",
       FL_BOOL(access.coherence), FL_GET(fmt_bool(c.access.coherence))},
  };
  return kKeys;
}

}  // namespace

Status set_key(Config& cfg, const std::string& key, const std::string& value) {
  for (const KeyDef& d : key_table()) {
    if (key == d.key) return d.set(cfg, key, value);
  }
  return Status::InvalidArgument("unknown key '" + key + "' (faultline keys lists them)");
}

Status apply_assignments(Config& cfg, const std::vector<std::string>& assignments) {
  for (const std::string& a : assignments) {
    const size_t eq = a.find('=');
    if (eq == std::string::npos || eq == 0) {
      return Status::InvalidArgument("expected KEY=VALUE, got '" + a + "'");
    }
    FAULTLINE_RETURN_IF_ERROR(set_key(cfg, a.substr(0, eq), a.substr(eq + 1)));
  }
  return Status::Ok();
}

Status validate(const Config& c) {
  auto err = [](const std::string& m) { return Status::InvalidArgument(m); };
  if (c.machine.memory == 0) return err("machine.memory: must be greater than zero");
  if (c.file.size == 0) return err("file.size: must be greater than zero");
  if (c.file.size >= (uint64_t{1} << 44)) return err("file.size: at most 16 TiB");
  if (c.file.write_chunk == 0) return err("file.write_chunk: must be greater than zero");
  if (c.file.warm_chunk == 0) return err("file.warm_chunk: must be greater than zero");
  if (c.file.tmpfs_huge_order > 9) return err("file.tmpfs_huge_order: at most 9 (PMD order)");
  if (c.device.read_ahead_kb > (1u << 20)) return err("device.read_ahead_kb: at most 1048576");
  if (c.device.max_sectors_kb < 4) return err("device.max_sectors_kb: at least 4");
  if (c.device.bandwidth == 0) return err("device.bandwidth: must be greater than zero");
  if (c.device.latency_us < 0) return err("device.latency_us: must not be negative");
  if (c.mapping.offset % 4096) return err("mapping.offset: must be a multiple of 4096");
  if (c.mapping.offset >= c.file.size) return err("mapping.offset: beyond the end of the file");
  if (c.mapping.length % 4096) return err("mapping.length: must be a multiple of 4096");
  const uint64_t map_len = c.mapping.length ? c.mapping.length : c.file.size - c.mapping.offset;
  if (c.mapping.offset + map_len > ((c.file.size + 4095) & ~uint64_t{4095})) {
    return err("mapping.length: the mapping extends past the end of the file");
  }
  if (c.mapping.align_offset >= 512) return err("mapping.align_offset: must be below 512");
  const uint64_t map_pages = (map_len + 4095) / 4096;
  const bool trace = c.access.pattern == "trace";
  // Like access.stride for the other patterns, access.trace is ignored unless
  // the pattern is trace (a case may switch a trace scenario to random).
  if (trace && c.access.trace.empty()) {
    return err("access.trace: access.pattern=trace needs a trace file");
  }
  if (!trace && c.access.count == 0 && !(c.access.fraction > 0 && c.access.fraction <= 1)) {
    return err("access.fraction: must be in (0, 1] (or set access.count)");
  }
  if (!(c.access.span > 0 && c.access.span <= 1)) return err("access.span: must be in (0, 1]");
  if (c.access.stride == 0) return err("access.stride: must be greater than zero");
  // The pages the pattern covers (engine::make_access_spec computes the same).
  const uint64_t span_pages =
      std::max<uint64_t>(1, static_cast<uint64_t>(c.access.span * static_cast<double>(map_pages)));
  const std::string what = c.access.span < 1 ? "the pages access.span covers" : "the mapping";
  if (c.access.stride >= span_pages && c.access.pattern == "stride") {
    return err("access.stride: " + std::to_string(c.access.stride) + " pages is not smaller than " +
               what + " (" + std::to_string(span_pages) + " pages)");
  }
  if (c.access.start >= span_pages) return err("access.start: beyond the end of " + what);
  if (c.kernel.fault_around_bytes && *c.kernel.fault_around_bytes > (2u << 20)) {
    return err("kernel.fault_around_bytes: at most 2097152 (PTRS_PER_PTE pages)");
  }
  if (c.machine.memory_limit && c.machine.memory_limit <= c.machine.cgroup_overhead) {
    return err("machine.memory_limit: must exceed machine.cgroup_overhead");
  }
  if (c.access.threads < 1 || c.access.threads > 64) return err("access.threads: 1 to 64");
  if (c.access.method == "read") {
    if (c.access.op != "read") return err("access.method: read(2) accesses need access.op=read");
    if (c.access.workload != "stream") {
      return err("access.method: read(2) accesses need access.workload=stream");
    }
    if (c.access.dontneed_every) {
      return err("access.method: access.dontneed_every needs accesses through the mapping");
    }
  }
  if (c.access.read_size == 0) return err("access.read_size: must be greater than zero");
  if (c.access.read_size > (uint64_t{1} << 30)) return err("access.read_size: at most 1 GiB");
  if (c.access.workload != "stream") {
    if (c.access.region < 4096 * uint64_t{c.access.threads}) {
      return err("access.region: at least one page per thread");
    }
    if (c.access.region > (uint64_t{1} << 36)) return err("access.region: at most 64 GiB");
    if (c.access.passes == 0) return err("access.passes: must be greater than zero");
  }
  return Status::Ok();
}

std::vector<std::pair<std::string, std::string>> effective_keys(const Config& cfg) {
  const mm::KernelProfile p = resolve_profile(cfg.kernel);
  std::vector<std::pair<std::string, std::string>> out;
  for (const KeyDef& d : key_table()) out.emplace_back(d.key, d.get(cfg, p));
  return out;
}

std::vector<KeyDoc> key_docs() {
  const Config defaults;
  const mm::KernelProfile p = resolve_profile(defaults.kernel);
  std::vector<KeyDoc> out;
  for (const KeyDef& d : key_table()) out.push_back({d.key, d.type, d.get(defaults, p), d.doc});
  return out;
}

}  // namespace faultline
