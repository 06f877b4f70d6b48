#include "record/proc_maps.h"

#include <sys/mman.h>
#include <sys/stat.h>

#include <algorithm>
#include <fstream>
#include <set>
#include <string_view>

#include "util/text.h"

namespace faultline::record {
namespace {

using util::next_field;
using util::parse_number;
using util::trim;
using workload::EventOp;
using workload::kNone32;
using workload::RecordingWriter;

constexpr uint64_t kPage = 4096;

// Not a file: anonymous shared memory, valgrind's gdbserver pipe.
bool is_file(const std::string& path) {
  if (path.rfind("/memfd:", 0) == 0 || path.rfind("/SYSV", 0) == 0) return false;
  const size_t slash = path.find_last_of('/');
  return path.compare(slash + 1, 10, "vgdb-pipe-") != 0;
}

}  // namespace

Result<std::vector<ProcMap>> read_proc_maps(const std::string& path) {
  std::ifstream is(path);
  if (!is) return Status::NotFound(path + ": cannot open the maps file (a copy of /proc/PID/maps)");
  std::vector<ProcMap> maps;
  std::string line;
  uint64_t lineno = 0;
  while (std::getline(is, line)) {
    ++lineno;
    std::string_view s = trim(line);
    if (s.empty()) continue;
    auto bad = [&](const std::string& what) {
      return Status::InvalidArgument(path + ":" + std::to_string(lineno) + ": " + what +
                                     " (a line of /proc/PID/maps), got '" + line + "'");
    };
    ProcMap m;
    const std::string_view range = next_field(&s);
    const size_t dash = range.find('-');
    if (dash == std::string_view::npos || !parse_number(range.substr(0, dash), 16, &m.start) ||
        !parse_number(range.substr(dash + 1), 16, &m.end) || m.end <= m.start || m.start % kPage ||
        m.end % kPage) {
      return bad("expected START-END, page-aligned hexadecimal addresses");
    }
    const std::string_view perms = next_field(&s);
    if (perms.size() != 4 || (perms[0] != 'r' && perms[0] != '-') ||
        (perms[1] != 'w' && perms[1] != '-') || (perms[2] != 'x' && perms[2] != '-') ||
        (perms[3] != 's' && perms[3] != 'p')) {
      return bad("expected permissions such as r--s or rw-p");
    }
    m.prot = (perms[0] == 'r' ? PROT_READ : 0) | (perms[1] == 'w' ? PROT_WRITE : 0) |
             (perms[2] == 'x' ? PROT_EXEC : 0);
    m.shared = perms[3] == 's';
    if (!parse_number(next_field(&s), 16, &m.offset)) return bad("expected a hexadecimal offset");
    const std::string_view dev = next_field(&s);
    if (dev.find(':') == std::string_view::npos) return bad("expected a device MAJ:MIN");
    if (!parse_number(next_field(&s), 10, &m.inode)) return bad("expected an inode number");
    std::string_view name = trim(s);
    constexpr std::string_view kDeleted = " (deleted)";
    if (name.size() > kDeleted.size() && name.substr(name.size() - kDeleted.size()) == kDeleted) {
      name.remove_suffix(kDeleted.size());
    }
    m.path = std::string(name);
    maps.push_back(std::move(m));
  }
  if (is.bad()) return Status::IoError(path + ": read error");
  if (maps.empty()) return Status::InvalidArgument(path + ": empty maps file");
  std::sort(maps.begin(), maps.end(),
            [](const ProcMap& a, const ProcMap& b) { return a.start < b.start; });
  return maps;
}

DataMaps::DataMaps(std::vector<ProcMap> maps, const DataFilter& data) : all_(std::move(maps)) {
  std::set<std::string> programs;  // files mapped executable somewhere: programs, libraries
  for (const ProcMap& m : all_) {
    if (m.prot & PROT_EXEC) programs.insert(m.path);
  }
  for (const ProcMap& m : all_) {
    if (m.inode == 0 || !data(m.path) || programs.count(m.path) || !is_file(m.path)) continue;
    auto [it, fresh] = file_of_.try_emplace(m.path, static_cast<uint32_t>(files_.size()));
    if (fresh) files_.push_back({m.path});
    File& f = files_[it->second];
    f.write = f.write || (m.shared && (m.prot & PROT_WRITE));
    f.extent = std::max(f.extent, m.offset + (m.end - m.start));
    maps_.push_back({m.start, m.end, m.offset / kPage, it->second, m.prot, m.shared});
  }
}

void DataMaps::add_files(RecordingWriter& rec) {
  for (File& f : files_) f.index = rec.add_file({f.path, 0});
}

void DataMaps::emit(RecordingWriter& rec, uint32_t task) {
  std::vector<uint32_t> handle(files_.size(), kNone32);
  uint32_t next_handle = 0;
  for (const Map& m : maps_) {
    if (handle[m.file] == kNone32) {
      handle[m.file] = next_handle++;
      rec.append({.op = EventOp::kOpen,
                  .write = files_[m.file].write,
                  .task = task,
                  .file = files_[m.file].index});
    }
    rec.append({.op = EventOp::kMmap,
                .task = task,
                .handle = handle[m.file],
                .arg = workload::map_arg(m.prot, m.shared, m.start),
                .offset = m.pgoff,
                .length = (m.end - m.start) / kPage});
  }
}

bool DataMaps::find(uint64_t addr, uint32_t* map, uint64_t* page, bool* mapped) {
  if (last_ >= maps_.size() || addr < maps_[last_].start || addr >= maps_[last_].end) {
    auto it = std::upper_bound(maps_.begin(), maps_.end(), addr,
                               [](uint64_t a, const Map& m) { return a < m.start; });
    if (it == maps_.begin() || addr >= std::prev(it)->end) {
      auto at = std::upper_bound(all_.begin(), all_.end(), addr,
                                 [](uint64_t a, const ProcMap& m) { return a < m.start; });
      *mapped = at != all_.begin() && addr < std::prev(at)->end;
      return false;
    }
    last_ = static_cast<size_t>(std::prev(it) - maps_.begin());
  }
  const Map& m = maps_[last_];
  *map = static_cast<uint32_t>(last_);
  *page = (addr - m.start) / kPage;
  *mapped = true;
  File& f = files_[m.file];
  f.touched = std::max(f.touched, (m.pgoff + *page + 1) * kPage);
  return true;
}

void DataMaps::set_sizes(RecordingWriter& rec) const {
  for (const File& f : files_) {
    struct stat st {};
    const uint64_t here = ::stat(f.path.c_str(), &st) == 0 ? static_cast<uint64_t>(st.st_size) : 0;
    uint64_t size = std::max(here, f.touched);
    if (size == 0) size = f.extent;
    rec.set_file_size(f.index, size);
  }
}

std::vector<std::string> DataMaps::paths() const {
  std::vector<std::string> p;
  for (const File& f : files_) p.push_back(f.path);
  return p;
}

Result<AddressImport> open_address_import(const std::string& in, const std::string& out,
                                          const ImportOptions& o, std::string_view tool,
                                          std::string_view what) {
  if (o.maps.empty()) {
    return Status::InvalidArgument(in + ": " + std::string(tool) +
                                   " prints virtual addresses: --maps must name a copy of the "
                                   "process's /proc/PID/maps");
  }
  std::ifstream is(in);
  if (!is) return Status::NotFound(in + ": cannot open " + std::string(what));
  auto procmaps = read_proc_maps(o.maps);
  if (!procmaps.ok()) return procmaps.status();
  DataFilter data;
  data.dirs = o.data_dirs;
  AddressImport im{std::move(is), DataMaps(std::move(*procmaps), data), nullptr};
  auto w = workload::RecordingWriter::create(out);
  if (!w.ok()) return w.status();
  im.rec = std::move(*w);
  im.maps.add_files(*im.rec);
  return im;
}

}  // namespace faultline::record
