// import_lackey.cc — a recording of the loads and stores that
// `valgrind --tool=lackey --trace-mem=yes PROGRAM` printed, placed in the
// file mappings of the process's /proc/PID/maps (--maps, copied while the
// program ran under valgrind: the guest's addresses are the ones in it).
//
//   ==24866== Command: ./t                    the task (pid, comm)
//   I  00109251,4                             instruction fetch: not a data access
//    L 04a2c000,1                             load of 1 byte at 0x4a2c000
//    S 04a50ffc,8   M 04a4c007,1              store, modify (a store)
//   04a2c000-04a4c000 r--s 00001000 fe:00 10977763  /tmp/data.bin     (the maps)
//
// Every maps line of a data file (DataFilter: --data, or outside the
// system's directories) is an open of the file and an mmap of the line's
// range at time 0: vm_pgoff from the line's offset, the PROT_* bits and
// MAP_SHARED from its perms, the 2 MiB alignment from its address. A file
// the maps map executable anywhere is a program or a library and left out,
// as are anonymous shared memory (/memfd:, /SYSV) and valgrind's own
// vgdb-pipe files. Each load, store or modify inside a data mapping touches
// every page it spans (a store for S and M). Lackey prints every access, so
// repeats collapse the way the recorder's epochs do (docs/recording.md): a
// page is touched at most once per epoch; once 8192 distinct pages are
// touched (the recorder's --epoch-pages default; lackey has no clock for
// --epoch-ms), the next page not touched in the epoch starts a new one; and
// a store to a page already loaded in the epoch is not logged, as the shim
// does not log it. Lackey prints no time: an event's
// time is the number of data accesses before it, in nanoseconds, so the
// order is kept. The program is one task (valgrind runs its threads one at
// a time and does not say which one made an access).
//
// Files are sized as they are on this machine now, or by the furthest page
// touched when that is larger (a file gone since: its mappings' extent).
#include <sys/mman.h>
#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <fstream>
#include <map>
#include <set>
#include <string_view>
#include <unordered_set>

#include "record/assemble.h"
#include "record/importers.h"
#include "record/proc_maps.h"
#include "util/text.h"
#include "workload/recording.h"

namespace faultline::record {
namespace {

using util::next_field;
using util::parse_number;
using util::trim;
using workload::EventOp;
using workload::kNone32;
using workload::RecordingWriter;

constexpr uint64_t kPage = 4096;
constexpr uint64_t kEpochPages = 8192;  // the recorder's --epoch-pages default

}  // namespace

Result<ImportReport> import_lackey(const std::string& in, const std::string& out,
                                   const ImportOptions& o) {
  auto opened = open_address_import(in, out, o, "lackey", "lackey output");
  if (!opened.ok()) return opened.status();
  std::ifstream& is = opened->is;
  DataMaps& maps = opened->maps;
  RecordingWriter& rec = *opened->rec;

  ImportReport rep;
  uint32_t pid = 0;
  std::string comm;
  bool started = false;
  auto start = [&] {
    rec.add_task({pid, pid, comm});
    rec.append({.op = EventOp::kTaskStart, .arg = kNone32});
    maps.emit(rec, 0);
    started = true;
  };

  std::unordered_set<uint64_t> epoch;  // virtual pages touched in this epoch
  uint64_t accesses = 0, outside = 0, lackey_lines = 0;
  std::string line;
  while (std::getline(is, line)) {
    ++rep.lines;
    const std::string_view s(line);
    // " L 04a2c000,1": a load, store or modify; "I  00109251,4": a fetch.
    const bool data_access = s.size() > 3 && s[0] == ' ' && s[2] == ' ' &&
                             (s[1] == 'L' || s[1] == 'S' || s[1] == 'M') &&
                             std::isxdigit(static_cast<unsigned char>(s[3]));
    if (!data_access) {
      if (s.size() > 3 && s[0] == 'I' && s[1] == ' ' && s[2] == ' ' &&
          std::isxdigit(static_cast<unsigned char>(s[3]))) {
        ++lackey_lines;
      } else if (s.rfind("==", 0) == 0) {
        // "==24866== Command: ./t": the process and its program.
        const size_t end = s.find("==", 2);
        uint64_t v = 0;
        if (end != std::string_view::npos && parse_number(s.substr(2, end - 2), 10, &v)) {
          if (!pid) pid = static_cast<uint32_t>(v);
          const std::string_view rest = trim(s.substr(end + 2));
          if (comm.empty() && rest.rfind("Command: ", 0) == 0) {
            std::string_view prog = trim(rest.substr(9));
            prog = prog.substr(0, prog.find(' '));
            const size_t slash = prog.find_last_of('/');
            if (slash != std::string_view::npos) prog.remove_prefix(slash + 1);
            comm = std::string(prog.substr(0, 15));  // TASK_COMM_LEN - 1
          }
        }
      }
      ++rep.skipped;
      continue;
    }
    ++lackey_lines;
    const size_t comma = s.find(',', 3);
    uint64_t addr = 0, size = 0;
    if (comma == std::string_view::npos || !parse_number(s.substr(3, comma - 3), 16, &addr) ||
        !parse_number(trim(s.substr(comma + 1)), 10, &size)) {
      return Status::InvalidArgument(in + ":" + std::to_string(rep.lines) +
                                     ": expected ' L|S|M ADDRESS,SIZE' (hexadecimal address, "
                                     "decimal size), got '" +
                                     line + "'");
    }
    // One load or store of one instruction: valgrind splits longer ones
    // (rep movs) into one line per access, so a size past a page is no
    // lackey line, and would walk pages without end.
    if (size > kPage || addr > UINT64_MAX - kPage) {
      return Status::InvalidArgument(in + ":" + std::to_string(rep.lines) + ": an access of " +
                                     std::to_string(size) + " bytes in '" + line +
                                     "' (a lackey access is at most 4096 bytes)");
    }
    if (!started) start();
    const uint64_t now = accesses++;
    const bool store = s[1] != 'L';
    const uint64_t last = (addr + std::max<uint64_t>(size, 1) - 1) / kPage;
    bool used = false;
    for (uint64_t vpage = addr / kPage; vpage <= last; ++vpage) {
      uint32_t map = 0;
      uint64_t page = 0;
      bool mapped = false;
      if (!maps.find(vpage * kPage, &map, &page, &mapped)) {
        if (!mapped) ++outside;
        continue;
      }
      used = true;
      if (epoch.count(vpage)) continue;
      if (epoch.size() >= kEpochPages) epoch.clear();
      epoch.insert(vpage);
      rec.append(
          {.op = EventOp::kTouch, .write = store, .time_ns = now, .map = map, .offset = page});
    }
    if (!used) ++rep.skipped;
  }
  if (is.bad()) return Status::IoError(in + ": read error");
  if (lackey_lines == 0) {
    return Status::InvalidArgument(
        in +
        ": no lackey lines (' L 04a2c000,1'): not the output of valgrind --tool=lackey "
        "--trace-mem=yes");
  }
  if (!started) start();
  maps.set_sizes(rec);
  rep.files = maps.paths();
  rep.events = rec.nr_events();
  FAULTLINE_RETURN_IF_ERROR(rec.finish(
      true, {{"source", "valgrind lackey " + in + " with maps " + o.maps},
             {"import.sees",
              "every load and store, collapsed to a page's first touch in each epoch; one task"},
             {"epoch_pages", std::to_string(kEpochPages)},
             {"accesses_outside_maps", std::to_string(outside)}}));
  return rep;
}

}  // namespace faultline::record
