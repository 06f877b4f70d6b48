#include "record/strace.h"

#include <algorithm>
#include <charconv>
#include <cstring>
#include <fstream>
#include <string_view>

#include "util/text.h"

namespace faultline::record {
namespace {

using util::trim;

// A decimal or 0x hexadecimal number at the start of s (strace prints
// offsets either way); false if s does not start with one.
bool number(std::string_view s, uint64_t* out) {
  s = trim(s);
  int base = 10;
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
    s.remove_prefix(2);
    base = 16;
  }
  if (s.empty()) return false;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), *out, base);
  return ec == std::errc() && end != s.data();
}

bool signed_number(std::string_view s, int64_t* out) {
  s = trim(s);
  if (!s.empty() && s[0] == '-') {
    uint64_t v = 0;
    if (!number(s.substr(1), &v)) return false;
    *out = -static_cast<int64_t>(v);
    return true;
  }
  uint64_t v = 0;
  if (!number(s, &v)) return false;
  *out = static_cast<int64_t>(v);
  return true;
}

// "3</data/x>": the fd and the path -y printed. false if not an fd.
bool fd_arg(std::string_view s, int* fd, std::string* path) {
  s = trim(s);
  const size_t lt = s.find('<');
  uint64_t v = 0;
  if (!number(s.substr(0, lt), &v) || v > 1u << 30) return false;
  *fd = static_cast<int>(v);
  path->clear();
  if (lt != std::string_view::npos && s.back() == '>') {
    *path = std::string(s.substr(lt + 1, s.size() - lt - 2));
  }
  return true;
}

// The top-level arguments of a call's text "NAME(a, b, c)": splits at commas
// outside quotes, brackets, braces, parentheses and -y's <path> annotations.
// Sets *close to the index of the closing parenthesis.
std::vector<std::string_view> split_args(std::string_view text, size_t open, size_t* close) {
  std::vector<std::string_view> args;
  int depth = 0;
  bool quoted = false;
  size_t start = open + 1;
  for (size_t i = open + 1; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        quoted = false;
      }
      continue;
    }
    switch (c) {
      case '"':
        quoted = true;
        break;
      case '<':
        // An fd's path: up to the '>' that closes it (paths are not quoted).
        if (i > 0 && std::isdigit(static_cast<unsigned char>(text[i - 1]))) {
          const size_t gt = text.find(">,", i);
          const size_t gt2 = text.find(">)", i);
          const size_t end = std::min(gt, gt2);
          if (end != std::string_view::npos) i = end;
        }
        break;
      case '(':
      case '[':
      case '{':
        ++depth;
        break;
      case ']':
      case '}':
        --depth;
        break;
      case ')':
        if (depth == 0) {
          args.push_back(trim(text.substr(start, i - start)));
          *close = i;
          return args;
        }
        --depth;
        break;
      case ',':
        if (depth == 0) {
          args.push_back(trim(text.substr(start, i - start)));
          start = i + 1;
        }
        break;
      default:
        break;
    }
  }
  *close = std::string_view::npos;
  return args;
}

bool has_flag(std::string_view flags, std::string_view name) {
  size_t pos = 0;
  while ((pos = flags.find(name, pos)) != std::string_view::npos) {
    const size_t end = pos + name.size();
    const bool left = pos == 0 || flags[pos - 1] == '|' || flags[pos - 1] == '=' ||
                      flags[pos - 1] == ' ' || flags[pos - 1] == '{';
    const bool right = end == flags.size() || flags[end] == '|' || flags[end] == ',' ||
                       flags[end] == '}' || flags[end] == ' ';
    if (left && right) return true;
    pos = end;
  }
  return false;
}

uint32_t prot_bits(std::string_view s) {
  uint64_t v = 0;
  if (number(s, &v)) return static_cast<uint32_t>(v);
  uint32_t p = 0;
  if (has_flag(s, "PROT_READ")) p |= 1;
  if (has_flag(s, "PROT_WRITE")) p |= 2;
  if (has_flag(s, "PROT_EXEC")) p |= 4;
  return p;
}

// MADV_* and POSIX_FADV_* names as strace prints them, with their numbers.
bool advice_number(std::string_view s, uint32_t* out) {
  static constexpr std::pair<std::string_view, uint32_t> kNames[] = {
      {"MADV_NORMAL", 0},         {"MADV_RANDOM", 1},         {"MADV_SEQUENTIAL", 2},
      {"MADV_WILLNEED", 3},       {"MADV_DONTNEED", 4},       {"MADV_FREE", 8},
      {"MADV_REMOVE", 9},         {"MADV_DONTFORK", 10},      {"MADV_DOFORK", 11},
      {"MADV_MERGEABLE", 12},     {"MADV_UNMERGEABLE", 13},   {"MADV_HUGEPAGE", 14},
      {"MADV_NOHUGEPAGE", 15},    {"MADV_DONTDUMP", 16},      {"MADV_DODUMP", 17},
      {"MADV_WIPEONFORK", 18},    {"MADV_KEEPONFORK", 19},    {"MADV_COLD", 20},
      {"MADV_PAGEOUT", 21},       {"MADV_POPULATE_READ", 22}, {"MADV_POPULATE_WRITE", 23},
      {"POSIX_FADV_NORMAL", 0},   {"POSIX_FADV_RANDOM", 1},   {"POSIX_FADV_SEQUENTIAL", 2},
      {"POSIX_FADV_WILLNEED", 3}, {"POSIX_FADV_DONTNEED", 4}, {"POSIX_FADV_NOREUSE", 5},
  };
  s = trim(s);
  for (const auto& [name, v] : kNames) {
    if (s == name) {
      *out = v;
      return true;
    }
  }
  uint64_t v = 0;
  if (!number(s, &v)) return false;
  *out = static_cast<uint32_t>(v);
  return true;
}

// Fills c from a complete call's text: "NAME(ARGS) = RET".
bool parse_call(std::string_view text, Call* c) {
  const size_t open = text.find('(');
  if (open == std::string_view::npos || open == 0) return false;
  c->name = std::string(text.substr(0, open));
  size_t close = 0;
  const std::vector<std::string_view> a = split_args(text, open, &close);
  if (close == std::string_view::npos) return false;
  const size_t eq = text.find(" = ", close);
  if (eq == std::string_view::npos) return false;
  const std::string_view ret = trim(text.substr(eq + 3));
  if (ret.rfind("-1 ", 0) == 0) {
    if (ret.find("EFAULT") == std::string_view::npos) return false;
    c->kind = CallKind::kEfault;
    return true;
  }
  if (ret == "?") return false;
  const std::string& n = c->name;
  auto arg = [&](size_t i) { return i < a.size() ? a[i] : std::string_view{}; };
  std::string ret_path;
  if (n == "open" || n == "openat" || n == "openat2" || n == "creat") {
    if (!fd_arg(ret, &c->ret_fd, &ret_path)) return false;
    c->kind = CallKind::kOpen;
    c->path = ret_path;
    std::string_view flags = n == "open" ? arg(1) : n == "openat" || n == "openat2" ? arg(2) : "";
    c->write = n == "creat" || has_flag(flags, "O_WRONLY") || has_flag(flags, "O_RDWR");
    c->cloexec = has_flag(flags, "O_CLOEXEC");
    c->directory = has_flag(flags, "O_DIRECTORY");
    return !c->path.empty();
  }
  if (n == "close") {
    c->kind = CallKind::kClose;
    return fd_arg(arg(0), &c->fd, &c->path);
  }
  if (n == "close_range") {
    c->kind = CallKind::kCloseRange;
    return number(arg(0), &c->offset) && number(arg(1), &c->length);
  }
  if (n == "dup" || n == "dup2" || n == "dup3" ||
      (n == "fcntl" && (arg(1) == "F_DUPFD" || arg(1) == "F_DUPFD_CLOEXEC"))) {
    c->kind = CallKind::kDup;
    c->cloexec = arg(1) == "F_DUPFD_CLOEXEC" || (n == "dup3" && has_flag(arg(2), "O_CLOEXEC"));
    return fd_arg(arg(0), &c->fd, &c->path) && fd_arg(ret, &c->ret_fd, &ret_path);
  }
  if (n == "read" || n == "readv" || n == "pread64" || n == "preadv" || n == "preadv2") {
    if (!fd_arg(arg(0), &c->fd, &c->path) || !signed_number(ret, &c->ret)) return false;
    const bool v = n == "readv" || n == "preadv" || n == "preadv2";
    // The iovecs' lengths are elided (-s 0): a vector read's length is what it returned.
    if (v) {
      if (c->ret <= 0) return false;
      c->length = static_cast<uint64_t>(c->ret);
    } else if (!number(arg(2), &c->length)) {
      return false;
    }
    if (n == "read" || n == "readv") {
      c->kind = CallKind::kRead;
      return true;
    }
    c->kind = CallKind::kPread;
    return number(arg(3), &c->offset);
  }
  if (n == "lseek") {
    c->kind = CallKind::kLseek;
    return fd_arg(arg(0), &c->fd, &c->path) && signed_number(ret, &c->ret);
  }
  if (n == "mmap") {
    c->kind = CallKind::kMmap;
    const std::string_view flags = arg(3);
    c->prot = prot_bits(arg(2));
    c->shared = has_flag(flags, "MAP_SHARED") || has_flag(flags, "MAP_SHARED_VALIDATE");
    c->fixed = has_flag(flags, "MAP_FIXED") || has_flag(flags, "MAP_FIXED_NOREPLACE");
    c->anonymous = has_flag(flags, "MAP_ANONYMOUS");
    if (!number(arg(1), &c->length) || !number(ret, &c->addr) || !number(arg(5), &c->offset)) {
      return false;
    }
    if (!c->anonymous && !fd_arg(arg(4), &c->fd, &c->path)) return false;
    return true;
  }
  if (n == "munmap") {
    c->kind = CallKind::kMunmap;
    return number(arg(0), &c->addr) && number(arg(1), &c->length);
  }
  if (n == "mremap") {
    c->kind = CallKind::kMremap;
    uint64_t to = 0;
    if (!number(arg(0), &c->addr) || !number(arg(1), &c->offset) || !number(arg(2), &c->length) ||
        !number(ret, &to)) {
      return false;
    }
    c->ret = static_cast<int64_t>(to);
    return true;
  }
  if (n == "madvise") {
    c->kind = CallKind::kMadvise;
    return number(arg(0), &c->addr) && number(arg(1), &c->length) &&
           advice_number(arg(2), &c->advice);
  }
  if (n == "fadvise64") {
    c->kind = CallKind::kFadvise;
    return fd_arg(arg(0), &c->fd, &c->path) && number(arg(1), &c->offset) &&
           number(arg(2), &c->length) && advice_number(arg(3), &c->advice);
  }
  if (n == "clone" || n == "clone3" || n == "fork" || n == "vfork") {
    c->kind = CallKind::kClone;
    if (!signed_number(ret, &c->ret) || c->ret <= 0) return false;
    const std::string_view all = text.substr(open, close - open);
    c->thread = has_flag(all, "CLONE_THREAD");
    c->share_files = has_flag(all, "CLONE_FILES");
    return true;
  }
  if (n == "execve" || n == "execveat") {
    c->kind = CallKind::kExecve;
    // The program: the first (execve) or second (execveat) argument, quoted.
    std::string_view p = arg(n == "execve" ? 0 : 1);
    if (p.size() >= 2 && p.front() == '"' && p.back() == '"') c->path = p.substr(1, p.size() - 2);
    return true;
  }
  if (n == "io_uring_setup") {
    c->kind = CallKind::kIoUring;
    return true;
  }
  return false;
}

// -ttt's "1796248857.568572" (seconds since the epoch) or -tt's
// "14:07:37.568572" (the time of day) in nanoseconds.
bool parse_stamp(std::string_view stamp, uint64_t* ns) {
  if (stamp.size() < 9 || stamp[2] != ':' || stamp[5] != ':') {
    return util::parse_seconds(stamp, ns);
  }
  uint64_t h = 0, m = 0, sec_ns = 0;
  if (!util::parse_number(stamp.substr(0, 2), 10, &h) ||
      !util::parse_number(stamp.substr(3, 2), 10, &m) ||
      !util::parse_seconds(stamp.substr(6), &sec_ns) || h > 23 || m > 59) {
    return false;
  }
  *ns = (h * 3600 + m * 60) * 1000000000ull + sec_ns;
  return true;
}

}  // namespace

bool StraceParser::parse(const std::string& line, Call* out) {
  recognised = false;
  std::string_view s(line);
  // "TID SEC.USEC REST"; strace pads the tid to five columns.
  const std::string_view tid_text = util::next_field(&s);
  uint64_t tid = 0;
  if (!util::parse_number(tid_text, 10, &tid)) return false;
  const std::string_view stamp = util::next_field(&s);
  uint64_t ns_total = 0;
  const size_t text = s.find_first_not_of(' ');
  if (!parse_stamp(stamp, &ns_total) || text == std::string_view::npos) return false;
  if (stamp.find(':') != std::string_view::npos) {
    constexpr uint64_t kDay = 86400ull * 1000000000ull;
    if (ns_total + day_ns_ + kDay / 2 < last_ns_) day_ns_ += kDay;
    ns_total += day_ns_;
  }
  last_ns_ = ns_total;
  recognised = true;
  Call c;
  c.tid = static_cast<uint32_t>(tid);
  c.time_ns = ns_total;
  std::string_view rest = s.substr(text);
  std::string joined;
  if (rest.rfind("+++ ", 0) == 0) {
    if (rest.find("exited with") == std::string_view::npos &&
        rest.find("killed by") == std::string_view::npos) {
      return false;
    }
    c.kind = CallKind::kExit;
    *out = c;
    return true;
  }
  if (rest.rfind("<... ", 0) == 0) {
    const size_t r = rest.find(" resumed>");
    if (r == std::string_view::npos) return false;
    const auto it = std::find_if(pending_.begin(), pending_.end(),
                                 [&](const Pending& p) { return p.tid == c.tid; });
    if (it == pending_.end()) return false;
    joined = it->text + std::string(rest.substr(r + 9));
    c.time_ns = it->time_ns;
    pending_.erase(it);
    rest = joined;
  } else if (const size_t u = rest.rfind(" <unfinished ...>"); u != std::string_view::npos) {
    pending_.erase(std::remove_if(pending_.begin(), pending_.end(),
                                  [&](const Pending& p) { return p.tid == c.tid; }),
                   pending_.end());
    pending_.push_back({c.tid, c.time_ns, std::string(rest.substr(0, u))});
    return false;
  }
  if (!parse_call(rest, &c)) return false;
  *out = std::move(c);
  return true;
}

Result<StraceLog> read_strace_log(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Status::NotFound(path + ": cannot open strace log");
  StraceLog log;
  StraceParser parser;
  std::string line;
  uint64_t unrecognised = 0, first_bad = 0;
  while (std::getline(in, line)) {
    ++log.lines;
    Call c;
    if (parser.parse(line, &c)) {
      log.calls.push_back(std::move(c));
      continue;
    }
    ++log.skipped;
    if (!parser.recognised && !line.empty()) {
      if (!unrecognised) first_bad = log.lines;
      ++unrecognised;
    }
  }
  if (in.bad()) return Status::IoError(path + ": read error");
  if (unrecognised * 2 > log.lines) {
    return Status::InvalidArgument(
        path + ":" + std::to_string(first_bad) +
        ": not an strace log of `strace -f -tt -y -o FILE` (lines start with the thread id and "
        "the time, HH:MM:SS.microseconds or, with -ttt, seconds.microseconds)");
  }
  return log;
}

}  // namespace faultline::record
