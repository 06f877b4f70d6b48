// host_info.cc — HostInfo of the machine the live probe runs on.
#include "probe/host_info.h"

#include <fmt/format.h>
#include <sys/mount.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <system_error>

#include "probe/procfs.h"
#include "probe/sys.h"
#include "probe/workspace.h"

namespace faultline::probe {
namespace {

// fault_around_bytes lives in debugfs. If no debugfs is mounted, root mounts
// one for the read inside this process's run directory, and unmounts it at
// once; a run killed in between leaves it where cleanup_stale() looks.
faultline::Result<std::string> read_fault_around_bytes(const std::string& workspace_root) {
  auto fab = sys::read_file("/sys/kernel/debug/fault_around_bytes");
  if (fab.ok()) return fab;
  const std::string mounted = sys::find_mount_of_type("debugfs");
  if (!mounted.empty()) return sys::read_file(mounted + "/fault_around_bytes");
  if (::geteuid() != 0)
    return Status::Permission("debugfs not mounted, and mounting it needs root");
  const ws::RunPaths paths = ws::run_paths(ws::canonical_root(workspace_root), ::getpid());
  const std::string dir = paths.dir + "/debugfs";
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return Status::IoError(fmt::format("create {}: {}", dir, ec.message()));
  if (::mount("debugfs", dir.c_str(), "debugfs", 0, nullptr) != 0) {
    const int err = errno;
    std::filesystem::remove_all(paths.dir, ec);
    return Status::IoError(fmt::format("mount debugfs at {}: {}", dir, sys::errno_text(err)));
  }
  fab = sys::read_file(dir + "/fault_around_bytes");
  bool lazy = false;
  Status st = sys::unmount(dir, 2000, &lazy);
  if (st.ok()) std::filesystem::remove_all(paths.dir, ec);
  return fab;
}

}  // namespace

HostInfo read_host_info(const std::string& workspace_root, std::vector<std::string>* notes) {
  HostInfo h;
  struct utsname u {};
  if (::uname(&u) == 0) h.kernel_release = u.release;
  const long ps = ::sysconf(_SC_PAGESIZE);
  h.page_size = ps > 0 ? static_cast<uint64_t>(ps) : 4096;
  auto fab = read_fault_around_bytes(workspace_root);
  if (fab.ok()) {
    h.fault_around_bytes = procfs::fault_around_bytes(*fab);
  } else {
    notes->push_back(fmt::format(
        "fault_around_bytes unreadable ({}): reported as -1; the kernel default is 65536",
        fab.status().message()));
  }
  auto lru = sys::read_file("/sys/kernel/mm/lru_gen/enabled");
  h.lru_gen = lru.ok() ? sys::trim(*lru) : "absent";
  auto thp = sys::read_file("/sys/kernel/mm/transparent_hugepage/enabled");
  // "always [madvise] never": the bracketed word is the setting.
  h.thp_enabled = thp.ok() ? procfs::bracketed_choice(*thp) : "absent";
  return h;
}

}  // namespace faultline::probe
