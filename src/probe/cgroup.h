// cgroup.h — the probe's memory cgroup (v1 memory controller or cgroup v2).
//
// One cgroup faultline-probe-<pid> at the top of the memory hierarchy, with
// the request's limit. Only the probe's child joins it (by writing its own
// pid to procs_file()), so the page cache the access loop faults in is
// charged and reclaimed there, as in a container with that limit.
#pragma once

#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

#include "util/status.h"

namespace faultline::probe::cg {

inline constexpr const char* kCgroupPrefix = "faultline-probe-";

struct Controller {
  int version = 0;   // 1 (v1 memory controller), 2 (cgroup2 with memory), 0: none
  std::string root;  // mount point of that hierarchy
};

// The memory controller of this machine: a v1 "memory" hierarchy is
// preferred, else cgroup2 with "memory" in cgroup.controllers.
Controller find_memory_controller();

class MemoryCgroup {
 public:
  // Creates <root>/faultline-probe-<owner> with the limit. Unavailable when
  // there is no memory controller. Notes what could not be set (memsw).
  static faultline::Result<std::unique_ptr<MemoryCgroup>> create(pid_t owner, uint64_t limit_bytes,
                                                                 std::vector<std::string>* notes);
  ~MemoryCgroup();
  MemoryCgroup(const MemoryCgroup&) = delete;
  MemoryCgroup& operator=(const MemoryCgroup&) = delete;

  const std::string& dir() const { return dir_; }
  // The file a process writes its pid to in order to join.
  const std::string& procs_file() const { return procs_file_; }
  // OOM kills in this cgroup so far (v1 memory.oom_control, v2 memory.events).
  int64_t oom_kills() const;
  // Moves any task left to the root and removes the directory. Idempotent.
  Status destroy();

 private:
  MemoryCgroup(Controller c, std::string dir);
  Controller controller_;
  std::string dir_;
  std::string procs_file_;
  bool removed_ = false;
};

// Removes faultline-probe-<pid> cgroups whose pid is dead.
Status remove_stale_cgroups();

// Empties and removes one cgroup directory (tasks go to the hierarchy root).
Status remove_cgroup(const std::string& root, const std::string& dir);

}  // namespace faultline::probe::cg
