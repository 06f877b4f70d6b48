// madvise.h — models mm/madvise.c and mm/fadvise.c for the hints faultline
// exposes: the VMA flags of MADV_NORMAL/RANDOM/SEQUENTIAL/HUGEPAGE, the
// forced readahead of MADV_WILLNEED, and the zap of MADV_DONTNEED.
#pragma once

#include <string_view>

#include "mm/memory.h"

namespace faultline::mm {

enum class Madvise : uint8_t { kNormal, kRandom, kSequential, kWillneed, kDontneed, kHugepage };

// Parses "normal", "random", "sequential", "willneed", "dontneed", "hugepage".
bool parse_madvise(std::string_view name, Madvise* out);
std::string_view madvise_name(Madvise m);

// madvise(addr, len, advice) over pages [first, first + nr) of the VMA.
void do_madvise(Kernel& k, Vma& vma, uint64_t first, uint64_t nr, Madvise advice);

}  // namespace faultline::mm
