// Gradients that reach one tensor several times: the engine sums them in
// place into whichever gradient no one else holds, and index_select's
// backward (an embedding's) adds into a gradient that is already there. The
// numbers must equal the plain sums, and tensors that others hold (a user's
// gradient, one tensor passed to two inputs, a hook's copy) stay as they were.
#include "../test_util.h"

namespace brasa {
namespace {

TEST(GradientSum, SeveralUsesOfALeafSumExactly) {
  manual_seed(3);
  Tensor x = randn({4, 3}).requires_grad_();
  ((x * 2).sum() + (x * 3).sum() + x.exp().sum()).backward();
  EXPECT_TRUE(x.grad().allclose(x.detach().exp() + 5, 1e-6, 1e-6));
}

TEST(GradientSum, TensorsOthersHoldAreNotWrittenInto) {
  manual_seed(4);
  Tensor x = randn({4, 3}).requires_grad_();
  // add's backward passes one gradient tensor to both of its inputs, and the
  // root's gradient is the caller's.
  Tensor g = randn({4, 3});
  Tensor g_before = g.clone();
  Tensor z = x * 1;
  (z + z).backward(g);
  EXPECT_TRUE(g.equal(g_before));
  EXPECT_TRUE(x.grad().allclose(g * 2, 1e-6, 1e-6));

  // A hook keeps the gradient it saw, which clone's backward passes on to x
  // unchanged; x's later gradient must be summed elsewhere.
  x.mutable_grad() = Tensor();
  Tensor r = randn({4, 3});
  Tensor first = (x * 5).sum();  // created first, so its backward runs last
  Tensor t = x.clone();
  Tensor seen;
  t.register_hook([&](const Tensor& grad) { seen = grad; });
  (first + (t * r).sum()).backward();
  EXPECT_TRUE(seen.equal(r));
  EXPECT_TRUE(x.grad().allclose(r + 5, 1e-6, 1e-6));
}

// An embedding table looked up three times (with repeated rows).
struct Lookups {
  Tensor weight = randn({50, 4}).requires_grad_();
  Tensor ids[3] = {randint(0, 50, {30}), randint(0, 50, {7}), tensor({3L, 3L, 49L, 0L})};
  Tensor r[3] = {randn({30, 4}), randn({7, 4}), randn({4, 4})};
  Tensor loss() const {
    Tensor total;
    for (int k = 0; k < 3; ++k) {
      Tensor part = (F::embedding(ids[k], weight) * r[k]).sum();
      total = total.defined() ? total + part : part;
    }
    return total;
  }
  Tensor expected() const {
    Tensor g = zeros({50, 4});
    for (int k = 0; k < 3; ++k) g.index_add_(0, ids[k], r[k]);
    return g;
  }
};

TEST(GradientSum, AnEmbeddingLookedUpSeveralTimesGetsTheSum) {
  manual_seed(5);
  Lookups l;
  l.loss().backward();
  EXPECT_TRUE(l.weight.grad().allclose(l.expected(), 1e-5, 1e-6));

  // Into an existing .grad (zero_grad without set_to_none): every lookup adds there.
  const uint64_t before = autograd::in_place_accumulation_count();
  l.loss().backward();
  EXPECT_EQ(autograd::in_place_accumulation_count(), before + 3);
  EXPECT_TRUE(l.weight.grad().allclose(l.expected() * 2, 1e-5, 1e-6));

  // autograd::grad (no .grad touched) and create_graph (the sums recorded) agree.
  Tensor once = autograd::grad({l.loss()}, {l.weight})[0];
  EXPECT_TRUE(once.allclose(l.expected(), 1e-5, 1e-6));
  Tensor recorded = autograd::grad({l.loss()}, {l.weight}, {}, true, true)[0];
  EXPECT_TRUE(recorded.allclose(l.expected(), 1e-5, 1e-6));
  EXPECT_TRUE(l.weight.grad().allclose(l.expected() * 2, 1e-5, 1e-6));
}

TEST(GradientSum, AdvancedIndexingTwice) {
  manual_seed(7);
  Tensor w = randn({20, 3}).requires_grad_();
  Tensor a = tensor({1L, 5L, 5L}), b = tensor({0L, 5L});
  Tensor ra = randn({3, 3}), rb = randn({2, 3});
  auto loss = [&] { return (w.index({a}) * ra).sum() + (w.index({b}) * rb).sum(); };
  Tensor expected = zeros({20, 3}).index_add_(0, a, ra).index_add_(0, b, rb);
  loss().backward();
  EXPECT_TRUE(w.grad().allclose(expected, 1e-6, 1e-6));
  const uint64_t before = autograd::in_place_accumulation_count();
  loss().backward();
  EXPECT_EQ(autograd::in_place_accumulation_count(), before + 2);
  EXPECT_TRUE(w.grad().allclose(expected * 2, 1e-6, 1e-6));
}

TEST(GradientSum, TiedEmbeddingAndOutputWeight) {
  manual_seed(6);
  Lookups l;
  Tensor h = randn({5, 4}), q = randn({5, 50});
  // The table is also the output projection: a dense gradient q^T h joins.
  Tensor loss = l.loss() + (mm(h, l.weight.t()) * q).sum();
  loss.backward();
  EXPECT_TRUE(l.weight.grad().allclose(l.expected() + mm(q.t(), h), 1e-5, 1e-5));
}

}  // namespace
}  // namespace brasa
