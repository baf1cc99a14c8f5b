#pragma once
// Inputs built as gen_libtorch_goldens.py builds them, and the comparison of
// an output with PyTorch's (libtorch_goldens.h).
#include <brasa/torch.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "libtorch_goldens.h"

namespace golden {

using namespace brasa;

// sin(arange * a + b), float64.
inline Tensor S(std::vector<int64_t> shape, double a = 0.37, double b = 0.1) {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  return (arange(n, TensorOptions().dtype(kDouble)) * a + b).sin().view(shape);
}
// A complex tensor whose real view is S(shape + [2], a, b).
inline Tensor Z(std::vector<int64_t> shape, double a = 0.37, double b = 0.1) {
  shape.push_back(2);
  return view_as_complex(S(shape, a, b));
}
// A full-rank variant of S (a matrix of S's values has rank 2).
inline Tensor W(std::vector<int64_t> shape) { return S(shape) + S(shape, 1.7, 0.3).pow(2) * 0.5; }
// A symmetric positive-definite n x n matrix.
inline Tensor spd(int64_t n) {
  Tensor x = W({n, n});
  return matmul(x, x.t()) + eye(n, TensorOptions().dtype(kDouble));
}
inline Tensor L(std::vector<int64_t> v) { return tensor(v, TensorOptions().dtype(kLong)); }
inline Tensor D(std::vector<double> v) { return tensor(v, TensorOptions().dtype(kDouble)); }

// Equal to PyTorch's output within `tol`; NaN and infinities must match exactly.
inline void expect_golden(const std::string& name, const Tensor& got, double tol = 1e-10) {
  auto it = libtorch_goldens::kGoldens.find(name);
  ASSERT_NE(it, libtorch_goldens::kGoldens.end()) << "no golden " << name;
  EXPECT_EQ(got.sizes().vec(), it->second.shape) << name;
  Tensor g = got.detach().to(kCPU).to(kDouble).contiguous();
  ASSERT_EQ(static_cast<size_t>(g.numel()), it->second.values.size()) << name;
  for (size_t i = 0; i < it->second.values.size(); ++i) {
    const double want = it->second.values[i], have = g.data_ptr<double>()[i];
    if (std::isnan(want) || std::isinf(want))
      EXPECT_TRUE(std::isnan(want) ? std::isnan(have) : have == want)
          << name << " at " << i << ": " << have << " vs " << want;
    else
      EXPECT_NEAR(have, want, tol * std::max(1.0, std::abs(want))) << name << " at " << i;
  }
}

// Every parameter of m, in named_parameters order, set to S(shape, 0.1 k + 0.3, 0.2)
// (as the generator's with_sequential_weights does).
inline void set_sequential_weights(nn::Module& m) {
  NoGradGuard ng;
  int k = 0;
  for (auto& p : m.named_parameters()) {
    Tensor t = p.value();
    t.copy_(S(t.sizes().vec(), 0.1 * k++ + 0.3, 0.2));
  }
}

}  // namespace golden
