// nll_loss (and so cross_entropy) runs fused kernels where the device has
// them (NllLossKernel, NllLossBackwardKernel): values and gradients match
// the gather formula computed in float64, for every reduction, with and
// without class weights and ignored targets, over [C], [N, C] and
// [N, C, d1, d2] inputs; the double backward is gradchecked.
#include <brasa/autograd/autograd.h>
#include <brasa/autograd/gradcheck.h>
#include <brasa/nn/functional.h>

#include <cmath>
#include <vector>

#include "../test_util.h"

namespace brasa {
namespace {

namespace F = nn::functional;

// The loss by its definition, in float64: -weight[t] * logp at the target
// class (0 where ignored), reduced; mean divides by the weights used.
Tensor nll_reference(const Tensor& logp, const Tensor& target, const Tensor& weight,
                     int64_t ignore_index, Reduction reduction) {
  const int64_t class_dim = logp.dim() == 1 ? 0 : 1;
  Tensor used = target != ignore_index;
  Tensor safe = where(used, target, zeros_like(target));
  Tensor w = used.to(kDouble);
  if (weight.defined())
    w = w * weight.to(kDouble).index_select(0, safe.reshape({-1})).view(target.sizes());
  Tensor picked = logp.to(kDouble).gather(class_dim, safe.unsqueeze(class_dim)).squeeze(class_dim);
  Tensor per = -(picked * w);
  if (reduction == Reduction::None) return per;
  if (reduction == Reduction::Sum) return per.sum();
  return per.sum() / w.sum();
}

TEST(FusedNllLoss, MatchesTheGatherFormulaWithItsGradient) {
  manual_seed(11);
  const std::vector<std::vector<int64_t>> shapes = {{5}, {7, 5}, {3, 4, 2, 3}};
  for (ScalarType dtype : {kFloat, kDouble})
    for (const auto& shape : shapes)
      for (bool weighted : {false, true})
        for (Reduction reduction : {Reduction::None, Reduction::Mean, Reduction::Sum}) {
          SCOPED_TRACE(::testing::Message()
                       << dtype << " " << ::testing::PrintToString(shape) << " weighted "
                       << weighted << " reduction " << int(reduction));
          const int64_t C = shape.size() == 1 ? shape[0] : shape[1];
          std::vector<int64_t> target_shape = shape;
          target_shape.erase(target_shape.begin() + (shape.size() == 1 ? 0 : 1));
          Tensor target = randint(0, C, target_shape, TensorOptions().dtype(kLong));
          if (target.numel() > 2) target.view({-1})[1] = -100;  // one ignored
          Tensor weight = weighted ? rand({C}, TensorOptions().dtype(dtype)) + 0.5 : Tensor();
          Tensor x =
              randn(shape, TensorOptions().dtype(dtype)).log_softmax(shape.size() == 1 ? 0 : 1);
          x = x.detach().requires_grad_(true);
          Tensor loss =
              F::nll_loss(x, target, F::NLLLossFuncOptions().weight(weight).reduction(reduction));
          Tensor expected = nll_reference(x.detach(), target, weight, -100, reduction);
          const double tol = dtype == kFloat ? 1e-5 : 1e-12;
          ASSERT_EQ(loss.sizes().vec(), expected.sizes().vec());
          EXPECT_TRUE(loss.to(kDouble).allclose(expected, tol, tol));
          Tensor g = randn(loss.sizes(), TensorOptions().dtype(dtype));
          loss.backward(g);
          Tensor xr = x.detach().to(kDouble).requires_grad_(true);
          nll_reference(xr, target, weight, -100, reduction).backward(g.to(kDouble));
          EXPECT_TRUE(x.grad().to(kDouble).allclose(xr.grad(), tol, tol));
        }
}

TEST(FusedNllLoss, ReadsStridedInputsAndDoubleBackwards) {
  manual_seed(12);
  Tensor x = randn({4, 6}, TensorOptions().dtype(kDouble)).t().requires_grad_(true);  // [6, 4]
  Tensor target = tensor({int64_t(3), 0, -100, 2, 1, 3});
  Tensor weight = tensor({0.5, 2.0, 1.0, 1.5});
  for (Reduction reduction : {Reduction::None, Reduction::Mean, Reduction::Sum}) {
    auto fn = [&](const autograd::variable_list& v) {
      return autograd::variable_list{
          F::nll_loss(v[0], target, F::NLLLossFuncOptions().weight(weight).reduction(reduction))};
    };
    EXPECT_TRUE(fn({x})[0].allclose(nll_reference(x.detach(), target, weight, -100, reduction)));
    EXPECT_TRUE(autograd::gradcheck(fn, {x}));
    EXPECT_TRUE(autograd::gradgradcheck(fn, {x}));
  }
}

TEST(FusedNllLoss, AllIgnoredMeanIsNanAndBadTargetsSayWhich) {
  Tensor x = randn({3, 4}).log_softmax(1);
  Tensor ignored = tensor({int64_t(-100), -100, -100});
  EXPECT_TRUE(std::isnan(F::nll_loss(x, ignored).item<double>()));
  EXPECT_EQ(
      F::nll_loss(x, ignored, F::NLLLossFuncOptions().reduction(Reduction::Sum)).item<double>(),
      0.0);
  EXPECT_ERROR("nll_loss: target 4 is out of bounds for 4 classes",
               F::nll_loss(x, tensor({int64_t(0), 4, 1})));
  EXPECT_ERROR("nll_loss: target -1 is out of bounds for 4 classes",
               F::cross_entropy(x, tensor({int64_t(0), -1, 1})));
  // ignore_index may be a class: those elements are left out.
  Tensor t = tensor({int64_t(0), 2, 0});
  EXPECT_NEAR(F::nll_loss(x, t, F::NLLLossFuncOptions().ignore_index(0)).item<double>(),
              -x[1][2].item<double>(), 1e-6);
}

}  // namespace
}  // namespace brasa
