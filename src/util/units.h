// units.h — parsing and printing of sizes ("20GiB", "8192KiB", "4k").
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "util/status.h"

namespace faultline {

// Parses a byte size: a non-negative integer or decimal with an optional
// suffix B, K/KB/KiB, M/MB/MiB, G/GB/GiB, T/TB/TiB, P/PB/PiB (all binary
// multiples).
Result<uint64_t> parse_size(std::string_view text);

// "20 GiB", "8 MiB", "4 KiB", "123 B": the largest unit that divides exactly,
// otherwise a decimal with two places.
std::string format_size(uint64_t bytes);

}  // namespace faultline
