// advice.h — the advice of madvise(2) and posix_fadvise(2) the model
// implements, numbered as the kernel's uapi numbers them
// (include/uapi/asm-generic/mman-common.h, include/uapi/linux/fadvise.h),
// so the same value can be handed to the host kernel by the probe.
#pragma once

#include "util/enum_names.h"

namespace faultline::mm {

#define FAULTLINE_MADVISE(X)      \
  X(kNormal, 0, "normal")         \
  X(kRandom, 1, "random")         \
  X(kSequential, 2, "sequential") \
  X(kWillneed, 3, "willneed")     \
  X(kDontneed, 4, "dontneed")     \
  X(kHugepage, 14, "hugepage")
FAULTLINE_NAMED_ENUM_VALUES(Madvise, FAULTLINE_MADVISE)

#define FAULTLINE_FADVISE(X)      \
  X(kNormal, 0, "normal")         \
  X(kRandom, 1, "random")         \
  X(kSequential, 2, "sequential") \
  X(kWillneed, 3, "willneed")     \
  X(kDontneed, 4, "dontneed")     \
  X(kNoreuse, 5, "noreuse")
FAULTLINE_NAMED_ENUM_VALUES(Fadvise, FAULTLINE_FADVISE)

}  // namespace faultline::mm
