#include "util/process.h"

#include <cstdio>
#include <string>

namespace faultline::util {

pid_t pid_from_name(std::string_view name, std::string_view prefix) {
  if (name.size() <= prefix.size() || name.substr(0, prefix.size()) != prefix) return -1;
  std::string_view digits = name.substr(prefix.size());
  if (digits.size() > 9) return -1;
  pid_t pid = 0;
  for (char c : digits) {
    if (c < '0' || c > '9') return -1;
    pid = pid * 10 + (c - '0');
  }
  return pid > 0 ? pid : -1;
}

bool pid_alive(pid_t pid) {
  if (pid <= 0) return false;
  const std::string path = "/proc/" + std::to_string(pid) + "/stat";
  FILE* f = std::fopen(path.c_str(), "r");
  if (f == nullptr) return false;
  char buf[512];
  const size_t n = std::fread(buf, 1, sizeof buf, f);
  std::fclose(f);
  // The state letter follows the parenthesised command name, which may itself
  // contain blanks and parentheses: look after the last ')'.
  const std::string_view stat(buf, n);
  const size_t close = stat.rfind(')');
  if (close == std::string_view::npos || close + 2 >= stat.size()) return true;
  const char state = stat[close + 2];
  return state != 'Z' && state != 'X' && state != 'x';
}

}  // namespace faultline::util
