// costs.h — the CPU time of the fault path's steps, for the model's
// elapsed-time estimate only: no counter depends on them.
//
// One list (X(field, nanoseconds, what it costs)); the configuration keys
// cpu.FIELD and the documentation come from it. The defaults are round
// figures of a current x86 server; `faultline calibrate` measures a
// machine's and writes them in a machine profile (docs/model_fidelity.md).
#pragma once

#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>

namespace faultline::mm {

#define FAULTLINE_CPU_COSTS(X)                                                                    \
  X(fault_ns, 700, "one fault attempt: the trap, the VMA lookup, the accounting")                 \
  X(map_page_ns, 15, "one PTE set by fault-around (filemap_map_pages) or finish_fault")           \
  X(map_folio_ns, 40, "one folio mapped: its reference, lock and rmap (filemap_map_folio_range)") \
  X(add_folio_ns, 250, "allocating and inserting one folio in the page cache")                    \
  X(evict_folio_ns, 300, "reclaiming one folio (shrink_folio_list)")                              \
  X(access_ns, 2, "one load or store through a present PTE, its TLB miss included")               \
  X(read_call_ns, 300, "one read(2): syscall entry and exit, the batch lookup (filemap_read)")    \
  X(copy_page_ns, 250, "copy_to_user of 4 KiB by read(2)")                                        \
  X(shadow_fault_ns, 0,                                                                           \
    "an exit to a hypervisor that shadows the page tables, at the first load or store through a " \
    "PTE it has not mapped yet (0: bare metal, or nested paging)")                                \
  X(tlb_flush_ns, 0,                                                                              \
    "the TLB flush that ends a batch of reclaim which unmapped folios (try_to_unmap_flush); 0: "  \
    "counted in evict_folio_ns (bare metal, one CPU); a hypervisor's exit and shadow sync where " \
    "it shadows the page tables")

struct CpuCosts {
#define FAULTLINE_X(name, ns, doc) double name = ns;
  FAULTLINE_CPU_COSTS(FAULTLINE_X)
#undef FAULTLINE_X
};

// The same list as an index, for Kernel::cpu_work.
enum class CpuCost : uint8_t {
#define FAULTLINE_X(name, ns, doc) name,
  FAULTLINE_CPU_COSTS(FAULTLINE_X)
#undef FAULTLINE_X
      kCount
};

// The costs in whole picoseconds: the model's clock is an integer, so n
// steps of a cost take n times its picoseconds however the steps are
// grouped (one folio at a time, or a run of folios at once).
struct CpuCostsPs {
  std::array<int64_t, static_cast<size_t>(CpuCost::kCount)> ps{};
  explicit CpuCostsPs(const CpuCosts& c) {
    size_t i = 0;
#define FAULTLINE_X(name, ns, doc) ps[i++] = std::llround(c.name * 1e3);
    FAULTLINE_CPU_COSTS(FAULTLINE_X)
#undef FAULTLINE_X
  }
  int64_t operator[](CpuCost c) const { return ps[static_cast<size_t>(c)]; }
};

}  // namespace faultline::mm
