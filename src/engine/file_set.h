// file_set.h — a workload of several files and streams ([[files]] and
// [[streams]], faultline/config.h) written as the recording of one program,
// which the serial model and the probe then replay as they replay any
// recording.
//
// Each pattern stream is a task with an open file of its own (its own
// file_ra_state). Streams that name the same process are its threads: the
// first is the process, the others threads of it, and they share one
// mapping of each file they access through a mapping. The file's madvise
// follows each mmap, its posix_fadvise each open, and a process's anonymous
// memory (the anon of its streams) is charged when it starts. A recording
// stream brings its own files (a path another stream also names is the same
// file), tasks, opens and mappings.
//
// The streams run over the same stretch of time: the i-th of a pattern
// stream's n accesses is at (i + 1/2) / n of it, a recording's events at
// their recorded times, and the stretch is the longest recording's
// duration (one second without one). Events of the same time keep the
// streams' order. The setup (every pattern stream's task, open, mapping and
// hints) comes first; the pattern streams' tasks are still alive at the end,
// with their mappings, as a single-file stream's task is.
#pragma once

#include <string>

#include "faultline/config.h"
#include "util/status.h"

namespace faultline::engine {

// Writes cfg's [[streams]] to path as a recording (cfg.streams not empty).
Status record_file_set(const Config& cfg, const std::string& path);

// A recording of cfg's [[streams]] in a temporary file, removed when this
// goes out of scope.
class FileSetRecording {
 public:
  static Result<FileSetRecording> create(const Config& cfg);
  FileSetRecording(FileSetRecording&& o) noexcept : path_(std::move(o.path_)) { o.path_.clear(); }
  FileSetRecording& operator=(FileSetRecording&&) = delete;
  FileSetRecording(const FileSetRecording&) = delete;
  ~FileSetRecording();
  const std::string& path() const { return path_; }
  // cfg as a recording's replay: access.workload = recording of path().
  Config replay_config(const Config& cfg) const;

 private:
  explicit FileSetRecording(std::string path) : path_(std::move(path)) {}
  std::string path_;
};

}  // namespace faultline::engine
