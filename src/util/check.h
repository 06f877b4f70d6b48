// check.h — executable invariants.
//
// FAULTLINE_CHECK is always on; FAULTLINE_DCHECK only in debug and relassert
// builds. A failed check names the condition and the source line and aborts:
// a broken model invariant is a bug, never an input error.
#pragma once

#include <cstdio>
#include <cstdlib>

namespace faultline::internal {
[[noreturn]] inline void check_failed(const char* cond, const char* file, int line) {
  std::fprintf(stderr, "faultline: check failed: %s at %s:%d\n", cond, file, line);
  std::abort();
}
}  // namespace faultline::internal

#define FAULTLINE_CHECK(cond) \
  ((cond) ? (void)0 : ::faultline::internal::check_failed(#cond, __FILE__, __LINE__))

#if !defined(NDEBUG) || defined(FAULTLINE_ENABLE_DCHECK)
#define FAULTLINE_DCHECK(cond) FAULTLINE_CHECK(cond)
#else
#define FAULTLINE_DCHECK(cond) ((void)0)
#endif
