#include "mm/vmstat.h"

namespace faultline::mm {

std::string_view vm_event_name(VmEvent e) {
  static constexpr std::string_view kNames[] = {
#define FAULTLINE_X(id, name) name,
      FAULTLINE_VM_EVENTS(FAULTLINE_X)
#undef FAULTLINE_X
  };
  return kNames[static_cast<size_t>(e)];
}

bool is_model_event(VmEvent e) { return vm_event_name(e).substr(0, 6) == "model."; }

}  // namespace faultline::mm
