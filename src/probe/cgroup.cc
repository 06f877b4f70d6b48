// cgroup.cc — the probe's memory cgroup (v1 memory controller or cgroup v2).
#include "probe/cgroup.h"

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <ctime>

#include "probe/sys.h"
#include "util/process.h"

namespace faultline::probe::cg {
namespace {

bool has_token(std::string_view list, std::string_view token, char sep) {
  size_t pos = 0;
  while (pos <= list.size()) {
    size_t end = list.find(sep, pos);
    if (end == std::string_view::npos) end = list.size();
    if (list.substr(pos, end - pos) == token) return true;
    pos = end + 1;
  }
  return false;
}

bool swap_enabled() {
  auto meminfo = sys::read_file("/proc/meminfo");
  return meminfo.ok() && sys::status_field(*meminfo, "SwapTotal") > 0;
}

void nap_ms(long ms) {
  struct timespec ts = {0, ms * 1000 * 1000};
  ::nanosleep(&ts, nullptr);
}

}  // namespace

Controller find_memory_controller() {
  Controller v2;
  for (const auto& m : sys::read_mounts()) {
    if (m.type == "cgroup" && has_token(m.options, "memory", ',')) return {1, m.target};
    if (m.type == "cgroup2" && v2.version == 0) {
      auto controllers = sys::read_file(m.target + "/cgroup.controllers");
      if (controllers.ok() && has_token(sys::trim(*controllers), "memory", ' ')) {
        v2 = {2, m.target};
      }
    }
  }
  return v2;
}

MemoryCgroup::MemoryCgroup(Controller c, std::string dir)
    : controller_(std::move(c)), dir_(std::move(dir)), procs_file_(dir_ + "/cgroup.procs") {}

MemoryCgroup::~MemoryCgroup() { (void)destroy(); }

faultline::Result<std::unique_ptr<MemoryCgroup>> MemoryCgroup::create(
    pid_t owner, uint64_t limit_bytes, std::vector<std::string>* notes) {
  Controller c = find_memory_controller();
  if (c.version == 0) {
    return Status::Unavailable(
        "memory limit asked but no memory cgroup controller: neither a cgroup v1 \"memory\" "
        "hierarchy nor cgroup2 with \"memory\" in cgroup.controllers is mounted");
  }
  const std::string dir = fmt::format("{}/{}{}", c.root, kCgroupPrefix, owner);
  if (sys::exists(dir)) {
    // Left by an earlier run() of this very process.
    FAULTLINE_RETURN_IF_ERROR(remove_cgroup(c.root, dir));
  }
  if (c.version == 2) {
    // Children of the root get a memory.max only when the root delegates memory.
    auto subtree = sys::read_file(c.root + "/cgroup.subtree_control");
    if (!subtree.ok() || !has_token(sys::trim(*subtree), "memory", ' ')) {
      Status st = sys::write_file(c.root + "/cgroup.subtree_control", "+memory");
      if (!st.ok()) return Status::Unavailable("cgroup2 memory controller: " + st.message());
    }
  }
  if (::mkdir(dir.c_str(), 0755) != 0) {
    return Status::IoError(fmt::format("mkdir {}: {}", dir, sys::errno_text(errno)));
  }
  std::unique_ptr<MemoryCgroup> cgroup(new MemoryCgroup(c, dir));
  const std::string limit = std::to_string(limit_bytes);
  if (c.version == 1) {
    FAULTLINE_RETURN_IF_ERROR(sys::write_file(dir + "/memory.limit_in_bytes", limit));
    // With swap on, anonymous (MAP_PRIVATE-written) pages could leave for
    // swap; memsw caps memory+swap at the same figure. Without swap, or
    // without swap accounting, there is nothing to cap.
    const std::string memsw = dir + "/memory.memsw.limit_in_bytes";
    if (swap_enabled()) {
      if (!sys::exists(memsw)) {
        notes->push_back(
            "swap is on but memory.memsw.limit_in_bytes is absent (no swap "
            "accounting): the cgroup may swap anonymous pages");
      } else if (Status st = sys::write_file(memsw, limit); !st.ok()) {
        notes->push_back("memsw limit not set: " + st.message());
      }
    }
  } else {
    FAULTLINE_RETURN_IF_ERROR(sys::write_file(dir + "/memory.max", limit));
    if (swap_enabled()) {
      Status st = sys::write_file(dir + "/memory.swap.max", "0");
      if (!st.ok()) notes->push_back("memory.swap.max not set: " + st.message());
    }
  }
  return cgroup;
}

int64_t MemoryCgroup::oom_kills() const {
  auto text =
      sys::read_file(dir_ + (controller_.version == 1 ? "/memory.oom_control" : "/memory.events"));
  if (!text.ok()) return -1;
  auto kv = sys::parse_key_values(*text);
  auto it = kv.find("oom_kill");
  return it == kv.end() ? -1 : it->second;
}

Status MemoryCgroup::destroy() {
  if (removed_) return Status::Ok();
  Status st = remove_cgroup(controller_.root, dir_);
  if (st.ok()) removed_ = true;
  return st;
}

Status remove_cgroup(const std::string& root, const std::string& dir) {
  for (int attempt = 0;; ++attempt) {
    // Tasks still inside (a child being killed, a stale run's orphan) go to
    // the root so the directory can go.
    if (auto procs = sys::read_file(dir + "/cgroup.procs"); procs.ok()) {
      for (std::string_view line : sys::split_lines(*procs)) {
        const std::string pid = sys::trim(line);
        if (!pid.empty()) (void)sys::write_file(root + "/cgroup.procs", pid);
      }
    }
    if (::rmdir(dir.c_str()) == 0 || errno == ENOENT) return Status::Ok();
    int err = errno;
    if (err != EBUSY || attempt >= 60) {
      return Status::IoError(fmt::format("rmdir {}: {}", dir, sys::errno_text(err)));
    }
    nap_ms(50);
  }
}

Status remove_stale_cgroups() {
  Controller c = find_memory_controller();
  if (c.version == 0) return Status::Ok();
  std::string errors;
  for (const auto& name : sys::list_dir(c.root)) {
    pid_t pid = util::pid_from_name(name, kCgroupPrefix);
    if (pid <= 0 || util::pid_alive(pid)) continue;
    Status st = remove_cgroup(c.root, c.root + "/" + name);
    if (!st.ok()) errors += (errors.empty() ? "" : "; ") + st.message();
  }
  return errors.empty() ? Status::Ok() : Status::IoError(errors);
}

}  // namespace faultline::probe::cg
