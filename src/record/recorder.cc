#include "record/recorder.h"

#include <elf.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "preload/touch_log.h"
#include "probe/sys.h"
#include "record/assemble.h"
#include "record/strace.h"
#include "util/process.h"
#include "workload/recording.h"

namespace faultline::record {
namespace {

namespace fs = std::filesystem;
namespace sys = probe::sys;

// faultline-record-<pid>-XXXXXX in TMPDIR: one recorder's work directory.
const std::string kWorkDirPrefix = "faultline-record-";

// Work directories in tmp of recorders that died without removing theirs (SIGKILL).
void remove_stale_work_dirs(const fs::path& tmp) {
  std::error_code ec;
  for (const std::string& name : sys::list_dir(tmp.string())) {
    if (name.rfind(kWorkDirPrefix, 0) != 0) continue;
    const size_t dash = name.rfind('-');
    if (dash == std::string::npos || dash < kWorkDirPrefix.size()) continue;
    const pid_t pid = util::pid_from_name(name.substr(0, dash), kWorkDirPrefix);
    if (pid > 0 && !util::pid_alive(pid)) fs::remove_all(tmp / name, ec);
  }
}

// The system calls strace traces: what the assembler reads, and what tells
// of a limit.
constexpr const char* kTraced =
    "open,openat,openat2,creat,close,close_range,dup,dup2,dup3,fcntl,read,readv,pread64,"
    "preadv,preadv2,lseek,mmap,munmap,mremap,madvise,fadvise64,clone,clone3,fork,vfork,"
    "execve,execveat,exit,exit_group,io_uring_setup";

uint64_t realtime_ns() {
  struct timespec ts {};
  ::clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000u + static_cast<uint64_t>(ts.tv_nsec);
}

// An ELF executable with no PT_INTERP: statically linked, so LD_PRELOAD has
// no effect on it.
bool is_static_elf(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  Elf64_Ehdr eh{};
  if (!in.read(reinterpret_cast<char*>(&eh), sizeof eh)) return false;
  if (std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64) {
    return false;  // a script or another format: its interpreter is what runs
  }
  for (int i = 0; i < eh.e_phnum; ++i) {
    Elf64_Phdr ph{};
    in.seekg(static_cast<std::streamoff>(eh.e_phoff + static_cast<uint64_t>(i) * eh.e_phentsize));
    if (!in.read(reinterpret_cast<char*>(&ph), sizeof ph)) return false;
    if (ph.p_type == PT_INTERP) return false;
  }
  return true;
}

std::string self_dir() {
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string(".") : exe.parent_path().string();
}

std::string quote(const std::vector<std::string>& argv) {
  std::string s;
  for (const std::string& a : argv) {
    if (!s.empty()) s += ' ';
    const bool plain =
        !a.empty() && a.find_first_of(" \t'\"\\$`*?[]{}()<>|&;!#~") == std::string::npos;
    if (plain) {
      s += a;
      continue;
    }
    s += '\'';
    for (char c : a) s += c == '\'' ? std::string("'\\''") : std::string(1, c);
    s += '\'';
  }
  return s;
}

// The processes below root in the process tree (/proc/<pid>/stat's ppid).
std::vector<pid_t> descendants(pid_t root) {
  std::map<pid_t, std::vector<pid_t>> children;
  for (const std::string& name : sys::list_dir("/proc")) {
    if (name.empty() || !std::isdigit(static_cast<unsigned char>(name[0]))) continue;
    auto stat = sys::read_file("/proc/" + name + "/stat");
    if (!stat.ok()) continue;
    const size_t close = stat->rfind(')');
    if (close == std::string::npos) continue;
    int ppid = 0;
    char state = 0;
    if (std::sscanf(stat->c_str() + close + 1, " %c %d", &state, &ppid) != 2) continue;
    children[ppid].push_back(static_cast<pid_t>(std::stol(name)));
  }
  std::vector<pid_t> out, todo = {root};
  while (!todo.empty()) {
    const pid_t p = todo.back();
    todo.pop_back();
    for (pid_t c : children[p]) {
      out.push_back(c);
      todo.push_back(c);
    }
  }
  return out;
}

struct Touches {
  std::vector<Touch> touches;
  std::set<std::string> limits;
};

// Every touch.<pid> the shim wrote.
Touches read_touch_logs(const std::string& dir) {
  Touches out;
  for (const std::string& name : sys::list_dir(dir)) {
    if (name.rfind("touch.", 0) != 0) continue;
    std::ifstream in(dir + "/" + name, std::ios::binary);
    preload::TouchRecord r{};
    while (in.read(reinterpret_cast<char*>(&r), sizeof r)) {
      if (r.flags & preload::kTouchOwnHandler) out.limits.insert("limit.sigsegv_handler");
      if (r.flags & preload::kTouchUnknownWrite) out.limits.insert("limit.store_unknown");
      if (r.addr == 0) continue;  // a marker
      out.touches.push_back({r.time_ns, r.tid, r.addr, (r.flags & preload::kTouchWrite) != 0});
    }
  }
  std::stable_sort(out.touches.begin(), out.touches.end(),
                   [](const Touch& a, const Touch& b) { return a.time_ns < b.time_ns; });
  return out;
}

std::string utc(uint64_t ns) {
  const std::time_t t = static_cast<std::time_t>(ns / 1000000000u);
  std::tm tm{};
  ::gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

}  // namespace

Result<RecordReport> record_command(const RecordOptions& o) {
  if (o.command.empty()) return Status::InvalidArgument("record: give the command after --");
  if (o.output.empty()) return Status::InvalidArgument("record: -o: give the recording's file");
  const std::string program = sys::find_program(o.command[0]);
  if (program.empty()) {
    return Status::ProgramFailed("record: command not found: " + o.command[0]);
  }
  const std::string strace = sys::find_program("strace");
  if (strace.empty()) {
    return Status::Unavailable("record needs strace: not found in PATH (apt-get install strace)");
  }
  const std::string shim = o.preload.empty() ? self_dir() + "/libfaultline_preload.so" : o.preload;
  const bool static_binary = is_static_elf(program);
  if (!static_binary && ::access(shim.c_str(), R_OK) != 0) {
    return Status::Unavailable("record needs " + shim + " (built with faultline): not found");
  }
  const std::string version_line = [&] {
    auto v = sys::run_command({strace, "-V"}, false);
    if (!v.ok()) return std::string("strace");
    return sys::trim(v->out.substr(0, v->out.find('\n')));
  }();

  // The work directory: the strace log and the shim's touch logs, named
  // after this process so that a later record removes it if this one is
  // SIGKILLed.
  std::error_code tmp_ec;
  const fs::path tmp_dir = fs::temp_directory_path(tmp_ec);
  if (tmp_ec) {
    const char* env = std::getenv("TMPDIR");
    return Status::IoError("record: cannot create a directory in " +
                           std::string(env ? env : "/tmp") + ": " + tmp_ec.message());
  }
  remove_stale_work_dirs(tmp_dir);
  std::string tmpl = (tmp_dir / (kWorkDirPrefix + std::to_string(::getpid()) + "-XXXXXX")).string();
  if (!::mkdtemp(tmpl.data())) {
    return Status::IoError("record: cannot create a directory in " + tmp_dir.string() + ": " +
                           std::strerror(errno));
  }
  const std::string dir = tmpl;
  struct Cleanup {
    std::string dir;
    ~Cleanup() {
      std::error_code ec;
      fs::remove_all(dir, ec);
    }
  } cleanup{dir};

  std::vector<std::string> argv = {strace,
                                   "-f",
                                   "--seccomp-bpf",
                                   "-q",
                                   "-ttt",
                                   "-y",
                                   "-s",
                                   "0",
                                   "-e",
                                   "signal=none",
                                   "-e",
                                   std::string("trace=") + kTraced,
                                   "-o",
                                   dir + "/strace.log"};
  constexpr size_t kPidDigits = 10;
  size_t tracer_arg = 0;  // the -E argument that names strace's pid
  if (!static_binary) {
    const char* old = std::getenv("LD_PRELOAD");
    std::string data;
    for (const std::string& d : o.data_dirs)
      data += (data.empty() ? "" : ":") + fs::absolute(d).string();
    for (const std::string& kv :
         {"LD_PRELOAD=" + shim + (old && *old ? ":" + std::string(old) : ""),
          std::string(preload::kEnvDir) + "=" + dir,
          std::string(preload::kEnvEpochPages) + "=" + std::to_string(o.epoch_pages),
          std::string(preload::kEnvEpochMs) + "=" + std::to_string(o.epoch_ms),
          std::string(preload::kEnvData) + "=" + data,
          // The digits are strace's pid, written by the child before execv.
          std::string(preload::kEnvTracer) + "=" + std::string(kPidDigits, ' ')}) {
      argv.push_back("-E");
      argv.push_back(kv);
    }
    tracer_arg = argv.size() - 1;
  }
  argv.push_back("--");
  argv.push_back(program);
  argv.insert(argv.end(), o.command.begin() + 1, o.command.end());

  RecordReport rep;
  sys::SignalGuard guard;
  const auto w0 = std::chrono::steady_clock::now();
  const uint64_t started = realtime_ns();
  const pid_t child = ::fork();
  if (child < 0) return Status::IoError(std::string("record: fork: ") + std::strerror(errno));
  if (child == 0) {
    ::setpgid(0, 0);  // its own group: an interrupt ends strace and the program together
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // a SIGKILLed recorder takes strace with it
    if (tracer_arg != 0) {
      // Right-aligned decimal digits of our pid into the spaces (no allocation after fork).
      std::string& a = argv[tracer_arg];
      size_t pos = a.size();
      for (pid_t v = ::getpid(); v > 0 && pos > a.size() - kPidDigits; v /= 10) {
        a[--pos] = static_cast<char>('0' + v % 10);
      }
    }
    ::signal(SIGINT, SIG_DFL);
    ::signal(SIGTERM, SIG_DFL);
    std::vector<char*> cargv;
    for (std::string& a : argv) cargv.push_back(a.data());
    cargv.push_back(nullptr);
    ::execv(strace.c_str(), cargv.data());
    ::_exit(127);
  }
  ::setpgid(child, child);
  if (o.progress) o.progress("recording " + quote(o.command));

  // Sample the anonymous memory of the program's processes until strace ends.
  std::vector<AnonSample> anon;
  int wstatus = 0;
  for (;;) {
    const pid_t w = ::waitpid(child, &wstatus, WNOHANG);
    if (w == child) break;
    if (sys::interrupted() && !rep.interrupted) {
      rep.interrupted = true;
      ::kill(-child, SIGKILL);
    }
    const uint64_t now = realtime_ns();
    for (const pid_t p : descendants(child)) {
      auto status = sys::read_file("/proc/" + std::to_string(p) + "/status");
      if (!status.ok()) continue;
      const int64_t kb = sys::status_field(*status, "RssAnon");
      if (kb >= 0) anon.push_back({now, static_cast<uint32_t>(p), static_cast<uint64_t>(kb) / 4});
    }
    ::usleep(static_cast<useconds_t>(o.anon_sample_ms * 1000));
  }
  rep.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - w0).count();
  if (WIFEXITED(wstatus)) {
    rep.exit_status = WEXITSTATUS(wstatus);
    if (rep.exit_status == 127 && !fs::exists(dir + "/strace.log")) {
      return Status::Unavailable("record: cannot run " + strace);
    }
    // strace that could not trace (ptrace refused: kernel.yama.ptrace_scope,
    // a container without CAP_SYS_PTRACE) exits non-zero with an empty log;
    // a program that ran made at least the loader's openat.
    std::error_code size_ec;
    const auto log_bytes = fs::file_size(dir + "/strace.log", size_ec);
    if (rep.exit_status != 0 && (size_ec || log_bytes == 0) && !rep.interrupted) {
      return Status::Unavailable("record: " + strace + " exited with status " +
                                 std::to_string(rep.exit_status) +
                                 " and traced nothing (its message is above; ptrace may be "
                                 "refused here: kernel.yama.ptrace_scope, CAP_SYS_PTRACE)");
    }
  } else if (WIFSIGNALED(wstatus)) {
    rep.signal = WTERMSIG(wstatus);
    rep.exit_status = 128 + rep.signal;
  }
  if (o.progress) o.progress("merging what strace and the shim saw");

  // Merge in time order.
  auto log = read_strace_log(dir + "/strace.log");
  if (!log.ok()) return log.status();
  std::stable_sort(log->calls.begin(), log->calls.end(),
                   [](const Call& a, const Call& b) { return a.time_ns < b.time_ns; });
  Touches touches = read_touch_logs(dir);
  std::stable_sort(anon.begin(), anon.end(),
                   [](const AnonSample& a, const AnonSample& b) { return a.time_ns < b.time_ns; });
  uint64_t t0 = started;
  if (!log->calls.empty()) t0 = std::min(t0, log->calls.front().time_ns);
  if (!touches.touches.empty()) t0 = std::min(t0, touches.touches.front().time_ns);

  auto writer = workload::RecordingWriter::create(o.output);
  if (!writer.ok()) return writer.status();
  DataFilter data;
  data.dirs = o.data_dirs;
  data.exclude = {dir, shim};
  Assembler as(**writer, data, t0);
  size_t ci = 0, ti = 0, ai = 0;
  const auto& calls = log->calls;
  const auto& tv = touches.touches;
  while (ci < calls.size() || ti < tv.size() || ai < anon.size()) {
    const uint64_t tc = ci < calls.size() ? calls[ci].time_ns : ~uint64_t{0};
    const uint64_t tt = ti < tv.size() ? tv[ti].time_ns : ~uint64_t{0};
    const uint64_t ta = ai < anon.size() ? anon[ai].time_ns : ~uint64_t{0};
    if (tc <= tt && tc <= ta) {
      as.call(calls[ci++]);
    } else if (tt <= ta) {
      as.touch(tv[ti++]);
    } else {
      as.anon(anon[ai++]);
    }
  }
  std::vector<std::pair<std::string, std::string>> limits = as.finish();
  for (const std::string& l : touches.limits) limits.emplace_back(l, "yes");
  if (static_binary) limits.emplace_back("limit.static_binary", "yes");
  std::sort(limits.begin(), limits.end());

  rep.complete = !rep.interrupted && rep.signal == 0 && rep.exit_status == 0;
  rep.syscalls = calls.size();
  rep.touches = as.touches();
  rep.touches_outside = as.touches_outside();
  for (const auto& [k, v] : limits) rep.limits.push_back(k);
  struct utsname u {};
  ::uname(&u);
  std::error_code ec;
  std::vector<std::pair<std::string, std::string>> cond = {
      {"command", quote(o.command)},
      {"cwd", fs::current_path(ec).string()},
      {"kernel", u.release},
      {"host", u.nodename},
      {"started", utc(started)},
      {"recorder", "faultline " + o.version + ", " + version_line + ", libfaultline_preload.so"},
      {"epoch_pages", std::to_string(o.epoch_pages)},
      {"epoch_ms", std::to_string(o.epoch_ms)},
      {"data", o.data_dirs.empty() ? std::string("every file outside the system's directories")
                                   : quote(o.data_dirs)},
      {"exit", rep.interrupted ? std::string("interrupted")
               : rep.signal    ? "killed by signal " + std::to_string(rep.signal)
                               : std::to_string(rep.exit_status)},
      {"touches_outside", std::to_string(rep.touches_outside)},
  };
  for (size_t i = 0; i < o.command.size(); ++i) {
    cond.emplace_back("argv." + std::to_string(i), o.command[i]);
  }
  cond.insert(cond.end(), limits.begin(), limits.end());
  rep.events = (*writer)->nr_events();
  FAULTLINE_RETURN_IF_ERROR((*writer)->finish(rep.complete, std::move(cond)));
  auto info = workload::RecordingReader::open(o.output, true);
  if (info.ok()) {
    for (const auto& f : (*info)->info().files) rep.files.push_back(f.path);
  }
  return rep;
}

}  // namespace faultline::record
