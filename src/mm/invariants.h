// invariants.h — consistency checks of the model's state, what the kernel's
// CONFIG_DEBUG_VM asserts (VM_BUG_ON_FOLIO, the rss checks of check_mm) and
// more the model can afford to check whole: folios, shadows, the LRU lists,
// the page tables and RSS counters, the memory charge covering the cache
// and fitting the capacity while anything is reclaimable, mmap_miss.
//
// Run between accesses (model.invariants = N runs it every N accesses);
// the concurrent engine's per-VMA lock states are not covered.
#pragma once

#include <string>
#include <vector>

#include "mm/mm.h"

namespace faultline::mm {

// Every violation found, in words ("ino 0 index 12: ..."); empty when the
// state is consistent. `mms` are the address spaces whose page tables and
// RSS counters to check.
std::vector<std::string> check_invariants(const Kernel& k, const std::vector<const Mm*>& mms);

}  // namespace faultline::mm
