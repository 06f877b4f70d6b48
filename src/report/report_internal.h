// report_internal.h — pieces the printers in report/ share; not for cli/.
#pragma once

#include <cstdint>
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

// Whether any run was repeated over seeds (model.repetitions).
bool any_repeated(const std::vector<RunResult>& runs);
// The counter columns of a CSV row (with NAME_min and NAME_max beside each
// when `repeated`), each cell with its leading comma.
std::string csv_counter_header(const std::vector<std::string>& counters, bool repeated);
std::string csv_counter_cells(const RunResult& r, const std::vector<std::string>& counters,
                              bool repeated);
// The outcomes of one run's seeds (kOutcomeCounter values): when they fall
// into several (split_by_factor), a line for `what` and one per outcome
// with its share of the runs and its seeds; with `always`, one line when
// there is a single outcome too.
void describe_outcomes(std::string& out, const std::string& what,
                       const std::vector<uint64_t>& seeds, const std::vector<double>& values,
                       bool always);
// describe_outcomes for every repeated run of several outcomes.
void outcome_notes(std::string& out, const std::vector<RunResult>& runs);

}  // namespace faultline::report
