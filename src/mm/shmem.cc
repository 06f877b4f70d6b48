#include "mm/shmem.h"

#include <algorithm>

#include "mm/readahead.h"

namespace faultline::mm {
namespace {

// shmem_alloc_and_add_folio(): a new zeroed folio of at most `order`,
// aligned and inside i_size, where no folio is yet.
void shmem_add(Kernel& k, AddressSpace& as, pgoff_t index, unsigned order) {
  order = std::min(order, as.max_order());
  pgoff_t start = round_down(index, uint64_t{1} << order);
  while (order > 0 && (start + (uint64_t{1} << order) > as.nr_pages() ||
                       as.any_present(start, uint64_t{1} << order))) {
    --order;
    start = round_down(index, uint64_t{1} << order);
  }
  filemap_add_folio(k, as, start, order, 0);
}

}  // namespace

vm_fault_t shmem_fault(Kernel& k, VmFault& vmf) {
  AddressSpace& as = *vmf.vma->vm_file->mapping;
  const pgoff_t index = vmf.pgoff;
  if (index >= as.nr_pages()) return VM_FAULT_SIGBUS;
  if (k.tracing()) k.trace({.kind = TraceKind::kFilemapFault, .ino = as.ino(), .index = index});
  // shmem_get_folio_gfp(SGP_CACHE): a hole gets a new zeroed folio.
  if (!as.present(index)) shmem_add(k, as, index, as.max_order());
  vmf.folio = as.head(index);
  return VM_FAULT_LOCKED;
}

void shmem_write(Kernel& k, File& file, uint64_t pos, uint64_t count, unsigned order) {
  AddressSpace& as = *file.mapping;
  const uint64_t end = std::min(pos + count, as.i_size());
  for (pgoff_t index = pos >> kPageShift; (index << kPageShift) < end;) {
    if (!as.present(index)) shmem_add(k, as, index, order);
    const pgoff_t head = as.head(index);
    as.set(head, kPgDirty);
    index = head + as.folio_nr_pages(head);
  }
}

}  // namespace faultline::mm
