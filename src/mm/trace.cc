#include "mm/trace.h"

namespace faultline::mm {

std::string_view trace_kind_name(TraceKind k) {
  switch (k) {
    case TraceKind::kFilemapFault:
      return "mm_filemap_fault";
    case TraceKind::kFilemapMapPages:
      return "mm_filemap_map_pages";
    case TraceKind::kAddToPageCache:
      return "mm_filemap_add_to_page_cache";
    case TraceKind::kDeleteFromPageCache:
      return "mm_filemap_delete_from_page_cache";
    case TraceKind::kPageCacheSyncRa:
      return "page_cache_sync_ra";
    case TraceKind::kPageCacheAsyncRa:
      return "page_cache_async_ra";
    case TraceKind::kPageCacheRaOrder:
      return "page_cache_ra_order";
    case TraceKind::kPageCacheRaUnbounded:
      return "page_cache_ra_unbounded";
    case TraceKind::kMmapMiss:
      return "model_mmap_miss";
  }
  return "unknown";
}

}  // namespace faultline::mm
