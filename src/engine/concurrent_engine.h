// concurrent_engine.h — runs the concurrent workloads (access.workload =
// pft | lat_pagefault): N tasks faulting against shared model structures
// (mm/smp_fault.h).
//
// Three ways to interleave the tasks (access.interleave):
//   timed     one OS thread; the task with the smallest modelled clock runs
//             its next step (ties: lowest CPU), each step advancing the
//             clock by its modelled cost (smp.*), its line transfers
//             included: near or far by cache domain, each waiting for the
//             line's previous transfer. The tasks start staggered by 1/N of
//             a fault. Exact and reproducible; gives an estimate of faults/s
//             on the machine the costs and domains describe.
//   lockstep  one OS thread; round-robin, one step per task per round. The
//             simplest exact order; the unit tests derive its counts by hand.
//   real      one std::thread per task, each running its steps back to
//             back; wall-clock faults/s of this machine, counts approximate.
#pragma once

#include <memory>

#include "engine/engine.h"
#include "faultline/config.h"

namespace faultline::engine {

std::unique_ptr<Engine> make_concurrent_engine();

}  // namespace faultline::engine
