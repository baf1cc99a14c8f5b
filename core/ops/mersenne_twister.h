#pragma once
// The 64-bit Mersenne Twister (MT19937-64): the same stream as
// std::mt19937_64 for the same seed, word for word, but able to hand out many
// words at once. The standard library's engine regenerates its 312-word
// state one word at a time behind every call (4.7 ns a word, Zen 5); fill()
// regenerates and tempers whole blocks in loops the compiler vectorizes.
#include <cstdint>
#include <limits>

namespace brasa {

class MersenneTwister64 {
 public:
  using result_type = uint64_t;
  static constexpr int kStateWords = 312;

  explicit MersenneTwister64(uint64_t seed = 5489) { this->seed(seed); }
  void seed(uint64_t seed);

  static constexpr result_type min() { return 0; }
  static constexpr result_type max() { return std::numeric_limits<result_type>::max(); }
  result_type operator()() {
    if (next_ == kStateWords) regenerate();
    return temper(state_[next_++]);
  }
  // The next n words of the stream, as n calls of operator() would give them.
  void fill(uint64_t* out, int64_t n);

 private:
  static uint64_t temper(uint64_t x) {
    x ^= (x >> 29) & 0x5555555555555555ULL;
    x ^= (x << 17) & 0x71D67FFFEDA60000ULL;
    x ^= (x << 37) & 0xFFF7EEE000000000ULL;
    return x ^ (x >> 43);
  }
  // The next 312 words of state (the "twist").
  void regenerate();

  uint64_t state_[kStateWords];
  int next_ = kStateWords;
};

}  // namespace brasa
