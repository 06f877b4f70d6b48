// shmem.h — models mm/shmem.c: tmpfs and shared anonymous memory faults.
//
// A shmem page is swap-backed page cache: the first touch allocates a zeroed
// folio (a minor fault, no I/O); with no swap it is never reclaimed.
#pragma once

#include "mm/memory.h"

namespace faultline::mm {

vm_fault_t shmem_fault(Kernel& k, VmFault& vmf);
// shmem_write_begin/end for write(2) on tmpfs: allocates missing folios of
// at most `order` (capped by the mapping's maximum, set from huge=).
void shmem_write(Kernel& k, File& file, uint64_t pos, uint64_t count, unsigned order);

}  // namespace faultline::mm
