// live_probe.cc — the probe on this machine's kernel: LiveProbe::run and
// the Session it drives.
//
// run(): check the request and the machine, clean what killed runs left,
// build a private file system on a loop device (or a tmpfs), write the test
// file, create the memory cgroup and trace instance, then per repetition:
// bring the page cache to the asked state, fork a child that maps the file
// and touches the pages (probe/child.h), and turn what it measured into
// counters (probe/procfs.h). A Session owns everything it created and undoes
// it on every way out: success, error, SIGINT/SIGTERM.
#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "probe/cgroup.h"
#include "probe/child.h"
#include "probe/fault_inject.h"
#include "probe/host_info.h"
#include "probe/probe.h"
#include "probe/procfs.h"
#include "probe/sys.h"
#include "probe/tracing.h"
#include "probe/workspace.h"

namespace faultline::probe {
namespace {

constexpr uint64_t kMiB = 1ull << 20;
constexpr int kEvictAttempts = 5;

// Pages of the file in the page cache: cachestat(2), else mincore(2) on a
// mapping (mincore never faults pages in). -1 with *error on failure.
int64_t resident_pages(int fd, uint64_t file_bytes, size_t page_size, std::string* error) {
  int64_t n = cachestat_pages(fd);
  if (n >= 0) return n;
  void* map = ::mmap(nullptr, file_bytes, PROT_READ, MAP_SHARED, fd, 0);
  if (map == MAP_FAILED) {
    *error = "mmap for mincore: " + sys::errno_text(errno);
    return -1;
  }
  std::vector<unsigned char> vec((file_bytes + page_size - 1) / page_size);
  int rc = ::mincore(map, file_bytes, vec.data());
  int err = errno;
  ::munmap(map, file_bytes);
  if (rc != 0) {
    *error = "mincore: " + sys::errno_text(err);
    return -1;
  }
  return procfs::mincore_resident(vec);
}

Status interrupted_status(const std::string& during) {
  return Status::Interrupted(
      fmt::format("probe interrupted by signal {} during {}", sys::interrupt_signal(), during));
}

#define FAULTLINE_RETURN_IF_INTERRUPTED(during)                \
  do {                                                         \
    if (sys::interrupted()) return interrupted_status(during); \
  } while (0)

// Everything one run() creates, undone by cleanup() (or the destructor).
class Session {
 public:
  Session(const Request& req, Result* out, KillPoint kill) : req_(req), out_(out), kill_(kill) {}
  ~Session() { (void)cleanup(); }
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  Status setup();
  Status repetition(int k);
  Status cleanup();

 private:
  std::vector<std::string>* notes() { return &out_->notes; }
  Status create_file();
  Status create_one(const std::string& path, uint64_t bytes, const std::string& source);
  Status set_read_ahead();
  Status check_read_ahead();
  Status evict();
  Status evict_one(const std::string& path, uint64_t bytes);
  Status run_child(int k, Counters* counters);
  Status reap_child(int* wstatus);

  const Request& req_;
  Result* out_;
  const KillPoint kill_;  // FAULTLINE_PROBE_KILL
  size_t page_size_ = 4096;
  ws::RunPaths paths_;
  bool dir_created_ = false;
  ws::LoopDevice loop_;
  bool mounted_ = false;
  std::unique_ptr<cg::MemoryCgroup> cgroup_;
  std::unique_ptr<trace::TraceInstance> trace_;
  std::string disk_stat_path_;
  std::string memcg_stat_path_;
  std::vector<char> write_buf_;
  std::vector<char> warm_buf_;
  std::vector<char> read_buf_;
  std::unique_ptr<ChildReport> report_;
  // The files on the probe's file system: one test file, or a replay's or a
  // program run's (Request::files).
  struct DataFile {
    std::string path;
    uint64_t bytes = 0;
    std::string source;  // a program run: the original the copy is mounted over
  };
  std::vector<DataFile> files_;
  bool multi() const { return !req_.ops.empty() || !req_.command.empty(); }
  // The replay's tables and the program's arguments (ChildPlan points at them).
  std::vector<const char*> file_paths_;
  std::vector<int> fds_;
  std::vector<char*> maps_;
  std::vector<uint64_t> map_pages_;
  std::vector<char*> anon_;
  std::vector<uint64_t> anon_pages_;
  std::vector<std::string> argv_;
  std::vector<char*> argv_ptrs_;
  std::vector<const char*> bind_from_, bind_to_;
  pid_t child_ = -1;
  bool noted_drop_caches_ = false;
  bool cleaned_ = false;
};

Status Session::setup() {
  page_size_ = static_cast<size_t>(out_->host.page_size);
  const std::string root = ws::canonical_root(req_.workspace_root);
  paths_ = ws::run_paths(root, ::getpid());
  if (sys::exists(paths_.dir)) {
    // Left by an earlier run() of this process that could not finish its clean-up.
    FAULTLINE_RETURN_IF_ERROR(ws::cleanup_run_dir(paths_.dir, notes()));
  }
  std::error_code ec;
  std::filesystem::create_directories(paths_.mnt, ec);
  dir_created_ = true;
  if (ec) return Status::IoError(fmt::format("create {}: {}", paths_.mnt, ec.message()));
  kill_at(kill_, KillPoint::kWorkspace);
  FAULTLINE_RETURN_IF_INTERRUPTED("workspace setup");

  if (!multi()) {
    files_.push_back({paths_.file, req_.file_bytes, ""});
  } else {
    for (size_t i = 0; i < req_.files.size(); ++i) {
      DataFile f{fmt::format("{}/file{}", paths_.mnt, i), req_.files[i].bytes,
                 req_.files[i].source};
      if (!f.source.empty()) {
        struct stat st {};
        if (::stat(f.source.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) {
          return Status::ProgramFailed(
              fmt::format("the program's file {} is not a regular file here", f.source));
        }
        f.bytes = static_cast<uint64_t>(st.st_size);
      }
      files_.push_back(std::move(f));
    }
  }
  uint64_t total = 0;
  for (const DataFile& f : files_) total += (f.bytes + kMiB - 1) / kMiB * kMiB;
  if (req_.fs == FsType::kTmpfs) {
    const uint64_t size = total + 16 * kMiB;
    const std::string opts = fmt::format("size={},mode=0755", size);
    if (::mount("tmpfs", paths_.mnt.c_str(), "tmpfs", 0, opts.c_str()) != 0) {
      return Status::IoError(
          fmt::format("mount tmpfs ({}) at {}: {}", opts, paths_.mnt, sys::errno_text(errno)));
    }
    mounted_ = true;
    if (req_.cache == CacheState::kCold) {
      notes()->push_back(
          "tmpfs: the file's pages are its only copy and cannot be evicted; "
          "\"cold\" runs with the file resident");
    }
  } else {
    const uint64_t image = ws::image_bytes(req_.fs, total);
    int fd = ::open(paths_.image.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) {
      return Status::IoError(fmt::format("create {}: {}", paths_.image, sys::errno_text(errno)));
    }
    int rc = ::ftruncate(fd, static_cast<off_t>(image));
    int err = errno;
    ::close(fd);
    if (rc != 0) {
      return Status::IoError(
          fmt::format("ftruncate {} to {} bytes: {}", paths_.image, image, sys::errno_text(err)));
    }
    auto loop = ws::attach_loop(paths_.image, notes());
    if (!loop.ok()) return loop.status();
    loop_ = *loop;
    kill_at(kill_, KillPoint::kLoop);
    FAULTLINE_RETURN_IF_INTERRUPTED("losetup");
    FAULTLINE_RETURN_IF_ERROR(ws::make_fs(req_.fs, loop_.dev));
    kill_at(kill_, KillPoint::kMkfs);
    FAULTLINE_RETURN_IF_INTERRUPTED("mkfs");
    const std::string type(enum_name(req_.fs));
    if (::mount(loop_.dev.c_str(), paths_.mnt.c_str(), type.c_str(), 0, nullptr) != 0) {
      return Status::IoError(fmt::format("mount {} ({}) at {}: {}", loop_.dev, type, paths_.mnt,
                                         sys::errno_text(errno)));
    }
    mounted_ = true;
    kill_at(kill_, KillPoint::kMount);
    FAULTLINE_RETURN_IF_ERROR(set_read_ahead());
    disk_stat_path_ = fmt::format("/sys/block/{}/stat", loop_.name);
  }

  write_buf_.assign(req_.write_chunk_bytes, static_cast<char>(0x5a));
  if (req_.cache == CacheState::kWarmRead) warm_buf_.assign(req_.warm_chunk_bytes, 0);
  if (req_.method == AccessMethod::kRead) {
    uint64_t largest = 0;
    for (const ReadRange& r : req_.reads) largest = std::max(largest, r.length);
    read_buf_.assign(largest, 0);
  }
  if (!req_.ops.empty()) {
    read_buf_.assign(std::max<uint64_t>(4096, std::min<uint64_t>(req_.largest_read, 1ull << 30)),
                     0);
  }
  report_ = std::make_unique<ChildReport>();
  if (!req_.ops.empty()) {
    for (const DataFile& f : files_) file_paths_.push_back(f.path.c_str());
    fds_.assign(req_.open_slots, -1);
    maps_.assign(req_.map_slots, nullptr);
    map_pages_.assign(req_.map_slots, 0);
    anon_pages_.assign(req_.anon_slots, 0);
    for (uint32_t i = 0; i < req_.anon_slots; ++i) {
      // Reserved now, faulted by the child page by page (no THP: one fault a page).
      const uint64_t bytes = std::max<uint64_t>(1, req_.anon_max_pages[i]) * 4096;
      void* a = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
      if (a == MAP_FAILED) {
        return Status::IoError(
            fmt::format("reserve {} bytes of anonymous memory: {}", bytes, sys::errno_text(errno)));
      }
      (void)::madvise(a, bytes, MADV_NOHUGEPAGE);
      anon_.push_back(static_cast<char*>(a));
    }
  }
  if (!req_.command.empty()) {
    const std::string exe = sys::find_program(req_.command[0]);
    if (exe.empty()) return Status::ProgramFailed("command not found: " + req_.command[0]);
    argv_ = req_.command;
    argv_[0] = exe;
    for (std::string& a : argv_) argv_ptrs_.push_back(a.data());
    argv_ptrs_.push_back(nullptr);
    for (const DataFile& f : files_) {
      bind_from_.push_back(f.path.c_str());
      bind_to_.push_back(f.source.c_str());
    }
  }
  FAULTLINE_RETURN_IF_ERROR(create_file());
  kill_at(kill_, KillPoint::kFile);
  FAULTLINE_RETURN_IF_INTERRUPTED("writing the test file");

  if (req_.memory_limit_bytes > 0) {
    auto cg = cg::MemoryCgroup::create(::getpid(), req_.memory_limit_bytes, notes());
    if (!cg.ok()) return cg.status();
    cgroup_ = std::move(*cg);
    memcg_stat_path_ = cgroup_->dir() + "/memory.stat";
    kill_at(kill_, KillPoint::kCgroup);
  }
  if (req_.trace_events) {
    if (req_.output_dir.empty()) {
      notes()->push_back("trace_events asked without an output_dir: events not recorded");
    } else {
      std::filesystem::create_directories(req_.output_dir, ec);
      if (ec) return Status::IoError(fmt::format("create {}: {}", req_.output_dir, ec.message()));
      // Several files: every event of the probe's file system, which holds only them.
      auto t = trace::TraceInstance::create(::getpid(), multi() ? paths_.mnt : paths_.file,
                                            paths_.dir, notes(), multi());
      if (!t.ok()) return t.status();
      trace_ = std::move(*t);
      kill_at(kill_, KillPoint::kTrace);
    }
  }
  FAULTLINE_RETURN_IF_INTERRUPTED("setup");
  return Status::Ok();
}

Status Session::set_read_ahead() {
  const std::string path = fmt::format("/sys/block/{}/queue/read_ahead_kb", loop_.name);
  FAULTLINE_RETURN_IF_ERROR(sys::write_file(path, std::to_string(req_.read_ahead_kb)));
  return check_read_ahead();
}

// The loop device's limits can be recomputed by the kernel (a direct-I/O or
// block-size change rewrites bdi->ra_pages): check the value still holds.
Status Session::check_read_ahead() {
  if (req_.fs == FsType::kTmpfs) return Status::Ok();
  const std::string path = fmt::format("/sys/block/{}/queue/read_ahead_kb", loop_.name);
  auto back = sys::read_file(path);
  if (!back.ok()) return back.status();
  if (sys::trim(*back) != std::to_string(req_.read_ahead_kb)) {
    return Status::IoError(
        fmt::format("{}: wrote {}, the kernel holds {} (read_ahead_kb is kept "
                    "in pages: use a multiple of {})",
                    path, req_.read_ahead_kb, sys::trim(*back), page_size_ / 1024));
  }
  return Status::Ok();
}

Status Session::create_file() {
  for (const DataFile& f : files_) {
    FAULTLINE_RETURN_IF_ERROR(create_one(f.path, f.bytes, f.source));
  }
  return Status::Ok();
}

// One file: a copy of source, or bytes of the probe's pattern.
Status Session::create_one(const std::string& path, uint64_t bytes, const std::string& source) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return Status::IoError(fmt::format("create {}: {}", path, sys::errno_text(errno)));
  int err = 0;
  if (!source.empty()) {
    const int in = ::open(source.c_str(), O_RDONLY | O_CLOEXEC);
    if (in < 0) {
      err = errno;
      ::close(fd);
      return Status::IoError(fmt::format("open {}: {}", source, sys::errno_text(err)));
    }
    for (;;) {
      const ssize_t n = ::read(in, write_buf_.data(), write_buf_.size());
      if (n < 0 && errno == EINTR && !sys::interrupted()) continue;
      if (n <= 0) {
        err = n < 0 ? errno : 0;
        break;
      }
      if (::write(fd, write_buf_.data(), static_cast<size_t>(n)) != n) {
        err = errno ? errno : EIO;
        break;
      }
    }
    // The copy must not make the original's pages the cache's: drop them.
    (void)::posix_fadvise(in, 0, 0, POSIX_FADV_DONTNEED);
    ::close(in);
  } else if (multi() || req_.cache != CacheState::kWarmWrite) {
    // kWarmWrite of one test file: the child writes the data itself, inside
    // its cgroup; an empty file now gives the inode the trace filter needs.
    err = write_pattern(fd, bytes, write_buf_.data(), write_buf_.size(), page_size_);
  }
  if (err == EINTR && sys::interrupted()) {
    ::close(fd);
    return interrupted_status("writing the test file");
  }
  if (err != 0) {
    ::close(fd);
    return Status::IoError(fmt::format("write {}: {}", path, sys::errno_text(err)));
  }
  if (::fsync(fd) != 0) {
    const int e = errno;
    ::close(fd);
    return Status::IoError(fmt::format("fsync {}: {}", path, sys::errno_text(e)));
  }
  if (::close(fd) != 0) {
    return Status::IoError(fmt::format("close {}: {}", path, sys::errno_text(errno)));
  }
  return Status::Ok();
}

// Drops every page of the files from the page cache and proves it.
Status Session::evict() {
  for (const DataFile& f : files_) FAULTLINE_RETURN_IF_ERROR(evict_one(f.path, f.bytes));
  return Status::Ok();
}

Status Session::evict_one(const std::string& path, uint64_t bytes) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Status::IoError(fmt::format("open {}: {}", path, sys::errno_text(errno)));
  std::string error;
  int64_t resident = -1;
  for (int attempt = 0; attempt < kEvictAttempts; ++attempt) {
    // Dirty or writeback folios cannot be invalidated: write them back first.
    if (::fsync(fd) != 0) {
      int err = errno;
      ::close(fd);
      return Status::IoError(fmt::format("fsync {}: {}", path, sys::errno_text(err)));
    }
    int rc = ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    if (rc != 0) {
      ::close(fd);
      return Status::IoError(
          fmt::format("posix_fadvise(DONTNEED) {}: {}", path, sys::errno_text(rc)));
    }
    resident = resident_pages(fd, bytes, page_size_, &error);
    if (resident <= 0) break;
    if (!sys::sleep_ms(20)) break;
  }
  if (resident > 0 && !sys::interrupted()) {
    // Last resort, global: drop clean page cache everywhere.
    ::sync();
    Status st = sys::write_file("/proc/sys/vm/drop_caches", "1");
    if (!noted_drop_caches_) {
      notes()->push_back(
          fmt::format("{}: fadvise(DONTNEED) left {} pages resident; used "
                      "/proc/sys/vm/drop_caches{}",
                      path, resident, st.ok() ? "" : " (" + st.message() + ")"));
      noted_drop_caches_ = true;
    }
    resident = resident_pages(fd, bytes, page_size_, &error);
  }
  ::close(fd);
  FAULTLINE_RETURN_IF_INTERRUPTED("evicting the test file");
  if (resident < 0) {
    return Status::IoError(fmt::format("cannot tell what of {} is cached: {}", path, error));
  }
  if (resident > 0) {
    return Status::IoError(
        fmt::format("cold cache not reached: {} of {} pages of {} still resident after fsync + "
                    "POSIX_FADV_DONTNEED x{} and drop_caches",
                    resident, (bytes + page_size_ - 1) / page_size_, path, kEvictAttempts));
  }
  return Status::Ok();
}

Status Session::repetition(int k) {
  FAULTLINE_RETURN_IF_ERROR(check_read_ahead());
  const bool evictable = req_.fs != FsType::kTmpfs;
  if (evictable && (req_.cache == CacheState::kCold || req_.cache == CacheState::kWarmRead)) {
    FAULTLINE_RETURN_IF_ERROR(evict());
  }
  if (multi() && req_.cache == CacheState::kWarmRead) {
    // The files read once by read(2), by this process: the program's open
    // files start from fresh readahead state, as another process's would.
    for (const DataFile& f : files_) {
      const int fd = ::open(f.path.c_str(), O_RDONLY | O_CLOEXEC);
      if (fd < 0)
        return Status::IoError(fmt::format("open {}: {}", f.path, sys::errno_text(errno)));
      while (::read(fd, warm_buf_.data(), warm_buf_.size()) > 0) {
      }
      ::close(fd);
    }
  }
  if (trace_) FAULTLINE_RETURN_IF_ERROR(trace_->clear());
  kill_at(kill_, KillPoint::kRepetition);
  FAULTLINE_RETURN_IF_INTERRUPTED(fmt::format("repetition {}", k));
  Counters counters;
  FAULTLINE_RETURN_IF_ERROR(run_child(k, &counters));
  if (trace_) {
    const std::string name = req_.name.empty() ? std::string("probe") : req_.name;
    const std::string dest = fmt::format("{}/{}-rep{}.trace", req_.output_dir, name, k);
    FAULTLINE_RETURN_IF_ERROR(trace_->save(dest, notes()));
    out_->event_files.push_back(dest);
  }
  out_->runs.push_back(std::move(counters));
  return Status::Ok();
}

Status Session::reap_child(int* wstatus) {
  for (;;) {
    pid_t w = ::waitpid(child_, wstatus, 0);
    if (w == child_) {
      child_ = -1;
      return Status::Ok();
    }
    if (w < 0 && errno == EINTR) {
      if (sys::interrupted()) ::kill(child_, SIGKILL);
      continue;
    }
    int err = errno;
    child_ = -1;
    return Status::IoError(fmt::format("waitpid for the probe child: {}", sys::errno_text(err)));
  }
}

Status Session::run_child(int k, Counters* counters) {
  ChildPlan plan;
  plan.pages = req_.pages.data();
  plan.n_pages = req_.pages.size();
  plan.page_size = page_size_;
  plan.file_bytes = req_.file_bytes;
  plan.file = paths_.file.c_str();
  plan.cgroup_procs = cgroup_ ? cgroup_->procs_file().c_str() : nullptr;
  plan.disk_stat = disk_stat_path_.empty() ? nullptr : disk_stat_path_.c_str();
  plan.memcg_stat = memcg_stat_path_.empty() ? nullptr : memcg_stat_path_.c_str();
  plan.tracing_on_fd = trace_ ? trace_->tracing_on_fd() : -1;
  plan.write = req_.write;
  plan.map_shared = req_.map_shared;
  plan.advice = req_.madvise_advice;
  plan.fadvice = req_.fadvise_advice;
  plan.reads = req_.reads.data();
  plan.n_reads = req_.reads.size();
  plan.read_buf = read_buf_.empty() ? nullptr : read_buf_.data();
  plan.read_size = read_buf_.size();
  plan.cache = req_.cache;
  plan.write_buf = write_buf_.data();
  plan.write_chunk = write_buf_.size();
  plan.warm_buf = warm_buf_.empty() ? nullptr : warm_buf_.data();
  plan.warm_chunk = warm_buf_.size();
  plan.parent = ::getpid();
  plan.report = report_.get();
  plan.kill = kill_;
  if (!req_.ops.empty()) {
    plan.ops = req_.ops.data();
    plan.n_ops = req_.ops.size();
    plan.file_paths = file_paths_.data();
    plan.fds = fds_.data();
    plan.n_fds = fds_.size();
    plan.maps = maps_.data();
    plan.map_pages = map_pages_.data();
    plan.n_maps = maps_.size();
    plan.anon = anon_.data();
    plan.anon_pages = anon_pages_.data();
    plan.anon_max = req_.anon_max_pages.data();
    plan.n_anon = anon_.size();
  }
  if (!req_.command.empty()) {
    plan.argv = argv_ptrs_.data();
    plan.cwd = req_.cwd.c_str();
    plan.bind_from = bind_from_.data();
    plan.bind_to = bind_to_.data();
    plan.n_binds = bind_from_.size();
  }

  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    return Status::IoError(fmt::format("pipe for the probe child: {}", sys::errno_text(errno)));
  }
  plan.report_fd = fds[1];
  const int64_t oom_before = cgroup_ ? cgroup_->oom_kills() : -1;
  child_ = ::fork();
  if (child_ < 0) {
    int err = errno;
    ::close(fds[0]);
    ::close(fds[1]);
    return Status::IoError(fmt::format("fork of the probe child: {}", sys::errno_text(err)));
  }
  if (child_ == 0) {
    ::close(fds[0]);
    child_main(plan);
  }
  ::close(fds[1]);

  // Read the report; poll so a signal to the probe is seen within 100 ms.
  ChildReport* r = report_.get();
  char* dst = reinterpret_cast<char*>(r);
  size_t got = 0;
  bool killed = false;
  while (got < sizeof *r) {
    if (sys::interrupted() && !killed) {
      ::kill(child_, SIGKILL);
      killed = true;
    }
    struct pollfd pfd = {fds[0], POLLIN, 0};
    int n = ::poll(&pfd, 1, 100);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) continue;
    ssize_t rd = ::read(fds[0], dst + got, sizeof *r - got);
    if (rd < 0 && errno == EINTR) continue;
    if (rd <= 0) break;
    got += static_cast<size_t>(rd);
  }
  ::close(fds[0]);
  int wstatus = 0;
  FAULTLINE_RETURN_IF_ERROR(reap_child(&wstatus));
  if (killed || sys::interrupted()) return interrupted_status(fmt::format("repetition {}", k));

  if (WIFSIGNALED(wstatus)) {
    const int64_t oom_after = cgroup_ ? cgroup_->oom_kills() : -1;
    std::string why;
    if (oom_after > oom_before && oom_before >= 0) {
      why = fmt::format(
          " by the OOM killer of {} (memory_limit_bytes {} too small for the pages "
          "it cannot reclaim: anonymous copies, tmpfs)",
          cgroup_->dir(), req_.memory_limit_bytes);
    }
    return Status::IoError(fmt::format("probe child (repetition {}) killed by signal {}{}", k,
                                       WTERMSIG(wstatus), why));
  }
  if (got == sizeof *r && r->failed != 0) {
    r->what[sizeof r->what - 1] = '\0';
    return Status::IoError(fmt::format("probe child: {}: {}", r->what, sys::errno_text(r->err)));
  }
  if (got != sizeof *r || !WIFEXITED(wstatus) || WEXITSTATUS(wstatus) != 0) {
    return Status::IoError(fmt::format(
        "probe child (repetition {}) exited with status {} after sending {} of {} report bytes", k,
        WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : -1, got, sizeof *r));
  }
  r->vmstat0[sizeof r->vmstat0 - 1] = r->vmstat1[sizeof r->vmstat1 - 1] = '\0';
  r->disk0[sizeof r->disk0 - 1] = r->disk1[sizeof r->disk1 - 1] = '\0';
  r->status[sizeof r->status - 1] = '\0';
  r->memcg0[sizeof r->memcg0 - 1] = r->memcg1[sizeof r->memcg1 - 1] = '\0';

  Counters& c = *counters;
  // The anonymous memory a replay charges as recorded faults too: those
  // faults are the program's anonymous ones, not the file's.
  c["minflt"] = static_cast<double>(r->minflt1 - r->minflt0 - r->anon_faults);
  c["majflt"] = static_cast<double>(r->majflt1 - r->majflt0);
  c["elapsed_s"] = static_cast<double>(r->t1_ns - r->t0_ns) / 1e9;
  // Every /proc/vmstat item as a delta; pgpgin (all block devices) is renamed
  // so "pgpgin" can mean this probe's own device.
  for (const auto& [key, delta] : procfs::vmstat_counters(r->vmstat0, r->vmstat1)) c[key] = delta;
  // Reclaim inside a cgroup is not in the global pgscan/pgsteal: the
  // cgroup's own memory.stat has it (v1: pgpgout, workingset_*; v2: pgscan, pgsteal).
  if (plan.memcg_stat != nullptr) {
    for (const auto& [key, delta] : procfs::memcg_counters(r->memcg0, r->memcg1)) c[key] = delta;
  }
  if (plan.disk_stat != nullptr) {
    const auto d0 = procfs::disk_fields(r->disk0), d1 = procfs::disk_fields(r->disk1);
    if (d0.size() < 3 || d1.size() < 3) {
      return Status::IoError(
          fmt::format("{}: unexpected content \"{}\"", disk_stat_path_, sys::trim(r->disk1)));
    }
    c["pgpgin"] = static_cast<double>(d1[2] - d0[2]) / 2;  // 512-byte sectors -> KiB
    c["read_ios"] = static_cast<double>(d1[0] - d0[0]);
    // The device's request size limit decides how far a large read(2) may
    // read ahead (bdi->io_pages): the model needs the same device.
    auto msk = sys::read_file(fmt::format("/sys/block/{}/queue/max_sectors_kb", loop_.name));
    const std::optional<double> kb = msk.ok() ? procfs::sysfs_number(*msk) : std::nullopt;
    if (kb) c["device.max_sectors_kb"] = *kb;
  } else {
    c["pgpgin"] = 0;
    c["read_ios"] = 0;
  }
  c["rss_file_kb"] =
      static_cast<double>(std::max<int64_t>(0, sys::status_field(r->status, "RssFile")));
  c["rss_shmem_kb"] =
      static_cast<double>(std::max<int64_t>(0, sys::status_field(r->status, "RssShmem")));
  if (r->cache_before >= 0) c["cache_pages_before"] = static_cast<double>(r->cache_before);
  if (r->cache_after >= 0) c["cache_pages_after"] = static_cast<double>(r->cache_after);
  if (!req_.ops.empty()) {
    c["replay.skipped"] = static_cast<double>(r->skipped);
    c["replay.anon_faults"] = static_cast<double>(r->anon_faults);
  }
  if (!req_.command.empty()) {
    const int st = r->program_exit;
    c["program.exit"] = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
      return Status::ProgramFailed(
          fmt::format("{} {} (repetition {})", req_.command[0],
                      WIFEXITED(st) ? fmt::format("exited with status {}", WEXITSTATUS(st))
                                    : fmt::format("was killed by signal {}", WTERMSIG(st)),
                      k));
    }
  }
  return Status::Ok();
}

Status Session::cleanup() {
  if (cleaned_) return Status::Ok();
  cleaned_ = true;
  std::string errors;
  auto add = [&errors](const Status& st) {
    if (st.ok()) return;
    if (!errors.empty()) errors += "; ";
    errors += st.message();
  };
  if (child_ > 0) {
    ::kill(child_, SIGKILL);
    int wstatus = 0;
    add(reap_child(&wstatus));
  }
  if (trace_) add(trace_->destroy());
  trace_.reset();
  for (size_t i = 0; i < anon_.size(); ++i) {
    ::munmap(anon_[i], std::max<uint64_t>(1, req_.anon_max_pages[i]) * 4096);
  }
  anon_.clear();
  if (cgroup_) add(cgroup_->destroy());
  cgroup_.reset();
  if (mounted_) {
    bool lazy = false;
    add(sys::unmount(paths_.mnt, 2000, &lazy));
    if (lazy) notes()->push_back(fmt::format("{}: busy, unmounted lazily", paths_.mnt));
    mounted_ = false;
  }
  kill_at(kill_, KillPoint::kCleanup);
  if (!loop_.dev.empty()) {
    add(ws::detach_loop(loop_.dev));
    loop_ = {};
  }
  // Whatever is left below the run dir (and the dir itself).
  if (dir_created_) add(ws::cleanup_run_dir(paths_.dir, notes()));
  // The workspace root too, once no other run uses it (rmdir fails on a
  // non-empty directory, which is what we want then).
  if (dir_created_) (void)::rmdir(req_.workspace_root.c_str());
  return errors.empty() ? Status::Ok() : Status::IoError("probe clean-up: " + errors);
}

class LiveProbe final : public Probe {
 public:
  Status run(const Request& req, Result* out, const ProgressFn& progress) override;
};

std::atomic<bool> g_live_run_active{false};

Status LiveProbe::run(const Request& req, Result* out, const ProgressFn& progress) {
  if (out == nullptr) return Status::InvalidArgument("probe: out is null");
  *out = Result{};
  FAULTLINE_RETURN_IF_ERROR(check_live_prerequisites(req));
  auto kill = kill_point_from_env();
  if (!kill.ok()) return kill.status();
  // Names (run-<pid>, faultline-probe-<pid>) are per process: one run at a time.
  if (g_live_run_active.exchange(true)) {
    return Status::Unavailable("another live probe run is in progress in this process");
  }
  struct Release {
    ~Release() { g_live_run_active = false; }
  } release;
  sys::SignalGuard guard;  // outlives the session: a signal cannot cut the clean-up short

  Status st = cleanup_stale(req.workspace_root);
  if (!st.ok()) out->notes.push_back("stale runs not fully cleaned: " + st.message());
  out->host = read_host_info(req.workspace_root, &out->notes);

  Session session(req, out, *kill);
  st = session.setup();
  for (int k = 0; st.ok() && k < req.repetitions; ++k) {
    st = session.repetition(k);
    if (st.ok() && progress) progress(k + 1, req.repetitions);
  }
  Status cleanup = session.cleanup();
  if (sys::interrupted()) {
    std::string msg = st.code() == Status::Code::kInterrupted
                          ? st.message()
                          : fmt::format("probe interrupted by signal {}", sys::interrupt_signal());
    msg += cleanup.ok() ? "; cleaned up" : "; " + cleanup.message();
    return Status::Interrupted(msg);
  }
  if (!st.ok()) return cleanup.ok() ? st : st.with_suffix("; " + cleanup.message());
  return cleanup;
}

}  // namespace

std::unique_ptr<Probe> make_live_probe() { return std::make_unique<LiveProbe>(); }

}  // namespace faultline::probe
