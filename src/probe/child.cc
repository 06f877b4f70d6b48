// child.cc — the live probe's forked child (see child.h for its
// async-signal-safety contract). Only async-signal-safe calls from fork() to
// _exit(), in every function of this file.
#include "probe/child.h"

#include <fcntl.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <ctime>

#include "probe/sys.h"
#include "workload/recording.h"

namespace faultline::probe {
namespace {

// struct cachestat_range / cachestat of <linux/mman.h> (6.5+), spelled out
// so the probe builds against older headers.
struct CachestatRange {
  uint64_t off, len;
};
struct Cachestat {
  uint64_t nr_cache, nr_dirty, nr_writeback, nr_evicted, nr_recently_evicted;
};
constexpr long kSysCachestat = 451;

void copy_str(char* dst, size_t cap, const char* a, const char* b = nullptr) {
  size_t n = 0;
  for (const char* s : {a, b}) {
    for (; s != nullptr && *s != '\0' && n + 1 < cap; ++s) dst[n++] = *s;
  }
  dst[n] = '\0';
}

// Reads a small kernel file into buf (NUL-terminated); false on failure.
bool read_into(const char* path, char* buf, size_t cap) {
  int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  size_t n = 0;
  while (n + 1 < cap) {
    ssize_t r = ::read(fd, buf + n, cap - 1 - n);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    n += static_cast<size_t>(r);
  }
  buf[n] = '\0';
  ::close(fd);
  return n > 0;
}

bool write_all(int fd, const void* data, size_t len) {
  const char* p = static_cast<const char*>(data);
  while (len > 0) {
    ssize_t w = ::write(fd, p, len);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    p += w;
    len -= static_cast<size_t>(w);
  }
  return true;
}

[[noreturn]] void child_send(const ChildPlan& p, int code) {
  (void)write_all(p.report_fd, p.report, sizeof *p.report);
  ::_exit(code);
}

[[noreturn]] void child_fail(const ChildPlan& p, const char* what, const char* path) {
  ChildReport* r = p.report;
  r->failed = 1;
  r->err = errno;
  copy_str(r->what, sizeof r->what, what, path);
  child_send(p, 1);
}

// The access loop. Not instrumented by ASan: its shadow of a large mapping
// would add its own minor faults to the ones being measured.
__attribute__((no_sanitize_address, noinline)) uint64_t touch_pages(char* base,
                                                                    const uint64_t* pages, size_t n,
                                                                    size_t page_size, bool write) {
  volatile char* vbase = base;
  uint64_t sink = 0;
  if (write) {
    for (size_t i = 0; i < n; ++i) vbase[pages[i] * page_size] = static_cast<char>(i | 1);
  } else {
    for (size_t i = 0; i < n; ++i) {
      sink += static_cast<unsigned char>(vbase[pages[i] * page_size]);
    }
  }
  return sink;
}

// The read(2) loop: one pread per range. Returns false (errno set) if a read
// fails.
bool read_ranges(int fd, const ReadRange* reads, size_t n, char* buf, uint64_t* sink) {
  for (size_t i = 0; i < n; ++i) {
    ssize_t got;
    do {
      got = ::pread(fd, buf, reads[i].length, static_cast<off_t>(reads[i].offset));
    } while (got < 0 && errno == EINTR);
    if (got < 0) return false;
    *sink += static_cast<unsigned char>(buf[0]);
  }
  return true;
}

// Writes the stack below the caller, so the calls made inside the
// measurement (getrusage, clock_gettime, the loop) do not take copy-on-write
// faults on stack pages the child has not written since fork().
__attribute__((noinline)) void prefault_stack() {
  volatile char pad[32 * 1024];
  for (size_t i = 0; i < sizeof pad; i += 512) pad[i] = 1;
}

int64_t to_ns(const struct timespec& ts) {
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

constexpr uintptr_t kPmdBytes = uintptr_t{2} << 20;

// A mapping of pages pages of fd from page pgoff, placed `align` pages past
// a 2 MiB boundary as the recorded one was; nullptr on failure.
char* map_aligned(int fd, uint64_t pgoff, uint64_t pages, uint32_t arg) {
  const uint64_t bytes = pages * 4096;
  void* reserve = ::mmap(nullptr, bytes + kPmdBytes * 2, PROT_NONE,
                         MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (reserve == MAP_FAILED) return nullptr;
  const uintptr_t aligned =
      ((reinterpret_cast<uintptr_t>(reserve) + kPmdBytes - 1) & ~(kPmdBytes - 1)) +
      uintptr_t{workload::map_align_pages(arg)} * 4096;
  const int prot = static_cast<int>(arg & 0x7) & (PROT_READ | PROT_WRITE | PROT_EXEC);
  const int flags = ((arg & workload::kMapShared) ? MAP_SHARED : MAP_PRIVATE) | MAP_FIXED;
  void* m = ::mmap(reinterpret_cast<void*>(aligned), bytes, prot ? prot : PROT_READ, flags, fd,
                   static_cast<off_t>(pgoff * 4096));
  return m == MAP_FAILED ? nullptr : static_cast<char*>(m);
}

// The steps of a replay. Not instrumented by ASan, as touch_pages.
__attribute__((no_sanitize_address, noinline)) bool replay_ops(const ChildPlan& p,
                                                               const char** what) {
  ChildReport* r = p.report;
  uint64_t sink = 0;
  for (size_t i = 0; i < p.n_ops; ++i) {
    const ReplayOp& op = p.ops[i];
    switch (op.kind) {
      case ReplayOp::Kind::kOpen:
        p.fds[op.slot] = ::open(p.file_paths[op.file], (op.write ? O_RDWR : O_RDONLY) | O_CLOEXEC);
        if (p.fds[op.slot] < 0) {
          *what = "open: ";
          return false;
        }
        break;
      case ReplayOp::Kind::kClose:
        if (p.fds[op.slot] >= 0) ::close(p.fds[op.slot]);
        p.fds[op.slot] = -1;
        break;
      case ReplayOp::Kind::kMmap: {
        int fd = p.fds[op.other];
        const bool reopened = fd < 0;  // an inherited mapping of a file closed since
        if (reopened) fd = ::open(p.file_paths[op.file], O_RDONLY | O_CLOEXEC);
        p.maps[op.slot] = fd < 0 ? nullptr : map_aligned(fd, op.offset, op.length, op.arg);
        p.map_pages[op.slot] = op.length;
        if (reopened && fd >= 0) ::close(fd);
        if (!p.maps[op.slot]) {
          *what = "mmap: ";
          return false;
        }
        break;
      }
      case ReplayOp::Kind::kMunmap:
        if (p.maps[op.slot] && op.offset < p.map_pages[op.slot]) {
          ::munmap(p.maps[op.slot] + op.offset * 4096,
                   std::min(op.length, p.map_pages[op.slot] - op.offset) * 4096);
          if (op.offset == 0 && op.length >= p.map_pages[op.slot]) p.maps[op.slot] = nullptr;
        }
        break;
      case ReplayOp::Kind::kMadvise:
        if (p.maps[op.slot] && op.offset < p.map_pages[op.slot]) {
          ::madvise(p.maps[op.slot] + op.offset * 4096,
                    std::min(op.length, p.map_pages[op.slot] - op.offset) * 4096,
                    static_cast<int>(op.arg));
        }
        break;
      case ReplayOp::Kind::kFadvise:
        if (p.fds[op.slot] >= 0) {
          (void)::posix_fadvise(p.fds[op.slot], static_cast<off_t>(op.offset),
                                static_cast<off_t>(op.length), static_cast<int>(op.arg));
        }
        break;
      case ReplayOp::Kind::kRead: {
        if (p.fds[op.slot] < 0) {
          ++r->skipped;
          break;
        }
        ssize_t got;
        do {
          got = ::pread(p.fds[op.slot], p.read_buf, std::min<uint64_t>(op.length, p.read_size),
                        static_cast<off_t>(op.offset));
        } while (got < 0 && errno == EINTR);
        if (got < 0) {
          *what = "pread: ";
          return false;
        }
        sink += static_cast<unsigned char>(p.read_buf[0]);
        break;
      }
      case ReplayOp::Kind::kTouch: {
        volatile char* m = p.maps[op.slot];
        if (!m || op.offset >= p.map_pages[op.slot]) {
          ++r->skipped;
          break;
        }
        if (op.write) {
          m[op.offset * 4096] = 1;
        } else {
          sink += static_cast<unsigned char>(m[op.offset * 4096]);
        }
        break;
      }
      case ReplayOp::Kind::kAnon: {
        // The process's anonymous memory, charged as recorded: new pages
        // are written (each one fault, counted), released ones dropped.
        const uint64_t want = std::min(op.length, p.anon_max[op.slot]);
        uint64_t& have = p.anon_pages[op.slot];
        volatile char* a = p.anon[op.slot];
        if (!a) break;
        for (; have < want; ++have) {
          a[have * 4096] = 1;
          ++r->anon_faults;
        }
        if (want < have) {
          ::madvise(p.anon[op.slot] + want * 4096, (have - want) * 4096, MADV_DONTNEED);
          have = want;
        }
        break;
      }
    }
  }
  r->sink = sink;
  return true;
}

}  // namespace

int64_t cachestat_pages(int fd) {
  CachestatRange range{0, 0};  // len 0: to the end of the file
  Cachestat cs{};
  if (::syscall(kSysCachestat, fd, &range, &cs, 0) != 0) return -1;
  return static_cast<int64_t>(cs.nr_cache);
}

int write_pattern(int fd, uint64_t file_bytes, char* buf, size_t chunk, size_t page_size) {
  uint64_t off = 0;
  while (off < file_bytes) {
    if (sys::interrupted()) return EINTR;
    const size_t len = static_cast<size_t>(std::min<uint64_t>(chunk, file_bytes - off));
    for (size_t in = 0; in < len; in += page_size) {
      const uint64_t page = (off + in) / page_size + 1;
      std::memcpy(buf + in, &page, std::min(sizeof page, len - in));
    }
    if (!write_all(fd, buf, len)) return errno != 0 ? errno : EIO;
    off += len;
  }
  return 0;
}

namespace {

// The counters on either side of the measured part: vmstat, the device,
// the cgroup.
void snapshot(const ChildPlan& p, char* vmstat, char* disk, char* memcg) {
  if (!read_into("/proc/vmstat", vmstat, kVmstatBytes)) child_fail(p, "read ", "/proc/vmstat");
  if (p.disk_stat != nullptr && !read_into(p.disk_stat, disk, kDiskStatBytes)) {
    child_fail(p, "read ", p.disk_stat);
  }
  if (p.memcg_stat != nullptr && !read_into(p.memcg_stat, memcg, kMemcgStatBytes)) {
    child_fail(p, "read ", p.memcg_stat);
  }
}

// The end of a measured loop: the task's status, the rusage and clock
// readings from either side of the loop into the report, which goes to the
// parent.
[[noreturn]] void child_measured(const ChildPlan& p, const struct rusage& ru0,
                                 const struct rusage& ru1, const struct timespec& ts0,
                                 const struct timespec& ts1) {
  ChildReport* r = p.report;
  (void)read_into("/proc/self/status", r->status, sizeof r->status);
  r->minflt0 = ru0.ru_minflt;
  r->minflt1 = ru1.ru_minflt;
  r->majflt0 = ru0.ru_majflt;
  r->majflt1 = ru1.ru_majflt;
  r->t0_ns = to_ns(ts0);
  r->t1_ns = to_ns(ts1);
  kill_at(p.kill, KillPoint::kChildMeasured);
  child_send(p, 0);
}

// Runs every kind of step once on the program's own binary, so the code
// the replay runs (replay_ops, libc's wrappers) has its pages mapped before
// the measurement: fork() copies no PTE of a file mapping, so their first
// use in the child would be counted as minor faults of the replay.
void warm_up(const ChildPlan& p) {
  const char* paths[1] = {"/proc/self/exe"};
  int fds[1] = {-1};
  char* maps[1] = {nullptr};
  uint64_t pages[1] = {0};
  char buf[64];
  const ReplayOp ops[] = {
      {.kind = ReplayOp::Kind::kOpen, .slot = 0, .file = 0},
      {.kind = ReplayOp::Kind::kMmap, .slot = 0, .other = 0, .file = 0, .arg = 1, .length = 1},
      {.kind = ReplayOp::Kind::kTouch, .slot = 0, .offset = 0},
      {.kind = ReplayOp::Kind::kMadvise, .slot = 0, .arg = 0, .offset = 0, .length = 1},
      {.kind = ReplayOp::Kind::kFadvise, .slot = 0, .arg = 0, .offset = 0, .length = 1},
      {.kind = ReplayOp::Kind::kRead, .slot = 0, .offset = 0, .length = sizeof buf},
      {.kind = ReplayOp::Kind::kMunmap, .slot = 0, .offset = 0, .length = 1},
      {.kind = ReplayOp::Kind::kClose, .slot = 0},
  };
  ChildPlan w = p;
  w.ops = ops;
  w.n_ops = sizeof ops / sizeof ops[0];
  w.file_paths = paths;
  w.fds = fds;
  w.maps = maps;
  w.map_pages = pages;
  w.read_buf = buf;
  w.read_size = sizeof buf;
  w.anon = nullptr;
  const char* what = nullptr;
  (void)replay_ops(w, &what);
  p.report->skipped = p.report->anon_faults = 0;
  p.report->sink = 0;
}

// A replay: the steps between two snapshots, in this process.
[[noreturn]] void child_replay(const ChildPlan& p) {
  ChildReport* r = p.report;
  warm_up(p);
  // Every table the steps write is written now, so no copy-on-write fault
  // of the parent's pages falls inside the measurement.
  for (size_t i = 0; i < p.n_fds; ++i) p.fds[i] = -1;
  for (size_t i = 0; i < p.n_maps; ++i) {
    p.maps[i] = nullptr;
    p.map_pages[i] = 0;
  }
  for (size_t i = 0; i < p.n_anon; ++i) p.anon_pages[i] = 0;
  if (p.read_buf != nullptr) std::memset(p.read_buf, 0, p.read_size);
  snapshot(p, r->vmstat0, r->disk0, r->memcg0);
  struct rusage ru0 = {}, ru1 = {};
  struct timespec ts0 = {}, ts1 = {};
  prefault_stack();
  ::getrusage(RUSAGE_SELF, &ru1);
  ::clock_gettime(CLOCK_MONOTONIC, &ts1);
  if (p.tracing_on_fd >= 0) (void)!::write(p.tracing_on_fd, "1", 1);
  ::getrusage(RUSAGE_SELF, &ru0);
  ::clock_gettime(CLOCK_MONOTONIC, &ts0);
  const char* what = nullptr;
  const bool ok = replay_ops(p, &what);
  ::clock_gettime(CLOCK_MONOTONIC, &ts1);
  ::getrusage(RUSAGE_SELF, &ru1);
  if (p.tracing_on_fd >= 0) (void)!::write(p.tracing_on_fd, "0", 1);
  if (!ok) child_fail(p, what, "a file of the replay");
  snapshot(p, r->vmstat1, r->disk1, r->memcg1);
  child_measured(p, ru0, ru1, ts0, ts1);
}

// A program run: the program's own process, in a mount namespace where the
// probe's copies of its files are mounted over the originals; its faults
// are its rusage (wait4), the device's reads and vmstat are snapshots.
[[noreturn]] void child_program(const ChildPlan& p) {
  ChildReport* r = p.report;
  if (::unshare(CLONE_NEWNS) != 0) child_fail(p, "unshare(CLONE_NEWNS) for ", "the program");
  if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) {
    child_fail(p, "make / private for ", "the program");
  }
  for (size_t i = 0; i < p.n_binds; ++i) {
    if (::mount(p.bind_from[i], p.bind_to[i], nullptr, MS_BIND, nullptr) != 0) {
      child_fail(p, "bind mount over ", p.bind_to[i]);
    }
  }
  snapshot(p, r->vmstat0, r->disk0, r->memcg0);
  struct timespec ts0 = {}, ts1 = {};
  ::clock_gettime(CLOCK_MONOTONIC, &ts0);
  const pid_t prog = ::fork();
  if (prog < 0) child_fail(p, "fork of ", p.argv[0]);
  if (prog == 0) {
    if (p.cwd && *p.cwd && ::chdir(p.cwd) != 0) ::_exit(126);
    ::execv(p.argv[0], p.argv);
    ::_exit(127);
  }
  int status = 0;
  struct rusage ru = {};
  while (::wait4(prog, &status, 0, &ru) < 0 && errno == EINTR) {
  }
  ::clock_gettime(CLOCK_MONOTONIC, &ts1);
  snapshot(p, r->vmstat1, r->disk1, r->memcg1);
  r->program_exit = status;
  r->minflt0 = 0;
  r->minflt1 = ru.ru_minflt;
  r->majflt0 = 0;
  r->majflt1 = ru.ru_majflt;
  r->t0_ns = to_ns(ts0);
  r->t1_ns = to_ns(ts1);
  kill_at(p.kill, KillPoint::kChildMeasured);
  child_send(p, 0);
}

}  // namespace

[[noreturn]] void child_main(const ChildPlan& p) {
  // Die with the probe: a SIGKILLed probe must not leave a process holding
  // the mount (cleanup_stale() could then only unmount lazily).
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != p.parent) ::_exit(3);
  ::signal(SIGINT, SIG_DFL);
  ::signal(SIGTERM, SIG_DFL);
  ChildReport* r = p.report;
  // Copy-on-write of the report happens here, not inside the measurement.
  std::memset(r, 0, sizeof *r);
  r->cache_before = r->cache_after = -1;
  kill_at(p.kill, KillPoint::kChildStart);

  if (p.cgroup_procs != nullptr) {
    // Join before the file is opened, so every folio the loop reads is
    // charged to (and reclaimed in) the limited cgroup.
    char pid[24];
    size_t n = 0;
    char rev[24];
    for (pid_t v = ::getpid(); v > 0; v /= 10) rev[n++] = static_cast<char>('0' + v % 10);
    for (size_t i = 0; i < n; ++i) pid[i] = rev[n - 1 - i];
    int fd = ::open(p.cgroup_procs, O_WRONLY | O_CLOEXEC);
    if (fd < 0 || !write_all(fd, pid, n)) child_fail(p, "join cgroup: ", p.cgroup_procs);
    ::close(fd);
  }
  kill_at(p.kill, KillPoint::kChildCgroup);
  if (p.ops != nullptr) child_replay(p);
  if (p.argv != nullptr) child_program(p);

  if (p.cache == CacheState::kWarmWrite) {
    int fd = ::open(p.file, O_WRONLY | O_TRUNC | O_CLOEXEC);
    if (fd < 0) child_fail(p, "open for the warm write: ", p.file);
    int err = write_pattern(fd, p.file_bytes, p.write_buf, p.write_chunk, p.page_size);
    if (err != 0) {
      errno = err;
      child_fail(p, "warm write: ", p.file);
    }
    if (::fsync(fd) != 0) child_fail(p, "fsync after the warm write: ", p.file);
    ::close(fd);
  }

  int fd = ::open(p.file, (p.write ? O_RDWR : O_RDONLY) | O_CLOEXEC);
  if (fd < 0) child_fail(p, "open: ", p.file);
  const int prot = PROT_READ | (p.write ? PROT_WRITE : 0);
  // The mapping starts on a 2 MiB boundary, as the model's does (and as
  // thp_get_unmapped_area places large ext4 mappings): fault-around windows
  // and PMD mappings then line up with file offsets the same way in both.
  const size_t kPmdSize = size_t{2} << 20;
  void* reserve = ::mmap(nullptr, p.file_bytes + kPmdSize, PROT_NONE,
                         MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (reserve == MAP_FAILED) child_fail(p, "mmap reservation for ", p.file);
  const uintptr_t aligned =
      (reinterpret_cast<uintptr_t>(reserve) + kPmdSize - 1) & ~(uintptr_t{kPmdSize} - 1);
  void* map = ::mmap(reinterpret_cast<void*>(aligned), p.file_bytes, prot,
                     (p.map_shared ? MAP_SHARED : MAP_PRIVATE) | MAP_FIXED, fd, 0);
  if (map == MAP_FAILED) child_fail(p, "mmap: ", p.file);
  char* base = static_cast<char*>(map);
  kill_at(p.kill, KillPoint::kChildMapped);

  if (p.cache == CacheState::kWarmRead) {
    // A file of its own, so the warm pass leaves the mapping's file_ra_state
    // untouched: the loop starts from a fresh readahead window, as another
    // process would.
    int wfd = ::open(p.file, O_RDONLY | O_CLOEXEC);
    if (wfd < 0) child_fail(p, "open for the warm read: ", p.file);
    for (;;) {
      ssize_t n = ::read(wfd, p.warm_buf, p.warm_chunk);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) child_fail(p, "warm read: ", p.file);
      if (n == 0) break;
    }
    ::close(wfd);
  }

  r->cache_before = cachestat_pages(fd);
  if (!read_into("/proc/vmstat", r->vmstat0, sizeof r->vmstat0)) {
    child_fail(p, "read ", "/proc/vmstat");
  }
  if (p.disk_stat != nullptr && !read_into(p.disk_stat, r->disk0, sizeof r->disk0)) {
    child_fail(p, "read ", p.disk_stat);
  }
  if (p.memcg_stat != nullptr && !read_into(p.memcg_stat, r->memcg0, sizeof r->memcg0)) {
    child_fail(p, "read ", p.memcg_stat);
  }
  // madvise() counts with the loop: MADV_WILLNEED's readahead is part of
  // what the hint costs.
  if (p.advice != MADV_NORMAL && ::madvise(base, p.file_bytes, p.advice) != 0) {
    child_fail(p, "madvise: ", p.file);
  }
  // posix_fadvise() on the file the mapping holds: its f_ra and f_mode are
  // the ones read-around and read(2) consult. Counted with the loop too.
  if (p.fadvice != POSIX_FADV_NORMAL) {
    if (int err = ::posix_fadvise(fd, 0, 0, p.fadvice); err != 0) {
      errno = err;
      child_fail(p, "posix_fadvise: ", p.file);
    }
  }
  // The read buffer's pages are faulted in now, not inside the loop.
  if (p.read_buf != nullptr) std::memset(p.read_buf, 0, p.read_size);
  struct rusage ru0 = {};
  struct rusage ru1 = {};
  struct timespec ts0 = {};
  struct timespec ts1 = {};
  // First calls fault in what they touch (vDSO data, stack): not in the loop's counts.
  prefault_stack();
  ::getrusage(RUSAGE_SELF, &ru1);
  ::clock_gettime(CLOCK_MONOTONIC, &ts1);
  if (p.tracing_on_fd >= 0) (void)!::write(p.tracing_on_fd, "1", 1);
  ::getrusage(RUSAGE_SELF, &ru0);
  ::clock_gettime(CLOCK_MONOTONIC, &ts0);
  bool read_ok = true;
  if (p.read_buf != nullptr) {
    r->sink = 0;
    read_ok = read_ranges(fd, p.reads, p.n_reads, p.read_buf, &r->sink);
  } else if (p.kill == KillPoint::kChildTouching) {
    r->sink = touch_pages(base, p.pages, p.n_pages / 2, p.page_size, p.write);
    kill_at(p.kill, KillPoint::kChildTouching);
  } else {
    r->sink = touch_pages(base, p.pages, p.n_pages, p.page_size, p.write);
  }
  ::clock_gettime(CLOCK_MONOTONIC, &ts1);
  if (!read_ok) child_fail(p, "pread: ", p.file);
  ::getrusage(RUSAGE_SELF, &ru1);
  if (p.tracing_on_fd >= 0) (void)!::write(p.tracing_on_fd, "0", 1);
  snapshot(p, r->vmstat1, r->disk1, r->memcg1);
  r->cache_after = cachestat_pages(fd);
  child_measured(p, ru0, ru1, ts0, ts1);
}

}  // namespace faultline::probe
