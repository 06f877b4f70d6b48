// profile_resolve.h — from the kernel.* keys to the model's KernelProfile.
#pragma once

#include "faultline/config.h"
#include "mm/profile.h"

namespace faultline {

// The named profile with every explicitly set kernel.* key applied on top.
mm::KernelProfile resolve_profile(const KernelConfig& kc);

}  // namespace faultline
