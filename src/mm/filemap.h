// filemap.h — models mm/filemap.c (Linux 6.18): the page-cache fault handler
// (filemap_fault with do_sync_mmap_readahead and do_async_mmap_readahead),
// fault-around (filemap_map_pages) with its mmap_miss credit, and the read(2)
// and write(2) paths that create the folios a later fault finds.
#pragma once

#include "mm/memory.h"

namespace faultline::mm {

vm_fault_t filemap_fault(Kernel& k, VmFault& vmf);
vm_fault_t filemap_map_pages(Kernel& k, VmFault& vmf, pgoff_t start_pgoff, pgoff_t end_pgoff);

// filemap_read(): read(2) of count bytes at pos (on-demand readahead,
// folio_mark_accessed, prev_pos).
void filemap_read(Kernel& k, File& file, uint64_t pos, uint64_t count);
// The workload touched pages [index, index + nr) of the file, by a load or
// store through a mapping or by the copy of a read(2) or write(2); not
// fault-around, which only maps (model only): clears the folios'
// kPgRaUnused, and counts each page's first touch in model.pages_touched.
void touch_pages(Kernel& k, AddressSpace& as, pgoff_t index, uint64_t nr);
// generic_perform_write(): write(2) of count bytes at pos; new folios are
// sized by the write (fgf_set_order) and left dirty.
void filemap_write(Kernel& k, File& file, uint64_t pos, uint64_t count);
// filemap_fdatawrite + wait: writes back every dirty folio (pgpgout).
void filemap_fsync(Kernel& k, AddressSpace& as);

}  // namespace faultline::mm
