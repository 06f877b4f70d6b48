// random.h — deterministic random streams.
//
// One generator per stream, derived from (run seed, stream id) with
// SplitMix64, so that two runs with the same seed produce the same stream and
// adding a stream never perturbs another. Never seeded from the clock.
#pragma once

#include <cstdint>

namespace faultline {

__extension__ typedef unsigned __int128 uint128_t;

inline uint64_t splitmix64(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// xoshiro256** (Blackman and Vigna): fast, small state, good statistics.
class Rng {
 public:
  Rng(uint64_t seed, uint64_t stream) {
    uint64_t sm = seed ^ (stream * 0xd1b54a32d192ed03ULL);
    for (auto& w : s_) w = splitmix64(sm);
  }
  uint64_t next() {
    const uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }
  // Uniform in [0, bound) without modulo bias (Lemire's method).
  uint64_t below(uint64_t bound) {
    uint128_t m = static_cast<uint128_t>(next()) * bound;
    auto lo = static_cast<uint64_t>(m);
    if (lo < bound) {
      const uint64_t threshold = (0 - bound) % bound;
      while (lo < threshold) {
        m = static_cast<uint128_t>(next()) * bound;
        lo = static_cast<uint64_t>(m);
      }
    }
    return static_cast<uint64_t>(m >> 64);
  }

 private:
  static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  uint64_t s_[4];
};

}  // namespace faultline
