// access.h — the words that describe a workload, shared by the model's
// engines and the probe that runs the same workload on the host kernel: the
// file (its file system, how its page cache was made), how the program
// reaches it (loads and stores through a mapping, or pread(2)), the order of
// its accesses, and for the concurrent programs how the tasks share memory.
// Each is an enum with its names (the scenario keys' values) in one list.
#pragma once

#include "util/enum_names.h"

namespace faultline::workload {

// access.workload: which program runs.
#define FAULTLINE_WORKLOAD_KINDS(X)                                                   \
  X(kStream, "stream", "replay the access stream of access.pattern")                  \
  X(kPft, "pft", "tasks write-fault slices of one anonymous region, then zap them")   \
  X(kLatPagefault, "lat_pagefault", "read faults with fault-around on a cached file") \
  X(kRecording, "recording", "replay a program's recording (access.trace)")
FAULTLINE_NAMED_ENUM(Kind, FAULTLINE_WORKLOAD_KINDS)

// access.pattern: the order of the pages touched.
#define FAULTLINE_ACCESS_PATTERNS(X)                                \
  X(kRandom, "random", "uniform over the mapping, with repetition") \
  X(kSequential, "sequential", "start, start + 1, ...")             \
  X(kStride, "stride", "start + i x stride (mod pages)")            \
  X(kTrace, "trace", "the accesses of a recorded trace file (trace.h)")
FAULTLINE_NAMED_ENUM(Pattern, FAULTLINE_ACCESS_PATTERNS)

// access.trace_format (trace.h).
#define FAULTLINE_TRACE_FORMATS(X) X(kPages, "pages") X(kOffsets, "offsets") X(kCsv, "csv")
FAULTLINE_NAMED_ENUM(TraceFormat, FAULTLINE_TRACE_FORMATS)

// access.op: a one-byte load or store per access.
#define FAULTLINE_ACCESS_OPS(X) X(kRead, "read") X(kWrite, "write")
FAULTLINE_NAMED_ENUM(AccessOp, FAULTLINE_ACCESS_OPS)

// access.method: how an access reaches the page.
#define FAULTLINE_ACCESS_METHODS(X) X(kMmap, "mmap") X(kRead, "read")
FAULTLINE_NAMED_ENUM(AccessMethod, FAULTLINE_ACCESS_METHODS)

// file.fs: the file system holding the file (its mount(2) type).
#define FAULTLINE_FS_TYPES(X) X(kExt4, "ext4") X(kXfs, "xfs") X(kTmpfs, "tmpfs")
FAULTLINE_NAMED_ENUM(FsType, FAULTLINE_FS_TYPES)

// file.cache: the file's page cache when the accesses start.
#define FAULTLINE_CACHE_STATES(X)                                          \
  X(kCold, "cold", "no page of the file cached")                           \
  X(kWarmRead, "warm-read", "read once by read(2): folios from readahead") \
  X(kWarmWrite, "warm-write", "just written by write(2) and fsync'ed")
FAULTLINE_NAMED_ENUM(CacheState, FAULTLINE_CACHE_STATES)

// access.tasks: what the tasks of a concurrent program share.
#define FAULTLINE_TASK_SHARING(X)                                          \
  X(kThreads, "threads", "threads of one process on one VMA")              \
  X(kThreadsVmaEach, "threads-vma-each", "threads, each with its own VMA") \
  X(kProcesses, "processes", "processes: nothing shared")
FAULTLINE_NAMED_ENUM(TaskSharing, FAULTLINE_TASK_SHARING)

}  // namespace faultline::workload
