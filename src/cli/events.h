// events.h — lines up the model's tracepoints with the kernel's.
#pragma once

#include <string>

#include "faultline/compare.h"

namespace faultline::cli {

// Reads the model's and the kernel's (first repetition) trace of a case and
// reports the first fault at which they part ways, with the read-around
// windows and mmap_miss values around it.
std::string explain_divergence(const CompareCase& c);

}  // namespace faultline::cli
