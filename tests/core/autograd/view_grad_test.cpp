// The gradient of views whose positions share memory (unfold with
// overlapping windows, overlapping as_strided): every position's gradient
// is added into the element it reads, whichever way the sum is taken —
// slice by slice when fixing one dim leaves non-overlapping slices, element
// by element otherwise.
#include "../test_util.h"

namespace brasa {
namespace {

TEST(ViewGrad, OverlappingUnfoldCountsEachWindow) {
  for (ScalarType dtype : {kFloat, kDouble}) {
    Tensor x = arange(7, TensorOptions().dtype(dtype)).requires_grad_();
    // Windows of 3 at step 1: element i is in min(i + 1, 3, 7 - i) windows.
    (x.unfold(0, 3, 1) * 2).sum().backward();
    EXPECT_VALUES(x.grad(), {2, 4, 6, 6, 6, 4, 2});
  }
  // Along a middle dim of a batch, weighted by position in the window.
  Tensor y = zeros({2, 5, 3}).requires_grad_();
  Tensor weights = tensor({1.0f, 10.0f, 100.0f});
  (y.unfold(1, 3, 2) * weights).sum().backward();  // windows start at 0 and 2
  Tensor want = tensor({1.0f, 10.0f, 101.0f, 10.0f, 100.0f}).view({1, 5, 1}).expand({2, 5, 3});
  EXPECT_TRUE(equal(y.grad(), want)) << y.grad();
}

TEST(ViewGrad, ViewOverlappingInEveryDimAccumulatesElementwise) {
  // Offsets 1 + i + j + k: no dim can be fixed to leave a non-overlapping
  // slice, so the serial path sums; element 1 + n is read by the C(3, n)
  // positions whose indices add up to n.
  Tensor x = zeros({5}, kDouble).requires_grad_();
  Tensor v = x.as_strided({2, 2, 2}, {1, 1, 1}, 1);
  Tensor g = arange(8, kDouble).view({2, 2, 2});
  (v * g).sum().backward();
  // Offset 1: g000 = 0; offset 2: g001 + g010 + g100 = 1 + 2 + 4; offset 3:
  // g011 + g101 + g110 = 3 + 5 + 6; offset 4: g111 = 7.
  EXPECT_VALUES(x.grad(), {0, 0, 7, 14, 7});
}

// A scan over a non-leaf: step t of a [B, L, D] tensor selected for every
// t (and one step twice, and a slice) — later views add into the gradient
// the backward has already gathered for the base, in place. The base's
// whole gradient (retain_grad), the leaf's, and those of a permuted base
// (which takes the ordinary path) and of create_graph agree with the sums
// written out.
TEST(ViewGrad, RepeatedViewsOfOneBaseSumIntoOneGradient) {
  for (bool permuted : {false, true}) {
    Tensor x = arange(24, kDouble).view({2, 4, 3}).requires_grad_();
    Tensor base = permuted ? (x * 1).permute({1, 0, 2}).contiguous().permute({1, 0, 2}) : x * 1;
    base.retain_grad();
    Tensor loss = zeros({}, kDouble);
    for (int64_t t = 0; t < 4; ++t) loss = loss + (base.select(1, t) * double(t + 1)).sum();
    loss = loss + (base.select(1, 2) * 10.0).sum() + base.slice(1, 0, 2).sum() * 100.0;
    loss.backward();
    // Step t's weight: t + 1, plus 10 at t = 2, plus 100 at t < 2.
    Tensor want = tensor({101.0, 102.0, 13.0, 4.0}, kDouble).view({1, 4, 1}).expand({2, 4, 3});
    EXPECT_TRUE(equal(base.grad(), want)) << "permuted " << permuted << ": " << base.grad();
    EXPECT_TRUE(equal(x.grad(), want)) << "permuted " << permuted << ": " << x.grad();
  }
  // With create_graph the gradient is itself differentiable: d/dx of
  // sum(grad * x) where grad = 2 * (step weight) * x.
  Tensor x = arange(6, kDouble).view({1, 3, 2}).requires_grad_();
  Tensor base = x * x;
  Tensor loss = zeros({}, kDouble);
  for (int64_t t = 0; t < 3; ++t) loss = loss + (base.select(1, t) * double(t + 1)).sum();
  Tensor g = autograd::grad({loss}, {x}, {}, true, true)[0];
  Tensor step = tensor({1.0, 2.0, 3.0}, kDouble).view({1, 3, 1});
  EXPECT_TRUE(allclose(g, 2 * step * x.detach())) << g;
  (g * x.detach()).sum().backward();
  EXPECT_TRUE(allclose(x.grad(), 2 * step.expand({1, 3, 2}) * x.detach())) << x.grad();
}

}  // namespace
}  // namespace brasa
