#include "util/units.h"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <string>

namespace faultline {

Result<uint64_t> parse_size(std::string_view text) {
  std::string s(text);
  size_t i = 0;
  while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
  const size_t num_begin = i;
  bool seen_digit = false, seen_dot = false;
  while (i < s.size() && (std::isdigit(static_cast<unsigned char>(s[i])) || s[i] == '.')) {
    if (s[i] == '.') {
      if (seen_dot) return Status::InvalidArgument("malformed size '" + s + "'");
      seen_dot = true;
    } else {
      seen_digit = true;
    }
    ++i;
  }
  if (!seen_digit) return Status::InvalidArgument("malformed size '" + s + "'");
  const double number = std::stod(s.substr(num_begin, i - num_begin));
  while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
  std::string suffix;
  for (; i < s.size(); ++i) {
    if (std::isspace(static_cast<unsigned char>(s[i]))) break;
    suffix += static_cast<char>(std::tolower(static_cast<unsigned char>(s[i])));
  }
  while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
  if (i != s.size()) return Status::InvalidArgument("malformed size '" + s + "'");
  double mult = 1;
  if (suffix.empty() || suffix == "b")
    mult = 1;
  else if (suffix == "k" || suffix == "kb" || suffix == "kib")
    mult = 1024.0;
  else if (suffix == "m" || suffix == "mb" || suffix == "mib")
    mult = 1024.0 * 1024;
  else if (suffix == "g" || suffix == "gb" || suffix == "gib")
    mult = 1024.0 * 1024 * 1024;
  else if (suffix == "t" || suffix == "tb" || suffix == "tib")
    mult = 1024.0 * 1024 * 1024 * 1024;
  else if (suffix == "p" || suffix == "pb" || suffix == "pib")
    mult = 1024.0 * 1024 * 1024 * 1024 * 1024;
  else
    return Status::InvalidArgument("unknown size suffix '" + suffix + "' in '" + s + "'");
  const double bytes = number * mult;
  if (bytes > 1.8e19) return Status::InvalidArgument("size too large '" + s + "'");
  const double rounded = std::floor(bytes);
  if (rounded != bytes)
    return Status::InvalidArgument("size is not a whole number of bytes '" + s + "'");
  return static_cast<uint64_t>(rounded);
}

std::string format_size(uint64_t bytes) {
  static const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  constexpr int kLast = 5;
  int u = 0;
  uint64_t v = bytes;
  while (u < kLast && v >= 1024 && v % 1024 == 0) {
    v /= 1024;
    ++u;
  }
  if (v < 1024 * 16 || u == kLast) return std::to_string(v) + " " + kUnits[u];
  double d = static_cast<double>(bytes);
  u = 0;
  while (u < kLast && d >= 1024) {
    d /= 1024;
    ++u;
  }
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.2f %s", d, kUnits[u]);
  return buf;
}

}  // namespace faultline
