// compare_report.h — printers of model-versus-kernel comparisons.
#pragma once

#include <string>
#include <vector>

#include "faultline/stats.h"

namespace faultline::report {

// One row per case and counter: model, kernel median [min, max], error.
std::string format_compare_table(const std::vector<CompareCase>& cases);
// One line per case with the judged counters' errors, then a summary line.
std::string format_compare_matrix(const std::vector<CompareCase>& cases);
std::string format_compare_json(const std::vector<CompareCase>& cases);
std::string format_compare_csv(const std::vector<CompareCase>& cases);

}  // namespace faultline::report
