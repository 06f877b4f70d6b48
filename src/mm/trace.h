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

namespace faultline::mm {

enum class TraceKind : uint8_t {
  kFilemapFault,          // filemap:mm_filemap_fault          index
  kFilemapMapPages,       // filemap:mm_filemap_map_pages      index=start, end
  kAddToPageCache,        // filemap:mm_filemap_add_to_page_cache   index, order
  kDeleteFromPageCache,   // filemap:mm_filemap_delete_from_page_cache index, order
  kPageCacheSyncRa,       // readahead:page_cache_sync_ra      index, req, ra_*
  kPageCacheAsyncRa,      // readahead:page_cache_async_ra     index, req, ra_*
  kPageCacheRaOrder,      // readahead:page_cache_ra_order     index, order, ra_*
  kPageCacheRaUnbounded,  // readahead:page_cache_ra_unbounded index, nr, lookahead
  kMmapMiss,              // model: mmap_miss changed          value, delta
};

std::string_view trace_kind_name(TraceKind k);

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
