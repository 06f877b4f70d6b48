// cpus.h — how many CPUs this process may run on.
#pragma once

#include <sched.h>

#include <algorithm>
#include <thread>

namespace faultline {

// The CPUs of this process's affinity mask (what nproc(1) prints): fewer
// than the machine has under taskset, a cpuset cgroup or a launcher that
// binds processes to cores, as mpirun does by default for a few ranks.
inline int usable_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0) return std::max(1, CPU_COUNT(&set));
  return std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
}

// The CPUs the machine has online.
inline int online_cpus() {
  return std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
}

}  // namespace faultline
