// host_info.h — what the live probe reports about the kernel it ran on:
// uname -r, the page size, fault_around_bytes, MGLRU and THP settings.
#pragma once

#include <string>
#include <vector>

#include "probe/probe.h"

namespace faultline::probe {

// Reads HostInfo from uname(2), sysconf(_SC_PAGESIZE), debugfs and
// /sys/kernel/mm. What cannot be read is reported as HostInfo documents it;
// an unreadable fault_around_bytes also adds a note. fault_around_bytes
// lives in debugfs: if none is mounted, root mounts one inside this
// process's run directory under workspace_root for the read and unmounts it
// at once (a run killed in between leaves it where cleanup_stale() looks).
HostInfo read_host_info(const std::string& workspace_root, std::vector<std::string>* notes);

}  // namespace faultline::probe
