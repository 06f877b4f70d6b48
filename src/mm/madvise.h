// madvise.h — models mm/madvise.c and mm/fadvise.c for the hints faultline
// exposes: the VMA flags of MADV_NORMAL/RANDOM/SEQUENTIAL/HUGEPAGE, the
// forced readahead of MADV_WILLNEED, the zap of MADV_DONTNEED; and the
// per-file state of posix_fadvise (generic_fadvise), which mmap sees too:
// read-around sizes its window from the file's ra_pages.
#pragma once

#include "mm/advice.h"
#include "mm/memory.h"

namespace faultline::mm {

// madvise(addr, len, advice) over pages [first, first + nr) of the VMA.
void do_madvise(Kernel& k, Vma& vma, uint64_t first, uint64_t nr, Madvise advice);

// posix_fadvise(fd, first * 4K, nr * 4K, advice) on an open file
// (generic_fadvise; tmpfs takes only the f_mode/f_ra part, as shmem has no
// readahead and its pages are not clean cache).
void do_fadvise(Kernel& k, File& file, uint64_t first, uint64_t nr, Fadvise advice);

}  // namespace faultline::mm
