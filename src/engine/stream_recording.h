// stream_recording.h — the access stream of a configuration (a pattern or
// a trace over one file, through the mapping or by pread(2)) written as the
// recording of a one-task program: open, mmap, the madvise and
// posix_fadvise hints, then each access. Replaying it (access.workload =
// recording) does what the stream replay does, event for event; the tests
// hold the two replays to the same counters.
#pragma once

#include <string>

#include "faultline/config.h"
#include "util/status.h"

namespace faultline::engine {

// Writes cfg's stream (access.workload = stream) to path as a recording.
Status record_stream(const Config& cfg, const std::string& path);

}  // namespace faultline::engine
