#include <brasa/ops/mersenne_twister.h>

#include <algorithm>

namespace brasa {
namespace {

constexpr int kShift = 156;  // the "middle word" distance m
constexpr uint64_t kMatrix = 0xB5026F5AA96619E9ULL;
constexpr uint64_t kLowerBits = (uint64_t{1} << 31) - 1;  // r = 31

// One word of the recurrence: the upper 33 bits of `upper` joined to the
// lower 31 of `lower`, shifted, the matrix added when odd, into `far`.
inline uint64_t twist(uint64_t upper, uint64_t lower, uint64_t far) {
  const uint64_t y = (upper & ~kLowerBits) | (lower & kLowerBits);
  return far ^ (y >> 1) ^ ((0 - (y & 1)) & kMatrix);
}

}  // namespace

void MersenneTwister64::seed(uint64_t seed) {
  state_[0] = seed;
  for (int i = 1; i < kStateWords; ++i)
    state_[i] = 6364136223846793005ULL * (state_[i - 1] ^ (state_[i - 1] >> 62)) + uint64_t(i);
  next_ = kStateWords;
}

// Word i reads words i + 1 and i + 156 as they were before this pass: the
// first 156 read only old words; the rest read words 156 back, already new.
// Both loops are free of dependences within a vector, so they vectorize.
void MersenneTwister64::regenerate() {
  uint64_t* x = state_;
  constexpr int n = kStateWords, m = kShift;
  for (int i = 0; i < n - m; ++i) x[i] = twist(x[i], x[i + 1], x[i + m]);
  for (int i = n - m; i < n - 1; ++i) x[i] = twist(x[i], x[i + 1], x[i + m - n]);
  x[n - 1] = twist(x[n - 1], x[0], x[m - 1]);
  next_ = 0;
}

void MersenneTwister64::fill(uint64_t* out, int64_t n) {
  while (n > 0) {
    if (next_ == kStateWords) regenerate();
    const int take = static_cast<int>(std::min<int64_t>(n, kStateWords - next_));
    const uint64_t* from = state_ + next_;
    for (int k = 0; k < take; ++k) out[k] = temper(from[k]);
    next_ += take;
    out += take;
    n -= take;
  }
}

}  // namespace brasa
