// registry.cc — every access pattern, one line each.
#include <string_view>

#include "workload/generators.h"
#include "workload/trace.h"

namespace faultline::workload {
namespace {

struct Entry {
  std::string_view name;
  // Fallible: a trace generator opens and checks its file.
  Result<std::unique_ptr<Generator>> (*make)(const AccessSpec&);
};

constexpr Entry kPatterns[] = {
    {"random", make_random},          // uniform over the mapping, with repetition
    {"sequential", make_sequential},  // start, start + 1, ...
    {"stride", make_stride},          // start + i * stride (mod pages)
    {"trace", make_trace},            // the pages of a recorded trace file (trace.h)
};

}  // namespace

Result<std::unique_ptr<Generator>> make_generator(const AccessSpec& spec) {
  if (spec.pages == 0) return Status::InvalidArgument("access: the mapping has no pages");
  if (spec.stride == 0) return Status::InvalidArgument("access.stride: must be greater than zero");
  for (const Entry& e : kPatterns) {
    if (e.name == spec.pattern) return e.make(spec);
  }
  return Status::InvalidArgument("access.pattern: unknown pattern '" + spec.pattern + "'");
}

Result<std::vector<uint64_t>> generate_all(const AccessSpec& spec) {
  auto gen = make_generator(spec);
  if (!gen.ok()) return gen.status();
  std::vector<uint64_t> out((*gen)->total());
  size_t filled = 0;
  while (filled < out.size()) {
    const size_t n = (*gen)->next(std::span<uint64_t>(out).subspan(filled));
    if (n == 0) break;
    filled += n;
  }
  FAULTLINE_RETURN_IF_ERROR((*gen)->status());
  out.resize(filled);
  return out;
}

std::vector<std::string> pattern_names() {
  std::vector<std::string> out;
  for (const Entry& e : kPatterns) out.emplace_back(e.name);
  return out;
}

}  // namespace faultline::workload
