// Training-mode batch norm on the CPU runs one fused kernel (forward and
// backward); its values, gradients and running statistics match the
// textbook formulas computed in float64 with autograd, on every layout the
// kernel takes. (The gradcheck table gradchecks and gradgradchecks it too.)
#include <brasa/nn/functional.h>

#include "../test_util.h"

namespace brasa {
namespace {

namespace F = nn::functional;

struct Case {
  std::vector<int64_t> shape;
  bool transposed;  // a non-contiguous input
  bool affine;
};

TEST(BatchNorm, FusedKernelMatchesTheFormulas) {
  for (const Case& c : std::vector<Case>{{{8, 5, 6, 7}, false, true},
                                         {{8, 5, 6, 7}, true, true},
                                         {{16, 3, 9}, false, false},
                                         {{33, 4}, false, true},
                                         {{257, 40}, false, true},  // BatchNorm1d's rows
                                         {{3, 257}, false, false},
                                         {{2, 64, 17, 17}, false, true},
                                         {{2, 2, 300, 300}, false, true},  // long runs
                                         {{3, 4, 5, 6, 7}, false, true},   // BatchNorm3d
                                         {{3, 4, 5, 6, 7}, true, false}}) {
    SCOPED_TRACE(::testing::Message() << "shape " << IntArrayRef(c.shape) << " transposed "
                                      << c.transposed << " affine " << c.affine);
    manual_seed(3);
    const int64_t C = c.shape[1];
    Tensor x0 = randn(c.shape) * 3 + 1.5;
    if (c.transposed) x0 = x0.transpose(2, 3);
    Tensor w0 = randn({C}), b0 = randn({C}), gy = randn(x0.sizes());
    // The kernel, in float32.
    Tensor x = x0.clone().requires_grad_(true);
    Tensor w = w0.clone().requires_grad_(true), b = b0.clone().requires_grad_(true);
    Tensor rm = full({C}, 0.5), rv = full({C}, 2.0);
    Tensor y = c.affine ? F::batch_norm(x, rm, rv, w, b, true, 0.1, 1e-5)
                        : F::batch_norm(x, rm, rv, Tensor(), Tensor(), true, 0.1, 1e-5);
    y.backward(gy);
    // The formulas, in float64.
    DimVector dims{0}, shape(c.shape.size(), 1);
    for (int64_t d = 2; d < static_cast<int64_t>(c.shape.size()); ++d) dims.push_back(d);
    shape[1] = C;
    Tensor xd = x0.to(kDouble).requires_grad_(true);
    Tensor wd = w0.to(kDouble).requires_grad_(true), bd = b0.to(kDouble).requires_grad_(true);
    Tensor mean = xd.mean(dims, true), var = xd.var(dims, false, true);
    Tensor yd = (xd - mean) / sqrt(var + 1e-5);
    if (c.affine) yd = yd * wd.view(shape) + bd.view(shape);
    yd.backward(gy.to(kDouble));
    EXPECT_TRUE(allclose(y.to(kDouble), yd.detach(), 1e-5, 1e-5)) << "output";
    EXPECT_TRUE(allclose(x.grad().to(kDouble), xd.grad(), 1e-4, 1e-4)) << "input gradient";
    if (c.affine) {
      EXPECT_TRUE(allclose(w.grad().to(kDouble), wd.grad(), 1e-4, 1e-3)) << "weight gradient";
      EXPECT_TRUE(allclose(b.grad().to(kDouble), bd.grad(), 1e-4, 1e-3)) << "bias gradient";
    }
    // PyTorch's running statistics: the unbiased variance goes into running_var.
    const double n = static_cast<double>(x0.numel() / C);
    Tensor m = mean.detach().flatten(), v = var.detach().flatten() * (n / (n - 1));
    EXPECT_TRUE(allclose(rm.to(kDouble), m * 0.1 + 0.5 * 0.9, 1e-5, 1e-5)) << "running_mean";
    EXPECT_TRUE(allclose(rv.to(kDouble), v * 0.1 + 2.0 * 0.9, 1e-5, 1e-5)) << "running_var";
  }
}

TEST(BatchNorm, EvalModeUsesTheRunningStatistics) {
  Tensor x = arange(12, TensorOptions().dtype(kFloat)).view({2, 3, 2});
  Tensor rm = tensor({1.0f, 2.0f, 3.0f}), rv = tensor({4.0f, 1.0f, 0.25f});
  Tensor w = tensor({2.0f, 1.0f, 1.0f}), b = tensor({0.0f, 1.0f, -1.0f});
  Tensor y = F::batch_norm(x, rm, rv, w, b, false, 0.1, 0.0);
  // (x - mean) / sqrt(var) * w + b, channel by channel.
  EXPECT_VALUES(y.flatten(), {-1, 0, 1, 2, 1, 3, 5, 6, 7, 8, 13, 15});
  EXPECT_VALUES(rm, {1, 2, 3});  // untouched
}

TEST(BatchNorm, OneValuePerChannelIsAnError) {
  EXPECT_ERROR(
      "batch_norm: expected more than 1 value per channel when training",
      F::batch_norm(randn({1, 3}), zeros({3}), ones({3}), Tensor(), Tensor(), true, 0.1, 1e-5));
}

}  // namespace
}  // namespace brasa
