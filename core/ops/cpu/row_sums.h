#pragma once
// Sums over runs of contiguous values in vector registers, for the fused
// normalization kernels (batch, layer and group norm): lane_sum for runs of
// any length, whole-vector loads for rows of up to kBlock values, and the
// mean and variance of a row. Internal to core/ops; included by the files
// compiled once per CPU variant.
#include <brasa/ops/cpu/variant.h>

#include <cstdint>
#include <cstring>

namespace brasa::cpu {
inline namespace BRASA_CPU_VARIANT {

constexpr int kLanes = 16;
// Four vectors of lanes for long runs: with one, every step waited on the
// previous add (4 cycles), and a layer norm's statistics over rows of
// [64, 28, 28] took two fifths of its forward.
constexpr int kWideLanes = 4 * kLanes;

// Sums of f(i) over a run of n values, in lanes of T that the compiler keeps
// in vector registers (no reassociation needed), folded to kLanes and
// emptied into Acc every kBlock values so that no lane adds up more than 256
// of them (the fold keeps the serial adds into Acc at kLanes per block).
constexpr int64_t kBlock = 256 * kLanes;

// Vector halves of a run of lanes added pairwise, down to one value: a few
// shuffles and log2(kLanes) dependent adds, where adding the lanes one by
// one into Acc made kLanes. Vector types so that GCC keeps the halves in
// registers: the same pairwise adds as a plain loop over an array made a
// layer norm's forward over rows of 32 take 125 us instead of 85 (2 threads,
// libtorch 201), the fold running twice per row.
template <class T, int N>
T fold_vector(const T* lanes) {
  if constexpr (N == 1) {
    return lanes[0];
  } else {
    typedef T Half __attribute__((vector_size(N / 2 * sizeof(T))));
    Half lo, hi;
    std::memcpy(&lo, lanes, sizeof lo);
    std::memcpy(&hi, lanes + N / 2, sizeof hi);
    lo += hi;
    T folded[N / 2];
    std::memcpy(folded, &lo, sizeof lo);
    return fold_vector<T, N / 2>(folded);
  }
}
template <class T>
T fold_lanes(const T* lanes) {
  return fold_vector<T, kLanes>(lanes);
}

template <class Acc, class T, class F>
Acc lane_sum(int64_t n, const F& f) {
  Acc total = 0;
  int64_t i = 0;
  while (i + kWideLanes <= n) {
    T lanes[kWideLanes] = {};
    const int64_t end = i + std::min<int64_t>(kBlock, (n - i) / kWideLanes * kWideLanes);
    for (; i < end; i += kWideLanes)
      for (int j = 0; j < kWideLanes; ++j) lanes[j] += f(i + j);
    for (int j = 0; j < kLanes; ++j)
      lanes[j] = (lanes[j] + lanes[j + kLanes]) + (lanes[j + 2 * kLanes] + lanes[j + 3 * kLanes]);
    total += static_cast<Acc>(fold_lanes(lanes));
  }
  if (i + kLanes <= n) {  // under kWideLanes left: one vector at a time
    T lanes[kLanes] = {};
    for (; i + kLanes <= n; i += kLanes)
      for (int j = 0; j < kLanes; ++j) lanes[j] += f(i + j);
    total += static_cast<Acc>(fold_lanes(lanes));
  }
  for (; i < n; ++i) total += static_cast<Acc>(f(i));
  return total;
}

// Rows of up to kBlock values (layer norm's usual rows) are summed in
// kLanes-wide vector registers, two vectors at a time, loaded whole: through
// lane_sum's per-element functor GCC built each vector from scalar loads
// (rows of 32 took 1.4x libtorch's time for the backward).
template <class T>
struct LaneVector {
  typedef T type __attribute__((vector_size(kLanes * sizeof(T))));
};
template <class T>
using Lanes = typename LaneVector<T>::type;

template <class T>
Lanes<T> load_lanes(const T* p) {
  Lanes<T> v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
template <class T>
double fold_to_double(const Lanes<T>& a, const Lanes<T>& b) {
  T lanes[kLanes];
  const Lanes<T> v = a + b;
  std::memcpy(lanes, &v, sizeof v);
  return static_cast<double>(fold_lanes(lanes));
}

// The mean and the variance (about the mean, divided by n) of a short row.
template <class T>
void short_row_moments(const T* __restrict p, int64_t n, T& mean, double& var) {
  Lanes<T> s0 = {}, s1 = {};
  int64_t i = 0;
  for (; i + 2 * kLanes <= n; i += 2 * kLanes) {
    s0 += load_lanes(p + i);
    s1 += load_lanes(p + i + kLanes);
  }
  if (i + kLanes <= n) s0 += load_lanes(p + i), i += kLanes;
  double total = fold_to_double<T>(s0, s1);
  for (int64_t j = i; j < n; ++j) total += static_cast<double>(p[j]);
  const T m = static_cast<T>(total / n);
  Lanes<T> q0 = {}, q1 = {};
  i = 0;
  for (; i + 2 * kLanes <= n; i += 2 * kLanes) {
    const Lanes<T> d0 = load_lanes(p + i) - m, d1 = load_lanes(p + i + kLanes) - m;
    q0 += d0 * d0;
    q1 += d1 * d1;
  }
  if (i + kLanes <= n) {
    const Lanes<T> d0 = load_lanes(p + i) - m;
    q0 += d0 * d0;
    i += kLanes;
  }
  double squares = fold_to_double<T>(q0, q1);
  for (int64_t j = i; j < n; ++j) squares += static_cast<double>((p[j] - m) * (p[j] - m));
  mean = m;
  var = squares / n;
}

// sum(d) and sum(d * (p - m)) over a short row, in one pass.
template <class T>
void short_row_gradient_sums(const T* __restrict d, const T* __restrict p, T m, int64_t n,
                             double& sum_d, double& sum_dx) {
  Lanes<T> a0 = {}, a1 = {}, b0 = {}, b1 = {};
  int64_t i = 0;
  for (; i + 2 * kLanes <= n; i += 2 * kLanes) {
    const Lanes<T> d0 = load_lanes(d + i), d1 = load_lanes(d + i + kLanes);
    a0 += d0;
    a1 += d1;
    b0 += d0 * (load_lanes(p + i) - m);
    b1 += d1 * (load_lanes(p + i + kLanes) - m);
  }
  if (i + kLanes <= n) {
    const Lanes<T> d0 = load_lanes(d + i);
    a0 += d0;
    b0 += d0 * (load_lanes(p + i) - m);
    i += kLanes;
  }
  sum_d = fold_to_double<T>(a0, a1);
  sum_dx = fold_to_double<T>(b0, b1);
  for (; i < n; ++i) {
    sum_d += static_cast<double>(d[i]);
    sum_dx += static_cast<double>(d[i] * (p[i] - m));
  }
}

// sum(d) and sum(d * (p - m)) over a row of any length: kBlock values at a
// time in vector registers, the blocks added in double.
template <class T>
void row_gradient_sums(const T* d, const T* p, T m, int64_t n, double& sum_d, double& sum_dx) {
  sum_d = 0;
  sum_dx = 0;
  for (int64_t i = 0; i < n; i += kBlock) {
    double block_d, block_dx;
    short_row_gradient_sums(d + i, p + i, m, n - i < kBlock ? n - i : kBlock, block_d, block_dx);
    sum_d += block_d;
    sum_dx += block_dx;
  }
}

// The mean and the variance (about the mean, divided by n) of a contiguous
// row of any length.
template <class T>
void row_moments(const T* p, int64_t n, T& mean, double& var) {
  if (n <= kBlock) return short_row_moments(p, n, mean, var);
  mean = static_cast<T>(lane_sum<double, T>(n, [p](int64_t i) { return p[i]; }) / n);
  const T m = mean;
  var = lane_sum<double, T>(n, [p, m](int64_t i) { return (p[i] - m) * (p[i] - m); }) / n;
}

}  // namespace BRASA_CPU_VARIANT
}  // namespace brasa::cpu
