// generator.h — access streams: which page of the mapping each access touches.
//
// Generators are the one seam for workloads (a virtual call per batch, never
// per access). The registry in registry.cc is an explicit table. Streams are
// deterministic: the same spec and seed give the same pages, on any machine,
// which is what lets the probe replay exactly what the model saw.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "util/status.h"
#include "workload/access.h"

namespace faultline::workload {

struct AccessSpec {
  Pattern pattern = Pattern::kRandom;
  uint64_t pages = 0;   // pages of the mapping (> 0)
  uint64_t count = 0;   // accesses (trace: at most this many; 0: the whole trace)
  uint64_t stride = 1;  // pages (stride)
  uint64_t start = 0;   // first page (sequential, stride)
  uint64_t seed = 1;
  std::string trace;                               // trace: path of the file (trace.h)
  TraceFormat trace_format = TraceFormat::kPages;  // trace
};

class Generator {
 public:
  virtual ~Generator() = default;
  // Fills out with the next pages; returns how many (0 at the end).
  virtual size_t next(std::span<uint64_t> out) = 0;
  // Accesses the whole stream has (what next() hands out before it ends).
  virtual uint64_t total() const = 0;
  // Why the stream ended before total(): a trace file that changed while it
  // was replayed. Ok for every generator that cannot fail after creation.
  virtual Status status() const { return Status::Ok(); }
};

// Errors name the key or, for a trace, the file and line.
Result<std::unique_ptr<Generator>> make_generator(const AccessSpec& spec);
// The whole stream in memory (the probe hands it to its child process).
Result<std::vector<uint64_t>> generate_all(const AccessSpec& spec);

}  // namespace faultline::workload
