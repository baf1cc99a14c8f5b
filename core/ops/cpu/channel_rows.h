#pragma once
// Per-channel sums over a contiguous [N, C, S] tensor seen as N * C rows of S
// (row r has channel r % C), shared by the kernels whose gradients reduce to
// one value per channel (prelu's slopes).
// Internal to core/ops.
#include <brasa/ops/cpu/variant.h>
#include <brasa/util/parallel.h>

#include <cstdint>
#include <vector>

namespace brasa::cpu {
inline namespace BRASA_CPU_VARIANT {

// The sum of term(s) over s < S in T, in 16 independent lanes (a loop the
// compiler vectorizes without reassociating), the lanes and the tail added
// in double.
template <class T, class F>
inline double sum_in_lanes(int64_t S, const F& term) {
  constexpr int64_t L = 16;
  T lanes[L] = {};
  int64_t s = 0;
  for (; s + L <= S; s += L)
    for (int64_t l = 0; l < L; ++l) lanes[l] += term(s + l);
  double sum = 0;
  for (; s < S; ++s) sum += static_cast<double>(term(s));
  for (int64_t l = 0; l < L; ++l) sum += lanes[l];
  return sum;
}

// Runs row(r, sums) for every row in parallel, each writing `K` sums, then
// adds the rows of each channel: the result's [k * C + c] is the sum over n
// of row (n, c)'s k-th sum.
template <int K, class Row>
std::vector<double> per_channel_sums(int64_t N, int64_t C, int64_t S, const Row& row) {
  std::vector<double> sums(static_cast<size_t>(K * N * C));
  parallel_for(0, N * C, std::max<int64_t>(1, 32768 / std::max<int64_t>(S, 1)),
               [&](int64_t b, int64_t e) {
                 for (int64_t r = b; r < e; ++r) row(r, &sums[static_cast<size_t>(K * r)]);
               });
  std::vector<double> out(static_cast<size_t>(K * C), 0.0);
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c)
      for (int k = 0; k < K; ++k)
        out[static_cast<size_t>(k * C + c)] += sums[static_cast<size_t>(K * (n * C + c) + k)];
  return out;
}

}  // namespace BRASA_CPU_VARIANT
}  // namespace brasa::cpu
