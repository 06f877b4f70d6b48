// fault_inject.h — named points where the probe, or its child, is killed on
// purpose, so that tests can show what a killed run leaves and that the next
// run removes it.
//
// FAULTLINE_PROBE_KILL=<point> in the environment makes the probe raise
// SIGKILL on itself (or its child on itself) when it reaches that point, as
// the OOM killer or an operator's kill -9 could. Unset, nothing changes. A
// SIGKILLed probe cannot clean up; the next live run does (cleanup_stale()).
// A killed child is the ordinary "probe child killed by signal 9" error,
// exit status 5, with everything cleaned. tests/fault_injection_test.sh
// walks every point.
#pragma once

#include <csignal>
#include <cstdint>
#include <string>

#include "util/status.h"

namespace faultline::probe {

inline constexpr const char* kKillPointEnv = "FAULTLINE_PROBE_KILL";

// X(enumerator, name, where the process dies)
#define FAULTLINE_PROBE_KILL_POINTS(X)                                                     \
  X(kWorkspace, "workspace", "the probe: its run directory exists")                        \
  X(kLoop, "losetup", "the probe: the backing image and loop device exist")                \
  X(kMkfs, "mkfs", "the probe: the file system is made, not mounted")                      \
  X(kMount, "mount", "the probe: the file system is mounted, the test file not written")   \
  X(kFile, "file", "the probe: the test file is written")                                  \
  X(kCgroup, "cgroup", "the probe: the memory cgroup exists")                              \
  X(kTrace, "trace", "the probe: the trace instance exists")                               \
  X(kRepetition, "repetition", "the probe: the page cache is set for a repetition")        \
  X(kChildStart, "child-start", "the child: forked, not yet in the cgroup")                \
  X(kChildCgroup, "child-cgroup", "the child: in the cgroup, the file not opened")         \
  X(kChildMapped, "child-mapped", "the child: the file mapped, before its first snapshot") \
  X(kChildTouching, "child-touching", "the child: half of its accesses done")              \
  X(kChildMeasured, "child-measured", "the child: both snapshots taken, nothing reported") \
  X(kCleanup, "cleanup", "the probe: its clean-up has unmounted, the loop device is attached")

enum class KillPoint : uint8_t {
  kNone,
#define FAULTLINE_X(e, name, doc) e,
  FAULTLINE_PROBE_KILL_POINTS(FAULTLINE_X)
#undef FAULTLINE_X
};

// The point FAULTLINE_PROBE_KILL names, kNone when unset or empty;
// InvalidArgument naming the variable and the known points otherwise.
faultline::Result<KillPoint> kill_point_from_env();

// SIGKILL to the calling process when it reaches the armed point.
// Async-signal-safe: the child calls it between fork() and _exit().
inline void kill_at(KillPoint armed, KillPoint here) {
  if (armed != KillPoint::kNone && armed == here) ::raise(SIGKILL);
}

}  // namespace faultline::probe
