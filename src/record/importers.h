// importers.h — the importers of import.h that read other tools' traces of
// memory accesses and faults (internal to record/).
#pragma once

#include <string>

#include "record/import.h"

namespace faultline::record {

// valgrind --tool=lackey --trace-mem=yes output (with o.maps, the process's
// /proc/PID/maps): its loads, stores and modifies of data-file mappings.
Result<ImportReport> import_lackey(const std::string& in, const std::string& out,
                                   const ImportOptions& o);
// perf script output of page-fault samples with their data addresses (with
// o.maps, as for lackey).
Result<ImportReport> import_perf(const std::string& in, const std::string& out,
                                 const ImportOptions& o);
// The kernel's filemap:mm_filemap_fault events as tracefs, trace-cmd report
// or perf script print them (other events are skipped): faults only.
Result<ImportReport> import_tracepoints(const std::string& in, const std::string& out,
                                        const ImportOptions& o);

}  // namespace faultline::record
