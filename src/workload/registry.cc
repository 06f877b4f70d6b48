// registry.cc — the generator of every access pattern (workload/access.h).
#include "workload/generators.h"
#include "workload/trace.h"

namespace faultline::workload {

Result<std::unique_ptr<Generator>> make_generator(const AccessSpec& spec) {
  if (spec.pages == 0) return Status::InvalidArgument("access: the mapping has no pages");
  if (spec.stride == 0) return Status::InvalidArgument("access.stride: must be greater than zero");
  switch (spec.pattern) {
    case Pattern::kRandom:
      return make_random(spec);
    case Pattern::kSequential:
      return make_sequential(spec);
    case Pattern::kStride:
      return make_stride(spec);
    case Pattern::kTrace:
      return make_trace(spec);
  }
  return Status::InvalidArgument("access.pattern: unknown pattern");
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

}  // namespace faultline::workload
