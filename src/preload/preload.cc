// preload.cc — libfaultline_preload.so, the shim `faultline record` loads
// into the recorded program (LD_PRELOAD) to see its accesses through file
// mappings, which no system call shows.
//
// Each mmap() of a regular data file (outside the system's directories, or
// under FAULTLINE_RECORD_DATA) is made PROT_NONE right after it is created.
// The first access to a page then raises SIGSEGV; the handler logs the page
// (its address, the thread, the time, and whether it was a store, from the
// x86 page-fault error code), gives the page its protection back, and the
// access runs again, now as the program wrote it. An epoch ends after
// FAULTLINE_RECORD_EPOCH_PAGES touches or FAULTLINE_RECORD_EPOCH_MS
// milliseconds, whichever first; then every tracked mapping is protected
// again, so the next epoch records each page's first touch anew. Shorter
// epochs see reuse better and cost more SIGSEGVs; the page count bounds the
// VMAs mprotect() splits a mapping into (each touched page is one) below
// vm.max_map_count.
//
// The log is $FAULTLINE_RECORD_DIR/touch.<pid>, 24-byte records
// (preload/touch_log.h). Everything the handler does is a system call:
// no allocation, no lock, no stdio, so it is safe in any signal context.
//
// What the shim cannot see, it says (a marker record the recorder turns
// into a limit.* condition): a SIGSEGV handler of the program's own (it is
// kept and called for faults that are not the shim's), and system calls
// given a protected page as a buffer, which fail with EFAULT; the write
// family is wrapped to touch its buffer first. mmap() through a raw
// syscall, or by a static binary, is not seen at all.
#include <dlfcn.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "preload/touch_log.h"

namespace {

using faultline::preload::kTouchEpoch;
using faultline::preload::kTouchOwnHandler;
using faultline::preload::kTouchUnknownWrite;
using faultline::preload::kTouchWrite;
using faultline::preload::TouchRecord;

constexpr uintptr_t kPage = 4096;
constexpr size_t kMaxMaps = 4096;

struct Tracked {
  std::atomic<uintptr_t> start{0};
  std::atomic<uintptr_t> end{0};  // 0: free slot
  std::atomic<int> prot{0};       // the program's protection
};

Tracked g_maps[kMaxMaps];
std::atomic<size_t> g_nr_maps{0};            // slots ever used
std::atomic_flag g_lock = ATOMIC_FLAG_INIT;  // serialises the table's writers (not the handler)

bool g_enabled = false;
char g_dir[512];
char g_data[2048];  // ':'-separated directories; empty: all but the system's
uint64_t g_epoch_pages = 8192;
uint64_t g_epoch_ns = 100'000'000;
std::atomic<uint64_t> g_epoch_touches{0};
std::atomic<uint64_t> g_epoch_start{0};
std::atomic<int> g_log_fd{-1};
std::atomic<int> g_log_pid{0};
struct sigaction g_prog_segv;  // the program's own SIGSEGV action
std::atomic<bool> g_prog_has_segv{false};

using sigaction_fn = int (*)(int, const struct sigaction*, struct sigaction*);
sigaction_fn g_real_sigaction = nullptr;

uint64_t now_ns() {
  struct timespec ts;
  syscall(SYS_clock_gettime, CLOCK_REALTIME, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000u + static_cast<uint64_t>(ts.tv_nsec);
}

void lock() {
  while (g_lock.test_and_set(std::memory_order_acquire)) {
  }
}
void unlock() { g_lock.clear(std::memory_order_release); }

// Appends digits of v to p; returns the end.
char* put_uint(char* p, uint64_t v) {
  char tmp[24];
  int n = 0;
  do {
    tmp[n++] = static_cast<char>('0' + v % 10);
    v /= 10;
  } while (v);
  while (n) *p++ = tmp[--n];
  return p;
}

// The log of this process (a forked child opens its own).
int log_fd() {
  const int pid = static_cast<int>(syscall(SYS_getpid));
  if (g_log_pid.load(std::memory_order_acquire) == pid) return g_log_fd.load();
  char path[600];
  char* p = path;
  for (const char* s = g_dir; *s; ++s) *p++ = *s;
  for (const char* s = "/touch."; *s; ++s) *p++ = *s;
  p = put_uint(p, static_cast<uint64_t>(pid));
  *p = '\0';
  const int fd = static_cast<int>(
      syscall(SYS_openat, AT_FDCWD, path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600));
  g_log_fd.store(fd);
  g_log_pid.store(pid, std::memory_order_release);
  return fd;
}

void log_record(uint64_t addr, uint32_t flags) {
  const int fd = log_fd();
  if (fd < 0) return;
  TouchRecord r{now_ns(), addr, static_cast<uint32_t>(syscall(SYS_gettid)), flags};
  syscall(SYS_write, fd, &r, sizeof r);
}

Tracked* find(uintptr_t addr) {
  const size_t n = g_nr_maps.load(std::memory_order_acquire);
  for (size_t i = 0; i < n; ++i) {
    const uintptr_t e = g_maps[i].end.load(std::memory_order_acquire);
    if (e && addr < e && addr >= g_maps[i].start.load(std::memory_order_acquire)) return &g_maps[i];
  }
  return nullptr;
}

// Protects every tracked mapping again: the next touch of each page is logged.
void new_epoch() {
  const size_t n = g_nr_maps.load(std::memory_order_acquire);
  for (size_t i = 0; i < n; ++i) {
    const uintptr_t s = g_maps[i].start.load(), e = g_maps[i].end.load();
    if (e) syscall(SYS_mprotect, s, e - s, PROT_NONE);
  }
  g_epoch_touches.store(0);
  g_epoch_start.store(now_ns());
  log_record(0, kTouchEpoch);
}

void on_segv(int sig, siginfo_t* si, void* uc) {
  const int saved = errno;
  const uintptr_t addr = reinterpret_cast<uintptr_t>(si->si_addr);
  Tracked* t = si->si_code == SEGV_ACCERR ? find(addr) : nullptr;
  if (t) {
    const uintptr_t page = addr & ~(kPage - 1);
    uint32_t flags = 0;
#if defined(__x86_64__)
    // The page-fault error code: bit 1 set for a write access.
    if (static_cast<ucontext_t*>(uc)->uc_mcontext.gregs[REG_ERR] & 2) flags |= kTouchWrite;
#else
    flags |= kTouchUnknownWrite;
#endif
    // An epoch that is over ends first, so this touch is the next one's.
    if (g_epoch_touches.load() >= g_epoch_pages || now_ns() - g_epoch_start.load() >= g_epoch_ns) {
      new_epoch();
    }
    g_epoch_touches.fetch_add(1);
    log_record(page, flags);
    syscall(SYS_mprotect, page, kPage, t->prot.load());
    errno = saved;
    return;
  }
  // Not the shim's: the program's handler, or the default action.
  if (g_prog_has_segv.load()) {
    const struct sigaction& a = g_prog_segv;
    if (a.sa_flags & SA_SIGINFO) {
      if (a.sa_sigaction) {
        a.sa_sigaction(sig, si, uc);
        return;
      }
    } else if (a.sa_handler != SIG_DFL && a.sa_handler != SIG_IGN) {
      a.sa_handler(sig);
      return;
    }
  }
  struct sigaction dfl;
  std::memset(&dfl, 0, sizeof dfl);
  dfl.sa_handler = SIG_DFL;
  g_real_sigaction(SIGSEGV, &dfl, nullptr);
  errno = saved;  // the access runs again and the default action ends the program
}

bool is_system_path(const char* p) {
  for (const char* s : faultline::preload::kSystemDirs) {
    if (std::strncmp(p, s, std::strlen(s)) == 0) return true;
  }
  return false;
}

bool under_data_dirs(const char* p) {
  for (const char* d = g_data; *d;) {
    const char* colon = std::strchr(d, ':');
    const size_t n = colon ? static_cast<size_t>(colon - d) : std::strlen(d);
    if (n && std::strncmp(p, d, n) == 0 && (p[n] == '/' || p[n] == '\0' || d[n - 1] == '/')) {
      return true;
    }
    d += n + (colon ? 1 : 0);
  }
  return false;
}

// Whether a mapping of fd is one the recording follows.
bool is_data_file(int fd) {
  struct stat st;
  if (syscall(SYS_fstat, fd, &st) != 0 || !S_ISREG(st.st_mode)) return false;
  char link[64] = "/proc/self/fd/";
  put_uint(link + std::strlen(link), static_cast<uint64_t>(fd))[0] = '\0';
  char path[4096];
  const long n = syscall(SYS_readlink, link, path, sizeof path - 1);
  if (n <= 0) return false;
  path[n] = '\0';
  return g_data[0] ? under_data_dirs(path) : !is_system_path(path);
}

void track(uintptr_t start, size_t len, int prot) {
  lock();
  size_t slot = kMaxMaps;
  const size_t n = g_nr_maps.load();
  for (size_t i = 0; i < n; ++i) {
    if (g_maps[i].end.load() == 0) {
      slot = i;
      break;
    }
  }
  if (slot == kMaxMaps && n < kMaxMaps) slot = n;
  if (slot < kMaxMaps) {
    g_maps[slot].start.store(start);
    g_maps[slot].prot.store(prot);
    g_maps[slot].end.store(start + len, std::memory_order_release);
    if (slot == n) g_nr_maps.store(n + 1, std::memory_order_release);
    syscall(SYS_mprotect, start, len, PROT_NONE);
  }
  unlock();
}

// [start, start + len) is no longer mapped.
void untrack(uintptr_t start, size_t len) {
  lock();
  const size_t n = g_nr_maps.load();
  for (size_t i = 0; i < n; ++i) {
    const uintptr_t s = g_maps[i].start.load(), e = g_maps[i].end.load();
    if (!e || start + len <= s || start >= e) continue;
    if (start <= s && start + len >= e) {
      g_maps[i].end.store(0);  // wholly unmapped
    } else if (start <= s) {
      g_maps[i].start.store(start + len);
    } else if (start + len >= e) {
      g_maps[i].end.store(start);
    }  // a hole in the middle: never touched again, the entry stays
  }
  unlock();
}

// Touches the pages of [buf, buf + len) inside tracked mappings, so a system
// call given them as its buffer finds them accessible.
void touch_buffer(const void* buf, size_t len) {
  if (!g_enabled || len == 0) return;
  const uintptr_t b = reinterpret_cast<uintptr_t>(buf);
  for (uintptr_t p = b & ~(kPage - 1); p < b + len; p += kPage) {
    if (find(p)) (void)*reinterpret_cast<volatile const char*>(p < b ? b : p);
  }
}

uint64_t env_u64(const char* name, uint64_t fallback) {
  const char* v = std::getenv(name);
  if (!v || !*v) return fallback;
  return std::strtoull(v, nullptr, 10);
}

__attribute__((constructor)) void init() {
  g_real_sigaction = reinterpret_cast<sigaction_fn>(dlsym(RTLD_NEXT, "sigaction"));
  const char* dir = std::getenv(faultline::preload::kEnvDir);
  if (!dir || !*dir || std::strlen(dir) >= sizeof g_dir || !g_real_sigaction) return;
  std::strcpy(g_dir, dir);
  if (const char* d = std::getenv(faultline::preload::kEnvData);
      d && std::strlen(d) < sizeof g_data) {
    std::strcpy(g_data, d);
  }
  g_epoch_pages = env_u64(faultline::preload::kEnvEpochPages, g_epoch_pages);
  g_epoch_ns = env_u64(faultline::preload::kEnvEpochMs, g_epoch_ns / 1000000) * 1000000;
  if (g_epoch_pages == 0) g_epoch_pages = 1;
  g_epoch_start.store(now_ns());
  // The program strace started (not the processes it starts itself, whose
  // lives are the program's business) ends when strace does.
  if (const char* t = std::getenv(faultline::preload::kEnvTracer); t && *t) {
    const pid_t tracer = static_cast<pid_t>(std::strtol(t, nullptr, 10));
    if (tracer > 0 && getppid() == tracer) {
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (getppid() != tracer) raise(SIGKILL);  // strace died before the prctl
    }
  }
  struct sigaction sa;
  std::memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = on_segv;
  sa.sa_flags = SA_SIGINFO | SA_NODEFER | SA_RESTART;
  sigemptyset(&sa.sa_mask);
  if (g_real_sigaction(SIGSEGV, &sa, nullptr) == 0) g_enabled = true;
}

void* do_mmap(void* addr, size_t len, int prot, int flags, int fd, off_t off) {
  void* p = reinterpret_cast<void*>(syscall(SYS_mmap, addr, len, prot, flags, fd, off));
  if (p == MAP_FAILED || !g_enabled) return p;
  if (flags & MAP_FIXED) untrack(reinterpret_cast<uintptr_t>(p), len);
  if (fd >= 0 && !(flags & MAP_ANONYMOUS) && (prot & PROT_READ) && is_data_file(fd)) {
    track(reinterpret_cast<uintptr_t>(p), (len + kPage - 1) & ~(kPage - 1), prot);
  }
  return p;
}

}  // namespace

extern "C" {

__attribute__((visibility("default"))) void* mmap(void* addr, size_t len, int prot, int flags,
                                                  int fd, off_t off) {
  return do_mmap(addr, len, prot, flags, fd, off);
}

__attribute__((visibility("default"))) void* mmap64(void* addr, size_t len, int prot, int flags,
                                                    int fd, off_t off) {
  return do_mmap(addr, len, prot, flags, fd, off);
}

__attribute__((visibility("default"))) int munmap(void* addr, size_t len) {
  const long r = syscall(SYS_munmap, addr, len);
  if (r == 0 && g_enabled) untrack(reinterpret_cast<uintptr_t>(addr), len);
  return static_cast<int>(r);
}

__attribute__((visibility("default"))) void* mremap(void* old, size_t old_len, size_t new_len,
                                                    int flags, ...) {
  void* fixed = nullptr;
  if (flags & MREMAP_FIXED) {
    va_list ap;
    va_start(ap, flags);
    fixed = va_arg(ap, void*);
    va_end(ap);
  }
  const Tracked* t = g_enabled ? find(reinterpret_cast<uintptr_t>(old)) : nullptr;
  const int prot = t ? t->prot.load() : 0;
  void* p = reinterpret_cast<void*>(syscall(SYS_mremap, old, old_len, new_len, flags, fixed));
  if (p != MAP_FAILED && t) {
    untrack(reinterpret_cast<uintptr_t>(old), old_len);
    track(reinterpret_cast<uintptr_t>(p), (new_len + kPage - 1) & ~(kPage - 1), prot);
  }
  return p;
}

__attribute__((visibility("default"))) int mprotect(void* addr, size_t len, int prot) {
  Tracked* t = g_enabled ? find(reinterpret_cast<uintptr_t>(addr)) : nullptr;
  if (!t) return static_cast<int>(syscall(SYS_mprotect, addr, len, prot));
  // Keep the pages protected; they get the program's protection at their next touch.
  t->prot.store(prot);
  return static_cast<int>(syscall(SYS_mprotect, addr, len, PROT_NONE));
}

__attribute__((visibility("default"))) int sigaction(int sig, const struct sigaction* act,
                                                     struct sigaction* old) {
  if (!g_real_sigaction) {
    g_real_sigaction = reinterpret_cast<sigaction_fn>(dlsym(RTLD_NEXT, "sigaction"));
  }
  if (sig != SIGSEGV || !g_enabled) return g_real_sigaction(sig, act, old);
  // The shim keeps the handler; the program's is called for faults not its own.
  if (old) *old = g_prog_segv;
  if (act) {
    g_prog_segv = *act;
    g_prog_has_segv.store(true);
    log_record(0, kTouchOwnHandler);
  }
  return 0;
}

__attribute__((visibility("default"))) sighandler_t signal(int sig, sighandler_t handler) {
  using signal_fn = sighandler_t (*)(int, sighandler_t);
  if (sig != SIGSEGV || !g_enabled) {
    static signal_fn real = reinterpret_cast<signal_fn>(dlsym(RTLD_NEXT, "signal"));
    return real(sig, handler);
  }
  struct sigaction sa, old;
  std::memset(&sa, 0, sizeof sa);
  sa.sa_handler = handler;
  sa.sa_flags = SA_RESTART;
  sigemptyset(&sa.sa_mask);
  if (sigaction(sig, &sa, &old) != 0) return SIG_ERR;
  return old.sa_handler;
}

__attribute__((visibility("default"))) ssize_t write(int fd, const void* buf, size_t n) {
  touch_buffer(buf, n);
  return syscall(SYS_write, fd, buf, n);
}

__attribute__((visibility("default"))) ssize_t pwrite64(int fd, const void* buf, size_t n,
                                                        off_t off) {
  touch_buffer(buf, n);
  return syscall(SYS_pwrite64, fd, buf, n, off);
}

__attribute__((visibility("default"))) ssize_t pwrite(int fd, const void* buf, size_t n,
                                                      off_t off) {
  return pwrite64(fd, buf, n, off);
}

__attribute__((visibility("default"))) ssize_t writev(int fd, const struct iovec* iov, int cnt) {
  for (int i = 0; i < cnt; ++i) touch_buffer(iov[i].iov_base, iov[i].iov_len);
  return syscall(SYS_writev, fd, iov, cnt);
}

__attribute__((visibility("default"))) ssize_t send(int fd, const void* buf, size_t n, int flags) {
  touch_buffer(buf, n);
  return syscall(SYS_sendto, fd, buf, n, flags, nullptr, 0);
}

__attribute__((visibility("default"))) ssize_t sendto(int fd, const void* buf, size_t n, int flags,
                                                      const struct sockaddr* to, socklen_t tolen) {
  touch_buffer(buf, n);
  return syscall(SYS_sendto, fd, buf, n, flags, to, tolen);
}

}  // extern "C"
