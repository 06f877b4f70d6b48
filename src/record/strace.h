// strace.h — reads the log of `strace -f -ttt -y` (with -o FILE: each line
// starts with the thread id): the system calls a recording is made of.
//
//   15017 1796246206.457122 openat(AT_FDCWD</tmp>, "/d/x", O_RDONLY) = 3</d/x>
//   15017 1796246206.457311 mmap(NULL, 1048576, PROT_READ, MAP_SHARED, 3</d/x>, 0x1000) =
//   0x7f36695df000 15018 1796246206.458064 pread64(4</d/x>, ""..., 4096, 8192) = 4096 15017
//   1796246206.458498 dup(3</d/x> <unfinished ...> 15017 1796246206.458573 <... dup resumed>) =
//   4</d/x> 15018 1796246206.458101 +++ exited with 0 +++
//
// A call cut by another thread's line (<unfinished ...>) is joined with its
// <... resumed> rest and stamped with its start. Calls that failed are left
// out, but an EFAULT is kept: the recorder reports it. Calls the recorder
// does not use, signals, and lines it cannot read are skipped; a log whose
// lines are mostly unreadable is an error naming the file and a line.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "util/status.h"

namespace faultline::record {

enum class CallKind : uint8_t {
  kOpen,        // open, openat, openat2, creat: ret_fd opened path
  kClose,       // fd
  kCloseRange,  // fds [offset, length] (the first and the last)
  kDup,         // dup, dup2, dup3, fcntl F_DUPFD*: ret_fd is fd again
  kRead,        // read, readv: length bytes at the file position
  kPread,       // pread64, preadv, preadv2: length bytes at offset
  kLseek,       // the file position is now ret
  kMmap,        // length bytes of fd from offset, at ret
  kMunmap,      // [addr, addr + length)
  kMremap,      // [addr, addr + offset) moved to ret, length bytes long
  kMadvise,     // advice over [addr, addr + length)
  kFadvise,     // advice over bytes [offset, offset + length) of fd
  kClone,       // clone, clone3, fork, vfork: ret is the new task's id
  kExecve,      // the task's process runs a new program
  kExit,        // the task ended (+++ exited / killed +++)
  kIoUring,     // io_uring_setup: reads through it are not seen
  kEfault,      // a call failed with EFAULT
};

struct Call {
  CallKind kind = CallKind::kClose;
  uint32_t tid = 0;
  uint64_t time_ns = 0;  // realtime, as strace stamped the call's start
  std::string name;      // the system call
  int fd = -1;
  std::string path;  // the path strace printed for fd, or the opened path
  int ret_fd = -1;
  uint64_t addr = 0;
  uint64_t offset = 0;
  uint64_t length = 0;
  int64_t ret = 0;
  uint32_t advice = 0;       // MADV_* / POSIX_FADV_* number
  uint32_t prot = 0;         // PROT_* bits
  bool shared = false;       // MAP_SHARED
  bool fixed = false;        // MAP_FIXED
  bool anonymous = false;    // MAP_ANONYMOUS
  bool write = false;        // kOpen: O_WRONLY or O_RDWR
  bool cloexec = false;      // kOpen, kDup: O_CLOEXEC / F_DUPFD_CLOEXEC
  bool directory = false;    // kOpen: O_DIRECTORY (a directory listed, not a file read)
  bool thread = false;       // kClone: CLONE_THREAD
  bool share_files = false;  // kClone: CLONE_FILES
};

struct StraceLog {
  std::vector<Call> calls;  // in the order of the log (not of time)
  uint64_t lines = 0;
  uint64_t skipped = 0;  // lines read but not used
};

// Reads a log. Errors name the file (NotFound when it cannot be opened) and,
// for a log that is not strace's, its first unreadable line.
Result<StraceLog> read_strace_log(const std::string& path);

// One line (its text without the end of line); false when it is not a call
// the recorder uses. Joins <unfinished ...> / <... resumed> through pending.
struct StraceParser {
  bool parse(const std::string& line, Call* out);
  bool recognised = false;  // the last line had strace's shape
 private:
  struct Pending {
    uint32_t tid;
    uint64_t time_ns;
    std::string text;
  };
  std::vector<Pending> pending_;
  // -tt prints the time of day: a stamp earlier than the last one by more
  // than 12 hours crossed midnight.
  uint64_t day_ns_ = 0, last_ns_ = 0;
};

}  // namespace faultline::record
