// invariant_check.h — model.invariants: mm/invariants.h's checks of the
// model's state every N accesses of a replay and at its end. The first
// violation fails the run, naming the access after which it was found.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "mm/invariants.h"
#include "util/status.h"

namespace faultline::engine {

class InvariantCheck {
 public:
  // The address spaces whose page tables and RSS counters are checked.
  using Mms = std::function<std::vector<const mm::Mm*>()>;

  InvariantCheck(uint64_t every, const mm::Kernel& k, Mms mms)
      : every_(every), k_(k), mms_(std::move(mms)) {}

  void after_access(uint64_t done) {
    if (every_ && done % every_ == 0 && status_.ok()) [[unlikely]]
      check(done);
  }
  // How many accesses after the first `done` may be replayed before a check
  // is due (at most the next `every` boundary).
  uint64_t until_due(uint64_t done) const { return every_ ? every_ - done % every_ : UINT64_MAX; }
  // The last check; the run's error if any check failed.
  Status finish(uint64_t done) {
    if (every_ && status_.ok()) check(done);
    return status_;
  }

 private:
  void check(uint64_t done) {
    const std::vector<std::string> v = mm::check_invariants(k_, mms_());
    if (v.empty()) return;
    std::string msg = "model.invariants: after access " + std::to_string(done) + ": " + v[0];
    for (size_t i = 1; i < v.size(); ++i) msg += "; " + v[i];
    status_ = Status::Internal(msg);
  }

  uint64_t every_;
  const mm::Kernel& k_;
  Mms mms_;
  Status status_;
};

}  // namespace faultline::engine
