// fuzz_trace.cc — the access-trace parsers (pages, offsets, csv): the first
// byte picks the format, the rest is the trace. Both readers run over it:
// the page generator to its end and the byte ranges of read(2) replay.
#include <array>
#include <cstddef>
#include <cstdint>

#include "fuzz_input.h"
#include "workload/trace.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace faultline::workload;
  if (size == 0) return 0;
  AccessSpec spec;
  spec.pattern = Pattern::kTrace;
  spec.trace_format = static_cast<TraceFormat>(data[0] % 3);
  spec.pages = 1 + (size % 4096) * 64;  // mappings of various sizes
  spec.trace =
      faultline::fuzz::write_file("trace", {reinterpret_cast<const char*>(data) + 1, size - 1});
  if (auto gen = make_trace(spec); gen.ok()) {
    std::array<uint64_t, 512> buf;
    uint64_t n = 0;
    while (const size_t got = (*gen)->next(buf)) n += got;
    if (n != (*gen)->total() && (*gen)->status().ok()) __builtin_trap();
  }
  (void)read_trace_ranges(spec);
  return 0;
}
