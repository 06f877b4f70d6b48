// machine.h — the modelled machine a serial replay runs on, built from a
// Config: the kernel with its profile, page-cache capacity and device, and
// a file's page cache made as the probe makes the real one.
#pragma once

#include <cstdint>
#include <memory>

#include "faultline/config.h"
#include "mm/mm.h"

namespace faultline::engine {

// The representation a run of cfg uses. auto: runs, whose work follows
// the runs of folios a window makes, where windows reach 2 MiB
// (device.read_ahead_kb >= 2048) or a file passes 64 GiB (where the per-page
// arrays could reach GBs); pages, whose work follows the pages moved and
// which is the faster for small windows, elsewhere (bench/engines.sh).
mm::ModelEngine model_engine(const Config& cfg);

// The kernel of cfg: its resolved profile, the device's readahead limits
// and speed, and the page cache's capacity.
std::unique_ptr<mm::Kernel> make_kernel(const Config& cfg);

// mapping_max_folio_order of a file of cfg's file system.
unsigned file_max_order(const Config& cfg, const mm::KernelProfile& prof);

// A file of size bytes on cfg's file system, its page cache as file.cache
// asks: cold, filled by read(2) through an open file of its own (so the
// accesses start from a fresh file_ra_state, as another process's would),
// or by the write(2) that created it. A tmpfs file is its pages.
mm::AddressSpace* make_file(mm::Kernel& k, const Config& cfg, uint64_t size);

}  // namespace faultline::engine
