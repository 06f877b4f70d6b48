// touch_log.h — the records libfaultline_preload.so writes to
// $FAULTLINE_RECORD_DIR/touch.<pid> and `faultline record` reads: one per
// first touch of a page of a file mapping in an epoch, and markers.
#pragma once

#include <cstdint>

namespace faultline::preload {

struct TouchRecord {
  uint64_t time_ns;  // CLOCK_REALTIME, the clock strace -ttt stamps system calls with
  uint64_t addr;     // the page's address (0 for a marker)
  uint32_t tid;
  uint32_t flags;
};
static_assert(sizeof(TouchRecord) == 24);

inline constexpr uint32_t kTouchWrite = 1;       // a store
inline constexpr uint32_t kTouchOwnHandler = 2;  // marker: the program installed a SIGSEGV handler
inline constexpr uint32_t kTouchEpoch = 4;       // marker: an epoch ended
inline constexpr uint32_t kTouchUnknownWrite = 8;  // the fault did not tell load from store

// The environment of the recorded program.
inline constexpr const char* kEnvDir = "FAULTLINE_RECORD_DIR";
inline constexpr const char* kEnvData = "FAULTLINE_RECORD_DATA";
inline constexpr const char* kEnvEpochPages = "FAULTLINE_RECORD_EPOCH_PAGES";
inline constexpr const char* kEnvEpochMs = "FAULTLINE_RECORD_EPOCH_MS";
// The pid of the strace that runs the program: the process it started dies
// with it (PR_SET_PDEATHSIG), so a SIGKILLed recorder leaves no program running.
inline constexpr const char* kEnvTracer = "FAULTLINE_RECORD_TRACER";

// Directories whose files are the system's, not the program's data (the
// shim and the recorder skip them unless FAULTLINE_RECORD_DATA is set).
inline constexpr const char* kSystemDirs[] = {"/usr/", "/lib",  "/etc/", "/proc/", "/sys/",
                                              "/dev/", "/run/", "/bin/", "/sbin/", "/snap/"};

}  // namespace faultline::preload
