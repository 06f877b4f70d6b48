// recorder.h — `faultline record`: runs a program and records what it does
// to its files (workload/recording.h).
//
// Two tools that real users run, each seeing what the other cannot:
//   strace -f -ttt -y   every task's system calls on files (open, read,
//                       pread64, readv, preadv, mmap, munmap, mremap,
//                       madvise, fadvise64, lseek, dup, close, clone, execve)
//                       with their fds' paths; threads and children too.
//                       It sees static binaries and raw system calls; it
//                       does not see loads and stores through a mapping.
//   the preload shim    (src/preload/preload.cc) the first touch of each page
//                       of a data-file mapping in each epoch, by SIGSEGV on a
//                       PROT_NONE mapping. It does not see static binaries,
//                       mmap() by raw system call, or accesses the kernel
//                       makes on the program's behalf.
// Each process's anonymous memory is sampled from /proc/<pid>/status
// (RssAnon) every anon_sample_ms. Afterwards the three are merged in time
// order (record/assemble.h) into the recording. The recorder holds the
// system calls and touches in memory while it merges them (about 100 and
// 24 bytes each).
//
// Limits met are reported in the recording's conditions (limit.*) and the
// report: a static binary, a program with its own SIGSEGV handler, io_uring,
// a system call that failed with EFAULT (a protected page given as buffer).
// A program that exits non-zero, is killed, or is interrupted with the
// recorder leaves a recording marked incomplete.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "util/status.h"

namespace faultline::record {

struct RecordOptions {
  std::vector<std::string> command;    // argv; argv[0] looked up in PATH
  std::string output;                  // the recording
  std::vector<std::string> data_dirs;  // empty: every file outside the system's directories
  uint64_t epoch_pages = 8192;         // an epoch ends after this many touches...
  uint64_t epoch_ms = 100;             // ... or this long
  uint64_t anon_sample_ms = 20;
  std::string preload;  // the shim; "": libfaultline_preload.so next to this program
  std::string version;  // faultline's, for the conditions
  std::function<void(const std::string&)> progress;
};

struct RecordReport {
  int exit_status = 0;  // the program's
  int signal = 0;       // the signal that killed it, 0: none
  bool interrupted = false;
  bool complete = true;
  uint64_t events = 0;
  uint64_t syscalls = 0;         // strace lines the recording used
  uint64_t touches = 0;          // page touches recorded
  uint64_t touches_outside = 0;  // touches in no mapping the recording follows
  std::vector<std::string> limits;
  std::vector<std::string> files;  // the data files, in recording order
  double wall_s = 0;
};

// Runs the command and writes the recording. Errors: ProgramFailed when the
// command is not found; Unavailable when strace or the shim is missing;
// IoError for the recorder's own failures. A program that fails still
// yields a report (and a recording marked incomplete).
Result<RecordReport> record_command(const RecordOptions& o);

}  // namespace faultline::record
