#pragma once
// Random numbers. A Generator is a seeded MT19937-64 stream (the numbers of
// std::mt19937_64, drawn in blocks); numbers are drawn serially in element
// order, so one seed gives the same tensor on every run
// and for every thread count. CUDA tensors are filled on the device from a
// counter-based stream of the same seed: as in PyTorch, reproducible, but
// not the CPU's numbers.
#include <brasa/ops/mersenne_twister.h>
#include <brasa/tensor/tensor.h>

#include <cstdint>
#include <memory>
#include <mutex>

namespace brasa {

class Generator {
 public:
  explicit Generator(uint64_t seed = 67280421310721ULL) { set_current_seed(seed); }
  void set_current_seed(uint64_t seed) {
    std::lock_guard<std::mutex> g(mu_);
    seed_ = seed;
    engine_.seed(seed);
    device_offset_ = 0;
  }
  uint64_t current_seed() const { return seed_; }
  std::mutex& mutex() { return mu_; }
  MersenneTwister64& engine() { return engine_; }
  // Uniform in [0, 1) with 24 (float) or 53 (double) random bits of a word.
  static float word_to_float(uint64_t w) { return static_cast<float>(w >> 40) * 0x1.0p-24f; }
  static double word_to_double(uint64_t w) { return static_cast<double>(w >> 11) * 0x1.0p-53; }
  float next_float() { return word_to_float(engine_()); }
  double next_double() { return word_to_double(engine_()); }
  // Devices draw from a counter-based generator keyed by the seed (CUDA's
  // Philox): this is the next unused counter, advanced by each draw.
  uint64_t& device_offset() { return device_offset_; }

 private:
  std::mutex mu_;
  uint64_t seed_ = 0;
  uint64_t device_offset_ = 0;
  MersenneTwister64 engine_;
};

// The process-wide default generator (what manual_seed seeds).
Generator& default_generator();
void manual_seed(uint64_t seed);

Tensor rand(IntArrayRef size, const TensorOptions& options = {});
Tensor rand(IntArrayRef size, Generator* gen, const TensorOptions& options = {});
Tensor randn(IntArrayRef size, const TensorOptions& options = {});
Tensor randn(IntArrayRef size, Generator* gen, const TensorOptions& options = {});
// Integers uniformly in [low, high); dtype int64 unless given.
Tensor randint(int64_t high, IntArrayRef size, const TensorOptions& options = {});
Tensor randint(int64_t low, int64_t high, IntArrayRef size, const TensorOptions& options = {});
Tensor randperm(int64_t n, const TensorOptions& options = {});
Tensor randperm(int64_t n, Generator* gen, const TensorOptions& options = {});
Tensor rand_like(const Tensor& t, const TensorOptions& options = {});
Tensor randn_like(const Tensor& t, const TensorOptions& options = {});
Tensor randint_like(const Tensor& t, int64_t low, int64_t high);
Tensor normal(double mean, double std, IntArrayRef size, Generator* gen = nullptr,
              const TensorOptions& options = {});
Tensor normal(const Tensor& mean, const Tensor& std, Generator* gen = nullptr);
Tensor bernoulli(const Tensor& p, Generator* gen = nullptr);
Tensor bernoulli(const Tensor& self, double p, Generator* gen = nullptr);
Tensor multinomial(const Tensor& probs, int64_t num_samples, bool replacement = false,
                   Generator* gen = nullptr);
// Draws from Binomial(count, prob) per element (count and prob broadcast),
// and from Poisson(rate); drawn on the CPU from the generator's stream, in
// element order, and returned in the input's dtype and device.
Tensor binomial(const Tensor& count, const Tensor& prob, Generator* gen = nullptr);
Tensor poisson(const Tensor& self, Generator* gen = nullptr);

Tensor& uniform_(Tensor& t, double from = 0, double to = 1, Generator* gen = nullptr);
Tensor& normal_(Tensor& t, double mean = 0, double std = 1, Generator* gen = nullptr);
Tensor& bernoulli_(Tensor& t, double p = 0.5, Generator* gen = nullptr);
Tensor& random_(Tensor& t, int64_t from, int64_t to, Generator* gen = nullptr);
// -log(1 - u) / lambd, median + sigma tan(pi (u - 1/2)), exp of normal(mean,
// std), and the number of Bernoulli(p) trials up to the first success (1,
// 2, ...; integer tensors too), for u uniform in [0, 1).
Tensor& exponential_(Tensor& t, double lambd = 1, Generator* gen = nullptr);
Tensor& cauchy_(Tensor& t, double median = 0, double sigma = 1, Generator* gen = nullptr);
Tensor& log_normal_(Tensor& t, double mean = 1, double std = 2, Generator* gen = nullptr);
Tensor& geometric_(Tensor& t, double p, Generator* gen = nullptr);

namespace detail {
// Dropout's mask: t <- 1 / keep with probability keep, else 0 (one pass on a device).
Tensor& dropout_mask_(Tensor& t, double keep, Generator* gen = nullptr);
}  // namespace detail

}  // namespace brasa
