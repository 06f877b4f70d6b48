#include "cli/events.h"

std::string faultline::cli::explain_divergence(const CompareCase& c) {
  return c.case_name + "/" + c.variant + ": event alignment not available\n";
}
