// procfs.cc — the live probe's readers of kernel text (see procfs.h).
#include "probe/procfs.h"

#include <cerrno>
#include <cstdlib>

#include "probe/sys.h"

namespace faultline::probe::procfs {

std::vector<int64_t> disk_fields(std::string_view text) {
  const std::string copy(text);  // strtoll wants a NUL-terminated string
  std::vector<int64_t> f;
  const char* s = copy.c_str();
  while (*s != '\0') {
    char* end = nullptr;
    long long v = std::strtoll(s, &end, 10);
    if (end == s) break;
    f.push_back(static_cast<int64_t>(v));
    s = end;
  }
  return f;
}

std::string bracketed_choice(std::string_view text) {
  const size_t open = text.find('['), close = text.find(']');
  return open != std::string_view::npos && close != std::string_view::npos && close > open
             ? std::string(text.substr(open + 1, close - open - 1))
             : sys::trim(text);
}

std::optional<uint64_t> cap_eff(std::string_view status) {
  constexpr std::string_view kKey = "CapEff:";
  const size_t pos = status.find(kKey);
  if (pos == std::string_view::npos) return std::nullopt;
  const std::string value(status.substr(pos + kKey.size()));
  return static_cast<uint64_t>(std::strtoull(value.c_str(), nullptr, 16));
}

int64_t fault_around_bytes(std::string_view text) {
  const std::string copy(text);
  return static_cast<int64_t>(std::strtoll(copy.c_str(), nullptr, 10));
}

std::optional<double> sysfs_number(std::string_view text) {
  const std::string copy(text);
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(copy.c_str(), &end);
  if (end == copy.c_str() || errno == ERANGE) return std::nullopt;
  return v;
}

std::map<std::string, int64_t> key_value_deltas(std::string_view before, std::string_view after) {
  const auto v0 = sys::parse_key_values(before);
  const auto v1 = sys::parse_key_values(after);
  std::map<std::string, int64_t> deltas;
  for (const auto& [key, value] : v1) {
    auto it = v0.find(key);
    if (it != v0.end()) deltas[key] = value - it->second;
  }
  return deltas;
}

Counters vmstat_counters(std::string_view before, std::string_view after) {
  Counters c;
  for (const auto& [key, delta] : key_value_deltas(before, after)) {
    c[key == "pgpgin" ? std::string("vmstat.pgpgin") : key] = static_cast<double>(delta);
  }
  return c;
}

Counters memcg_counters(std::string_view before, std::string_view after) {
  Counters c;
  for (const auto& [key, delta] : key_value_deltas(before, after)) {
    c["memcg." + key] = static_cast<double>(delta);
  }
  return c;
}

int64_t mincore_resident(std::span<const unsigned char> vec) {
  int64_t n = 0;
  for (unsigned char v : vec) n += v & 1;
  return n;
}

}  // namespace faultline::probe::procfs
