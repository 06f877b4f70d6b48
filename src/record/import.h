// import.h — recordings made from what other tools already write, and fio
// iologs written from a recording, so fio can replay the same stream on
// any machine.
//
//   strace      strace -f -tt (or -ttt) -y -o FILE: the system calls (no mapped accesses)
//   fio         fio iolog version 2 or 3 (read_iolog / write_iolog)
//   lackey      valgrind --tool=lackey --trace-mem=yes, with the process's
//               /proc/PID/maps (--maps): loads and stores of file mappings
//   perf        perf script of page-fault samples (perf record -e page-faults -d):
//               faults only, not every access
//   tracepoints filemap:mm_filemap_fault events as the tracefs trace file,
//               trace-cmd report or perf script print them: faults only
//
// Each importer names the file and the line of what it cannot read, and
// says what its input cannot show in the recording's conditions
// (import.sees: "faults only", ...).
#pragma once

#include <string>
#include <vector>

#include "util/enum_names.h"
#include "util/status.h"

namespace faultline::record {

#define FAULTLINE_IMPORT_FORMATS(X)                                                          \
  X(kStrace, "strace", "strace -f -tt or -ttt -y -o FILE: system calls, no mapped accesses") \
  X(kFio, "fio", "fio iolog, version 2 or 3")                                                \
  X(kLackey, "lackey", "valgrind --tool=lackey --trace-mem=yes, with --maps")                \
  X(kPerf, "perf", "perf script of page-fault samples: faults only")                         \
  X(kTracepoints, "tracepoints", "mm_filemap_fault tracepoint text: faults only")
FAULTLINE_NAMED_ENUM(ImportFormat, FAULTLINE_IMPORT_FORMATS)

struct ImportOptions {
  std::vector<std::string> data_dirs;  // as faultline record --data
  std::string maps;                    // lackey, perf: /proc/PID/maps of the process
  std::string version;                 // faultline's, for the conditions
};

struct ImportReport {
  uint64_t events = 0;
  uint64_t lines = 0;
  uint64_t skipped = 0;  // lines read but not used
  std::vector<std::string> files;
};

// Reads in (of format f) and writes the recording out.
Result<ImportReport> import_recording(ImportFormat f, const std::string& in, const std::string& out,
                                      const ImportOptions& o);

// fio iolog version 3 of a recording's reads and touches: each read as a
// read of its bytes, each touch as a 4 KiB read of its page of the file (for
// fio --ioengine=mmap); one line per event, timestamps in milliseconds.
Status export_fio_iolog(const std::string& recording, const std::string& out);

}  // namespace faultline::record
