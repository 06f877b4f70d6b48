// fault_inject.cc — FAULTLINE_PROBE_KILL parsed against the list of points.
#include "probe/fault_inject.h"

#include <cstdlib>
#include <string_view>

namespace faultline::probe {

faultline::Result<KillPoint> kill_point_from_env() {
  const char* v = std::getenv(kKillPointEnv);
  if (v == nullptr || *v == '\0') return KillPoint::kNone;
  const std::string_view name(v);
  std::string known;
#define FAULTLINE_X(e, n, doc)        \
  if (name == n) return KillPoint::e; \
  known += known.empty() ? "" : ", "; \
  known += n;
  FAULTLINE_PROBE_KILL_POINTS(FAULTLINE_X)
#undef FAULTLINE_X
  return Status::InvalidArgument(std::string(kKillPointEnv) + ": unknown point \"" +
                                 std::string(name) + "\" (known: " + known + ")");
}

}  // namespace faultline::probe
