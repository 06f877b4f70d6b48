// process.h — other processes, as the clean-up of what a dead run left
// needs them: the pid in a "run-<pid>" style name, and whether it still runs.
#pragma once

#include <sys/types.h>

#include <string_view>

namespace faultline::util {

// The pid after prefix in name, or -1 if name is not prefix + digits.
pid_t pid_from_name(std::string_view name, std::string_view prefix);

// True when pid names a process that is neither gone nor a zombie.
bool pid_alive(pid_t pid);

}  // namespace faultline::util
