// sys.cc — small POSIX helpers of the live probe: files, commands, signals.
#include "probe/sys.h"

#include <dirent.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ctime>

namespace faultline::probe::sys {
namespace {

volatile std::sig_atomic_t g_signal = 0;

void on_signal(int sig) { g_signal = sig; }

// /proc/mounts escapes blanks, tabs, newlines and backslashes as \ooo.
std::string decode_mount_field(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 3 < s.size()) {
      const char a = s[i + 1], b = s[i + 2], c = s[i + 3];
      if (a >= '0' && a <= '7' && b >= '0' && b <= '7' && c >= '0' && c <= '7') {
        out.push_back(static_cast<char>((a - '0') * 64 + (b - '0') * 8 + (c - '0')));
        i += 3;
        continue;
      }
    }
    out.push_back(s[i]);
  }
  return out;
}

bool is_under(const std::string& path, const std::string& dir) {
  if (path == dir) return true;
  if (path.size() <= dir.size() || path.compare(0, dir.size(), dir) != 0) return false;
  return dir.back() == '/' || path[dir.size()] == '/';
}

}  // namespace

std::vector<std::string_view> split_lines(std::string_view text) {
  std::vector<std::string_view> lines;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    lines.push_back(text.substr(pos, end - pos));
    pos = end + 1;
  }
  return lines;
}

std::vector<MountEntry> read_mounts() {
  std::vector<MountEntry> mounts;
  auto text = read_file("/proc/self/mounts");
  if (!text.ok()) return mounts;
  for (std::string_view line : split_lines(*text)) {
    std::vector<std::string_view> fields;
    size_t f = 0;
    while (f < line.size() && fields.size() < 4) {
      size_t sp = line.find(' ', f);
      if (sp == std::string_view::npos) sp = line.size();
      fields.push_back(line.substr(f, sp - f));
      f = sp + 1;
    }
    if (fields.size() < 4) continue;
    mounts.push_back({decode_mount_field(fields[0]), decode_mount_field(fields[1]),
                      std::string(fields[2]), std::string(fields[3])});
  }
  return mounts;
}

std::string errno_text(int err) { return std::strerror(err); }

faultline::Result<std::string> read_file(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    int err = errno;
    if (err == ENOENT) return Status::NotFound(fmt::format("{}: does not exist", path));
    return Status::IoError(fmt::format("open {}: {}", path, errno_text(err)));
  }
  std::string data;
  char buf[8192];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      int err = errno;
      ::close(fd);
      return Status::IoError(fmt::format("read {}: {}", path, errno_text(err)));
    }
    if (n == 0) break;
    data.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return data;
}

Status write_file(const std::string& path, std::string_view text) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) {
    int err = errno;
    if (err == ENOENT) return Status::NotFound(fmt::format("{}: does not exist", path));
    return Status::IoError(fmt::format("open {} for writing: {}", path, errno_text(err)));
  }
  ssize_t n;
  do {
    n = ::write(fd, text.data(), text.size());
  } while (n < 0 && errno == EINTR);
  int err = errno;
  ::close(fd);
  if (n < 0) {
    return Status::IoError(
        fmt::format("write \"{}\" to {}: {}", trim(text), path, errno_text(err)));
  }
  if (static_cast<size_t>(n) != text.size()) {
    return Status::IoError(fmt::format("write \"{}\" to {}: short write", trim(text), path));
  }
  return Status::Ok();
}

Status write_new_file(const std::string& path, std::string_view text) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return Status::IoError(fmt::format("create {}: {}", path, errno_text(errno)));
  size_t done = 0;
  while (done < text.size()) {
    ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      int err = errno;
      ::close(fd);
      return Status::IoError(fmt::format("write {}: {}", path, errno_text(err)));
    }
    done += static_cast<size_t>(n);
  }
  if (::close(fd) != 0)
    return Status::IoError(fmt::format("close {}: {}", path, errno_text(errno)));
  return Status::Ok();
}

std::string trim(std::string_view s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return std::string(s.substr(b, e - b));
}

std::string find_program(const std::string& name) {
  if (name.find('/') != std::string::npos) return ::access(name.c_str(), X_OK) == 0 ? name : "";
  std::vector<std::string> dirs;
  if (const char* path = std::getenv("PATH")) {
    std::string_view p(path);
    size_t pos = 0;
    while (pos <= p.size()) {
      size_t colon = p.find(':', pos);
      if (colon == std::string_view::npos) colon = p.size();
      if (colon > pos) dirs.emplace_back(p.substr(pos, colon - pos));
      pos = colon + 1;
    }
  }
  for (const char* d : {"/sbin", "/usr/sbin", "/usr/local/sbin", "/bin", "/usr/bin"}) {
    dirs.emplace_back(d);
  }
  for (const auto& d : dirs) {
    std::string full = d + "/" + name;
    struct stat st {};
    if (::stat(full.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
        ::access(full.c_str(), X_OK) == 0) {
      return full;
    }
  }
  return "";
}

faultline::Result<CommandResult> run_command(const std::vector<std::string>& argv,
                                             bool interruptible) {
  if (argv.empty()) return Status::InvalidArgument("run_command: empty argv");
  const std::string prog = find_program(argv[0]);
  if (prog.empty()) {
    return Status::NotFound(fmt::format("{}: not found in PATH or /sbin, /usr/sbin", argv[0]));
  }
  const std::string cmdline = fmt::format("{}", fmt::join(argv, " "));
  // Everything the child needs is built before fork: after it, only
  // async-signal-safe calls until execv.
  std::vector<char*> cargv;
  for (const auto& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);
  int out_pipe[2], err_pipe[2];
  if (::pipe2(out_pipe, O_CLOEXEC) != 0) {
    return Status::IoError(fmt::format("pipe for {}: {}", cmdline, errno_text(errno)));
  }
  if (::pipe2(err_pipe, O_CLOEXEC) != 0) {
    int err = errno;
    ::close(out_pipe[0]);
    ::close(out_pipe[1]);
    return Status::IoError(fmt::format("pipe for {}: {}", cmdline, errno_text(err)));
  }
  const pid_t parent = ::getpid();
  pid_t pid = ::fork();
  if (pid < 0) {
    int err = errno;
    for (int fd : {out_pipe[0], out_pipe[1], err_pipe[0], err_pipe[1]}) ::close(fd);
    return Status::IoError(fmt::format("fork for {}: {}", cmdline, errno_text(err)));
  }
  if (pid == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(126);
    ::signal(SIGINT, SIG_DFL);
    ::signal(SIGTERM, SIG_DFL);
    int devnull = ::open("/dev/null", O_RDONLY);
    if (devnull >= 0) ::dup2(devnull, 0);
    ::dup2(out_pipe[1], 1);
    ::dup2(err_pipe[1], 2);
    ::execv(prog.c_str(), cargv.data());
    ::_exit(127);
  }
  ::close(out_pipe[1]);
  ::close(err_pipe[1]);
  CommandResult res;
  struct pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
  std::string* sinks[2] = {&res.out, &res.err};
  int open_fds = 2;
  bool killed = false;
  while (open_fds > 0) {
    if (interruptible && interrupted() && !killed) {
      ::kill(pid, SIGKILL);
      killed = true;
    }
    int n = ::poll(fds, 2, 100);
    if (n < 0) {
      if (errno == EINTR) continue;
      break;
    }
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      char buf[4096];
      ssize_t r = ::read(fds[i].fd, buf, sizeof buf);
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) {
        ::close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
      } else {
        sinks[i]->append(buf, static_cast<size_t>(r));
      }
    }
  }
  for (auto& f : fds) {
    if (f.fd >= 0) ::close(f.fd);
  }
  int wstatus = 0;
  for (;;) {
    pid_t w = ::waitpid(pid, &wstatus, 0);
    if (w == pid) break;
    if (w < 0 && errno == EINTR) {
      if (interruptible && interrupted() && !killed) {
        ::kill(pid, SIGKILL);
        killed = true;
      }
      continue;
    }
    return Status::IoError(fmt::format("waitpid for {}: {}", cmdline, errno_text(errno)));
  }
  if (killed) {
    return Status::Interrupted(
        fmt::format("signal {} while running {}: command killed", interrupt_signal(), cmdline));
  }
  if (WIFEXITED(wstatus)) {
    res.exit_code = WEXITSTATUS(wstatus);
  } else if (WIFSIGNALED(wstatus)) {
    res.exit_code = 128 + WTERMSIG(wstatus);
  }
  if (res.exit_code == 127 && res.err.empty()) {
    return Status::IoError(fmt::format("{}: could not execute {}", cmdline, prog));
  }
  return res;
}

faultline::Result<std::string> run_checked(const std::vector<std::string>& argv,
                                           bool interruptible) {
  auto res = run_command(argv, interruptible);
  if (!res.ok()) return res.status();
  if (res->exit_code != 0) {
    return Status::IoError(fmt::format("`{}` failed with exit code {}: {}", fmt::join(argv, " "),
                                       res->exit_code, trim(res->err)));
  }
  return std::move(res->out);
}

std::map<std::string, int64_t> parse_key_values(std::string_view text) {
  std::map<std::string, int64_t> kv;
  for (std::string_view line : split_lines(text)) {
    size_t sp = line.find(' ');
    if (sp == std::string_view::npos || sp == 0) continue;
    std::string value(line.substr(sp + 1));
    char* endp = nullptr;
    errno = 0;
    long long v = std::strtoll(value.c_str(), &endp, 10);
    if (endp == value.c_str() || errno != 0) continue;
    kv[std::string(line.substr(0, sp))] = static_cast<int64_t>(v);
  }
  return kv;
}

int64_t status_field(std::string_view text, std::string_view key) {
  for (std::string_view line : split_lines(text)) {
    if (line.size() > key.size() && line.substr(0, key.size()) == key && line[key.size()] == ':') {
      std::string value(line.substr(key.size() + 1));
      char* endp = nullptr;
      long long v = std::strtoll(value.c_str(), &endp, 10);
      if (endp == value.c_str()) return -1;
      return static_cast<int64_t>(v);
    }
  }
  return -1;
}

std::vector<std::string> mounts_under(const std::string& dir) {
  std::vector<std::string> found;
  for (const auto& m : read_mounts()) {
    if (is_under(m.target, dir)) found.push_back(m.target);
  }
  // Deeper mounts first; a mount point seen twice (stacked mounts) stays twice,
  // so each layer gets its own umount.
  std::stable_sort(found.begin(), found.end(),
                   [](const std::string& a, const std::string& b) { return a.size() > b.size(); });
  return found;
}

std::string find_mount_of_type(const std::string& fstype) {
  for (const auto& m : read_mounts()) {
    if (m.type == fstype) return m.target;
  }
  return "";
}

Status unmount(const std::string& mnt, int retry_ms, bool* lazy) {
  if (lazy != nullptr) *lazy = false;
  int waited = 0;
  for (;;) {
    if (::umount2(mnt.c_str(), 0) == 0) return Status::Ok();
    int err = errno;
    if (err == EINVAL || err == ENOENT) {
      // Not a mount point (any more): nothing to do.
      return Status::Ok();
    }
    if (err != EBUSY || waited >= retry_ms) break;
    // A process that is being killed may still hold a mapping of the file;
    // give it a moment before falling back to a lazy unmount. Not
    // interruptible: cleanup must finish even after SIGINT.
    struct timespec ts = {0, 50 * 1000 * 1000};
    ::nanosleep(&ts, nullptr);
    waited += 50;
  }
  if (::umount2(mnt.c_str(), MNT_DETACH) == 0) {
    if (lazy != nullptr) *lazy = true;
    return Status::Ok();
  }
  return Status::IoError(fmt::format("umount {}: {}", mnt, errno_text(errno)));
}

bool sleep_ms(int ms) {
  for (int left = ms; left > 0; left -= 10) {
    if (interrupted()) return false;
    struct timespec ts = {0, static_cast<long>(std::min(left, 10)) * 1000 * 1000};
    ::nanosleep(&ts, nullptr);
  }
  return !interrupted();
}

std::vector<std::string> list_dir(const std::string& dir) {
  std::vector<std::string> names;
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return names;
  while (struct dirent* e = ::readdir(d)) {
    std::string n = e->d_name;
    if (n != "." && n != "..") names.push_back(std::move(n));
  }
  ::closedir(d);
  std::sort(names.begin(), names.end());
  return names;
}

bool exists(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0;
}

SignalGuard::SignalGuard() {
  g_signal = 0;
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  // No SA_RESTART: a blocking read/poll/waitpid returns EINTR so the run
  // notices the signal at once.
  sa.sa_flags = 0;
  ::sigaction(SIGINT, &sa, &old_int_);
  ::sigaction(SIGTERM, &sa, &old_term_);
}

SignalGuard::~SignalGuard() {
  ::sigaction(SIGINT, &old_int_, nullptr);
  ::sigaction(SIGTERM, &old_term_, nullptr);
}

int interrupt_signal() { return g_signal; }

}  // namespace faultline::probe::sys
