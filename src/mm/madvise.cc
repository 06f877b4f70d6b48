#include "mm/madvise.h"

#include "mm/readahead.h"
#include "mm/vmscan.h"

namespace faultline::mm {

void do_madvise(Kernel& k, Vma& vma, uint64_t first, uint64_t nr, Madvise advice) {
  switch (advice) {
    case Madvise::kNormal:
      vma.vm_flags &= ~(VM_SEQ_READ | VM_RAND_READ);
      break;
    case Madvise::kRandom:
      vma.vm_flags = (vma.vm_flags & ~VM_SEQ_READ) | VM_RAND_READ;
      break;
    case Madvise::kSequential:
      vma.vm_flags = (vma.vm_flags & ~VM_RAND_READ) | VM_SEQ_READ;
      break;
    case Madvise::kHugepage:
      vma.vm_flags |= VM_HUGEPAGE;
      break;
    case Madvise::kWillneed: {
      // madvise_willneed() → vfs_fadvise(POSIX_FADV_WILLNEED) →
      // force_page_cache_readahead(): capped at max(io_pages, ra_pages).
      if (!vma.vm_file || vma.shmem_ops) break;
      File& file = *vma.vm_file;
      ReadaheadControl rac{&file, file.mapping, &file.f_ra, vma.vm_pgoff + first,
                           ReadCause::kWillneed};
      force_page_cache_ra(k, rac, nr);
      break;
    }
    case Madvise::kDontneed:
      k.vmstat().inc(VmEvent::zaps);
      zap_page_range(k, vma, first, nr);
      break;
  }
}

void do_fadvise(Kernel& k, File& file, uint64_t first, uint64_t nr, Fadvise advice) {
  AddressSpace& as = *file.mapping;
  switch (advice) {
    case Fadvise::kNormal:
      file.f_ra.ra_pages = k.bdi().ra_pages;
      file.f_mode &= ~(FMODE_RANDOM | FMODE_NOREUSE);
      break;
    case Fadvise::kRandom:
      file.f_mode |= FMODE_RANDOM;
      break;
    case Fadvise::kSequential:
      file.f_ra.ra_pages = k.bdi().ra_pages * 2;
      file.f_mode &= ~FMODE_RANDOM;
      break;
    case Fadvise::kNoreuse:
      file.f_mode |= FMODE_NOREUSE;
      break;
    case Fadvise::kWillneed: {
      // force_page_cache_readahead(): capped at max(io_pages, ra_pages),
      // as MADV_WILLNEED is (it comes here).
      if (as.shmem() || first >= as.nr_pages()) break;
      ReadaheadControl rac{&file, &as, &file.f_ra, first, ReadCause::kWillneed};
      force_page_cache_ra(k, rac, std::min<uint64_t>(nr, as.nr_pages() - first));
      break;
    }
    case Fadvise::kDontneed: {
      // mapping_try_invalidate(): every clean, unmapped folio wholly inside
      // the range leaves the cache, without a shadow entry.
      if (as.shmem()) break;
      const pgoff_t end = std::min<uint64_t>(first + nr, as.nr_pages());
      for (pgoff_t i = as.next_present(first, end ? end - 1 : 0); i != kNoIndex && i < end;) {
        const pgoff_t head = as.head(i);
        const pgoff_t next = head + as.folio_nr_pages(head);
        if (head >= first && next <= end && !as.test(head, kPgLocked | kPgDirty)) {
          invalidate_folio(k, as, head);
        }
        if (next >= end) break;
        i = as.next_present(next, end - 1);
      }
      break;
    }
  }
}

}  // namespace faultline::mm
