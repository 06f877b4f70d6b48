// generators.h — factories of the built-in patterns (registry.cc lists them;
// the trace replay is in trace.h).
#pragma once

#include "workload/generator.h"

namespace faultline::workload {

Result<std::unique_ptr<Generator>> make_random(const AccessSpec& s);
Result<std::unique_ptr<Generator>> make_sequential(const AccessSpec& s);
Result<std::unique_ptr<Generator>> make_stride(const AccessSpec& s);

}  // namespace faultline::workload
