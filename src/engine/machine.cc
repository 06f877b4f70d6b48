#include "engine/machine.h"

#include <algorithm>

#include "engine/engine.h"
#include "mm/filemap.h"
#include "mm/shmem.h"

namespace faultline::engine {

using workload::CacheState;
using workload::FsType;

mm::ModelEngine model_engine(const Config& cfg) {
  switch (cfg.model.engine) {
    case EngineChoice::kPages:
      return mm::ModelEngine::kPages;
    case EngineChoice::kRuns:
      return mm::ModelEngine::kRuns;
    case EngineChoice::kAuto:
      break;
  }
  constexpr uint64_t kLargeWindowKb = 2048;
  constexpr uint64_t kLargeFile = uint64_t{64} << 30;
  uint64_t largest = cfg.file.size;
  for (const FileDecl& f : cfg.files) largest = std::max(largest, f.size);
  return cfg.device.read_ahead_kb >= kLargeWindowKb || largest > kLargeFile
             ? mm::ModelEngine::kRuns
             : mm::ModelEngine::kPages;
}

std::unique_ptr<mm::Kernel> make_kernel(const Config& cfg) {
  mm::BackingDev bdi;
  bdi.ra_pages = cfg.device.read_ahead_kb / 4;
  bdi.io_pages = cfg.device.max_sectors_kb / 4;
  bdi.bandwidth_bytes_per_s = static_cast<double>(cfg.device.bandwidth);
  bdi.latency_ns = cfg.device.latency_us * 1e3;
  bdi.request_ns = cfg.device.request_us * 1e3;
  bdi.queue_depth = cfg.device.queue_depth;
  bdi.shared_batches = cfg.device.shared_batches;
  auto k = std::make_unique<mm::Kernel>(resolve_profile(cfg.kernel), cache_capacity_pages(cfg), bdi,
                                        cfg.cpu, model_engine(cfg));
  k->set_kswapd(kswapd_gap_pages(cfg));
  return k;
}

unsigned file_max_order(const Config& cfg, const mm::KernelProfile& prof) {
  if (cfg.file.large_folios == LargeFolios::kOff) return 0;
  if (cfg.file.fs == FsType::kTmpfs) return cfg.file.tmpfs_huge_order;
  if (cfg.file.large_folios == LargeFolios::kOn) return mm::kMaxPagecacheOrder;
  if (cfg.file.fs == FsType::kXfs) return mm::kMaxPagecacheOrder;
  return prof.ext4_large_folios ? mm::kMaxPagecacheOrder : 0;
}

mm::AddressSpace* make_file(mm::Kernel& k, const Config& cfg, uint64_t size) {
  const bool tmpfs = cfg.file.fs == FsType::kTmpfs;
  mm::AddressSpace* as = k.new_address_space(size, tmpfs, file_max_order(cfg, k.profile()));
  if (tmpfs) {
    mm::File* f = k.open(as);
    for (uint64_t pos = 0; pos < size; pos += cfg.file.write_chunk) {
      mm::shmem_write(k, *f, pos, cfg.file.write_chunk, cfg.file.tmpfs_huge_order);
    }
  } else if (cfg.file.cache == CacheState::kWarmWrite) {
    mm::File* f = k.open(as);
    for (uint64_t pos = 0; pos < size; pos += cfg.file.write_chunk) {
      mm::filemap_write(k, *f, pos, cfg.file.write_chunk);
    }
    mm::filemap_fsync(k, *as);
  } else if (cfg.file.cache == CacheState::kWarmRead) {
    mm::File* f = k.open(as);
    for (uint64_t pos = 0; pos < size; pos += cfg.file.warm_chunk) {
      mm::filemap_read(k, *f, pos, cfg.file.warm_chunk);
    }
  }
  // The preparation's reads and writes are not the workload's touches.
  as->reset_touches();
  return as;
}

}  // namespace faultline::engine
