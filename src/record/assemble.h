// assemble.h — a recording made of what strace saw (the system calls), what
// the preload shim saw (the first touch of each page of a file mapping in
// each epoch) and what the recorder sampled (each process's anonymous
// memory), fed in time order.
//
// The assembler follows what the kernel follows: which file each fd of each
// task's fd table names (dup, fork and CLONE_FILES share an open file; exec
// closes O_CLOEXEC ones), the file position read() and lseek() move, which
// mappings each process has (fork copies them, exec drops them, munmap and
// MAP_FIXED cut them), and which task is a thread of which process. Only
// data files are recorded: files outside the system's directories, or, when
// data directories are given, the files under them.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "record/strace.h"
#include "workload/recording.h"

namespace faultline::record {

struct Touch {
  uint64_t time_ns = 0;  // realtime
  uint32_t tid = 0;
  uint64_t addr = 0;
  bool write = false;
};

struct AnonSample {
  uint64_t time_ns = 0;  // realtime
  uint32_t pid = 0;      // the process (its leader's tid)
  uint64_t pages = 0;    // RssAnon / 4 KiB
};

// What the recording follows: the data directories (empty: all but the
// system's), less the recorder's own files (the shim, its work directory).
struct DataFilter {
  std::vector<std::string> dirs;
  std::vector<std::string> exclude;  // files or directories
  bool operator()(const std::string& path) const;
};

class Assembler {
 public:
  Assembler(workload::RecordingWriter& out, DataFilter data, uint64_t t0_ns);

  void call(const Call& c);
  void touch(const Touch& t);
  void anon(const AnonSample& a);

  // Sets the files' sizes (stat() now, or the furthest byte the program
  // reached when a file is gone) and returns the limits met, as
  // "limit.<name>" conditions.
  std::vector<std::pair<std::string, std::string>> finish();

  uint64_t touches() const { return touches_; }
  uint64_t touches_outside() const { return touches_outside_; }

 private:
  struct Desc {
    int32_t file = -1;  // -1: not a data file
    uint32_t handle = 0;
    uint64_t pos = 0;
    uint32_t refs = 0;
  };
  struct Fd {
    uint32_t desc;
    bool cloexec;
  };
  struct Map {
    uint64_t base;  // the address page 0 of the mapping had
    uint64_t end;   // past its last byte
    uint32_t id;
    uint32_t handle;
    uint64_t pgoff;
  };
  struct Proc {
    uint32_t fdt;
    std::map<uint64_t, Map> maps;  // by their current first address
    uint32_t leader;               // task index
  };
  struct Task {
    uint32_t index;
    uint32_t proc;
  };

  Task& task_of(uint32_t tid, uint64_t time_ns);
  void emit(workload::Event e, uint64_t time_ns, uint32_t task);
  void release_fd(uint32_t fdt, int fd);
  void set_fd(uint32_t fdt, int fd, uint32_t desc, bool cloexec);
  // Emits munmap for [lo, hi) of every mapping of p it overlaps, and cuts them.
  void unmap_range(Proc& p, uint64_t lo, uint64_t hi, uint64_t time, uint32_t task);
  uint32_t file_index(const std::string& path);

  workload::RecordingWriter& out_;
  DataFilter data_;
  uint64_t t0_ns_;
  std::unordered_map<uint32_t, Task> tasks_;
  std::vector<Proc> procs_;
  std::vector<uint32_t> task_pid_;      // by task index: its process's id
  std::vector<std::string> task_comm_;  // by task index
  std::vector<std::unordered_map<int, Fd>> fdts_;
  std::vector<Desc> descs_;
  std::map<std::string, uint32_t> files_;
  std::vector<std::string> file_paths_;
  std::vector<uint64_t> file_extent_;            // furthest byte reached, by file
  std::unordered_map<uint32_t, uint64_t> anon_;  // by pid: the last sample
  uint32_t next_handle_ = 0, next_map_ = 0;
  uint64_t touches_ = 0, touches_outside_ = 0;
  uint64_t last_time_ = 0;  // of the call being assembled (a close it causes is stamped so)
  uint32_t last_task_ = 0;
  std::set<std::string> limits_;
};

}  // namespace faultline::record
