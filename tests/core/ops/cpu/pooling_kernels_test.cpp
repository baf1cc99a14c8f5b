// max_pool2d's CPU kernels against a window-by-window reference, on rows
// short and long enough for each of the kernel's paths (compile-time column
// strides 1 and 2 from 16 outputs a row, the general loop otherwise), with
// many ties (the first maximum's index wins) and NaNs (the first NaN wins).
#include <brasa/torch.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <tuple>
#include <vector>

namespace brasa {
namespace {

struct Pool {
  int64_t k, s, p;
  bool ceil;
};

// Values and flat indices of every window, scanned in window order.
std::tuple<std::vector<float>, std::vector<int64_t>> reference(const Tensor& x, int64_t OH,
                                                               int64_t OW, const Pool& q) {
  const int64_t planes = x.size(0) * x.size(1), H = x.size(2), W = x.size(3);
  const Tensor c = x.contiguous();
  const float* xp = c.data_ptr<float>();
  std::vector<float> values;
  std::vector<int64_t> indices;
  for (int64_t pl = 0; pl < planes; ++pl)
    for (int64_t oh = 0; oh < OH; ++oh)
      for (int64_t ow = 0; ow < OW; ++ow) {
        float best = -std::numeric_limits<float>::infinity();
        int64_t at = -1;
        for (int64_t i = 0; i < q.k; ++i)
          for (int64_t j = 0; j < q.k; ++j) {
            const int64_t h = oh * q.s - q.p + i, w = ow * q.s - q.p + j;
            if (h < 0 || h >= H || w < 0 || w >= W) continue;
            const float v = xp[pl * H * W + h * W + w];
            if (at >= 0 && std::isnan(best)) continue;  // the first NaN stays
            if (at < 0 || v > best || std::isnan(v)) {
              best = v;
              at = h * W + w;
            }
          }
        values.push_back(best);
        indices.push_back(at);
      }
  return {values, indices};
}

void expect_matches_reference(int64_t H, int64_t W, const Pool& q) {
  // Small integers: many ties within a window.
  Tensor x = torch::randint(0, 4, {2, 3, H, W}).to(kFloat);
  float* xp = x.data_ptr<float>();
  xp[5] = std::numeric_limits<float>::quiet_NaN();
  xp[x.numel() / 2] = std::numeric_limits<float>::quiet_NaN();
  xp[x.numel() / 2 + 1] = std::numeric_limits<float>::quiet_NaN();
  xp[x.numel() - 3] = -std::numeric_limits<float>::infinity();
  auto [values, indices] =
      max_pool2d_with_indices(x, {q.k, q.k}, {q.s, q.s}, {q.p, q.p}, {1, 1}, q.ceil);
  const auto [want_values, want_indices] = reference(x, values.size(2), values.size(3), q);
  ASSERT_EQ(values.numel(), static_cast<int64_t>(want_values.size()));
  const Tensor v = values.contiguous(), i = indices.contiguous();
  for (size_t n = 0; n < want_values.size(); ++n) {
    const float got = v.data_ptr<float>()[n], want = want_values[n];
    ASSERT_TRUE(got == want || (std::isnan(got) && std::isnan(want)))
        << "value " << n << ": " << got << ", expected " << want << " (H " << H << ", W " << W
        << ", kernel " << q.k << ", stride " << q.s << ", padding " << q.p << ")";
    ASSERT_EQ(i.data_ptr<int64_t>()[n], want_indices[n])
        << "index " << n << " (H " << H << ", W " << W << ", kernel " << q.k << ", stride " << q.s
        << ", padding " << q.p << ")";
  }
}

TEST(MaxPoolKernels, EveryRowPathMatchesTheReference) {
  torch::manual_seed(3);
  const std::vector<Pool> pools = {{3, 2, 0, true},  {3, 2, 1, false}, {3, 1, 0, false},
                                   {2, 1, 0, false}, {3, 3, 0, false}, {5, 2, 2, true}};
  for (const Pool& q : pools)
    for (int64_t W : {9, 13, 33, 40, 55, 70}) expect_matches_reference(11, W, q);
}

}  // namespace
}  // namespace brasa
