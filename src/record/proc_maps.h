// proc_maps.h — a process's /proc/PID/maps, and the data-file mappings in
// it as a recording's files and mmaps: what the lackey and perf importers
// place their addresses in.
#pragma once

#include <cstdint>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "record/assemble.h"
#include "record/import.h"
#include "util/status.h"
#include "workload/recording.h"

namespace faultline::record {

// One line of /proc/PID/maps:
//   7f36695df000-7f36696df000 r--s 00001000 fe:00 1056773   /tmp/data.bin
struct ProcMap {
  uint64_t start = 0, end = 0;  // [start, end), bytes
  uint64_t offset = 0;          // bytes into the file (vm_pgoff << PAGE_SHIFT)
  uint32_t prot = 0;            // PROT_READ | PROT_WRITE | PROT_EXEC
  bool shared = false;          // 's': MAP_SHARED
  uint64_t inode = 0;
  std::string path;  // empty: anonymous; [heap], [stack], ...
};

// The lines of a maps file in address order; errors name the file and line.
Result<std::vector<ProcMap>> read_proc_maps(const std::string& path);

// The data-file mappings of one process's maps, as the recording's files
// and mappings (map ids in address order), and the mapping an address is
// in. A file mapped executable anywhere is a program or a library and left
// out, as are anonymous shared memory (/memfd:, /SYSV) and valgrind's
// vgdb-pipe files.
class DataMaps {
 public:
  DataMaps(std::vector<ProcMap> maps, const DataFilter& data);

  // Adds the files to the recording; call once, before emit().
  void add_files(workload::RecordingWriter& rec);
  // The files' opens and the mappings' mmaps, at time 0, by task.
  void emit(workload::RecordingWriter& rec, uint32_t task);
  // The data mapping (map id) and its page that hold addr; false if none.
  // *mapped: some line of the maps holds addr.
  bool find(uint64_t addr, uint32_t* map, uint64_t* page, bool* mapped);
  // Each file's size: its size here now, or the furthest page touched if
  // larger; a file gone and never touched, what its mappings covered.
  void set_sizes(workload::RecordingWriter& rec) const;

  std::vector<std::string> paths() const;
  size_t nr_maps() const { return maps_.size(); }

 private:
  struct File {
    std::string path;
    uint32_t index = 0;    // in the recording
    bool write = false;    // mapped shared and writable
    uint64_t extent = 0;   // bytes its mappings cover
    uint64_t touched = 0;  // past the furthest page touched, bytes
  };
  struct Map {
    uint64_t start, end;
    uint64_t pgoff;
    uint32_t file;
    uint32_t prot;
    bool shared;
  };
  std::vector<ProcMap> all_;
  std::vector<File> files_;
  std::map<std::string, uint32_t> file_of_;
  std::vector<Map> maps_;  // by map id, in address order
  size_t last_ = ~size_t{0};
};

// What an importer of virtual addresses (lackey, perf) opens before its
// first line: the trace `in`, the process's maps (--maps, which it cannot
// do without) with their data mappings, and the recording `out`, which
// already names the data files. `tool` names the trace's producer in the
// errors ("lackey"), `what` the trace ("lackey output").
struct AddressImport {
  std::ifstream is;
  DataMaps maps;
  std::unique_ptr<workload::RecordingWriter> rec;
};
Result<AddressImport> open_address_import(const std::string& in, const std::string& out,
                                          const ImportOptions& o, std::string_view tool,
                                          std::string_view what);

}  // namespace faultline::record
