// trace.h — the model's tracepoints, named after the kernel's.
//
// The fault path reports what it does through a Tracer with the names of the
// kernel's own events (filemap:mm_filemap_fault, readahead:page_cache_sync_ra,
// ...), so a model trace lines up with an ftrace capture of the same workload.
// With no tracer attached each tracepoint is one predictable branch.
#pragma once

#include <cstdint>
#include <string_view>

#include "mm/types.h"
#include "util/enum_names.h"

namespace faultline::mm {

// X(id, name, fields): the event, its name in the kernel's trace output
// ("model_" for the model's own) and the TraceEvent fields it fills.
#define FAULTLINE_TRACEPOINTS(X)                                               \
  X(kFilemapFault, "mm_filemap_fault", "index")                                \
  X(kFilemapMapPages, "mm_filemap_map_pages", "index=start, end")              \
  X(kAddToPageCache, "mm_filemap_add_to_page_cache", "index, order")           \
  X(kDeleteFromPageCache, "mm_filemap_delete_from_page_cache", "index, order") \
  X(kPageCacheSyncRa, "page_cache_sync_ra", "index, req, ra_*")                \
  X(kPageCacheAsyncRa, "page_cache_async_ra", "index, req, ra_*")              \
  X(kPageCacheRaOrder, "page_cache_ra_order", "index, order, ra_*")            \
  X(kPageCacheRaUnbounded, "page_cache_ra_unbounded", "index, nr, lookahead")  \
  X(kMmapMiss, "model_mmap_miss", "value, delta: mmap_miss changed")
FAULTLINE_NAMED_ENUM(TraceKind, FAULTLINE_TRACEPOINTS)

struct TraceEvent {
  TraceKind kind;
  uint32_t ino = 0;  // address-space id
  pgoff_t index = 0;
  pgoff_t end = 0;  // map_pages: last index; unbounded: nr_to_read
  uint32_t order = 0;
  uint32_t req_count = 0;  // ra: requested pages; unbounded: lookahead
  pgoff_t ra_start = 0;    // file_ra_state after the call
  uint32_t ra_size = 0;
  uint32_t ra_async_size = 0;
  uint32_t ra_pages = 0;
  uint32_t mmap_miss = 0;
  uint64_t seq = 0;  // model access number (which access caused it)
};

class Tracer {
 public:
  virtual ~Tracer() = default;
  virtual void event(const TraceEvent& e) = 0;
};

}  // namespace faultline::mm
