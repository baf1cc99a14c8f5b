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

}  // namespace
}  // namespace brasa
