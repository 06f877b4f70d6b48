#include "mm/madvise.h"

#include "mm/readahead.h"

namespace faultline::mm {

bool parse_madvise(std::string_view name, Madvise* out) {
  static constexpr std::pair<std::string_view, Madvise> kTable[] = {
      {"normal", Madvise::kNormal},         {"random", Madvise::kRandom},
      {"sequential", Madvise::kSequential}, {"willneed", Madvise::kWillneed},
      {"dontneed", Madvise::kDontneed},     {"hugepage", Madvise::kHugepage},
  };
  for (const auto& [n, m] : kTable) {
    if (n == name) {
      *out = m;
      return true;
    }
  }
  return false;
}

std::string_view madvise_name(Madvise m) {
  switch (m) {
    case Madvise::kNormal:
      return "normal";
    case Madvise::kRandom:
      return "random";
    case Madvise::kSequential:
      return "sequential";
    case Madvise::kWillneed:
      return "willneed";
    case Madvise::kDontneed:
      return "dontneed";
    case Madvise::kHugepage:
      return "hugepage";
  }
  return "?";
}

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
      ReadaheadControl rac{&file, file.mapping, &file.f_ra, vma.vm_pgoff + first, false};
      force_page_cache_ra(k, rac, nr);
      break;
    }
    case Madvise::kDontneed:
      zap_page_range(k, vma, first, nr);
      break;
  }
}

}  // namespace faultline::mm
