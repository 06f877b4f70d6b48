// procfs.h — the live probe's readers of kernel text: what /proc, /sys and
// debugfs files say, as values. Pure functions (text in, value out, no I/O),
// so each is tested on canned copies of those files. They build on the
// line and "key value" parsers of sys.h (split_lines, parse_key_values,
// status_field), which /proc/vmstat, memory.stat and /proc/<pid>/status
// share.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "probe/probe.h"

namespace faultline::probe::procfs {

// The fields of a /sys/block/<dev>/stat line (Documentation/block/stat.rst)
// in order: [0] read I/Os, [1] read merges, [2] sectors read (512 bytes),
// [3] read ticks, [4] write I/Os, ... Reading stops at the first field that
// is not a decimal integer: a malformed line gives the fields before it, an
// empty text none.
std::vector<int64_t> disk_fields(std::string_view text);

// The setting of a sysfs attribute that lists its choices with the current
// one in brackets, as /sys/kernel/mm/transparent_hugepage/enabled does
// ("always [madvise] never" -> "madvise"). Without a '[' before a ']' the
// whole text, trimmed.
std::string bracketed_choice(std::string_view text);

// The effective capability set of a /proc/<pid>/status text: the hex number
// after the first "CapEff:". nullopt when there is no "CapEff:"; 0 when no
// hex digits follow it, so a mangled field reads as no capabilities at all.
std::optional<uint64_t> cap_eff(std::string_view status);

// debugfs's fault_around_bytes ("65536\n"), read as strtoll(3) reads it:
// blanks skipped, whatever follows the number ignored, 0 when no number
// starts the text.
int64_t fault_around_bytes(std::string_view text);

// A sysfs attribute that holds one number, such as
// /sys/block/<dev>/queue/max_sectors_kb ("1280\n"), read as strtod(3) reads
// it: blanks skipped, whatever follows the number ignored. nullopt when no
// number starts the text or it is out of range.
std::optional<double> sysfs_number(std::string_view text);

// after - before for every "key value" line (sys::parse_key_values) of two
// snapshots of a counter file such as /proc/vmstat or memory.stat. A key
// missing from either snapshot, or whose value is not an integer there, is
// left out.
std::map<std::string, int64_t> key_value_deltas(std::string_view before, std::string_view after);

// Two /proc/vmstat snapshots as counters: each item's delta under its own
// name, except pgpgin (KiB read from every block device), which becomes
// vmstat.pgpgin so that "pgpgin" can mean the probe's own device.
Counters vmstat_counters(std::string_view before, std::string_view after);

// Two snapshots of a memory cgroup's memory.stat as counters named
// "memcg." + key. Reclaim inside a cgroup is not in the global
// pgscan/pgsteal: the cgroup's own memory.stat has it (v1: pgpgout,
// workingset_*; v2: pgscan, pgsteal).
Counters memcg_counters(std::string_view before, std::string_view after);

// Pages a mincore(2) vector reports resident: bit 0 of each byte (the other
// bits are reserved).
int64_t mincore_resident(std::span<const unsigned char> vec);

}  // namespace faultline::probe::procfs
