// recording.h — what a program did to its files, event by event: the
// faultline recording format (docs/trace_format.md), written by `faultline
// record` and the importers, read by the model's replay and the probe.
//
// A recording names its files (path, size), its tasks (threads and
// processes, with their parents) and, in the order they happened, the
// events: opens and closes, mmap/munmap/madvise of file mappings,
// posix_fadvise, reads (read, pread64, readv, preadv: an offset and a
// length), the first touch of a page of a file mapping in each recording
// epoch, and samples of each process's anonymous memory. Open files are
// open file descriptions (struct file, with its own file_ra_state), not fd
// numbers: dup() and fork() share one, a second open() makes another.
//
// The reader streams: it decodes the events in batches and never holds the
// recording in memory.
#pragma once

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <istream>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "util/enum_names.h"
#include "util/status.h"

namespace faultline::workload {

inline constexpr uint32_t kRecordingVersion = 1;
inline constexpr uint32_t kNone32 = ~uint32_t{0};

// X(id, number, name): the number is the format's, never reused.
#define FAULTLINE_RECORDING_OPS(X)                                                              \
  X(kTaskStart, 1, "task_start") /* task starts: a thread of, or a process forked by, parent */ \
  X(kTaskExit, 2, "task_exit")                                                                  \
  X(kOpen, 3, "open")       /* handle: a new open file of file */                               \
  X(kClose, 4, "close")     /* handle closed (its last descriptor) */                           \
  X(kMmap, 5, "mmap")       /* map: pages of handle's file from offset (pages) */               \
  X(kMunmap, 6, "munmap")   /* pages [offset, offset + length) of map */                        \
  X(kMadvise, 7, "madvise") /* advice over pages [offset, offset + length) of map */            \
  X(kFadvise, 8, "fadvise") /* advice over bytes [offset, offset + length) of handle */         \
  X(kRead, 9, "read")       /* length bytes of handle's file at byte offset */                  \
  X(kTouch, 10, "touch")    /* page offset of map: its first touch in the epoch */              \
  X(kAnon, 11, "anon")      /* the task's process holds length anonymous pages */
FAULTLINE_NAMED_ENUM_VALUES(EventOp, FAULTLINE_RECORDING_OPS)

// One event. Which fields an op uses is in FAULTLINE_RECORDING_OPS and
// docs/trace_format.md; the others are zero.
struct Event {
  EventOp op = EventOp::kTouch;
  bool write = false;    // kTouch: a store; kOpen: opened for writing
  bool thread = false;   // kTaskStart: a thread of the parent's process, not a new one
  uint32_t task = 0;     // index in RecordingInfo::tasks
  uint64_t time_ns = 0;  // since the recording started
  uint32_t file = 0;     // kOpen: index in RecordingInfo::files
  uint32_t handle = 0;   // kOpen, kClose, kMmap, kFadvise, kRead
  uint32_t map = 0;      // kMmap, kMunmap, kMadvise, kTouch
  uint32_t arg = 0;      // kMadvise, kFadvise: the uapi advice; kMmap: map_arg();
                         // kTaskStart: the parent task (kNone32: none)
  uint64_t offset = 0;   // pages (mmap, munmap, madvise, touch) or bytes (read, fadvise)
  uint64_t length = 0;   // pages (mmap, munmap, madvise, anon) or bytes (read, fadvise)
};
static_assert(sizeof(Event) == 48);

// kMmap's arg: PROT_* bits in the low byte, MAP_SHARED, and the page of its
// 2 MiB span the mapping starts at (fault-around windows and PMD mappings
// follow virtual addresses, so the replay places the mapping the same way).
inline constexpr uint32_t kMapShared = 1u << 8;
inline constexpr unsigned kMapAlignShift = 16;  // (address >> 12) & 511, in bits 16-24
inline constexpr uint32_t map_arg(uint32_t prot, bool shared, uint64_t address) {
  return (prot & 0xffu) | (shared ? kMapShared : 0u) |
         static_cast<uint32_t>(((address >> 12) & 511u) << kMapAlignShift);
}
inline constexpr uint32_t map_align_pages(uint32_t arg) { return (arg >> kMapAlignShift) & 511u; }

struct RecordedFile {
  std::string path;
  uint64_t size = 0;  // bytes, when the recording started
};

struct RecordedTask {
  uint32_t tid = 0;  // as the kernel numbered it
  uint32_t pid = 0;  // its process (thread group)
  std::string comm;
};

struct RecordingInfo {
  uint32_t version = kRecordingVersion;
  bool complete = true;  // false: the program or the recorder stopped early
  uint64_t nr_events = 0;
  uint64_t duration_ns = 0;
  std::vector<RecordedFile> files;
  std::vector<RecordedTask> tasks;
  // The recording's conditions, in order: command, cwd, kernel, host,
  // recorder and epoch settings, limits met ("limit.static_binary", ...).
  std::vector<std::pair<std::string, std::string>> conditions;
  const std::string* condition(const std::string& key) const;
};

// Writes a recording to path: the events go out as they are appended; the
// file appears, complete or marked incomplete, only at finish() (it is
// written as path.tmp.<pid> and renamed), so an error leaves nothing behind.
class RecordingWriter {
 public:
  static Result<std::unique_ptr<RecordingWriter>> create(const std::string& path);
  ~RecordingWriter();
  RecordingWriter(const RecordingWriter&) = delete;
  RecordingWriter& operator=(const RecordingWriter&) = delete;

  uint32_t add_file(RecordedFile f);
  uint32_t add_task(RecordedTask t);
  // Until finish(), a file's size or a task's name can still be set.
  void set_file_size(uint32_t file, uint64_t size) { info_.files[file].size = size; }
  void set_task_comm(uint32_t task, std::string comm) { info_.tasks[task].comm = std::move(comm); }
  // Events come in time order: an event earlier than the one before it is
  // recorded at that one's time.
  void append(const Event& e);
  uint64_t nr_events() const { return nr_events_; }
  Status finish(bool complete, std::vector<std::pair<std::string, std::string>> conditions);

 private:
  RecordingWriter() = default;
  void flush_buffer();

  std::string path_, tmp_;
  std::FILE* out_ = nullptr;
  std::vector<uint8_t> buf_;
  uint64_t events_bytes_ = 0;
  uint64_t nr_events_ = 0;
  Event prev_;               // the previous event; its map is the previous touch's
  bool any_ = false;         // an event was appended
  bool prev_touch_ = false;  // a touch was appended
  uint64_t read_end_ = 0;    // where the previous read ended (offsets are coded from it)
  uint64_t touch_page_ = 0;  // the previous touch's page (pages are coded from the next one)
  // The first failed write's errno is the one reported.
  void io_failed() {
    if (!io_error_) io_errno_ = errno;
    io_error_ = true;
  }
  bool io_error_ = false;
  int io_errno_ = 0;
  RecordingInfo info_;
};

// Streams the events of a recording. Errors name the file and the byte
// offset: a bad magic, an unknown version, a truncated file, an event that
// names a task, file, handle or map the recording does not have.
class RecordingReader {
 public:
  // allow_incomplete: read a recording marked incomplete (otherwise an error).
  static Result<std::unique_ptr<RecordingReader>> open(const std::string& path,
                                                       bool allow_incomplete = false);
  ~RecordingReader();
  RecordingReader(const RecordingReader&) = delete;
  RecordingReader& operator=(const RecordingReader&) = delete;

  const RecordingInfo& info() const { return info_; }
  // Fills out with the next events; returns how many (0 at the end or at an error).
  size_t next(std::span<Event> out);
  const Status& status() const { return status_; }

 private:
  RecordingReader() = default;
  bool refill();
  Status error(const std::string& what) const;

  std::string path_;
  std::FILE* in_ = nullptr;
  RecordingInfo info_;
  std::vector<uint8_t> buf_;                // chunk_ bytes read, then a zeroed event's worth
  size_t chunk_ = 0;                        // bytes read at most at once
  size_t pos_ = 0, end_ = 0;                // the undecoded bytes of buf_
  uint64_t file_pos_ = 0;                   // file offset of buf_[end_]
  uint64_t events_end_ = 0;                 // file offset past the last event byte
  uint64_t decoded_ = 0;                    // events decoded so far
  uint32_t nr_maps_ = 0, nr_handles_ = 0;   // ids seen so far (they are dense)
  uint64_t read_end_ = 0, touch_page_ = 0;  // as the writer codes them
  uint32_t touch_map_ = 0;
  uint64_t prev_time_ = 0;
  uint32_t prev_task_ = 0;
  Status status_;
};

// Whether the stream starts with a recording's magic; leaves it at its start.
bool is_recording(std::istream& in);

// The whole recording in memory (tests, small recordings).
struct Recording {
  RecordingInfo info;
  std::vector<Event> events;
};
Result<Recording> read_recording(const std::string& path, bool allow_incomplete = false);

// One event as a line of text (`faultline trace show`).
std::string format_event(const RecordingInfo& info, const Event& e);

}  // namespace faultline::workload
