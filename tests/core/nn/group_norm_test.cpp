// Group norm runs fused kernels on the CPU (GroupNormKernel,
// GroupNormBackwardKernel): values and every gradient match the definition
// computed in float64 with autograd, for groups of one channel up to all of
// them, spatial sizes from 1 up to rows longer than one vector block, with
// and without weight and bias; the double backward and the errors too.
#include <brasa/autograd/autograd.h>
#include <brasa/autograd/gradcheck.h>
#include <brasa/nn/functional.h>

#include <vector>

#include "../test_util.h"

namespace brasa {
namespace {

namespace F = nn::functional;

// The definition: each (sample, group)'s values less their mean, over their
// standard deviation (biased), then each channel's weight and bias.
Tensor group_norm_reference(const Tensor& x, int64_t G, const Tensor& w, const Tensor& b,
                            double eps) {
  const int64_t N = x.size(0), C = x.size(1);
  Tensor xg = x.reshape({N, G, -1});
  Tensor mean = xg.mean({2}, true), var = (xg - mean).pow(2).mean({2}, true);
  Tensor y = ((xg - mean) / sqrt(var + eps)).view(x.sizes());
  std::vector<int64_t> shape(x.dim(), 1);
  shape[1] = C;
  if (w.defined()) y = y * w.view(shape);
  if (b.defined()) y = y + b.view(shape);
  return y;
}

struct GroupCase {
  std::vector<int64_t> shape;
  int64_t groups;
  bool weight, bias;
};

TEST(FusedGroupNorm, MatchesTheDefinitionWithAllGradients) {
  for (ScalarType dtype : {kFloat, kDouble})
    for (const GroupCase& c : std::vector<GroupCase>{{{4, 6, 5, 5}, 3, true, true},
                                                     {{3, 8, 7}, 8, true, false},
                                                     {{3, 8, 7}, 1, false, true},
                                                     {{5, 12}, 4, true, true},
                                                     {{2, 4, 70, 70}, 2, true, true},
                                                     {{2, 6, 3, 3}, 2, false, false}}) {
      SCOPED_TRACE(::testing::Message()
                   << dtype << " shape " << IntArrayRef(c.shape) << " groups " << c.groups
                   << " weight " << c.weight << " bias " << c.bias);
      manual_seed(7);
      const auto d64 = TensorOptions().dtype(kDouble);
      const int64_t C = c.shape[1];
      Tensor x0 = randn(c.shape, d64) * 1.5 + 0.4;
      Tensor w0 = c.weight ? randn({C}, d64) : Tensor(), b0 = c.bias ? randn({C}, d64) : Tensor();
      Tensor gy = randn(c.shape, d64);
      auto leaf = [](const Tensor& t, ScalarType s) {
        return t.defined() ? t.to(s).detach().requires_grad_(true) : Tensor();
      };
      Tensor x = leaf(x0, dtype), w = leaf(w0, dtype), b = leaf(b0, dtype);
      Tensor y = F::group_norm(x, c.groups, w, b, 1e-5);
      EXPECT_EQ(y.grad_fn()->name(), "NativeGroupNormBackward0");
      y.backward(gy.to(dtype));
      Tensor xr = leaf(x0, kDouble), wr = leaf(w0, kDouble), br = leaf(b0, kDouble);
      group_norm_reference(xr, c.groups, wr, br, 1e-5).backward(gy);
      const double tol = dtype == kFloat ? 5e-4 : 1e-9;
      auto close = [&](const Tensor& a, const Tensor& r, const char* what) {
        EXPECT_LT((a.to(kDouble) - r).abs().max().item<double>(), tol) << what;
      };
      close(y, group_norm_reference(x0, c.groups, w0, b0, 1e-5), "y");
      close(x.grad(), xr.grad(), "x.grad");
      if (c.weight) close(w.grad(), wr.grad(), "weight.grad");
      if (c.bias) close(b.grad(), br.grad(), "bias.grad");
    }
}

TEST(FusedGroupNorm, DoubleBackwardAndErrors) {
  manual_seed(3);
  const auto d64 = TensorOptions().dtype(kDouble);
  Tensor x = randn({2, 4, 3}, d64).requires_grad_(true);
  Tensor w = randn({4}, d64).requires_grad_(true), b = randn({4}, d64).requires_grad_(true);
  auto fn = [](const autograd::variable_list& v) {
    return autograd::variable_list{F::group_norm(v[0], 2, v[1], v[2], 1e-5)};
  };
  EXPECT_TRUE(autograd::gradcheck(fn, {x, w, b}));
  EXPECT_TRUE(autograd::gradgradcheck(fn, {x, w, b}));
  // A strided input reads as its contiguous copy.
  Tensor xt = randn({3, 4, 2}, d64).transpose(0, 2);  // [2, 4, 3]
  EXPECT_TRUE(F::group_norm(xt, 2, w, b, 1e-5)
                  .allclose(group_norm_reference(xt.contiguous(), 2, w, b, 1e-5), 1e-10, 1e-12));
  EXPECT_ERROR(
      "group_norm: Expected weight to be a vector of size equal to the number of channels in "
      "input, but got weight of shape [3] and input of shape [2, 4, 3]",
      F::group_norm(x, 2, randn({3}, d64), Tensor(), 1e-5));
  EXPECT_ERROR("group_norm: Expected bias to be a vector of size equal to the number of channels",
               F::group_norm(x, 2, Tensor(), randn({2, 2}, d64), 1e-5));
  EXPECT_ERROR("group_norm: expected input [N, C, ...] with C (4) divisible by num_groups (3)",
               F::group_norm(x, 3, Tensor(), Tensor(), 1e-5));
}

}  // namespace
}  // namespace brasa
