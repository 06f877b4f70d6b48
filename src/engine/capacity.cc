// capacity.cc — how much memory a page cache gets on a given machine.
//
// An idle guest does not give all of its RAM to the page cache. The estimate
// adds up what the kernel keeps for itself, each part from its mechanism
// (docs/model_fidelity.md, "Page-cache capacity"):
//   memmap      one 64-byte struct page per 4 KiB page (1.56 %)
//   watermarks  min_free_kbytes as THP raises it (set_recommended_min_free_kbytes:
//               pageblocks x zones x (2 + MIGRATE_PCPTYPES^2)), plus the low/high
//               gaps of watermark_scale_factor (0.1 % each); kswapd keeps free
//               memory above the high watermark
//   kernel      kernel image, slab and per-cpu data of an idle distribution
//               guest: 192 MiB
//   user space  init, udev, sshd, the shell and the benchmark: 128 MiB
#include <algorithm>
#include <cmath>

#include "engine/engine.h"

namespace faultline::engine {

namespace {

// min_free_kbytes (calculate_min_free_kbytes, raised by THP's
// set_recommended_min_free_kbytes), in bytes.
uint64_t min_free_bytes(uint64_t memory) {
  // Two zones (DMA32 and Normal) once memory passes 4 GiB, one below.
  const uint64_t zones = memory > (4ULL << 30) ? 2 : 1;
  const uint64_t pageblock = 2ULL << 20;
  const uint64_t thp_min = pageblock * zones * (2 + 3 * 3);
  const uint64_t classic_min =
      static_cast<uint64_t>(std::sqrt(static_cast<double>(memory / 1024) * 16.0)) * 1024;
  return std::min(std::max(thp_min, classic_min), memory / 20);
}

// The distance between the min and low watermarks, and between low and
// high (__setup_per_zone_wmarks, watermark_scale_factor 10), in bytes.
uint64_t watermark_gap(uint64_t memory) {
  return std::max(min_free_bytes(memory) / 4, memory / 1000);
}

}  // namespace

uint64_t estimate_kernel_reserved(uint64_t memory) {
  const uint64_t memmap = memory / 4096 * 64;
  const uint64_t high_wmark = min_free_bytes(memory) + 2 * watermark_gap(memory);
  const uint64_t kernel = 192ULL << 20;
  const uint64_t user = 128ULL << 20;
  return std::min(memory / 2, memmap + high_wmark + kernel + user);
}

uint64_t cache_capacity_pages(const Config& cfg) {
  uint64_t bytes;
  if (cfg.machine.memory_limit) {
    bytes = cfg.machine.memory_limit - cfg.machine.cgroup_overhead;
  } else {
    const uint64_t reserved = cfg.machine.kernel_reserved
                                  ? *cfg.machine.kernel_reserved
                                  : estimate_kernel_reserved(cfg.machine.memory);
    bytes = cfg.machine.memory > reserved ? cfg.machine.memory - reserved : 0;
  }
  return std::max<uint64_t>(bytes / 4096, 1);
}

uint64_t kswapd_gap_pages(const Config& cfg) {
  // A memory cgroup's limit is reclaimed by the charging task itself
  // (try_charge -> try_to_free_mem_cgroup_pages); kswapd needs a CPU other
  // than the task's.
  if (cfg.machine.memory_limit || cfg.machine.cpus < 2) return 0;
  return std::max<uint64_t>(watermark_gap(cfg.machine.memory) / 4096, 1);
}

}  // namespace faultline::engine
