// trace.h — replay of a recorded access trace (access.pattern = "trace").
//
// The trace is a text file of accesses to the mapping, in one of three
// formats (access.trace_format):
//
//   pages    one page index of the mapping per line (decimal or 0x hex)
//   offsets  OFFSET[,LENGTH] or OFFSET LENGTH per line, bytes from the start
//            of the mapping (decimal or 0x hex); LENGTH defaults to 1
//   csv      a header row, then rows; the columns named "offset" and
//            optionally "length" (or "size") are used, any others ignored
//
// Blank lines and '#' comments are skipped (in csv, only whole-line ones).
// An access of LENGTH bytes touches every page it spans, in order: one line
// "8000,8192" replays pages 1, 2 and 3. A page past the mapping, a malformed
// line, an empty trace or a missing file is an error naming the file and
// line. blkparse output is not read: its sectors are device addresses, and
// turning them into file offsets needs the file's extent map.
//
// The file is read twice, line by line and never whole: a first pass checks
// every line that will be replayed and counts the pages (total(), so the
// progress line ends at 100 %); the replay reads it again in batches.
// access.count > 0 replays only the first count pages and reads no further.
// For access.method=read, read_trace_ranges() gives the accesses whole: one
// pread each, of its own length.
#pragma once

#include <memory>
#include <vector>

#include "workload/generator.h"

namespace faultline::workload {

// The trace generator (registry.cc). Errors: NotFound for a file that cannot
// be opened; InvalidArgument "FILE:LINE: ..." for a line it cannot replay.
Result<std::unique_ptr<Generator>> make_trace(const AccessSpec& s);

// One access of a trace in bytes from the start of the mapping; length 0
// when the trace gives a page index only.
struct ByteRange {
  uint64_t offset = 0;
  uint64_t length = 0;
};
// The trace's accesses as byte ranges, in order, for replay by read(2): each
// is one pread of its length. access.count > 0 keeps the first count of
// them. The same errors as make_trace.
Result<std::vector<ByteRange>> read_trace_ranges(const AccessSpec& s);

}  // namespace faultline::workload
