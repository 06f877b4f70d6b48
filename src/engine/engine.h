// engine.h — runs one configuration of the model over its access stream.
//
// Engine is the seam between the model and how it is driven: the serial
// engine replays one access stream deterministically. One call per run.
#pragma once

#include <functional>
#include <memory>

#include "faultline/config.h"
#include "faultline/stats.h"
#include "mm/trace.h"
#include "util/status.h"
#include "workload/generator.h"

namespace faultline::engine {

// Progress of one run: (accesses done, accesses total).
using RunProgress = std::function<void(uint64_t, uint64_t)>;

class Engine {
 public:
  virtual ~Engine() = default;
  // Runs cfg (already validated). tracer may be null.
  virtual Result<RunResult> run(const Config& cfg, mm::Tracer* tracer,
                                const RunProgress& progress) = 0;
};

std::unique_ptr<Engine> make_serial_engine();

// Pages of memory the page cache may use: the cgroup limit less the
// workload's other charges, or the machine's memory less what the kernel
// keeps (machine.kernel_reserved, or its estimate).
uint64_t cache_capacity_pages(const Config& cfg);
// How many pages kswapd may fall behind the task before its allocations
// wait (the low - min watermark gap); 0 when there is no kswapd to overlap
// with: one CPU (machine.cpus below 2), or a memory cgroup's limit.
uint64_t kswapd_gap_pages(const Config& cfg);
// The access stream a configuration asks for (the probe replays the same).
workload::AccessSpec make_access_spec(const Config& cfg);
// Pages of the mapping a configuration makes.
uint64_t mapping_pages(const Config& cfg);

// The estimate of machine.kernel_reserved=auto for a machine of `memory` bytes.
uint64_t estimate_kernel_reserved(uint64_t memory);

}  // namespace faultline::engine
