// sys.h — small POSIX helpers of the live probe: files, commands, signals.
//
// Everything here talks to the kernel through plain syscalls (no shell), and
// every error names the file or command at fault. The SIGINT/SIGTERM flag is
// process-wide: a live run installs it for its duration (SignalGuard) and
// polls it between steps, so a signal ends the run through its cleanup.
#pragma once

#include <sys/types.h>

#include <csignal>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "util/status.h"

namespace faultline::probe::sys {

// strerror(err) as a string.
std::string errno_text(int err);

// Reads a whole file (sysfs, procfs, tracefs attributes, small text files).
// NotFound when it does not exist, IoError otherwise.
faultline::Result<std::string> read_file(const std::string& path);

// Writes text to a file that exists (a sysfs/cgroupfs/tracefs attribute)
// with a single write(2), which is what those files want.
Status write_file(const std::string& path, std::string_view text);

// Creates or replaces a regular file with text.
Status write_new_file(const std::string& path, std::string_view text);

std::string trim(std::string_view s);

// Full path of an executable found in PATH, then /sbin, /usr/sbin,
// /usr/local/sbin (root's tools are often outside a user's PATH); "" if none.
std::string find_program(const std::string& name);

struct CommandResult {
  int exit_code = -1;  // 128 + signal when the command was killed
  std::string out;
  std::string err;
};

// Runs argv (argv[0] looked up with find_program) with fork/execv, no shell,
// capturing stdout and stderr. The command dies with its parent
// (PR_SET_PDEATHSIG), so a killed probe leaves no mkfs running on its loop
// device. Interrupted (after killing the command) when SIGINT/SIGTERM arrives
// under a SignalGuard, unless interruptible is false (clean-up commands, which
// must finish even after the signal).
faultline::Result<CommandResult> run_command(const std::vector<std::string>& argv,
                                             bool interruptible = true);

// run_command, and IoError naming the command and its stderr unless it exits 0.
// Returns the command's stdout.
faultline::Result<std::string> run_checked(const std::vector<std::string>& argv,
                                           bool interruptible = true);

// The lines of a kernel file, without their '\n' (views into text).
std::vector<std::string_view> split_lines(std::string_view text);
// "key value" lines (/proc/vmstat, memory.stat) into a map; other lines are skipped.
std::map<std::string, int64_t> parse_key_values(std::string_view text);

// The number after "Key:" in a /proc/<pid>/status style text, -1 if absent.
int64_t status_field(std::string_view text, std::string_view key);

struct MountEntry {
  std::string source, target, type, options;  // /proc/self/mounts fields, decoded
};
std::vector<MountEntry> read_mounts();

// Mount points (decoded from /proc/self/mounts) equal to dir or below it,
// deepest first so they can be unmounted in that order.
std::vector<std::string> mounts_under(const std::string& dir);

// The mount point of the first mount of the given file-system type, "" if none.
std::string find_mount_of_type(const std::string& fstype);

// Unmounts mnt; while it is busy (a dying process still maps a file) retries
// for about retry_ms, then detaches it lazily (MNT_DETACH) and sets *lazy.
Status unmount(const std::string& mnt, int retry_ms, bool* lazy);

// Sleeps ms milliseconds; returns early (false) when interrupted.
bool sleep_ms(int ms);

// Names in a directory (without . and ..); empty if it cannot be read.
std::vector<std::string> list_dir(const std::string& dir);

bool exists(const std::string& path);

// SIGINT/SIGTERM while a guard lives set a flag instead of killing the
// process; the previous handlers come back when it is destroyed. One guard at
// a time per process.
class SignalGuard {
 public:
  SignalGuard();
  ~SignalGuard();
  SignalGuard(const SignalGuard&) = delete;
  SignalGuard& operator=(const SignalGuard&) = delete;

 private:
  struct sigaction old_int_ {};
  struct sigaction old_term_ {};
};

// The signal caught under the current guard, 0 if none.
int interrupt_signal();
inline bool interrupted() { return interrupt_signal() != 0; }

}  // namespace faultline::probe::sys
