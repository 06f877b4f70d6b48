// generators.h — factories of the built-in patterns (registry.cc lists them).
#pragma once

#include "workload/generator.h"

namespace faultline::workload {

std::unique_ptr<Generator> make_random(const AccessSpec& s);
std::unique_ptr<Generator> make_sequential(const AccessSpec& s);
std::unique_ptr<Generator> make_stride(const AccessSpec& s);

}  // namespace faultline::workload
