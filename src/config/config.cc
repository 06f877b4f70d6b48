// config.cc — the key table: one line per scenario key, in one place, so
// `git grep` finds every key and its documentation. The kernel.* switches
// come from FAULTLINE_KERNEL_SWITCHES (mm/profile.h), choices from their
// enums' name tables.
#include "faultline/config.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <limits>
#include <type_traits>

#include "mm/types.h"
#include "util/units.h"

namespace faultline {
namespace {

Status bad(const std::string& key, const std::string& what, const std::string& value) {
  return Status::InvalidArgument(key + ": expected " + what + ", got '" + value + "'");
}

// The value types of keys: how a value is read from text and printed, and
// the type `faultline keys` shows. Errors name the key.

template <typename T>
struct Int {  // a non-negative integer below 2^(8 sizeof T)
  static std::string type() { return "int"; }
  static Status parse(const std::string& key, const std::string& v, T* out) {
    if (v.empty() || v[0] == '-' || v[0] == '+') return bad(key, "a non-negative integer", v);
    errno = 0;
    char* end = nullptr;
    const unsigned long long x = std::strtoull(v.c_str(), &end, 10);
    if (errno || *end != '\0') return bad(key, "a non-negative integer", v);
    if (x > std::numeric_limits<T>::max()) return bad(key, "an integer below 2^32", v);
    *out = static_cast<T>(x);
    return Status::Ok();
  }
  static std::string format(T v) { return std::to_string(v); }
};

struct Size {  // bytes, with an optional binary suffix
  static std::string type() { return "size"; }
  static Status parse(const std::string& key, const std::string& v, uint64_t* out) {
    auto r = parse_size(v);
    if (!r.ok()) return bad(key, "a size such as 4KiB, 8MiB or 20GiB", v);
    *out = *r;
    return Status::Ok();
  }
  static std::string format(uint64_t v) { return std::to_string(v); }
};

struct SizeOrAuto {  // a size, or "auto": estimated by the model
  static std::string type() { return "size|auto"; }
  static Status parse(const std::string& key, const std::string& v, std::optional<uint64_t>* out) {
    if (v == "auto") {
      out->reset();
      return Status::Ok();
    }
    uint64_t bytes = 0;
    FAULTLINE_RETURN_IF_ERROR(Size::parse(key, v, &bytes));
    *out = bytes;
    return Status::Ok();
  }
  static std::string format(const std::optional<uint64_t>& v) {
    return v ? std::to_string(*v) : "auto";
  }
};

struct Number {
  static std::string type() { return "number"; }
  static Status parse(const std::string& key, const std::string& v, double* out) {
    errno = 0;
    char* end = nullptr;
    const double x = std::strtod(v.c_str(), &end);
    if (v.empty() || errno || *end != '\0' || !std::isfinite(x)) return bad(key, "a number", v);
    *out = x;
    return Status::Ok();
  }
  static std::string format(double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.10g", v);
    return buf;
  }
};

struct TimelineEvery {  // model.timeline: "off", N accesses, or modelled time ("10ms")
  static std::string type() { return "off|N|Ts"; }
  static Status parse(const std::string& key, const std::string& v, ModelConfig* out) {
    const std::string want =
        "off, a number of accesses such as 1000, or modelled time such as "
        "10ms or 0.5s";
    out->timeline_accesses = 0;
    out->timeline_interval_s = 0;
    if (v == "off") return Status::Ok();
    if (!v.empty() && v.back() == 's') {
      double scale = 1;
      size_t digits = v.size() - 1;
      if (v.size() >= 2 && (v[v.size() - 2] == 'm' || v[v.size() - 2] == 'u')) {
        scale = v[v.size() - 2] == 'm' ? 1e-3 : 1e-6;
        --digits;
      }
      const std::string num = v.substr(0, digits);
      char* end = nullptr;
      const double t = num.empty() ? 0 : std::strtod(num.c_str(), &end);
      if (num.empty() || end != num.c_str() + num.size() || !std::isfinite(t)) {
        return bad(key, want, v);
      }
      if (!(t > 0)) return Status::InvalidArgument(key + ": an interval must be greater than zero");
      out->timeline_interval_s = t * scale;
      return Status::Ok();
    }
    if (v.empty() || v.find_first_not_of("0123456789") != std::string::npos || v.size() > 18) {
      return bad(key, want, v);
    }
    const uint64_t n = std::stoull(v);
    if (n == 0) return Status::InvalidArgument(key + ": an interval must be greater than zero");
    out->timeline_accesses = n;
    return Status::Ok();
  }
  static std::string format(const ModelConfig& m) {
    if (m.timeline_accesses) return std::to_string(m.timeline_accesses);
    if (m.timeline_interval_s > 0) {
      char buf[40];
      std::snprintf(buf, sizeof buf, "%gs", m.timeline_interval_s);
      return buf;
    }
    return "off";
  }
};

struct Bool {
  static std::string type() { return "bool"; }
  static Status parse(const std::string& key, const std::string& v, bool* out) {
    if (v == "true" || v == "1" || v == "on" || v == "yes") {
      *out = true;
    } else if (v == "false" || v == "0" || v == "off" || v == "no") {
      *out = false;
    } else {
      return bad(key, "true or false", v);
    }
    return Status::Ok();
  }
  static std::string format(bool v) { return v ? "true" : "false"; }
};

struct Path {
  static std::string type() { return "path"; }
  static Status parse(const std::string&, const std::string& v, std::string* out) {
    *out = v;
    return Status::Ok();
  }
  static std::string format(const std::string& v) { return v; }
};

struct Name {  // a [[files]] or process name: letters, digits, '-', '_'
  static std::string type() { return "name"; }
  static Status parse(const std::string& key, const std::string& v, std::string* out) {
    if (!valid(v)) return bad(key, "a name of letters, digits, '-' and '_'", v);
    *out = v;
    return Status::Ok();
  }
  static std::string format(const std::string& v) { return v; }
  static bool valid(const std::string& v) {
    return !v.empty() && std::all_of(v.begin(), v.end(), [](char c) {
      return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_';
    });
  }
};

template <NamedEnum E>
struct Choice {  // one name of E's table
  static std::string type() { return enum_choices<E>("|"); }
  static Status parse(const std::string& key, const std::string& v, E* out) {
    const std::optional<E> e = parse_enum<E>(v);
    if (!e) return bad(key, "one of " + enum_choices<E>(", "), v);
    *out = *e;
    return Status::Ok();
  }
  static std::string format(E v) { return std::string(enum_name(v)); }
};

// The value type of a kernel switch of C++ type T.
template <typename T>
using SwitchValue = std::conditional_t<std::is_same_v<T, bool>, Bool, Int<T>>;

using Setter = std::function<Status(Config&, const std::string& key, const std::string& v)>;
using Getter = std::function<std::string(const Config&, const mm::KernelProfile&)>;

struct KeyDef {
  std::string key;
  std::string type;
  std::string doc;
  Setter set;
  Getter get;
};

// A key of value type V stored at field(config), which is a generic lambda
// returning a reference to the field (FAULTLINE_FIELD).
template <typename V, typename Field>
KeyDef key(const char* name, Field field, const char* doc) {
  return {name, V::type(), doc,
          [field](Config& c, const std::string& k, const std::string& v) {
            return V::parse(k, v, &field(c));
          },
          [field](const Config& c, const mm::KernelProfile&) { return V::format(field(c)); }};
}
#define FAULTLINE_FIELD(path) \
  [](auto& c) -> auto& { return c.path; }

// kernel.<name>: an override of one switch, shown as the resolved profile has it.
template <typename T, typename Field, typename Resolved>
KeyDef switch_key(const char* name, Field field, Resolved resolved, const char* doc) {
  using V = SwitchValue<T>;
  return {std::string("kernel.") + name, V::type(), doc,
          [field](Config& c, const std::string& k, const std::string& v) {
            T x{};
            FAULTLINE_RETURN_IF_ERROR(V::parse(k, v, &x));
            field(c) = x;
            return Status::Ok();
          },
          [resolved](const Config&, const mm::KernelProfile& p) { return V::format(resolved(p)); }};
}

const std::vector<KeyDef>& key_table() {
  using namespace workload;  // NOLINT: the choices' enums
  static const std::vector<KeyDef> kKeys = [] {
    std::vector<KeyDef> k = {
        key<Size>("machine.memory", FAULTLINE_FIELD(machine.memory), "RAM of the modelled machine"),
        key<Size>("machine.memory_limit", FAULTLINE_FIELD(machine.memory_limit),
                  "cgroup memory limit of the workload (0: none)"),
        key<SizeOrAuto>("machine.kernel_reserved", FAULTLINE_FIELD(machine.kernel_reserved),
                        "memory the page cache cannot use (kernel, memmap, watermarks, user "
                        "space); auto: estimated"),
        key<Size>("machine.cgroup_overhead", FAULTLINE_FIELD(machine.cgroup_overhead),
                  "charges of the workload under a memory limit that are not page cache"),
        key<Int<uint32_t>>("device.read_ahead_kb", FAULTLINE_FIELD(device.read_ahead_kb),
                           "read_ahead_kb of the device (ra_pages = value / 4)"),
        key<Int<uint32_t>>("device.max_sectors_kb", FAULTLINE_FIELD(device.max_sectors_kb),
                           "max_sectors_kb of the device (io_pages = value / 4)"),
        key<Size>("device.bandwidth", FAULTLINE_FIELD(device.bandwidth),
                  "read bandwidth per second (elapsed-time estimate)"),
        key<Number>("device.latency_us", FAULTLINE_FIELD(device.latency_us),
                    "latency of one read request, from its last byte transferred to its "
                    "completion (elapsed-time estimate)"),
        key<Number>("device.request_us", FAULTLINE_FIELD(device.request_us),
                    "time the device spends on each read request besides its transfer, one "
                    "request at a time: it bounds the request rate however many are in flight "
                    "(elapsed-time estimate)"),
        key<Int<uint32_t>>("device.queue_depth", FAULTLINE_FIELD(device.queue_depth),
                           "read requests the device has in flight at once; 0: no limit "
                           "(elapsed-time estimate)"),
        key<Bool>("device.shared_batches", FAULTLINE_FIELD(device.shared_batches),
                  "the requests of one read batch (read_pages) are served at once, sharing the "
                  "bandwidth, and complete together, as a loop device with direct I/O over a "
                  "virtual disk serves them; false: one after another, each complete when its "
                  "own transfer and latency are (elapsed-time estimate)"),
        key<Size>("file.size", FAULTLINE_FIELD(file.size), "size of the file"),
        key<Choice<FsType>>("file.fs", FAULTLINE_FIELD(file.fs), "file system holding the file"),
        key<Choice<CacheState>>("file.cache", FAULTLINE_FIELD(file.cache),
                                "page cache before the accesses: empty, filled by read(2), or "
                                "by the write(2) that made it"),
        key<Size>("file.write_chunk", FAULTLINE_FIELD(file.write_chunk),
                  "write(2) size used to create the file (decides folio sizes)"),
        key<Size>("file.warm_chunk", FAULTLINE_FIELD(file.warm_chunk),
                  "read(2) size of the warm-read pass"),
        key<Choice<LargeFolios>>("file.large_folios", FAULTLINE_FIELD(file.large_folios),
                                 "large folios in the page cache (auto: ext4 from 6.16, xfs; "
                                 "tmpfs per huge order)"),
        key<Int<uint32_t>>("file.tmpfs_huge_order", FAULTLINE_FIELD(file.tmpfs_huge_order),
                           "folio order of tmpfs allocations (huge=; 0: never)"),
        key<Bool>("mapping.shared", FAULTLINE_FIELD(mapping.shared),
                  "MAP_SHARED (true) or MAP_PRIVATE (false)"),
        key<Choice<mm::Fadvise>>(
            "file.fadvise", FAULTLINE_FIELD(file.fadvise),
            "posix_fadvise() on the whole file before the accesses (the file the mapping uses)"),
        key<Choice<mm::Madvise>>("mapping.madvise", FAULTLINE_FIELD(mapping.madvise),
                                 "madvise() applied to the whole mapping before the accesses"),
        key<Size>("mapping.offset", FAULTLINE_FIELD(mapping.offset),
                  "file offset of the mapping (page aligned)"),
        key<Size>("mapping.length", FAULTLINE_FIELD(mapping.length),
                  "length of the mapping (0: to the end of the file)"),
        key<Int<uint64_t>>("mapping.align_offset", FAULTLINE_FIELD(mapping.align_offset),
                           "pages past a 2 MiB boundary at which the VMA starts"),
        key<Choice<Pattern>>("access.pattern", FAULTLINE_FIELD(access.pattern),
                             "order of the pages touched (trace: replay access.trace)"),
        key<Number>("access.fraction", FAULTLINE_FIELD(access.fraction),
                    "accesses as a fraction of the mapping's pages"),
        key<Int<uint64_t>>(
            "access.count", FAULTLINE_FIELD(access.count),
            "number of accesses (overrides fraction when > 0; trace: replay at most this many)"),
        key<Path>("access.trace", FAULTLINE_FIELD(access.trace),
                  "trace file replayed by access.pattern=trace (relative: to the scenario file; "
                  "from --set, to the current directory)"),
        key<Choice<TraceFormat>>("access.trace_format", FAULTLINE_FIELD(access.trace_format),
                                 "pages: a page index per line; offsets: OFFSET[,LENGTH] bytes "
                                 "per line; csv: columns offset and length or size"),
        key<Int<uint64_t>>("access.stride", FAULTLINE_FIELD(access.stride),
                           "pages between consecutive accesses (stride pattern)"),
        key<Int<uint64_t>>("access.start", FAULTLINE_FIELD(access.start),
                           "first page touched (sequential and stride)"),
        key<Int<uint64_t>>("access.seed", FAULTLINE_FIELD(access.seed),
                           "seed of the random pattern"),
        key<Number>("access.span", FAULTLINE_FIELD(access.span),
                    "fraction of the mapping (from its start) the pattern covers"),
        key<Int<uint64_t>>(
            "access.dontneed_every", FAULTLINE_FIELD(access.dontneed_every),
            "MADV_DONTNEED over the whole mapping after every N accesses (0: never)"),
        key<Choice<AccessOp>>("access.op", FAULTLINE_FIELD(access.op),
                              "one-byte load or store per access"),
        key<Choice<AccessMethod>>("access.method", FAULTLINE_FIELD(access.method),
                                  "how an access reaches the page: through the mapping, or by "
                                  "pread(2) of access.read_size"),
        key<Size>("access.read_size", FAULTLINE_FIELD(access.read_size),
                  "bytes per pread(2) when access.method = read"),
        key<Choice<mm::Release>>("kernel.profile", FAULTLINE_FIELD(kernel.profile),
                                 "kernel release whose behaviour is modelled"),
    };
#define FAULTLINE_X(type, name, by_release, doc)                                              \
  k.push_back(switch_key<type>(                                                               \
      #name, FAULTLINE_FIELD(kernel.name), [](const mm::KernelProfile& p) { return p.name; }, \
      doc));
    FAULTLINE_KERNEL_SWITCHES(FAULTLINE_X)
#undef FAULTLINE_X
#define FAULTLINE_X(name, ns, doc) \
  k.push_back(key<Number>("cpu." #name, FAULTLINE_FIELD(cpu.name), doc " (elapsed-time estimate)"));
    FAULTLINE_CPU_COSTS(FAULTLINE_X)
#undef FAULTLINE_X
#define FAULTLINE_X(name, ns, doc)                                 \
  k.push_back(key<Number>("smp." #name, FAULTLINE_FIELD(smp.name), \
                          doc " (concurrent engine's time estimate)"));
    FAULTLINE_SMP_COSTS(FAULTLINE_X)
#undef FAULTLINE_X
    const std::vector<KeyDef> rest = {
        key<Int<uint32_t>>("machine.cpus", FAULTLINE_FIELD(machine.cpus),
                           "online CPUs: percpu_counter_batch, and the CPUs the tasks share in "
                           "the time estimate (0: one per task); with 2 or more, kswapd reclaims "
                           "beside a stream's task when the memory pressure is not a cgroup's"),
        key<Choice<Kind>>("access.workload", FAULTLINE_FIELD(access.workload),
                          "stream: replay access.pattern; pft: threads write-fault slices of one "
                          "anonymous region; lat_pagefault: read faults with fault-around on a "
                          "cached file"),
        key<Int<uint32_t>>("access.threads", FAULTLINE_FIELD(access.threads),
                           "tasks faulting at once (pft, lat_pagefault), one per CPU"),
        key<Choice<TaskSharing>>("access.tasks", FAULTLINE_FIELD(access.tasks),
                                 "threads share one VMA, or each maps its own VMA, or are "
                                 "processes"),
        key<Size>("access.region", FAULTLINE_FIELD(access.region),
                  "bytes faulted per pass, split between the tasks"),
        key<Int<uint64_t>>("access.passes", FAULTLINE_FIELD(access.passes),
                           "passes: fault the slice, then MADV_DONTNEED it"),
        key<Bool>("access.zap", FAULTLINE_FIELD(access.zap),
                  "end each pass with MADV_DONTNEED of the slice (false: one pass that leaves "
                  "the pages mapped, the part of a run that pft times)"),
        key<Int<uint32_t>>("machine.cpus_per_domain", FAULTLINE_FIELD(machine.cpus_per_domain),
                           "CPUs behind one last-level cache (an AMD CCD), numbered domain after "
                           "domain; a cache line crossing domains costs smp.line_far_ns (0: one "
                           "domain)"),
        key<Choice<Placement>>("access.placement", FAULTLINE_FIELD(access.placement),
                               "which CPUs the concurrent tasks run on: packed (CPU i) or spread "
                               "(one per domain in turn)"),
        key<Choice<Interleave>>("access.interleave", FAULTLINE_FIELD(access.interleave),
                                "timed/lockstep: the tasks' steps interleaved deterministically "
                                "on one thread; real: one OS thread per task (wall-clock "
                                "throughput)"),
        key<Bool>("access.coherence", FAULTLINE_FIELD(access.coherence),
                  "count cache-line transfers between the tasks' CPUs"),
        key<Bool>("access.allow_incomplete", FAULTLINE_FIELD(access.allow_incomplete),
                  "replay a recording marked incomplete (the program or recorder stopped early)"),
        key<Int<uint32_t>>("model.repetitions", FAULTLINE_FIELD(model.repetitions),
                           "runs of each case and variant, seeds access.seed, +1, ...: the "
                           "median and [min, max] (once if the stream does not depend on the "
                           "seed)"),
        key<Int<uint64_t>>("model.invariants", FAULTLINE_FIELD(model.invariants),
                           "check the model's state (folios, LRU lists, page tables, RSS, "
                           "charge, mmap_miss) every N accesses and at the end; 0: never"),
        key<Choice<EngineChoice>>(
            "model.engine", FAULTLINE_FIELD(model.engine),
            "how the model holds the page cache, the LRU lists and the page tables: pages (an "
            "entry per page and folio, the reference), runs (an entry per run of folios or PTEs "
            "in one state) or auto (runs where readahead windows reach 2 MiB, "
            "device.read_ahead_kb >= 2048, or a file passes 64 GiB; pages elsewhere); the "
            "counters and tracepoints are the same"),
        key<TimelineEvery>("model.timeline", FAULTLINE_FIELD(model),
                           "sample the run over time: every N accesses, or every T of modelled "
                           "time (10ms, 0.5s); off: no timeline"),
    };
    k.insert(k.end(), rest.begin(), rest.end());
    return k;
  }();
  return kKeys;
}

// The keys of one entry of a list ([[files]], [[streams]]): KEY of
// LIST.NAME.KEY.
template <typename Elem>
struct EntryKey {
  std::string key;
  std::string type;
  std::string doc;
  std::function<Status(Elem&, const std::string& full, const std::string& v)> set;
  std::function<std::string(const Elem&)> get;
};

template <typename V, typename Elem, typename Field>
EntryKey<Elem> entry_key(const char* name, Field field, const char* doc) {
  return {name, V::type(), doc,
          [field](Elem& e, const std::string& k, const std::string& v) {
            return V::parse(k, v, &field(e));
          },
          [field](const Elem& e) { return V::format(field(e)); }};
}

const std::vector<EntryKey<FileDecl>>& file_keys() {
  static const std::vector<EntryKey<FileDecl>> k = {
      entry_key<Size, FileDecl>("size", FAULTLINE_FIELD(size), "size of the file"),
      entry_key<Choice<mm::Madvise>, FileDecl>("madvise", FAULTLINE_FIELD(madvise),
                                               "madvise() over each mapping of the file"),
      entry_key<Choice<mm::Fadvise>, FileDecl>("fadvise", FAULTLINE_FIELD(fadvise),
                                               "posix_fadvise() on each open of the file"),
      entry_key<Bool, FileDecl>("shared", FAULTLINE_FIELD(shared),
                                "its mappings are MAP_SHARED (true) or MAP_PRIVATE (false)"),
  };
  return k;
}

const std::vector<EntryKey<StreamDecl>>& stream_keys() {
  using namespace workload;  // NOLINT: the choices' enums
  static const std::vector<EntryKey<StreamDecl>> k = {
      entry_key<Name, StreamDecl>("file", FAULTLINE_FIELD(file),
                                  "the [[files]] entry the stream accesses"),
      entry_key<Path, StreamDecl>("recording", FAULTLINE_FIELD(recording),
                                  "instead of file and a pattern: a recording replayed as the "
                                  "stream, its files and tasks added (relative: to the "
                                  "scenario file)"),
      entry_key<Name, StreamDecl>("process", FAULTLINE_FIELD(process),
                                  "streams of one process are its threads and share its "
                                  "mappings (default: a process of the stream's own)"),
      entry_key<Choice<Pattern>, StreamDecl>("pattern", FAULTLINE_FIELD(pattern),
                                             "order of the pages accessed (not trace)"),
      entry_key<Number, StreamDecl>("fraction", FAULTLINE_FIELD(fraction),
                                    "accesses as a fraction of the file's pages"),
      entry_key<Int<uint64_t>, StreamDecl>("count", FAULTLINE_FIELD(count),
                                           "accesses (overrides fraction when > 0)"),
      entry_key<Int<uint64_t>, StreamDecl>("stride", FAULTLINE_FIELD(stride),
                                           "pages between accesses (stride pattern)"),
      entry_key<Int<uint64_t>, StreamDecl>("start", FAULTLINE_FIELD(start),
                                           "first page (sequential and stride)"),
      entry_key<Int<uint64_t>, StreamDecl>("seed", FAULTLINE_FIELD(seed),
                                           "seed of the random pattern (0: access.seed plus "
                                           "the stream's index)"),
      entry_key<Choice<AccessOp>, StreamDecl>("op", FAULTLINE_FIELD(op),
                                              "one-byte load or store per access"),
      entry_key<Choice<AccessMethod>, StreamDecl>("method", FAULTLINE_FIELD(method),
                                                  "through a mapping, or pread(2) of read_size"),
      entry_key<Size, StreamDecl>("read_size", FAULTLINE_FIELD(read_size),
                                  "bytes per pread(2) when method = read"),
      entry_key<Number, StreamDecl>("span", FAULTLINE_FIELD(span),
                                    "fraction of the file (from its start) the pattern covers"),
      entry_key<Size, StreamDecl>("anon", FAULTLINE_FIELD(anon),
                                  "anonymous memory the stream's process holds, charged as the "
                                  "page cache is"),
  };
  return k;
}

template <typename Elem>
std::vector<Elem>& entries(Config& cfg);
template <>
std::vector<FileDecl>& entries<FileDecl>(Config& cfg) {
  return cfg.files;
}
template <>
std::vector<StreamDecl>& entries<StreamDecl>(Config& cfg) {
  return cfg.streams;
}

// LIST.NAME.KEY = value on the entry named NAME.
template <typename Elem>
Status set_entry_key(Config& cfg, const std::vector<EntryKey<Elem>>& keys, const std::string& list,
                     const std::string& full, const std::string& value) {
  const size_t dot = full.find('.', list.size() + 1);
  if (dot == std::string::npos) {
    return Status::InvalidArgument("unknown key '" + full + "' (expected " + list + ".NAME.KEY)");
  }
  const std::string name = full.substr(list.size() + 1, dot - list.size() - 1);
  const std::string field = full.substr(dot + 1);
  std::vector<Elem>& list_of = entries<Elem>(cfg);
  auto e =
      std::find_if(list_of.begin(), list_of.end(), [&](const Elem& x) { return x.name == name; });
  if (e == list_of.end()) {
    std::string names;
    for (const Elem& x : list_of) names += (names.empty() ? "" : ", ") + x.name;
    return Status::InvalidArgument(
        full + ": no [[" + list + "]] entry named '" + name + "'" +
        (names.empty() ? " (there are none)" : " (there are " + names + ")"));
  }
  for (const EntryKey<Elem>& k : keys) {
    if (k.key == field) return k.set(*e, full, value);
  }
  std::string fields;
  for (const EntryKey<Elem>& k : keys) fields += (fields.empty() ? "" : ", ") + k.key;
  return Status::InvalidArgument("unknown key '" + full + "' (an entry of [[" + list + "]] has " +
                                 fields + ")");
}

bool has_prefix(const std::string& s, const std::string& list) {
  return s.size() > list.size() && s.compare(0, list.size(), list) == 0 && s[list.size()] == '.';
}

}  // namespace

bool split_entry_key(const std::string& key, std::string* list, std::string* name,
                     std::string* field) {
  for (const char* l : {kFileList, kStreamList}) {
    if (!has_prefix(key, l)) continue;
    const size_t n = std::string(l).size() + 1;
    const size_t dot = key.find('.', n);
    if (dot == std::string::npos) return false;
    *list = l;
    *name = key.substr(n, dot - n);
    *field = key.substr(dot + 1);
    return true;
  }
  return false;
}

Status add_entry(Config& cfg, const std::string& list, const std::string& name) {
  if (!Name::valid(name)) {
    return bad(list + ".name", "a name of letters, digits, '-' and '_'", name);
  }
  auto add = [&](auto& v) -> Status {
    for (const auto& x : v) {
      if (x.name == name) {
        return Status::InvalidArgument(list + ": two entries named '" + name + "'");
      }
    }
    v.emplace_back();
    v.back().name = name;
    return Status::Ok();
  };
  if (list == kFileList) return add(cfg.files);
  if (list == kStreamList) return add(cfg.streams);
  return Status::InvalidArgument("unknown list '" + list + "'");
}

Status set_key(Config& cfg, const std::string& key, const std::string& value) {
  if (has_prefix(key, kFileList)) return set_entry_key(cfg, file_keys(), kFileList, key, value);
  if (has_prefix(key, kStreamList)) {
    return set_entry_key(cfg, stream_keys(), kStreamList, key, value);
  }
  for (const KeyDef& d : key_table()) {
    if (key == d.key) return d.set(cfg, key, value);
  }
  return Status::InvalidArgument("unknown key '" + key + "' (faultline keys lists them)");
}

// x86-64 with 4-level page tables: user space ends at 128 TiB (TASK_SIZE_MAX).
constexpr uint64_t kUserAddressSpace = (uint64_t{1} << 47) - 4096;

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

// [[files]] and [[streams]] together: every name resolves, every stream's
// pattern fits its file.
static Status validate_entries(const Config& c) {
  using namespace workload;  // NOLINT: the choices' enums
  auto err = [](const std::string& m) { return Status::InvalidArgument(m); };
  if (c.streams.empty()) {
    if (!c.files.empty()) return err("files: [[files]] without [[streams]]: nothing reads them");
    return Status::Ok();
  }
  if (c.access.workload != Kind::kStream) {
    return err("access.workload: [[streams]] are the workload; leave access.workload at stream");
  }
  for (const FileDecl& f : c.files) {
    const std::string k = std::string(kFileList) + "." + f.name;
    if (f.size == 0) return err(k + ".size: must be greater than zero");
    if (f.size > mm::kMaxFileBytes) return err(k + ".size: at most 1 PiB");
  }
  for (const StreamDecl& st : c.streams) {
    const std::string k = std::string(kStreamList) + "." + st.name;
    if (st.recording.empty() == st.file.empty()) {
      return err(k + ": give either file (with a pattern) or recording");
    }
    if (!st.recording.empty()) continue;
    auto f = std::find_if(c.files.begin(), c.files.end(),
                          [&](const FileDecl& x) { return x.name == st.file; });
    if (f == c.files.end()) return err(k + ".file: no [[files]] entry named '" + st.file + "'");
    if (st.pattern == Pattern::kTrace) {
      return err(k + ".pattern: a stream of a trace is a recording (streams." + st.name +
                 ".recording)");
    }
    if (st.count == 0 && !(st.fraction > 0 && st.fraction <= 1)) {
      return err(k + ".fraction: must be in (0, 1] (or set count)");
    }
    if (!(st.span > 0 && st.span <= 1)) return err(k + ".span: must be in (0, 1]");
    if (st.stride == 0) return err(k + ".stride: must be greater than zero");
    const uint64_t pages = (f->size + 4095) / 4096;
    const uint64_t span_pages =
        std::max<uint64_t>(1, static_cast<uint64_t>(st.span * static_cast<double>(pages)));
    if (st.pattern == Pattern::kStride && st.stride >= span_pages) {
      return err(k + ".stride: not smaller than the pages the stream covers (" +
                 std::to_string(span_pages) + ")");
    }
    if (st.start >= span_pages) return err(k + ".start: beyond the pages the stream covers");
    if (st.read_size == 0) return err(k + ".read_size: must be greater than zero");
    if (st.read_size > (uint64_t{1} << 30)) return err(k + ".read_size: at most 1 GiB");
    if (st.method == AccessMethod::kMmap && f->size >= kUserAddressSpace) {
      return err(k + ".method: a mapping of " + format_size(f->size) +
                 " does not fit x86-64's 128 TiB user address space (mmap fails with ENOMEM); "
                 "read it (method = read)");
    }
    if (st.method == AccessMethod::kRead && st.op != AccessOp::kRead) {
      return err(k + ".method: read(2) accesses need op = read");
    }
  }
  return Status::Ok();
}

bool is_concurrent_workload(const Config& c) {
  return c.access.workload == workload::Kind::kPft ||
         c.access.workload == workload::Kind::kLatPagefault;
}

bool depends_on_seed(const Config& c) {
  using workload::Kind;
  using workload::Pattern;
  if (is_concurrent_workload(c)) {
    // The concurrent engine: its timed order draws each transfer's time.
    return c.access.interleave == Interleave::kTimed && c.smp.line_spread > 0;
  }
  if (c.access.workload != Kind::kStream) return false;
  if (c.streams.empty()) return c.access.pattern == Pattern::kRandom;
  return std::any_of(c.streams.begin(), c.streams.end(), [](const StreamDecl& s) {
    return s.recording.empty() && s.pattern == Pattern::kRandom;
  });
}

Config with_repetition(const Config& c, uint32_t k) {
  Config out = c;
  out.access.seed += k;
  for (StreamDecl& s : out.streams) {
    if (s.seed) s.seed += k;
  }
  return out;
}

Status validate(const Config& c) {
  using namespace workload;  // NOLINT: the choices' enums
  auto err = [](const std::string& m) { return Status::InvalidArgument(m); };
  if (c.machine.memory == 0) return err("machine.memory: must be greater than zero");
  if (c.model.repetitions == 0) return err("model.repetitions: must be at least 1");
  if (c.model.repetitions > kMaxRepetitions) {
    return err("model.repetitions: at most " + std::to_string(kMaxRepetitions));
  }
  if (c.model.timeline() && is_concurrent_workload(c)) {
    return err("model.timeline: the concurrent workloads (pft, lat_pagefault) have no timeline");
  }
  if (c.file.size == 0) return err("file.size: must be greater than zero");
  if (c.file.size > mm::kMaxFileBytes) return err("file.size: at most 1 PiB");
  if (c.file.write_chunk == 0) return err("file.write_chunk: must be greater than zero");
  if (c.file.warm_chunk == 0) return err("file.warm_chunk: must be greater than zero");
  if (c.file.tmpfs_huge_order > 9) return err("file.tmpfs_huge_order: at most 9 (PMD order)");
  if (c.device.read_ahead_kb > (1u << 20)) return err("device.read_ahead_kb: at most 1048576");
  if (c.device.max_sectors_kb < 4) return err("device.max_sectors_kb: at least 4");
  if (c.device.bandwidth == 0) return err("device.bandwidth: must be greater than zero");
  if (c.device.latency_us < 0) return err("device.latency_us: must not be negative");
  if (!(c.device.request_us >= 0)) return err("device.request_us: must not be negative");
#define FAULTLINE_X(name, ns, doc) \
  if (!(c.cpu.name >= 0)) return err("cpu." #name ": must not be negative");
  FAULTLINE_CPU_COSTS(FAULTLINE_X)
#undef FAULTLINE_X
#define FAULTLINE_X(name, ns, doc) \
  if (!(c.smp.name >= 0)) return err("smp." #name ": must not be negative");
  FAULTLINE_SMP_COSTS(FAULTLINE_X)
#undef FAULTLINE_X
  if (c.smp.line_read_hold > 1) return err("smp.line_read_hold: a fraction, at most 1");
  if (c.smp.line_spread > 0.5) {
    return err("smp.line_spread: a coefficient of variation, at most 0.5");
  }
  if (c.mapping.offset % 4096) return err("mapping.offset: must be a multiple of 4096");
  if (c.mapping.offset >= c.file.size) return err("mapping.offset: beyond the end of the file");
  if (c.mapping.length % 4096) return err("mapping.length: must be a multiple of 4096");
  const uint64_t map_len = c.mapping.length ? c.mapping.length : c.file.size - c.mapping.offset;
  if (c.mapping.offset + map_len > ((c.file.size + 4095) & ~uint64_t{4095})) {
    return err("mapping.length: the mapping extends past the end of the file");
  }
  if (c.access.method == AccessMethod::kMmap && map_len >= kUserAddressSpace) {
    return err(
        "mapping.length: a mapping of " + format_size(map_len) +
        " does not fit x86-64's 128 TiB user address space (mmap fails with ENOMEM); map part "
        "of the file (mapping.offset, mapping.length) or read it (access.method=read)");
  }
  if (c.mapping.align_offset >= 512) return err("mapping.align_offset: must be below 512");
  const uint64_t map_pages = (map_len + 4095) / 4096;
  const bool trace = c.access.pattern == Pattern::kTrace;
  // Like access.stride for the other patterns, access.trace is ignored unless
  // the pattern is trace (a case may switch a trace scenario to random).
  if (trace && c.access.trace.empty()) {
    return err("access.trace: access.pattern=trace needs a trace file");
  }
  if (c.access.workload == Kind::kRecording && c.access.trace.empty()) {
    return err("access.trace: access.workload=recording needs a recording (faultline record)");
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
  if (c.access.stride >= span_pages && c.access.pattern == Pattern::kStride) {
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
  if (c.access.method == AccessMethod::kRead) {
    if (c.access.op != AccessOp::kRead) {
      return err("access.method: read(2) accesses need access.op=read");
    }
    if (c.access.workload != Kind::kStream) {
      return err("access.method: read(2) accesses need access.workload=stream");
    }
    if (c.access.dontneed_every) {
      return err("access.method: access.dontneed_every needs accesses through the mapping");
    }
  }
  if (c.access.read_size == 0) return err("access.read_size: must be greater than zero");
  if (c.access.read_size > (uint64_t{1} << 30)) return err("access.read_size: at most 1 GiB");
  if (is_concurrent_workload(c)) {
    if (c.access.region < 4096 * uint64_t{c.access.threads}) {
      return err("access.region: at least one page per thread");
    }
    if (c.access.region > (uint64_t{1} << 36)) return err("access.region: at most 64 GiB");
    if (c.access.passes == 0) return err("access.passes: must be greater than zero");
    if (!c.access.zap && c.access.passes != 1) {
      return err(
          "access.passes: more than one pass needs access.zap=true (without the zap a "
          "second pass finds every page mapped)");
    }
    if (c.access.placement == Placement::kSpread &&
        (c.machine.cpus_per_domain == 0 || c.machine.cpus == 0)) {
      return err("access.placement: spread needs machine.cpus and machine.cpus_per_domain");
    }
    if (c.machine.cpus && c.machine.cpus_per_domain && c.machine.cpus_per_domain > c.machine.cpus) {
      return err("machine.cpus_per_domain: more than machine.cpus");
    }
    if (c.access.placement == Placement::kSpread && c.access.threads > c.machine.cpus) {
      return err(
          "access.placement: spread places one task per CPU; access.threads exceeds "
          "machine.cpus");
    }
  }
  return validate_entries(c);
}

std::vector<std::pair<std::string, std::string>> effective_keys(const Config& cfg) {
  const mm::KernelProfile p = resolve_profile(cfg.kernel);
  std::vector<std::pair<std::string, std::string>> out;
  for (const KeyDef& d : key_table()) out.emplace_back(d.key, d.get(cfg, p));
  for (const FileDecl& f : cfg.files) {
    for (const auto& k : file_keys()) {
      out.emplace_back(std::string(kFileList) + "." + f.name + "." + k.key, k.get(f));
    }
  }
  for (const StreamDecl& st : cfg.streams) {
    for (const auto& k : stream_keys()) {
      out.emplace_back(std::string(kStreamList) + "." + st.name + "." + k.key, k.get(st));
    }
  }
  return out;
}

const std::vector<KeyDoc>& key_docs() {
  // The defaults do not change while the program runs: built once.
  static const std::vector<KeyDoc> docs = [] {
    const Config defaults;
    const mm::KernelProfile p = resolve_profile(defaults.kernel);
    std::vector<KeyDoc> out;
    for (const KeyDef& d : key_table()) out.push_back({d.key, d.type, d.get(defaults, p), d.doc});
    const FileDecl file;
    for (const auto& k : file_keys()) {
      out.push_back({std::string(kFileList) + ".NAME." + k.key, k.type, k.get(file), k.doc});
    }
    const StreamDecl stream;
    for (const auto& k : stream_keys()) {
      out.push_back({std::string(kStreamList) + ".NAME." + k.key, k.type, k.get(stream), k.doc});
    }
    return out;
  }();
  return docs;
}

mm::KernelProfile resolve_profile(const KernelConfig& kc) {
  mm::KernelProfile p = mm::kernel_profile(kc.profile);
#define FAULTLINE_X(type, name, by_release, doc) \
  if (kc.name) p.name = *kc.name;
  FAULTLINE_KERNEL_SWITCHES(FAULTLINE_X)
#undef FAULTLINE_X
  return p;
}

std::vector<SwitchDoc> switch_docs() {
  std::vector<SwitchDoc> out;
#define FAULTLINE_X(type, name, by_release, doc)       \
  {                                                    \
    SwitchDoc d{"kernel." #name, doc, {}};             \
    for (const auto& r : enum_names(mm::Release{})) {  \
      const type v = mm::kernel_profile(r.value).name; \
      if constexpr (std::is_same_v<type, bool>) {      \
        d.values.emplace_back(v ? "on" : "off");       \
      } else {                                         \
        d.values.push_back(std::to_string(v));         \
      }                                                \
    }                                                  \
    out.push_back(std::move(d));                       \
  }
  FAULTLINE_KERNEL_SWITCHES(FAULTLINE_X)
#undef FAULTLINE_X
  return out;
}

}  // namespace faultline
