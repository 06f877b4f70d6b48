// workspace.h — the live probe's private file system: run dir, image, loop
// device, mkfs, mount, and the clean-up of what a killed run left behind.
//
// Layout of one run (pid = the probing process):
//   <root>/run-<pid>/disk.img        sparse backing image
//   <root>/run-<pid>/mnt/            the file system (or a tmpfs)
//   <root>/run-<pid>/mnt/data        the test file
//   <root>/run-<pid>/tracefs-mounted marker: this run mounted tracefs
// Everything the probe creates is found again from these names alone, so a
// later cleanup_stale() can undo a run that died by SIGKILL.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "probe/probe.h"
#include "util/status.h"

namespace faultline::probe::ws {

inline constexpr const char* kRunPrefix = "run-";
inline constexpr const char* kTracefsMarker = "tracefs-mounted";

struct RunPaths {
  std::string dir, image, mnt, file;
};

// Absolute, symlink-free form of a workspace root (it may not exist yet), so
// that it compares equal to what the kernel reports in backing_file and
// /proc/mounts.
std::string canonical_root(const std::string& root);

RunPaths run_paths(const std::string& canonical_root, pid_t pid);

struct LoopDevice {
  std::string dev;   // /dev/loopN
  std::string name;  // loopN (its /sys/block entry)
  bool direct_io = false;
};

// losetup --find --show [--direct-io=on] image. Direct I/O keeps the image's
// own page cache out of the picture; when the kernel refuses it the device
// is attached without and a note says so.
faultline::Result<LoopDevice> attach_loop(const std::string& image,
                                          std::vector<std::string>* notes);

// losetup -d dev. A device still held open (lazily unmounted fs) gets
// autoclear from the kernel and goes away with its last user.
Status detach_loop(const std::string& dev);

// Loop devices (/dev/loopN) whose backing file lies under dir, from
// /sys/block/loop*/loop/backing_file.
std::vector<std::string> loops_backed_under(const std::string& dir);

// mkfs for fs on dev: ext4 with 4 KiB blocks and no lazy init (a
// background ext4lazyinit thread would add its own I/O to the device's
// counters), xfs with defaults. tmpfs needs none.
Status make_fs(FsType fs, const std::string& dev);

// Size of the backing image for a file of file_bytes on fs.
uint64_t image_bytes(FsType fs, uint64_t file_bytes);

// Unmounts everything under dir, detaches the loop devices backed there and
// removes dir. Refuses to delete while something is still mounted below it.
// *lazy_notes collects "lazy unmount" remarks (may be null).
Status cleanup_run_dir(const std::string& dir, std::vector<std::string>* notes);

}  // namespace faultline::probe::ws
