// thread_annotations.h — clang's thread-safety attributes (-Wthread-safety).
//
// The same macro names as LevelDB's port/thread_annotations.h. They expand to
// nothing under g++, so they cost nothing there; a clang build with
// -Wthread-safety checks every GUARDED_BY against the locks a function holds.
#pragma once

#if defined(__clang__)
#define FAULTLINE_THREAD_ANNOTATION(x) __attribute__((x))
#else
#define FAULTLINE_THREAD_ANNOTATION(x)
#endif

#define CAPABILITY(x) FAULTLINE_THREAD_ANNOTATION(capability(x))
#define SCOPED_CAPABILITY FAULTLINE_THREAD_ANNOTATION(scoped_lockable)
#define GUARDED_BY(x) FAULTLINE_THREAD_ANNOTATION(guarded_by(x))
#define PT_GUARDED_BY(x) FAULTLINE_THREAD_ANNOTATION(pt_guarded_by(x))
#define ACQUIRED_BEFORE(...) FAULTLINE_THREAD_ANNOTATION(acquired_before(__VA_ARGS__))
#define ACQUIRED_AFTER(...) FAULTLINE_THREAD_ANNOTATION(acquired_after(__VA_ARGS__))
#define REQUIRES(...) FAULTLINE_THREAD_ANNOTATION(requires_capability(__VA_ARGS__))
#define REQUIRES_SHARED(...) FAULTLINE_THREAD_ANNOTATION(requires_shared_capability(__VA_ARGS__))
#define ACQUIRE(...) FAULTLINE_THREAD_ANNOTATION(acquire_capability(__VA_ARGS__))
#define ACQUIRE_SHARED(...) FAULTLINE_THREAD_ANNOTATION(acquire_shared_capability(__VA_ARGS__))
#define RELEASE(...) FAULTLINE_THREAD_ANNOTATION(release_capability(__VA_ARGS__))
#define RELEASE_SHARED(...) FAULTLINE_THREAD_ANNOTATION(release_shared_capability(__VA_ARGS__))
#define TRY_ACQUIRE(...) FAULTLINE_THREAD_ANNOTATION(try_acquire_capability(__VA_ARGS__))
#define TRY_ACQUIRE_SHARED(...) \
  FAULTLINE_THREAD_ANNOTATION(try_acquire_shared_capability(__VA_ARGS__))
#define EXCLUDES(...) FAULTLINE_THREAD_ANNOTATION(locks_excluded(__VA_ARGS__))
#define ASSERT_CAPABILITY(x) FAULTLINE_THREAD_ANNOTATION(assert_capability(x))
#define RETURN_CAPABILITY(x) FAULTLINE_THREAD_ANNOTATION(lock_returned(x))
#define NO_THREAD_SAFETY_ANALYSIS FAULTLINE_THREAD_ANNOTATION(no_thread_safety_analysis)
