#pragma once
// Op code of random numbers drawn on a device (ops/random.cpp): devices
// whose memory the host cannot fill cheaply register a generator kernel;
// the CPU has none and draws serially (random.cpp's fill_from_words).
#include <brasa/tensor/tensor.h>

#include <cstdint>

namespace brasa {

enum class RandomDistribution { kUniform, kNormal, kBernoulli, kRandomInt };

// Fills the contiguous `out` from the stream (seed, offset) of a
// counter-based generator: uniform in [a, b), normal (mean a, std b), b
// with probability a (else 0), or integers in [a, b). Returns how many counters it used,
// which the caller adds to the generator's offset.
struct RandomFillKernel {
  static constexpr const char* name = "random";
  using Fn = uint64_t (*)(const Tensor& out, RandomDistribution kind, double a, double b,
                          uint64_t seed, uint64_t offset);
};

}  // namespace brasa
