// AccumulateGrad as an explicit gradient sink: a matrix product's backward
// adds into .grad in place even when a post-accumulate hook watches the leaf
// (as DDP's does), and when .grad is a view into a larger flat buffer (as
// DDP's bucket views are); the hooks still run once, after the addition.
#include "../test_util.h"

namespace brasa {
namespace {

// y = addmm(b, x, w.t()) (a linear layer), loss = sum(y * r): dw = r^T x.
struct Linear {
  Tensor x, r, w, b;
  Linear() {
    manual_seed(11);
    x = randn({6, 4});
    r = randn({6, 3});
    w = randn({3, 4}).requires_grad_();
    b = randn({3}).requires_grad_();
  }
  Tensor loss() const { return (addmm(b, x, w.t()) * r).sum(); }
  Tensor dw() const { return mm(r.t(), x); }
};

TEST(GradientSink, PostAccumulateHookKeepsTheInPlacePath) {
  Linear l;
  l.loss().backward();
  int calls = 0;
  Tensor seen;
  l.w.register_post_accumulate_grad_hook([&](const Tensor& leaf) {
    ++calls;
    seen = leaf.grad().clone();
  });
  const uint64_t before = autograd::in_place_accumulation_count();
  const void* buffer = l.w.grad().data_ptr();
  l.loss().backward();
  EXPECT_EQ(autograd::in_place_accumulation_count(), before + 1);  // added by the GEMM
  EXPECT_EQ(calls, 1);  // and the hook ran once, after it
  EXPECT_EQ(l.w.grad().data_ptr(), buffer);
  EXPECT_TRUE(seen.allclose(l.dw() * 2, 1e-5, 1e-5));
  EXPECT_TRUE(l.w.grad().allclose(l.dw() * 2, 1e-5, 1e-5));
}

TEST(GradientSink, GradAsAViewIntoAFlatBuffer) {
  Linear l;
  // Both parameters' .grad live in one flat buffer, w's after b's.
  Tensor flat = zeros({3 + 12});
  l.b.mutable_grad() = flat.narrow(0, 0, 3);
  l.w.mutable_grad() = flat.narrow(0, 3, 12).view({3, 4});
  int calls = 0;
  l.w.register_post_accumulate_grad_hook([&](const Tensor&) { ++calls; });
  const uint64_t before = autograd::in_place_accumulation_count();
  for (int round = 1; round <= 2; ++round) {
    l.loss().backward();
    EXPECT_EQ(calls, round);
  }
  EXPECT_EQ(autograd::in_place_accumulation_count(), before + 2);
  // Still views of the flat buffer, holding the sums.
  EXPECT_TRUE(l.w.grad().is_alias_of(flat));
  EXPECT_TRUE(l.b.grad().is_alias_of(flat));
  EXPECT_TRUE(flat.narrow(0, 3, 12).view({3, 4}).allclose(l.dw() * 2, 1e-5, 1e-5));
  EXPECT_TRUE(flat.narrow(0, 0, 3).allclose(l.r.sum(0) * 2, 1e-5, 1e-5));
}

TEST(GradientSink, TensorHookOnTheLeafStillSeesTheGradient) {
  Linear l;
  l.loss().backward();
  int calls = 0;
  l.w.register_hook([&](const Tensor& g) {
    ++calls;
    return g * 0;  // replaces the gradient: it must not have been added already
  });
  const uint64_t before = autograd::in_place_accumulation_count();
  l.loss().backward();
  EXPECT_EQ(autograd::in_place_accumulation_count(), before);
  EXPECT_EQ(calls, 1);
  EXPECT_TRUE(l.w.grad().allclose(l.dw(), 1e-5, 1e-5));
}

TEST(GradientSink, TransposeIsKnownByItsMarkNotItsName) {
  Tensor w = randn({3, 4}).requires_grad_();
  EXPECT_TRUE(w.t().grad_fn()->transposes_gradient_2d());
  EXPECT_FALSE(w.transpose(0, 1).grad_fn()->transposes_gradient_2d());
  EXPECT_FALSE((w * 2).grad_fn()->transposes_gradient_2d());
}

}  // namespace
}  // namespace brasa
