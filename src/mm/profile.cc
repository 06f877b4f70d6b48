#include "mm/profile.h"

namespace faultline::mm {

uint32_t KernelProfile::fault_around_pages() const {
  uint32_t pages = fault_around_bytes >> 12;
  if (pages == 0) pages = 1;
  return 1u << (31 - __builtin_clz(pages));
}

KernelProfile kernel_profile(Release r) {
  const size_t i = enum_index(r);
  KernelProfile p;
  p.release = r;
#define FAULTLINE_X(type, name, by_release, doc) p.name = per_release<type> by_release[i];
  FAULTLINE_KERNEL_SWITCHES(FAULTLINE_X)
#undef FAULTLINE_X
  return p;
}

}  // namespace faultline::mm
