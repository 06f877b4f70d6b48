// tracing.h — a private tracefs instance recording the page-cache events of
// the probe's file (readahead:*, filemap:mm_filemap_*).
//
// The instance (instances/faultline-<pid>) has its own ring buffer, so the
// probe neither reads nor disturbs the global trace. Events are filtered on
// the file's inode and device where the event carries them, and recording is
// switched on by the child itself (tracing_on_fd(), inherited over fork)
// only around the access loop.
#pragma once

#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

#include "util/status.h"

namespace faultline::probe::trace {

inline constexpr const char* kInstancePrefix = "faultline-";

// Where tracefs is mounted, "" if nowhere.
std::string tracefs_mount_point();

class TraceInstance {
 public:
  // Creates the instance for events on `file` (mounting tracefs at
  // /sys/kernel/tracing if it is not mounted; the run dir then gets a marker
  // so a stale clean-up knows to unmount it). Returns nullptr and a note when
  // tracefs is not available. whole_device: every event of the file system
  // `file` is on (the probe's own, holding only the run's files; `file` may
  // be its mount point), not only of file.
  static faultline::Result<std::unique_ptr<TraceInstance>> create(pid_t owner,
                                                                  const std::string& file,
                                                                  const std::string& run_dir,
                                                                  std::vector<std::string>* notes,
                                                                  bool whole_device = false);
  ~TraceInstance();
  TraceInstance(const TraceInstance&) = delete;
  TraceInstance& operator=(const TraceInstance&) = delete;

  // The instance's tracing_on, opened for writing: "1" starts, "0" stops.
  int tracing_on_fd() const { return on_fd_; }
  // Empties the ring buffer.
  Status clear();
  // Copies the instance's trace to dest; notes lost events (overruns).
  Status save(const std::string& dest, std::vector<std::string>* notes);
  // Stops, removes the instance, unmounts tracefs if this run mounted it and
  // no instance is left. Idempotent.
  Status destroy();

 private:
  TraceInstance() = default;
  std::string tracefs_;
  std::string dir_;
  int on_fd_ = -1;
  bool mounted_tracefs_ = false;
  bool removed_ = false;
};

// Removes instances faultline-<pid> of dead pids; with unmount_tracefs, also
// unmounts tracefs when no instance at all is left (a dead run mounted it).
Status remove_stale_instances(bool unmount_tracefs);

}  // namespace faultline::probe::trace
