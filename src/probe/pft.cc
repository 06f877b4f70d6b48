#include "probe/pft.h"

#include <pthread.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <thread>
#include <vector>

#include "probe/sys.h"

namespace faultline::probe {
namespace {

constexpr size_t kPage = 4096;
constexpr unsigned kMaxTasks = 64;

double now_s() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// Per-task results, in MAP_SHARED memory so forked tasks can fill them in.
struct Shared {
  pthread_barrier_t start;
  double begin[kMaxTasks];
  double end[kMaxTasks];
  uint64_t minflt[kMaxTasks];
  uint64_t majflt[kMaxTasks];
  int error[kMaxTasks];
};

// Touches every page of the slice (a store, or a load for lat_pagefault),
// then zaps the slice (unless !zap), `passes` times.
int touch_and_zap(char* slice, size_t bytes, int passes, bool read, bool zap = true) {
  volatile char sink = 0;
  for (int p = 0; p < passes; ++p) {
    for (size_t off = 0; off < bytes; off += kPage) {
      if (read) {
        sink = static_cast<char>(sink + *static_cast<volatile char*>(slice + off));
      } else {
        slice[off] = 1;
      }
    }
    if (zap && ::madvise(slice, bytes, MADV_DONTNEED) != 0) return errno;
  }
  return 0;
}

// One task: a warm pass (page tables, anon_vma), the barrier, the counted
// passes (zapped or not: the warm pass always is).
void task(Shared* sh, unsigned i, char* slice, size_t bytes, int passes, int who, bool read,
          bool zap) {
  sh->error[i] = touch_and_zap(slice, bytes, 1, read);
  pthread_barrier_wait(&sh->start);
  rusage r0{}, r1{};
  ::getrusage(who, &r0);
  sh->begin[i] = now_s();
  if (sh->error[i] == 0) sh->error[i] = touch_and_zap(slice, bytes, passes, read, zap);
  sh->end[i] = now_s();
  ::getrusage(who, &r1);
  sh->minflt[i] = static_cast<uint64_t>(r1.ru_minflt - r0.ru_minflt);
  sh->majflt[i] = static_cast<uint64_t>(r1.ru_majflt - r0.ru_majflt);
}

// fd < 0: private anonymous memory (pft); else a shared read-only mapping of
// the cached file at `offset` (lat_pagefault).
char* map_region(size_t bytes, int fd, size_t offset) {
  void* p = fd < 0
                ? ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
                : ::mmap(nullptr, bytes, PROT_READ, MAP_SHARED, fd, static_cast<off_t>(offset));
  if (p == MAP_FAILED) return nullptr;
  // The model faults base pages: keep THP out of the host's run too.
  (void)::madvise(p, bytes, MADV_NOHUGEPAGE);
  return static_cast<char*>(p);
}

double vmstat_pgfault() {
  auto text = sys::read_file("/proc/vmstat");
  if (!text.ok()) return 0;
  const auto kv = sys::parse_key_values(*text);
  auto it = kv.find("pgfault");
  return it == kv.end() ? 0 : static_cast<double>(it->second);
}

Status one_run(const PftRequest& req, int fd, Counters* c) {
  const bool read = fd >= 0;
  const unsigned n = req.threads;
  const size_t slice = req.region_bytes / n / kPage * kPage;
  void* m =
      ::mmap(nullptr, sizeof(Shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED) return Status::IoError(std::string("pft: mmap: ") + std::strerror(errno));
  auto* sh = static_cast<Shared*>(m);
  std::memset(sh, 0, sizeof(Shared));
  pthread_barrierattr_t attr;
  pthread_barrierattr_init(&attr);
  pthread_barrierattr_setpshared(&attr, PTHREAD_PROCESS_SHARED);
  pthread_barrier_init(&sh->start, &attr, n);
  pthread_barrierattr_destroy(&attr);
  Status st;
  const double f0 = vmstat_pgfault();
  if (req.tasks == workload::TaskSharing::kProcesses) {
    std::vector<pid_t> kids;
    for (unsigned i = 0; i < n; ++i) {
      const pid_t pid = ::fork();
      if (pid == 0) {
        char* mine = map_region(slice, fd, i * slice);
        if (!mine) _exit(1);
        task(sh, i, mine, slice, req.passes, RUSAGE_SELF, read, req.zap);
        _exit(0);
      }
      if (pid < 0) {
        st = Status::IoError(std::string("pft: fork: ") + std::strerror(errno));
        break;
      }
      kids.push_back(pid);
    }
    for (pid_t k : kids) {
      int ws = 0;
      ::waitpid(k, &ws, 0);
      if (!WIFEXITED(ws) || WEXITSTATUS(ws) != 0) st = Status::IoError("pft: a task failed");
    }
  } else {
    const bool each = req.tasks == workload::TaskSharing::kThreadsVmaEach;
    char* region = each ? nullptr : map_region(slice * n, fd, 0);
    std::vector<char*> own(n, nullptr);
    bool ok = each || region != nullptr;
    for (unsigned i = 0; each && i < n; ++i) {
      ok = ok && (own[i] = map_region(slice, fd, i * slice)) != nullptr;
    }
    if (!ok) {
      st = Status::IoError("pft: cannot map the region");
    } else {
      std::vector<std::thread> ts;
      for (unsigned i = 0; i < n; ++i) {
        char* s = each ? own[i] : region + i * slice;
        ts.emplace_back([=] { task(sh, i, s, slice, req.passes, RUSAGE_THREAD, read, req.zap); });
      }
      for (auto& t : ts) t.join();
    }
    if (region) ::munmap(region, slice * n);
    for (char* p : own) {
      if (p) ::munmap(p, slice);
    }
  }
  const double f1 = vmstat_pgfault();
  if (st.ok()) {
    double b = sh->begin[0], e = sh->end[0], minflt = 0, majflt = 0;
    for (unsigned i = 0; i < n; ++i) {
      if (sh->error[i])
        st = Status::IoError(std::string("pft: madvise: ") + std::strerror(sh->error[i]));
      b = std::min(b, sh->begin[i]);
      e = std::max(e, sh->end[i]);
      minflt += static_cast<double>(sh->minflt[i]);
      majflt += static_cast<double>(sh->majflt[i]);
    }
    (*c)["minflt"] = minflt;
    (*c)["majflt"] = majflt;
    (*c)["pgfault"] = f1 - f0;
    (*c)["pgpgin"] = 0;
    (*c)["elapsed_s"] = e - b;
    (*c)["faults_per_s"] = e > b ? minflt / (e - b) : 0;
    if (minflt > 0) (*c)["ns_per_fault"] = (e - b) * 1e9 * n / minflt;
  }
  pthread_barrier_destroy(&sh->start);
  ::munmap(sh, sizeof(Shared));
  return st;
}

Status check(const PftRequest& req) {
  if (req.threads < 1 || req.threads > kMaxTasks) {
    return Status::InvalidArgument("access.threads: the probe runs 1 to 64 tasks");
  }
  if (req.region_bytes / req.threads < kPage) {
    return Status::InvalidArgument("access.region: less than a page per task");
  }
  if (!req.zap && req.passes != 1) {
    return Status::InvalidArgument("access.passes: more than one pass needs access.zap=true");
  }
  return Status::Ok();
}

Status run(const PftRequest& req, int fd, Result* out, const ProgressFn& progress) {
  utsname u{};
  if (::uname(&u) == 0) out->host.kernel_release = u.release;
  for (int r = 0; r < req.repetitions; ++r) {
    Counters c;
    FAULTLINE_RETURN_IF_ERROR(one_run(req, fd, &c));
    out->runs.push_back(std::move(c));
    if (progress) progress(r + 1, req.repetitions);
  }
  return Status::Ok();
}

}  // namespace

Status run_pft(const PftRequest& req, Result* out, const ProgressFn& progress) {
  FAULTLINE_RETURN_IF_ERROR(check(req));
  return run(req, -1, out, progress);
}

Status run_lat_pagefault(const PftRequest& req, Result* out, const ProgressFn& progress) {
  FAULTLINE_RETURN_IF_ERROR(check(req));
  // A memfd is a shmem file: order-0 folios by default, no mount needed,
  // gone when the last reference goes.
  const int fd = static_cast<int>(::syscall(SYS_memfd_create, "faultline-lat", 0));
  if (fd < 0) return Status::Unavailable(std::string("memfd_create: ") + std::strerror(errno));
  const size_t bytes = req.region_bytes / req.threads / kPage * kPage * req.threads;
  std::vector<char> chunk(1 << 20, 'x');
  Status st;
  for (size_t done = 0; done < bytes && st.ok();) {
    const size_t n = std::min(chunk.size(), bytes - done);
    const ssize_t w = ::write(fd, chunk.data(), n);
    if (w <= 0) st = Status::IoError(std::string("memfd write: ") + std::strerror(errno));
    done += w > 0 ? static_cast<size_t>(w) : 0;
  }
  if (st.ok()) st = run(req, fd, out, progress);
  ::close(fd);
  return st;
}

}  // namespace faultline::probe
