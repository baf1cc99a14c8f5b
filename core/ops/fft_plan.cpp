// Plans of the discrete Fourier transform kernel (ops/kernels/spectral.h):
// the factorization of each length, its twiddle factors computed in double,
// and a small cache of recent lengths.
#include <brasa/ops/kernels/spectral.h>
#include <brasa/util/error.h>

#include <cmath>
#include <list>
#include <mutex>
#include <numbers>
#include <utility>

namespace brasa {

void FftTable::push(double re, double im) {
  d.push_back(re);
  d.push_back(im);
  f.push_back(static_cast<float>(re));
  f.push_back(static_cast<float>(im));
}

namespace {

// exp(-2 pi i k / n) with k reduced modulo n first, so that large k keep
// their precision.
void push_root(FftTable& table, int64_t k, int64_t n) {
  const double angle = -2 * std::numbers::pi * static_cast<double>(k % n) / static_cast<double>(n);
  table.push(std::cos(angle), std::sin(angle));
}

// Radices 4 first (the cheapest pass per element), then 2, 3, 5 and the
// other primes; false when a prime factor is above kFftLargestRadix.
bool factor(int64_t n, std::vector<int>& radices) {
  while (n % 4 == 0) {
    radices.push_back(4);
    n /= 4;
  }
  for (int p = 2; p <= kFftLargestRadix && n > 1; ++p)
    while (n % p == 0) {
      radices.push_back(p);
      n /= p;
    }
  return n == 1;
}

std::shared_ptr<FftPlan> make_plan(int64_t n) {
  auto plan = std::make_shared<FftPlan>();
  plan->n = n;
  for (int64_t k = 0; k <= n; ++k) push_root(plan->real_twiddles, k, 2 * n);
  if (!factor(n, plan->radices)) {
    plan->radices.clear();
    int64_t m = 1;
    while (m < 2 * n - 1) m *= 2;
    plan->bluestein_length = m;
    plan->inner = fft_plan(m);
    // exp(-pi i k^2 / n) = exp(-2 pi i (k^2 mod 2n) / 2n).
    std::vector<int64_t> square(static_cast<size_t>(n));
    for (int64_t k = 0; k < n; ++k) {
      square[static_cast<size_t>(k)] = static_cast<int64_t>(
          (static_cast<unsigned __int128>(k) * static_cast<unsigned __int128>(k)) %
          static_cast<unsigned __int128>(2 * n));
      push_root(plan->chirp, square[static_cast<size_t>(k)], 2 * n);
    }
    // The conjugate chirp placed circularly at +-k in the longer length,
    // transformed directly (once per plan) and divided by that length.
    std::vector<double> b(static_cast<size_t>(2 * m), 0.0);
    for (int64_t k = 0; k < n; ++k) {
      const double angle = std::numbers::pi * static_cast<double>(square[static_cast<size_t>(k)]) /
                           static_cast<double>(n);
      for (int64_t at : {k, (m - k) % m}) {
        b[static_cast<size_t>(2 * at)] = std::cos(angle);
        b[static_cast<size_t>(2 * at + 1)] = std::sin(angle);
      }
    }
    // The direct transform of b by the inner plan's own passes would need the
    // kernel here; an O(m log m) recursive split in double does it instead.
    std::vector<double> spectrum = b;
    for (int64_t half = m / 2, span = 1; half >= 1; half /= 2, span *= 2) {
      // Decimation in frequency, bit-reversed order, undone below.
      std::vector<double> next(spectrum.size());
      for (int64_t s = 0; s < span; ++s)
        for (int64_t j = 0; j < half; ++j) {
          const int64_t base = s * 2 * half;
          const double ar = spectrum[static_cast<size_t>(2 * (base + j))];
          const double ai = spectrum[static_cast<size_t>(2 * (base + j) + 1)];
          const double br = spectrum[static_cast<size_t>(2 * (base + j + half))];
          const double bi = spectrum[static_cast<size_t>(2 * (base + j + half) + 1)];
          const double angle =
              -std::numbers::pi * static_cast<double>(j) / static_cast<double>(half);
          const double wr = std::cos(angle), wi = std::sin(angle);
          next[static_cast<size_t>(2 * (base + j))] = ar + br;
          next[static_cast<size_t>(2 * (base + j) + 1)] = ai + bi;
          next[static_cast<size_t>(2 * (base + j + half))] = (ar - br) * wr - (ai - bi) * wi;
          next[static_cast<size_t>(2 * (base + j + half) + 1)] = (ar - br) * wi + (ai - bi) * wr;
        }
      spectrum.swap(next);
    }
    int bits = 0;
    while ((int64_t{1} << bits) < m) ++bits;
    for (int64_t k = 0; k < m; ++k) {
      int64_t r = 0;
      for (int i = 0; i < bits; ++i) r |= ((k >> i) & 1) << (bits - 1 - i);
      plan->chirp_spectrum.push(spectrum[static_cast<size_t>(2 * r)] / static_cast<double>(m),
                                spectrum[static_cast<size_t>(2 * r + 1)] / static_cast<double>(m));
    }
    return plan;
  }
  int64_t len = n;
  for (int p : plan->radices) {
    const int64_t m = len / p;
    plan->offsets.push_back(static_cast<int64_t>(plan->twiddles.d.size() / 2));
    for (int64_t j = 0; j < m; ++j)
      for (int t = 1; t < p; ++t) push_root(plan->twiddles, j * t, len);
    if (p == 2 || p == 3 || p == 4 || p == 5) {
      plan->root_offsets.push_back(-1);
    } else {
      plan->root_offsets.push_back(static_cast<int64_t>(plan->roots.d.size() / 2));
      for (int k = 0; k < p; ++k) push_root(plan->roots, k, p);
    }
    len = m;
  }
  return plan;
}

}  // namespace

std::shared_ptr<const FftPlan> fft_plan(int64_t n) {
  BRASA_CHECK(n >= 1, "fft: a transform needs a length of at least 1, got ", n);
  // The most recent lengths, most recent first; a plan in use by a caller
  // stays alive through its shared_ptr after it leaves the cache.
  static std::mutex mutex;
  static std::list<std::pair<int64_t, std::shared_ptr<const FftPlan>>> recent;
  constexpr size_t kKept = 32;
  {
    std::lock_guard<std::mutex> lock(mutex);
    for (auto it = recent.begin(); it != recent.end(); ++it)
      if (it->first == n) {
        recent.splice(recent.begin(), recent, it);
        return recent.front().second;
      }
  }
  std::shared_ptr<const FftPlan> plan = make_plan(n);  // outside the lock: Bluestein recurses
  std::lock_guard<std::mutex> lock(mutex);
  recent.emplace_front(n, plan);
  if (recent.size() > kKept) recent.pop_back();
  return plan;
}

}  // namespace brasa
