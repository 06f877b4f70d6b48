// generators.cc — the built-in patterns of the seed benchmarks.
#include "workload/generators.h"

#include "util/random.h"

namespace faultline::workload {

// Uniformly random pages, with repetition (the seeds' "random" order).
class RandomGenerator final : public Generator {
 public:
  explicit RandomGenerator(const AccessSpec& s) : spec_(s), rng_(s.seed, /*stream=*/0) {}
  size_t next(std::span<uint64_t> out) override {
    size_t n = 0;
    for (; n < out.size() && done_ < spec_.count; ++n, ++done_) out[n] = rng_.below(spec_.pages);
    return n;
  }
  uint64_t total() const override { return spec_.count; }

 private:
  AccessSpec spec_;
  Rng rng_;
  uint64_t done_ = 0;
};

// Page (start + i * stride) mod pages; stride 1 is the sequential pattern.
class StrideGenerator final : public Generator {
 public:
  explicit StrideGenerator(const AccessSpec& s, uint64_t stride)
      : spec_(s), stride_(stride % s.pages), cur_(s.start % s.pages) {}
  size_t next(std::span<uint64_t> out) override {
    size_t n = 0;
    for (; n < out.size() && done_ < spec_.count; ++n, ++done_) {
      out[n] = cur_;
      cur_ += stride_;
      if (cur_ >= spec_.pages) cur_ -= spec_.pages;
    }
    return n;
  }
  uint64_t total() const override { return spec_.count; }

 private:
  AccessSpec spec_;
  uint64_t stride_;
  uint64_t cur_;
  uint64_t done_ = 0;
};

Result<std::unique_ptr<Generator>> make_random(const AccessSpec& s) {
  return std::unique_ptr<Generator>(std::make_unique<RandomGenerator>(s));
}
Result<std::unique_ptr<Generator>> make_sequential(const AccessSpec& s) {
  return std::unique_ptr<Generator>(std::make_unique<StrideGenerator>(s, 1));
}
Result<std::unique_ptr<Generator>> make_stride(const AccessSpec& s) {
  return std::unique_ptr<Generator>(std::make_unique<StrideGenerator>(s, s.stride));
}

}  // namespace faultline::workload
