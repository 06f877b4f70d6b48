// workspace.cc — run dir, loop device, mkfs, mount clean-up, cleanup_stale().
#include "probe/workspace.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <set>
#include <system_error>

#include "probe/cgroup.h"
#include "probe/sys.h"
#include "probe/tracing.h"
#include "util/process.h"

namespace faultline::probe::ws {
namespace fs = std::filesystem;
namespace {

constexpr uint64_t kMiB = 1ull << 20;

// backing_file of a device whose file was unlinked ends in " (deleted)".
std::string strip_deleted(std::string path) {
  static constexpr std::string_view kDeleted = " (deleted)";
  if (path.size() > kDeleted.size() &&
      path.compare(path.size() - kDeleted.size(), kDeleted.size(), kDeleted) == 0) {
    path.resize(path.size() - kDeleted.size());
  }
  return path;
}

bool path_under(const std::string& path, const std::string& dir) {
  if (path == dir) return true;
  return path.size() > dir.size() && path.compare(0, dir.size(), dir) == 0 &&
         (dir.back() == '/' || path[dir.size()] == '/');
}

// The "run-<pid>" directory of root that path lies in, "" if none.
std::string run_dir_of(const std::string& path, const std::string& root) {
  if (!path_under(path, root) || path.size() <= root.size() + 1) return "";
  size_t start = root.size() + (root.back() == '/' ? 0 : 1);
  size_t slash = path.find('/', start);
  std::string name =
      path.substr(start, slash == std::string::npos ? std::string::npos : slash - start);
  if (util::pid_from_name(name, kRunPrefix) < 0) return "";
  return path.substr(0, start) + name;
}

void join_error(std::string* all, const Status& st) {
  if (st.ok()) return;
  if (!all->empty()) *all += "; ";
  *all += st.message();
}

}  // namespace

std::string canonical_root(const std::string& root) {
  std::error_code ec;
  fs::path abs = fs::absolute(root, ec);
  if (ec) return root;
  fs::path canon = fs::weakly_canonical(abs, ec);
  if (ec) return abs.lexically_normal().string();
  std::string s = canon.string();
  while (s.size() > 1 && s.back() == '/') s.pop_back();
  return s;
}

RunPaths run_paths(const std::string& canonical_root, pid_t pid) {
  RunPaths p;
  p.dir = fmt::format("{}/{}{}", canonical_root, kRunPrefix, pid);
  p.image = p.dir + "/disk.img";
  p.mnt = p.dir + "/mnt";
  p.file = p.mnt + "/data";
  return p;
}

faultline::Result<LoopDevice> attach_loop(const std::string& image,
                                          std::vector<std::string>* notes) {
  LoopDevice loop;
  auto out = sys::run_checked({"losetup", "--find", "--show", "--direct-io=on", image});
  if (!out.ok()) {
    if (out.status().code() == Status::Code::kInterrupted) return out.status();
    notes->push_back(
        fmt::format("loop device without direct I/O ({}): reads of the backing "
                    "image may be served from its host page cache",
                    out.status().message()));
    out = sys::run_checked({"losetup", "--find", "--show", image});
    if (!out.ok()) return out.status();
  }
  loop.dev = sys::trim(*out);
  if (loop.dev.rfind("/dev/", 0) != 0) {
    return Status::IoError(
        fmt::format("losetup --find --show {}: unexpected output \"{}\"", image, loop.dev));
  }
  loop.name = loop.dev.substr(5);
  auto dio = sys::read_file(fmt::format("/sys/block/{}/loop/dio", loop.name));
  loop.direct_io = dio.ok() && sys::trim(*dio) == "1";
  if (!loop.direct_io) {
    notes->push_back(
        fmt::format("{}: direct I/O is off (backing file {}); the image's host page "
                    "cache may serve re-reads",
                    loop.dev, image));
  }
  return loop;
}

Status detach_loop(const std::string& dev) {
  auto out = sys::run_checked({"losetup", "-d", dev}, /*interruptible=*/false);
  return out.ok() ? Status::Ok() : out.status();
}

std::vector<std::string> loops_backed_under(const std::string& dir) {
  std::vector<std::string> devs;
  for (const auto& name : sys::list_dir("/sys/block")) {
    if (name.rfind("loop", 0) != 0) continue;
    auto backing = sys::read_file(fmt::format("/sys/block/{}/loop/backing_file", name));
    if (!backing.ok()) continue;
    std::string path = strip_deleted(sys::trim(*backing));
    if (path_under(path, dir)) devs.push_back("/dev/" + name);
  }
  return devs;
}

uint64_t image_bytes(FsType fs_type, uint64_t file_bytes) {
  // Room for the file plus metadata and journal; sparse, so the slack costs nothing.
  uint64_t bytes = file_bytes + file_bytes / 10 + 64 * kMiB;
  // mkfs.xfs refuses file systems under 300 MB.
  if (fs_type == FsType::kXfs) bytes = std::max<uint64_t>(bytes, 320 * kMiB);
  return (bytes + kMiB - 1) / kMiB * kMiB;
}

Status make_fs(FsType fs_type, const std::string& dev) {
  switch (fs_type) {
    case FsType::kExt4: {
      // -b 4096: mke2fs picks the "small" profile (1 KiB blocks) under 512 MiB,
      // which no real data disk uses.
      auto out = sys::run_checked({"mkfs.ext4", "-q", "-F", "-b", "4096", "-E",
                                   "lazy_itable_init=0,lazy_journal_init=0", dev});
      return out.ok() ? Status::Ok() : out.status();
    }
    case FsType::kXfs: {
      auto out = sys::run_checked({"mkfs.xfs", "-q", "-f", dev});
      return out.ok() ? Status::Ok() : out.status();
    }
    case FsType::kTmpfs:
      return Status::Ok();
  }
  return Status::InvalidArgument("make_fs: unknown file system type");
}

Status cleanup_run_dir(const std::string& dir, std::vector<std::string>* notes) {
  std::string errors;
  for (const auto& mnt : sys::mounts_under(dir)) {
    bool lazy = false;
    Status st = sys::unmount(mnt, 2000, &lazy);
    join_error(&errors, st);
    if (lazy && notes != nullptr) {
      notes->push_back(fmt::format("{}: busy, unmounted lazily (MNT_DETACH)", mnt));
    }
  }
  for (const auto& dev : loops_backed_under(dir)) join_error(&errors, detach_loop(dev));
  // A device detached while a lazily unmounted fs still holds it goes away
  // with its last user (autoclear); wait a little so callers see the end state.
  for (int i = 0; i < 40 && !loops_backed_under(dir).empty(); ++i) {
    usleep(50 * 1000);
  }
  auto still_mounted = sys::mounts_under(dir);
  if (!still_mounted.empty()) {
    join_error(&errors, Status::IoError(fmt::format("{}: still mounted, not deleting {}",
                                                    still_mounted.front(), dir)));
    return Status::IoError(errors);
  }
  std::error_code ec;
  fs::remove_all(dir, ec);
  if (ec) join_error(&errors, Status::IoError(fmt::format("remove {}: {}", dir, ec.message())));
  return errors.empty() ? Status::Ok() : Status::IoError(errors);
}

}  // namespace faultline::probe::ws

namespace faultline::probe {

Status cleanup_stale(const std::string& workspace_root) {
  const std::string root = ws::canonical_root(workspace_root);
  // Dead runs are found by their directory and, in case the directory is
  // already gone, by the mounts and loop devices still pointing into root.
  std::set<std::string> dead_dirs;
  auto consider = [&](const std::string& run_dir) {
    if (run_dir.empty()) return;
    std::string name = run_dir.substr(run_dir.rfind('/') + 1);
    pid_t pid = util::pid_from_name(name, ws::kRunPrefix);
    if (pid > 0 && !util::pid_alive(pid)) dead_dirs.insert(run_dir);
  };
  for (const auto& name : sys::list_dir(root)) consider(root + "/" + name);
  for (const auto& mnt : sys::mounts_under(root)) consider(ws::run_dir_of(mnt, root));
  for (const auto& name : sys::list_dir("/sys/block")) {
    if (name.rfind("loop", 0) != 0) continue;
    auto backing = sys::read_file(fmt::format("/sys/block/{}/loop/backing_file", name));
    if (backing.ok()) consider(ws::run_dir_of(ws::strip_deleted(sys::trim(*backing)), root));
  }

  std::string errors;
  bool tracefs_mounted_by_dead_run = false;
  for (const auto& dir : dead_dirs) {
    if (sys::exists(dir + "/" + ws::kTracefsMarker)) tracefs_mounted_by_dead_run = true;
    ws::join_error(&errors, ws::cleanup_run_dir(dir, nullptr));
  }
  ws::join_error(&errors, cg::remove_stale_cgroups());
  ws::join_error(&errors, trace::remove_stale_instances(tracefs_mounted_by_dead_run));
  return errors.empty() ? Status::Ok() : Status::IoError("cleanup_stale: " + errors);
}

}  // namespace faultline::probe
