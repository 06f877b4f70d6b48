// report.h — printers of run results: a table for people, JSON and CSV for
// scripts. Printers read RunResult values only; they never reach into mm/.
#pragma once

#include <string>
#include <vector>

#include "faultline/stats.h"

namespace faultline::report {

struct Meta {
  std::string scenario;
  std::string description;
  std::string source;
  std::string version;
  bool probe = false;  // the counters are the kernel's (faultline probe), not the model's
};

// A matrix (cases x variants) shaped like the seed cover letter: pgpgin and
// the estimated elapsed time, then faults, then readahead decisions.
std::string format_table(const Meta& meta, const std::vector<RunResult>& runs);
// Every counter and every effective key of every run.
std::string format_json(const Meta& meta, const std::vector<RunResult>& runs);
std::string format_csv(const std::vector<RunResult>& runs);

// A run's timeline (model.timeline): CSV with a header of its columns; the
// moments a table names (the cache full, the first refault, read-around
// off), "" without a timeline; a self-contained SVG of five charts over the
// accesses: the page cache and its LRU lists, reads and refaults, faults,
// readahead windows, mmap_miss.
std::string format_timeline_csv(const Timeline& t);
std::string timeline_moments(const RunResult& r);
std::string render_timeline_svg(const RunResult& r);

// Numbers printed the same way everywhere: integers without a decimal
// point, others with up to 6 significant digits.
std::string format_number(double v);

// The unit a counter is shown in to people: "GiB" for pgpgin and pgpgout
// (counted in KiB), "s" for elapsed_s, "" for the rest (shown as counted).
std::string counter_unit(const std::string& counter);
// The value of a counter in counter_unit(counter).
double counter_in_unit(const std::string& counter, double value);
// How the tables print a counter: "225.244 GiB", "153.110s", "1021".
std::string format_counter(const std::string& counter, double value);

}  // namespace faultline::report
