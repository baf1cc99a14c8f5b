// A matrix product's backward adds a weight's gradient straight into an
// existing .grad (one GEMM with beta = 1) when nothing can tell the
// difference; everywhere else the gradient takes the ordinary path. Both
// must give the same numbers.
#include "../test_util.h"

namespace brasa {
namespace {

struct Case {
  Tensor x, r, w, b;
};

// y = addmm(b, x, w.t()) (a linear layer), loss = sum(y * r): dw = r^T x.
Case linear_case(ScalarType dtype = kFloat) {
  manual_seed(7);
  Case c;
  c.x = randn({5, 4}).to(dtype);
  c.r = randn({5, 3}).to(dtype);
  c.w = randn({3, 4}).to(dtype).requires_grad_();
  c.b = randn({3}).to(dtype).requires_grad_();
  return c;
}
Tensor linear_loss(const Case& c) { return (addmm(c.b, c.x, c.w.t()) * c.r).sum(); }

TEST(FusedAccumulation, LinearWeightGradAddsIntoExistingGrad) {
  for (ScalarType dtype : {kFloat, kDouble}) {
    Case c = linear_case(dtype);
    const Tensor dw = mm(c.r.t(), c.x);
    linear_loss(c).backward();  // no .grad yet: the ordinary path
    EXPECT_TRUE(c.w.grad().allclose(dw, 1e-5, 1e-5));
    const void* buffer = c.w.grad().data_ptr();
    const int64_t version = c.w.grad()._version();
    linear_loss(c).backward();  // adds into the same buffer
    EXPECT_EQ(c.w.grad().data_ptr(), buffer);
    EXPECT_GT(c.w.grad()._version(), version);
    EXPECT_TRUE(c.w.grad().allclose(dw * 2, 1e-5, 1e-5)) << dtype;
    EXPECT_TRUE(c.b.grad().allclose(c.r.sum(0) * 2, 1e-5, 1e-5));
    c.w.grad().zero_();  // zero_grad without set_to_none
    linear_loss(c).backward();
    EXPECT_TRUE(c.w.grad().allclose(dw, 1e-5, 1e-5));
  }
}

TEST(FusedAccumulation, EveryOperandPositionAndAlpha) {
  manual_seed(8);
  Tensor x = randn({5, 4}), r = randn({5, 3}), r2 = randn({3, 4});
  Tensor w = randn({4, 3}).requires_grad_();  // x @ w: dw = x^T r
  Tensor v = randn({3, 5}).requires_grad_();  // v @ x: dv = r2 x^T
  Tensor u = randn({5, 3}).requires_grad_();  // u.t() @ x: du = (r2 x^T)^T
  for (int round = 1; round <= 3; ++round) {
    (mm(x, w) * r).sum().backward();
    (mm(v, x) * r2).sum().backward();
    (mm(u.t(), x) * r2).sum().backward();
    (addmm(zeros({5, 3}), x, w, 1, 2.5) * r).sum().backward();  // alpha scales the product
    const double n = round;
    EXPECT_TRUE(w.grad().allclose(mm(x.t(), r) * (n * 3.5), 1e-4, 1e-4)) << round;
    EXPECT_TRUE(v.grad().allclose(mm(r2, x.t()) * n, 1e-4, 1e-4)) << round;
    EXPECT_TRUE(u.grad().allclose(mm(r2, x.t()).t() * n, 1e-4, 1e-4)) << round;
  }
}

TEST(FusedAccumulation, HooksAndRetainGradStillSeeTheWholeGradient) {
  Case c = linear_case();
  const Tensor dw = mm(c.r.t(), c.x);
  linear_loss(c).backward();
  int hook_calls = 0, post_calls = 0;
  Tensor seen;
  c.w.register_hook([&](const Tensor& g) {
    ++hook_calls;
    seen = g.clone();
    return Tensor();
  });
  linear_loss(c).backward();
  EXPECT_EQ(hook_calls, 1);
  EXPECT_TRUE(seen.allclose(dw, 1e-5, 1e-5));
  EXPECT_TRUE(c.w.grad().allclose(dw * 2, 1e-5, 1e-5));

  Case d = linear_case();
  linear_loss(d).backward();
  d.w.register_post_accumulate_grad_hook([&](const Tensor& leaf) {
    ++post_calls;
    seen = leaf.grad().clone();
  });
  linear_loss(d).backward();
  EXPECT_EQ(post_calls, 1);
  EXPECT_TRUE(seen.allclose(dw * 2, 1e-5, 1e-5));

  Case e = linear_case();
  linear_loss(e).backward();
  Tensor wt = e.w.t();
  wt.retain_grad();
  (addmm(e.b, e.x, wt) * e.r).sum().backward();
  ASSERT_TRUE(wt.grad().defined());
  EXPECT_TRUE(wt.grad().allclose(dw.t(), 1e-5, 1e-5));
  EXPECT_TRUE(e.w.grad().allclose(dw * 2, 1e-5, 1e-5));
}

TEST(FusedAccumulation, SharedWeightGradAndRestrictedBackwards) {
  Case c = linear_case();
  const Tensor dw = mm(c.r.t(), c.x);
  linear_loss(c).backward();
  Tensor wt = c.w.t();  // one transpose feeding two products
  ((addmm(c.b, c.x, wt) + mm(c.x, wt)) * c.r).sum().backward();
  EXPECT_TRUE(c.w.grad().allclose(dw * 3, 1e-5, 1e-5));

  // autograd::grad returns the gradient and leaves .grad alone.
  Tensor before = c.w.grad().clone();
  auto g = autograd::grad({linear_loss(c)}, {c.w});
  EXPECT_TRUE(g[0].allclose(dw, 1e-5, 1e-5));
  EXPECT_TRUE(c.w.grad().equal(before));
  // backward(inputs=) accumulates into the named leaves only.
  Tensor b_before = c.b.grad().clone();
  autograd::backward({linear_loss(c)}, {}, std::nullopt, false, {c.w});
  EXPECT_TRUE(c.w.grad().allclose(before + dw, 1e-5, 1e-5));
  EXPECT_TRUE(c.b.grad().equal(b_before));
}

TEST(FusedAccumulation, CreateGraphAndOddGradLayoutsTakeTheOrdinaryPath) {
  Case c = linear_case();
  const Tensor dw = mm(c.r.t(), c.x);
  linear_loss(c).backward();
  Tensor y = addmm(c.b, c.x, c.w.t());
  y.pow(2).sum().backward({}, true, true);  // create_graph: the sum is recorded
  Tensor dw_sq = mm((y * 2).detach().t(), c.x);
  EXPECT_TRUE(c.w.grad().allclose(dw + dw_sq, 1e-4, 1e-4));
  EXPECT_TRUE(c.w.grad().requires_grad());
  // These grads have graphs that refer back to w and b: break the cycles, as
  // PyTorch's docs advise for create_graph into .grad.
  c.w.mutable_grad() = Tensor();
  c.b.mutable_grad() = Tensor();

  Case d = linear_case();
  d.w.mutable_grad() = zeros({4, 3}).t();  // a transposed .grad: not contiguous
  linear_loss(d).backward();
  EXPECT_TRUE(d.w.grad().allclose(dw, 1e-5, 1e-5));

  // A gradient used as an operand of the product itself is never the target.
  Tensor w = randn({4, 4}).requires_grad_();
  w.mutable_grad() = eye(4);
  Tensor x = w.grad();
  (mm(x, w)).sum().backward();
  EXPECT_TRUE(w.grad().allclose(eye(4) + mm(eye(4).t(), ones({4, 4})), 1e-6, 1e-6));
}

TEST(FusedAccumulation, TransposeOfA2DTensorIsTBackward) {
  Tensor w = randn({3, 4}).requires_grad_();
  EXPECT_EQ(w.t().grad_fn()->name(), "TBackward0");
  EXPECT_EQ(w.transpose(0, 1).grad_fn()->name(), "TransposeBackward0");
  Tensor sq = randn({3, 3}).requires_grad_();
  sq.mutable_grad() = zeros({3, 3});
  Tensor r = randn({3, 3});
  (mm(r, sq.transpose(0, 0)) * r)
      .sum()
      .backward();  // a transpose that is not one: no fusion through it
  EXPECT_TRUE(sq.grad().allclose(mm(r.t(), r), 1e-5, 1e-5));
}

}  // namespace
}  // namespace brasa
