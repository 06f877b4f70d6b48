// types.h — basic units and flag words of the model (x86-64, 4 KiB pages).
//
// Page indices inside a file are pgoff_t, as in the kernel. The flag words
// mirror vm_fault_t, enum fault_flag and vm_flags_t bit for bit where the
// model needs them, so traces read the same in both trees.
#pragma once

#include <cstdint>

#include "util/enum_names.h"

namespace faultline::mm {

using pgoff_t = uint64_t;

// How the model holds the page cache, the LRU lists and the page tables
// (model.engine): pages, an entry per page and per folio, the reference;
// runs, an entry per run of folios (or PTEs) in the same state, so that a
// run's folios are read, aged, rotated and evicted at once. Both give the
// same counters and the same tracepoints.
#define FAULTLINE_MODEL_ENGINES(X) X(kPages, "pages") X(kRuns, "runs")
FAULTLINE_NAMED_ENUM(ModelEngine, FAULTLINE_MODEL_ENGINES)

inline constexpr unsigned kPageShift = 12;
inline constexpr uint64_t kPageSize = uint64_t{1} << kPageShift;
inline constexpr unsigned kPtrsPerPte = 512;   // one PTE table maps 2 MiB
inline constexpr unsigned kPmdShift = 21;      // PMD_SHIFT: the span of one PTE table
inline constexpr unsigned kHpagePmdOrder = 9;  // HPAGE_PMD_ORDER
inline constexpr unsigned kHpagePmdNr = 1u << kHpagePmdOrder;
inline constexpr unsigned kMaxPagecacheOrder = 9;  // MAX_PAGECACHE_ORDER with THP (x86-64)
inline constexpr uint32_t kMmapLotsamiss = 100;    // MMAP_LOTSAMISS (mm/filemap.c)
inline constexpr uint32_t kSwapClusterMax = 32;    // SWAP_CLUSTER_MAX
inline constexpr pgoff_t kNoIndex = ~pgoff_t{0};   // ULONG_MAX as a "none" index
// The model's largest file, 1 PiB, and the inodes it can tell apart (the
// widths an LRU entry packs them in).
inline constexpr uint64_t kMaxFileBytes = uint64_t{1} << 50;
inline constexpr unsigned kLruIndexBits = 40;
inline constexpr uint32_t kMaxInodes = 1u << 24;

// vm_fault_t bits (include/linux/mm_types.h), only those the model produces.
using vm_fault_t = uint32_t;
inline constexpr vm_fault_t VM_FAULT_OOM = 0x0001;
inline constexpr vm_fault_t VM_FAULT_SIGBUS = 0x0002;
inline constexpr vm_fault_t VM_FAULT_MAJOR = 0x0004;
inline constexpr vm_fault_t VM_FAULT_NOPAGE = 0x0100;
inline constexpr vm_fault_t VM_FAULT_LOCKED = 0x0200;
inline constexpr vm_fault_t VM_FAULT_RETRY = 0x0400;
inline constexpr vm_fault_t VM_FAULT_COMPLETED = 0x4000;
inline constexpr vm_fault_t VM_FAULT_ERROR = VM_FAULT_OOM | VM_FAULT_SIGBUS;

// enum fault_flag (include/linux/mm_types.h).
using fault_flags_t = uint32_t;
inline constexpr fault_flags_t FAULT_FLAG_WRITE = 1u << 0;
inline constexpr fault_flags_t FAULT_FLAG_ALLOW_RETRY = 1u << 2;
inline constexpr fault_flags_t FAULT_FLAG_RETRY_NOWAIT = 1u << 3;
inline constexpr fault_flags_t FAULT_FLAG_KILLABLE = 1u << 4;
inline constexpr fault_flags_t FAULT_FLAG_TRIED = 1u << 5;
inline constexpr fault_flags_t FAULT_FLAG_USER = 1u << 6;
inline constexpr fault_flags_t FAULT_FLAG_INTERRUPTIBLE = 1u << 9;
inline constexpr fault_flags_t FAULT_FLAG_VMA_LOCK = 1u << 12;
inline constexpr fault_flags_t FAULT_FLAG_DEFAULT =
    FAULT_FLAG_ALLOW_RETRY | FAULT_FLAG_KILLABLE | FAULT_FLAG_INTERRUPTIBLE;

// vm_flags bits the model reads (include/linux/mm.h).
using vm_flags_t = uint32_t;
inline constexpr vm_flags_t VM_READ = 1u << 0;
inline constexpr vm_flags_t VM_WRITE = 1u << 1;
inline constexpr vm_flags_t VM_EXEC = 1u << 2;
inline constexpr vm_flags_t VM_SHARED = 1u << 3;
inline constexpr vm_flags_t VM_SEQ_READ = 1u << 15;
inline constexpr vm_flags_t VM_RAND_READ = 1u << 16;
inline constexpr vm_flags_t VM_LOCKED = 1u << 13;
inline constexpr vm_flags_t VM_HUGEPAGE = 1u << 29;

inline constexpr uint64_t round_down(uint64_t x, uint64_t align) { return x & ~(align - 1); }
inline constexpr uint64_t round_up(uint64_t x, uint64_t align) {
  return (x + align - 1) & ~(align - 1);
}
inline constexpr unsigned ilog2(uint64_t x) {
  return 63u - static_cast<unsigned>(__builtin_clzll(x));
}
inline constexpr uint64_t roundup_pow_of_two(uint64_t x) {
  return x <= 1 ? 1 : uint64_t{1} << (ilog2(x - 1) + 1);
}

}  // namespace faultline::mm
