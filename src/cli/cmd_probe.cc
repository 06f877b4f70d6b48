// cmd_probe.cc — `faultline probe` and `faultline compare` (live kernel).
#include "cli/commands.h"

namespace faultline::cli {

void add_probe_commands(CLI::App& app) { (void)app; }

}  // namespace faultline::cli
