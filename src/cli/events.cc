// events.cc — lines up the model's tracepoints with the kernel's.
//
// Both streams are reduced to the events that decide the counters: each
// ->fault call (mm_filemap_fault), each fault-around that found something
// (mm_filemap_map_pages), each readahead decision (page_cache_sync_ra,
// page_cache_async_ra with the mmap_miss it saw, page_cache_ra_order,
// page_cache_ra_unbounded) and each folio added. The first position where
// the two differ is where model and kernel part ways; the events before it
// show which window and which mmap_miss led there.
#include "cli/events.h"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <vector>

#include "mm/trace.h"

namespace faultline::cli {
namespace {

struct Event {
  std::string text;  // normalised: same words for model and kernel
  std::string raw;   // the line as written
};

// The value of "key=" in a line, as a number (bytes or pages as written).
bool field(const std::string& line, const std::string& key, long long* out) {
  size_t pos = 0;
  while ((pos = line.find(key + "=", pos)) != std::string::npos) {
    if (pos == 0 || line[pos - 1] == ' ') {
      *out = std::stoll(line.substr(pos + key.size() + 1), nullptr, 0);
      return true;
    }
    pos += key.size();
  }
  return false;
}

// "ofs=A-B" of mm_filemap_map_pages (bytes).
bool range(const std::string& line, long long* a, long long* b) {
  const size_t pos = line.find(" ofs=");
  if (pos == std::string::npos) return false;
  const std::string v = line.substr(pos + 5);
  const size_t dash = v.find('-');
  if (dash == std::string::npos) return false;
  *a = std::stoll(v.substr(0, dash));
  *b = std::stoll(v.substr(dash + 1));
  return true;
}

// The event name: the first "name: " token that is not ftrace's timestamp.
std::string event_name(const std::string& line) {
  size_t colon = 0;
  while ((colon = line.find(": ", colon)) != std::string::npos) {
    size_t start = line.rfind(' ', colon);
    start = start == std::string::npos ? 0 : start + 1;
    const std::string token = line.substr(start, colon - start);
    if (!token.empty() && token.find_first_not_of("0123456789.") != std::string::npos) return token;
    colon += 2;
  }
  return "";
}

// Normalises one trace line of either side; "" if the event is not compared.
std::string normalise(const std::string& line, bool kernel) {
  using mm::TraceKind;
  const std::optional<TraceKind> kind = parse_enum<TraceKind>(event_name(line));
  if (!kind) return "";
  long long a = 0, b = 0, c = 0, d = 0, m = 0;
  switch (*kind) {
    case TraceKind::kFilemapFault:
      if (kernel ? !field(line, "ofs", &a) : !field(line, "index", &a)) return "";
      if (kernel) a /= 4096;
      return fmt::format("fault index={}", a);
    case TraceKind::kFilemapMapPages:
      if (kernel) {
        if (!range(line, &a, &b)) return "";
        a /= 4096;
        b /= 4096;
      } else if (!field(line, "start", &a) || !field(line, "end", &b)) {
        return "";
      }
      return fmt::format("map_pages {}-{}", a, b);
    case TraceKind::kAddToPageCache:
      if (!field(line, "ofs", &a) || !field(line, "order", &b)) return "";
      if (kernel) a /= 4096;
      return fmt::format("add index={} order={}", a, b);
    case TraceKind::kPageCacheRaOrder:
      if (!field(line, "index", &a) || !field(line, "order", &b) || !field(line, "size", &c) ||
          !field(line, "async_size", &d)) {
        return "";
      }
      return fmt::format("ra_order index={} order={} size={} async={}", a, b, c, d);
    case TraceKind::kPageCacheRaUnbounded:
      if (!field(line, "index", &a) || !field(line, "nr_to_read", &b) ||
          !field(line, "lookahead_size", &c)) {
        return "";
      }
      return fmt::format("ra_unbounded index={} nr={} lookahead={}", a, b, c);
    case TraceKind::kPageCacheSyncRa:
    case TraceKind::kPageCacheAsyncRa:
      if (!field(line, "index", &a) || !field(line, "req_count", &b)) return "";
      field(line, "mmap_miss", &m);
      return fmt::format("{} index={} req={} mmap_miss={}",
                         *kind == TraceKind::kPageCacheSyncRa ? "sync_ra" : "async_ra", a, b, m);
    case TraceKind::kDeleteFromPageCache:
    case TraceKind::kMmapMiss:
      break;  // not compared
  }
  return "";
}

std::vector<Event> read_events(const std::string& path, bool kernel) {
  std::vector<Event> out;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::string t = normalise(line, kernel);
    if (!t.empty()) out.push_back({std::move(t), line});
  }
  return out;
}

std::map<std::string, size_t> kinds(const std::vector<Event>& ev) {
  std::map<std::string, size_t> n;
  for (const Event& e : ev) n[e.text.substr(0, e.text.find(' '))]++;
  return n;
}

}  // namespace

std::string explain_divergence(const CompareCase& c) {
  const std::string title = c.scenario + "/" + c.case_name + "/" + c.variant;
  if (c.kernel_event_files.empty() || c.model_event_file.empty()) {
    return title + ": no events recorded (tracefs unavailable?)\n";
  }
  const auto kernel = read_events(c.kernel_event_files.front(), true);
  const auto model = read_events(c.model_event_file, false);
  std::string out =
      fmt::format("{}: {} model events, {} kernel events ({} / {})\n", title, model.size(),
                  kernel.size(), c.model_event_file, c.kernel_event_files.front());
  const auto km = kinds(model), kk = kinds(kernel);
  std::map<std::string, std::pair<size_t, size_t>> both;
  for (const auto& [k, n] : km) both[k].first = n;
  for (const auto& [k, n] : kk) both[k].second = n;
  for (const auto& [k, n] : both) {
    out += fmt::format("  {:<14} model {:>8}  kernel {:>8}\n", k, n.first, n.second);
  }
  const size_t n = std::min(model.size(), kernel.size());
  size_t i = 0;
  while (i < n && model[i].text == kernel[i].text) ++i;
  if (i == n && model.size() == kernel.size()) {
    out += "  the two streams are identical\n";
    return out;
  }
  size_t faults = 0;
  for (size_t j = 0; j < i; ++j) faults += model[j].text.rfind("fault ", 0) == 0;
  out +=
      fmt::format("  they part ways at event {} (after {} identical ->fault calls):\n", i, faults);
  const size_t from = i >= 4 ? i - 4 : 0;
  for (size_t j = from; j <= i; ++j) {
    const std::string mt = j < model.size() ? model[j].text : "(end of stream)";
    const std::string kt = j < kernel.size() ? kernel[j].text : "(end of stream)";
    out += fmt::format("  {} {:>6}  model: {:<48} kernel: {}\n", j == i ? ">" : " ", j, mt, kt);
  }
  return out;
}

}  // namespace faultline::cli
