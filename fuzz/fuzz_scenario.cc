// fuzz_scenario.cc — the TOML scenario loader and key assignments: the
// input is a scenario, then after a line "--" one KEY=VALUE per line, as
// --set gives them. Parsed, planned and validated; never run.
#include <cstddef>
#include <cstdint>
#include <string>

#include "faultline/scenario.h"
#include "fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace faultline;
  const std::vector<std::string> parts =
      fuzz::split_parts({reinterpret_cast<const char*>(data), size});
  auto sc = parse_scenario(parts[0], "fuzz.toml");
  if (!sc.ok()) return 0;
  std::vector<std::string> sets;
  if (parts.size() > 1) sets = fuzz::lines(parts[1]);
  auto runs = plan_runs(*sc, sets);
  (void)runs;
  return 0;
}
