// tracing.cc — a private tracefs instance recording the probe file's
// page-cache events.
#include "probe/tracing.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cerrno>
#include <ctime>

#include "probe/sys.h"
#include "probe/workspace.h"
#include "util/process.h"

namespace faultline::probe::trace {
namespace {

constexpr const char* kDefaultTracefs = "/sys/kernel/tracing";

// The events of the fault path, in the order the kernel meets them.
constexpr const char* kEvents[] = {
    "readahead:page_cache_sync_ra",
    "readahead:page_cache_async_ra",
    "readahead:page_cache_ra_order",
    "readahead:page_cache_ra_unbounded",
    "filemap:mm_filemap_fault",
    "filemap:mm_filemap_map_pages",
    "filemap:mm_filemap_add_to_page_cache",
    "filemap:mm_filemap_delete_from_page_cache",
};

// Field names of an event's format file ("field:unsigned long i_ino;" -> i_ino).
std::vector<std::string> event_fields(const std::string& format) {
  std::vector<std::string> names;
  size_t pos = 0;
  while ((pos = format.find("field:", pos)) != std::string::npos) {
    size_t semi = format.find(';', pos);
    if (semi == std::string::npos) break;
    std::string decl = format.substr(pos + 6, semi - pos - 6);
    pos = semi;
    size_t bracket = decl.find('[');
    if (bracket != std::string::npos) decl.resize(bracket);
    size_t sp = decl.find_last_of(" \t*");
    names.push_back(sp == std::string::npos ? decl : decl.substr(sp + 1));
  }
  return names;
}

bool contains(const std::vector<std::string>& v, const std::string& s) {
  for (const auto& x : v) {
    if (x == s) return true;
  }
  return false;
}

bool has_instances_left(const std::string& tracefs) {
  return !sys::list_dir(tracefs + "/instances").empty();
}

Status remove_instance_dir(const std::string& dir) {
  for (int attempt = 0;; ++attempt) {
    if (::rmdir(dir.c_str()) == 0 || errno == ENOENT) return Status::Ok();
    int err = errno;
    if (err != EBUSY || attempt >= 40) {
      return Status::IoError(fmt::format("rmdir {}: {}", dir, sys::errno_text(err)));
    }
    struct timespec ts = {0, 50 * 1000 * 1000};
    ::nanosleep(&ts, nullptr);
  }
}

Status unmount_tracefs(const std::string& tracefs) {
  bool lazy = false;
  return sys::unmount(tracefs, 500, &lazy);
}

}  // namespace

std::string tracefs_mount_point() { return sys::find_mount_of_type("tracefs"); }

faultline::Result<std::unique_ptr<TraceInstance>> TraceInstance::create(
    pid_t owner, const std::string& file, const std::string& run_dir,
    std::vector<std::string>* notes, bool whole_device) {
  std::unique_ptr<TraceInstance> t(new TraceInstance());
  t->tracefs_ = tracefs_mount_point();
  if (t->tracefs_.empty()) {
    if (::mount("tracefs", kDefaultTracefs, "tracefs", 0, nullptr) != 0) {
      notes->push_back(fmt::format("no tracefs (mount at {}: {}): events not recorded",
                                   kDefaultTracefs, sys::errno_text(errno)));
      return std::unique_ptr<TraceInstance>();
    }
    t->tracefs_ = kDefaultTracefs;
    t->mounted_tracefs_ = true;
    // If this process dies, cleanup_stale() sees the marker and unmounts.
    (void)sys::write_new_file(run_dir + "/" + ws::kTracefsMarker, t->tracefs_ + "\n");
  }
  auto available = sys::read_file(t->tracefs_ + "/available_events");
  if (!available.ok()) {
    Status st = available.status();
    (void)t->destroy();
    notes->push_back("tracefs unusable (" + st.message() + "): events not recorded");
    return std::unique_ptr<TraceInstance>();
  }
  t->dir_ = fmt::format("{}/instances/{}{}", t->tracefs_, kInstancePrefix, owner);
  if (sys::exists(t->dir_)) FAULTLINE_RETURN_IF_ERROR(remove_instance_dir(t->dir_));
  if (::mkdir(t->dir_.c_str(), 0755) != 0) {
    int err = errno;
    std::string dir = t->dir_;
    t->dir_.clear();
    (void)t->destroy();
    return Status::IoError(fmt::format("mkdir {}: {}", dir, sys::errno_text(err)));
  }
  // A new instance starts with tracing on: stop it before anything is enabled.
  FAULTLINE_RETURN_IF_ERROR(sys::write_file(t->dir_ + "/tracing_on", "0"));
  // 64 MiB per CPU holds ~1M events, a 256 MiB file's worth several times over.
  if (!sys::write_file(t->dir_ + "/buffer_size_kb", "65536").ok()) {
    notes->push_back("trace buffer: 64 MiB per CPU refused, using 16 MiB");
    FAULTLINE_RETURN_IF_ERROR(sys::write_file(t->dir_ + "/buffer_size_kb", "16384"));
  }

  struct stat st {};
  if (::stat(file.c_str(), &st) != 0) {
    return Status::IoError(fmt::format("stat {}: {}", file, sys::errno_text(errno)));
  }
  // Events print the kernel's dev_t: major << 20 | minor.
  const uint64_t kdev = (static_cast<uint64_t>(major(st.st_dev)) << 20) | minor(st.st_dev);
  int enabled = 0;
  for (const char* ev : kEvents) {
    std::string name(ev);
    if (available->find(name + "\n") == std::string::npos) {
      notes->push_back(fmt::format("trace event {} not available on this kernel", name));
      continue;
    }
    const std::string ev_dir =
        fmt::format("{}/events/{}", t->dir_, name.replace(name.find(':'), 1, "/"));
    auto format = sys::read_file(ev_dir + "/format");
    std::vector<std::string> fields =
        format.ok() ? event_fields(*format) : std::vector<std::string>{};
    std::string ino_field = contains(fields, "i_ino") ? "i_ino"
                            : contains(fields, "ino") ? "ino"
                                                      : "";
    std::string dev_field = contains(fields, "s_dev") ? "s_dev"
                            : contains(fields, "dev") ? "dev"
                                                      : "";
    if (whole_device && !dev_field.empty()) {
      // Several files on the probe's own file system: every event of it.
      const std::string filter = fmt::format("{} == {}", dev_field, kdev);
      if (!sys::write_file(ev_dir + "/filter", filter).ok()) {
        notes->push_back(
            fmt::format("trace event {}: filter \"{}\" refused, unfiltered", ev, filter));
      }
    } else if (!ino_field.empty()) {
      std::string filter = fmt::format("{} == {}", ino_field, st.st_ino);
      if (!dev_field.empty()) filter += fmt::format(" && {} == {}", dev_field, kdev);
      if (!sys::write_file(ev_dir + "/filter", filter).ok()) {
        notes->push_back(
            fmt::format("trace event {}: filter \"{}\" refused, unfiltered", ev, filter));
      }
    } else {
      notes->push_back(fmt::format("trace event {}: no inode field, unfiltered", ev));
    }
    Status en = sys::write_file(ev_dir + "/enable", "1");
    if (!en.ok()) {
      notes->push_back(fmt::format("trace event {} not enabled: {}", ev, en.message()));
      continue;
    }
    ++enabled;
  }
  if (enabled == 0) {
    notes->push_back("no trace event could be enabled: events not recorded");
    (void)t->destroy();
    return std::unique_ptr<TraceInstance>();
  }
  const std::string on = t->dir_ + "/tracing_on";
  t->on_fd_ = ::open(on.c_str(), O_WRONLY | O_CLOEXEC);
  if (t->on_fd_ < 0) return Status::IoError(fmt::format("open {}: {}", on, sys::errno_text(errno)));
  FAULTLINE_RETURN_IF_ERROR(t->clear());
  return t;
}

TraceInstance::~TraceInstance() { (void)destroy(); }

Status TraceInstance::clear() {
  const std::string path = dir_ + "/trace";
  int fd = ::open(path.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
  if (fd < 0) return Status::IoError(fmt::format("clear {}: {}", path, sys::errno_text(errno)));
  ::close(fd);
  return Status::Ok();
}

Status TraceInstance::save(const std::string& dest, std::vector<std::string>* notes) {
  const std::string src = dir_ + "/trace";
  int in = ::open(src.c_str(), O_RDONLY | O_CLOEXEC);
  if (in < 0) return Status::IoError(fmt::format("open {}: {}", src, sys::errno_text(errno)));
  int out = ::open(dest.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (out < 0) {
    int err = errno;
    ::close(in);
    return Status::IoError(fmt::format("create {}: {}", dest, sys::errno_text(err)));
  }
  Status result;
  std::vector<char> buf(1 << 16);
  for (;;) {
    ssize_t n = ::read(in, buf.data(), buf.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      result = Status::IoError(fmt::format("read {}: {}", src, sys::errno_text(errno)));
      break;
    }
    if (n == 0) break;
    ssize_t done = 0;
    while (done < n) {
      ssize_t w = ::write(out, buf.data() + done, static_cast<size_t>(n - done));
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) {
        result = Status::IoError(fmt::format("write {}: {}", dest, sys::errno_text(errno)));
        break;
      }
      done += w;
    }
    if (!result.ok()) break;
  }
  ::close(in);
  if (::close(out) != 0 && result.ok()) {
    result = Status::IoError(fmt::format("close {}: {}", dest, sys::errno_text(errno)));
  }
  int64_t lost = 0;
  for (const auto& cpu : sys::list_dir(dir_ + "/per_cpu")) {
    auto stats = sys::read_file(dir_ + "/per_cpu/" + cpu + "/stats");
    if (!stats.ok()) continue;
    lost += std::max<int64_t>(0, sys::status_field(*stats, "overrun"));
    lost += std::max<int64_t>(0, sys::status_field(*stats, "dropped events"));
  }
  if (lost > 0) {
    notes->push_back(fmt::format("{}: {} events lost (ring buffer overrun)", dest, lost));
  }
  return result;
}

Status TraceInstance::destroy() {
  if (removed_) return Status::Ok();
  Status result;
  if (on_fd_ >= 0) {
    (void)!::write(on_fd_, "0", 1);
    ::close(on_fd_);
    on_fd_ = -1;
  }
  if (!dir_.empty()) result = remove_instance_dir(dir_);
  if (result.ok() && mounted_tracefs_ && !has_instances_left(tracefs_)) {
    result = unmount_tracefs(tracefs_);
  }
  if (result.ok()) removed_ = true;
  return result;
}

Status remove_stale_instances(bool unmount_if_unused) {
  const std::string tracefs = tracefs_mount_point();
  if (tracefs.empty()) return Status::Ok();
  std::string errors;
  for (const auto& name : sys::list_dir(tracefs + "/instances")) {
    pid_t pid = util::pid_from_name(name, kInstancePrefix);
    if (pid <= 0 || util::pid_alive(pid)) continue;
    Status st = remove_instance_dir(tracefs + "/instances/" + name);
    if (!st.ok()) errors += (errors.empty() ? "" : "; ") + st.message();
  }
  if (unmount_if_unused && errors.empty() && !has_instances_left(tracefs)) {
    Status st = unmount_tracefs(tracefs);
    if (!st.ok()) errors = st.message();
  }
  return errors.empty() ? Status::Ok() : Status::IoError(errors);
}

}  // namespace faultline::probe::trace
