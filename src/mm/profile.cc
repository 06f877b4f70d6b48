#include "mm/profile.h"

namespace faultline::mm {

uint32_t KernelProfile::fault_around_pages() const {
  // fault_around_bytes_set(): at least one page, rounded down to a power of two.
  uint32_t pages = fault_around_bytes >> 12;
  if (pages == 0) pages = 1;
  return 1u << (31 - __builtin_clz(pages));
}

const std::vector<std::string_view>& profile_names() {
  static const std::vector<std::string_view> kNames = {"6.9", "6.15", "6.18", "7.1", "7.4"};
  return kNames;
}

bool lookup_profile(std::string_view name, KernelProfile* out) {
  KernelProfile p;
  if (name == "6.18") {
    // The kernel of the machine faultline is developed on (uname -r 6.18.x).
  } else if (name == "7.1") {
    // Linux 7.1.5: the seed series (P1, P2) applies on top of it as variants.
    p.thp_ra_before_mmap_miss = false;
  } else if (name == "7.4") {
    // Mainline after v7.4-rc1 (d48723711bae), the base of seed 2's series.
    p.thp_ra_before_mmap_miss = false;
    p.anon_pgoff_hi = true;
    p.anon_rmap_assert = true;
  } else if (name == "6.15") {
    p.ext4_large_folios = false;
    p.ra_order_plus2 = true;
    p.map_pages_whole_folio = false;
    p.madvise_vma_lock = false;
  } else if (name == "6.9") {
    p.ext4_large_folios = false;
    p.map_pages_workingset_exclusion = false;
    p.ra_order_plus2 = true;
    p.map_pages_whole_folio = false;
    p.async_credit_unlocked_only = false;
    p.batched_rss = false;
    p.madvise_vma_lock = false;
  } else {
    return false;
  }
  p.name = std::string(name);
  *out = p;
  return true;
}

}  // namespace faultline::mm
