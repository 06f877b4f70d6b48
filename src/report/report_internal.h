// report_internal.h — pieces the printers in report/ share; not for cli/.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "faultline/stats.h"

namespace faultline::report {

// One run as JSON: case, variant, config (every effective key) and counters
// (integers without a decimal point).
nlohmann::ordered_json run_json(const RunResult& r);
// A CSV field, quoted when it holds a comma, a quote or a newline.
std::string csv_escape(const std::string& s);
// Every counter name of the runs, in the order they first appear.
std::vector<std::string> counter_names(const std::vector<RunResult>& runs);

}  // namespace faultline::report
