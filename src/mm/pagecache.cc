#include "mm/pagecache.h"

#include <algorithm>

namespace faultline::mm {

AddressSpace::AddressSpace(uint32_t ino, uint64_t size_bytes, bool shmem, unsigned max_order)
    : ino_(ino),
      size_(size_bytes),
      shmem_(shmem),
      max_order_(max_order),
      nr_pages_((size_bytes + kPageSize - 1) >> kPageShift),
      slots_(nr_pages_) {
  FAULTLINE_CHECK(size_bytes <= kMaxFileBytes);
}

// Windows of at most a few thousand pages: slots never written read as zeros.
pgoff_t AddressSpace::next_present(pgoff_t index, pgoff_t end) const {
  for (pgoff_t i = index; i <= end && i < nr_pages_; ++i) {
    if (slots_[i].flags & kPgPresent) return i;
  }
  return kNoIndex;
}

bool AddressSpace::any_present(pgoff_t index, uint64_t nr) const {
  for (pgoff_t i = index; i < index + nr && i < nr_pages_; ++i) {
    if (slots_[i].flags & kPgPresent) return true;
  }
  return false;
}

bool AddressSpace::install(pgoff_t index, unsigned order, uint32_t* shadow_age, bool* shadow_ws) {
  const uint64_t nr = uint64_t{1} << order;
  FAULTLINE_DCHECK(index % nr == 0);
  FAULTLINE_DCHECK(index + nr <= round_up(nr_pages_, nr));
  FAULTLINE_DCHECK(order <= kPmdShift - kPageShift);  // within one leaf of slots_
  bool found = false;
  (void)slots_.mut(index);  // the folio's leaf, written from here on
  for (pgoff_t i = index; i < index + nr && i < nr_pages_; ++i) {
    Slot& s = slots_.in_written(i);
    FAULTLINE_DCHECK(!(s.flags & kPgPresent));
    if (!found && (s.flags & kPgShadow)) {
      found = true;
      *shadow_age = s.shadow;
      *shadow_ws = s.flags & kPgShadowWs;
    }
    s.flags = kPgPresent;
    s.order = static_cast<uint8_t>(order);
  }
  // A large folio may extend past EOF (its tail slots are beyond nr_pages_);
  // only the in-file part is tracked, and counted.
  nr_cached_ += std::min<uint64_t>(nr, nr_pages_ - index);
  return found;
}

void AddressSpace::remove(pgoff_t head, bool shadow, uint32_t age, bool workingset) {
  const uint64_t nr = uint64_t{1} << slots_[head].order;
  const uint16_t sh =
      shadow ? static_cast<uint16_t>(kPgShadow | (workingset ? kPgShadowWs : 0)) : uint16_t{0};
  for (pgoff_t i = head; i < head + nr && i < nr_pages_; ++i) {
    Slot& s = slots_.in_written(i);
    s = Slot{sh, 0, s.touched, age, 0};
  }
  nr_cached_ -= std::min<uint64_t>(nr, nr_pages_ - head);
}

void AddressSpace::reset_touches() {
  slots_.for_each_leaf([](pgoff_t, Slot* leaf, uint64_t n) {
    for (uint64_t j = 0; j < n; ++j) {
      leaf[j].touched = 0;
      leaf[j].flags = static_cast<uint16_t>(leaf[j].flags & ~kPgRaUnused);
    }
  });
}

uint64_t AddressSpace::nr_ra_unused_pages() const {
  // Folios are walked head to head; none spans two leaves.
  uint64_t n = 0;
  slots_.for_each_leaf([&](pgoff_t first, const Slot* leaf, uint64_t count) {
    for (uint64_t j = 0; j < count;) {
      const Slot& s = leaf[j];
      if (!(s.flags & kPgPresent)) {
        ++j;
        continue;
      }
      const uint64_t nr = uint64_t{1} << s.order;
      if (s.flags & kPgRaUnused) n += std::min<uint64_t>(nr, nr_pages_ - (first + j));
      j += nr;
    }
  });
  return n;
}

}  // namespace faultline::mm
