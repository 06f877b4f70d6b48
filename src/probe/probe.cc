// probe.cc — the parts of the probe that need no kernel: names, request
// checks, the fake probe and the spread of a counter over repetitions.
#include "probe/probe.h"

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <optional>

#include "probe/cgroup.h"
#include "probe/procfs.h"
#include "probe/sys.h"

namespace faultline::probe {

namespace {

// What can be said about a request without looking at the machine.
// A replay's or a program run's request.
Status check_multi_request(const Request& req) {
  if (req.files.empty()) return Status::InvalidArgument("probe request: no files");
  if (!req.ops.empty() && !req.command.empty()) {
    return Status::InvalidArgument("probe request: a replay or a program run, not both");
  }
  for (const ReplayOp& op : req.ops) {
    const bool open_slot = op.kind == ReplayOp::Kind::kOpen || op.kind == ReplayOp::Kind::kClose ||
                           op.kind == ReplayOp::Kind::kRead || op.kind == ReplayOp::Kind::kFadvise;
    const bool map_slot = op.kind == ReplayOp::Kind::kMmap || op.kind == ReplayOp::Kind::kMunmap ||
                          op.kind == ReplayOp::Kind::kMadvise || op.kind == ReplayOp::Kind::kTouch;
    const bool bad = (open_slot && op.slot >= req.open_slots) ||
                     (map_slot && op.slot >= req.map_slots) ||
                     (op.kind == ReplayOp::Kind::kAnon && op.slot >= req.anon_slots) ||
                     ((op.kind == ReplayOp::Kind::kOpen || op.kind == ReplayOp::Kind::kMmap) &&
                      op.file >= req.files.size()) ||
                     (op.kind == ReplayOp::Kind::kMmap && op.other >= req.open_slots);
    if (bad) return Status::InvalidArgument("probe request: a replay step names a missing slot");
  }
  if (req.anon_max_pages.size() != req.anon_slots) {
    return Status::InvalidArgument("probe request: anon_max_pages does not match anon_slots");
  }
  for (const FileSpec& f : req.files) {
    if (!req.command.empty() && f.source.empty()) {
      return Status::InvalidArgument("probe request: a program run's files need their sources");
    }
  }
  return Status::Ok();
}

Status check_request(const Request& req) {
  if (!req.ops.empty() || !req.command.empty()) {
    FAULTLINE_RETURN_IF_ERROR(check_multi_request(req));
    if (req.repetitions < 1) {
      return Status::InvalidArgument(
          fmt::format("probe request: repetitions must be >= 1 (got {})", req.repetitions));
    }
    if (req.write_chunk_bytes == 0 || req.warm_chunk_bytes == 0 || req.workspace_root.empty()) {
      return Status::InvalidArgument("probe request: chunk sizes and workspace_root must be set");
    }
    return Status::Ok();
  }
  if (req.file_bytes == 0) return Status::InvalidArgument("probe request: file_bytes must be > 0");
  if (req.pages.empty()) return Status::InvalidArgument("probe request: pages is empty");
  if (req.repetitions < 1) {
    return Status::InvalidArgument(
        fmt::format("probe request: repetitions must be >= 1 (got {})", req.repetitions));
  }
  if (req.write_chunk_bytes == 0) {
    return Status::InvalidArgument("probe request: write_chunk_bytes must be > 0");
  }
  if (req.method == AccessMethod::kRead) {
    if (req.reads.empty()) return Status::InvalidArgument("probe request: reads is empty");
    for (const ReadRange& r : req.reads) {
      if (r.length == 0 || r.length > (uint64_t{1} << 30)) {
        return Status::InvalidArgument("probe request: a read of " + std::to_string(r.length) +
                                       " bytes (1 byte to 1 GiB)");
      }
    }
  }
  if (req.method == AccessMethod::kRead && req.write) {
    return Status::InvalidArgument("probe request: the read(2) method only reads");
  }
  if (req.warm_chunk_bytes == 0) {
    return Status::InvalidArgument("probe request: warm_chunk_bytes must be > 0");
  }
  if (req.workspace_root.empty()) {
    return Status::InvalidArgument("probe request: workspace_root is empty");
  }
  if (req.name.find('/') != std::string::npos || req.name == "." || req.name == "..") {
    return Status::InvalidArgument(fmt::format(
        "probe request: name \"{}\" is used in file names and must not be a path", req.name));
  }
  const long ps = ::sysconf(_SC_PAGESIZE);
  const uint64_t page_size = ps > 0 ? static_cast<uint64_t>(ps) : 4096;
  const uint64_t file_pages = (req.file_bytes + page_size - 1) / page_size;
  for (size_t i = 0; i < req.pages.size(); ++i) {
    if (req.pages[i] >= file_pages) {
      return Status::InvalidArgument(
          fmt::format("probe request: pages[{}] = {} is beyond the file (file_bytes {} = {} pages)",
                      i, req.pages[i], req.file_bytes, file_pages));
    }
  }
  return Status::Ok();
}

class FakeProbe final : public Probe {
 public:
  explicit FakeProbe(Counters canned) : canned_(std::move(canned)) {}
  Status run(const Request& req, Result* out, const ProgressFn& progress) override {
    if (out == nullptr) return Status::InvalidArgument("probe: out is null");
    *out = Result{};
    if (req.repetitions < 1) {
      return Status::InvalidArgument(
          fmt::format("probe request: repetitions must be >= 1 (got {})", req.repetitions));
    }
    out->host.kernel_release = "fake";
    out->host.lru_gen = "fake";
    out->host.thp_enabled = "fake";
    for (int k = 0; k < req.repetitions; ++k) {
      out->runs.push_back(canned_);
      if (progress) progress(k + 1, req.repetitions);
    }
    return Status::Ok();
  }

 private:
  Counters canned_;
};

}  // namespace

Status check_live_prerequisites(const Request& req) {
  // The request first: its errors are the caller's, whatever the machine.
  FAULTLINE_RETURN_IF_ERROR(check_request(req));
  if (::geteuid() != 0) {
    return Status::Permission(
        "probe needs root: it creates loop devices, mounts file systems, writes "
        "/sys/block/*/queue/read_ahead_kb and memory cgroups (run with sudo)");
  }
  // Root in a container may lack the capability mount(2) and losetup need.
  if (auto status = sys::read_file("/proc/self/status"); status.ok()) {
    if (const std::optional<uint64_t> caps = procfs::cap_eff(*status)) {
      constexpr uint64_t kCapSysAdmin = 1ull << 21;
      if ((*caps & kCapSysAdmin) == 0) {
        return Status::Permission(
            "probe needs CAP_SYS_ADMIN (mount, loop devices, cgroups): this root has not got it "
            "(an unprivileged container?)");
      }
    }
  }
  if (req.fs != FsType::kTmpfs) {
    struct stat st {};
    if (::stat("/dev/loop-control", &st) != 0) {
      return Status::Unavailable(
          "probe needs loop devices: /dev/loop-control is missing (modprobe loop)");
    }
    if (sys::find_program("losetup").empty()) {
      return Status::Unavailable("probe needs losetup: not found in PATH or /sbin, /usr/sbin");
    }
    const char* mkfs = req.fs == FsType::kExt4 ? "mkfs.ext4" : "mkfs.xfs";
    if (sys::find_program(mkfs).empty()) {
      return Status::Unavailable(
          fmt::format("probe needs {}: not found in PATH or /sbin, /usr/sbin", mkfs));
    }
  }
  if (req.memory_limit_bytes > 0 && cg::find_memory_controller().version == 0) {
    return Status::Unavailable(
        "memory limit asked but no memory cgroup controller: neither a cgroup v1 \"memory\" "
        "hierarchy nor cgroup2 with \"memory\" in cgroup.controllers is mounted");
  }
  return Status::Ok();
}

std::unique_ptr<Probe> make_fake_probe(Counters canned) {
  return std::make_unique<FakeProbe>(std::move(canned));
}

Spread spread(const std::vector<Counters>& runs, const std::string& key) {
  std::vector<double> values;
  for (const auto& run : runs) {
    auto it = run.find(key);
    if (it != run.end()) values.push_back(it->second);
  }
  return spread_of(std::move(values));
}

}  // namespace faultline::probe
