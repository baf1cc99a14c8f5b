// libtorch's storage and metadata methods (resize_, set_, alias,
// fill_diagonal_, ...), the in-place samplers and the method spellings of
// free functions (core/tensor/tensor_storage_methods.cpp; resize_ in
// tensor_methods.cpp), with their errors.
#include <cmath>

#include <brasa/ops/random.h>

#include "../test_util.h"

namespace brasa {
namespace {

TEST(StorageMethods, ResizeKeepsTheStoragePrefixAndGrowsIt) {
  Tensor t = tensor({1.0f, 2.0f, 3.0f});
  Tensor view = t.view({3});
  t.resize_({2, 2});
  EXPECT_SHAPE(t, {2, 2});
  EXPECT_EQ(t.strides(), IntArrayRef({2, 1}));
  EXPECT_FLOAT_EQ(t[0][0].item<float>(), 1);
  EXPECT_FLOAT_EQ(t[1][0].item<float>(), 3);
  EXPECT_GE(t.storage()->nbytes(), 4 * sizeof(float));
  t[1][1] = 7.0f;
  t.resize_({3});  // shrinking keeps the storage
  EXPECT_VALUES(t, {1, 2, 3});
  Tensor like = zeros({2, 3, 4, 5});
  t.resize_as_(like, MemoryFormat::ChannelsLast);
  EXPECT_SHAPE(t, {2, 3, 4, 5});
  EXPECT_TRUE(t.is_contiguous(MemoryFormat::ChannelsLast));
  EXPECT_ERROR("cannot resize variables that require grad",
               zeros({3}).requires_grad_().resize_({2}));
  EXPECT_ERROR("negative dimension", zeros({3}).resize_({2, -1}));
  EXPECT_ERROR("required rank 4", zeros({3}).resize_({2, 3}, MemoryFormat::ChannelsLast));
}

TEST(StorageMethods, SetSharesTheSourceAndAliasKeepsGradients) {
  Tensor source = arange(6, kFloat).view({2, 3});
  Tensor t = zeros({1});
  t.set_(source);
  EXPECT_TRUE(t.is_set_to(source));
  EXPECT_FALSE(t.is_set_to(source.t()));
  t[0][1] = 10.0f;
  EXPECT_FLOAT_EQ(source[0][1].item<float>(), 10);
  t.set_();
  EXPECT_EQ(t.numel(), 0);
  EXPECT_ERROR("expected source of dtype", zeros({1}).set_(zeros({1}, kDouble)));
  EXPECT_ERROR("a leaf Variable that requires grad", zeros({1}).requires_grad_().set_(source));

  Tensor x = tensor({1.0, 2.0}).requires_grad_();
  Tensor a = x.alias();
  EXPECT_TRUE(a.is_alias_of(x));
  (a * a).sum().backward();
  EXPECT_VALUES(x.grad(), {2, 4});
  Tensor d = x.tensor_data();
  EXPECT_FALSE(d.requires_grad());
  EXPECT_TRUE(d.is_alias_of(x));
  EXPECT_TRUE(x.is_variable());
  EXPECT_EQ(x.to_dense().data_ptr(), x.data_ptr());
  EXPECT_EQ(x.to_dense(kDouble).dtype(), kDouble);
  Tensor s = x.new_empty_strided({2, 2}, {1, 2});
  EXPECT_EQ(s.strides(), IntArrayRef({1, 2}));
  EXPECT_EQ(s.dtype(), x.dtype());
}

TEST(StorageMethods, FillDiagonalAsPyTorch) {
  EXPECT_TRUE(equal(zeros({3, 3}).fill_diagonal_(5), eye(3) * 5));
  EXPECT_TRUE(equal(zeros({2, 3}).fill_diagonal_(5), eye(2, 3) * 5));
  // numpy's wrap on a tall matrix: every 4th element, so row 3 stays empty.
  Tensor tall = zeros({7, 3}).fill_diagonal_(5, true);
  Tensor want = cat({eye(3), zeros({1, 3}), eye(3)}) * 5;
  EXPECT_TRUE(equal(tall, want)) << tall;
  EXPECT_TRUE(equal(zeros({4, 3}).fill_diagonal_(1), eye(4, 3)));  // no wrap
  Tensor cube = zeros({2, 2, 2}).fill_diagonal_(1);
  EXPECT_FLOAT_EQ(cube.sum().item<float>(), 2);
  EXPECT_FLOAT_EQ(cube[1][1][1].item<float>(), 1);
  EXPECT_ERROR("dimensions must larger than 1", zeros({3}).fill_diagonal_(1));
  EXPECT_ERROR("all dimensions of input must be of equal length",
               zeros({2, 2, 3}).fill_diagonal_(1));
}

// Sample statistics of 200000 draws, within a few standard errors.
TEST(StorageMethods, InPlaceSamplersFollowTheirDistributions) {
  manual_seed(3);
  const int64_t n = 200000;
  Tensor e = empty({n}).exponential_(2.0);
  EXPECT_NEAR(e.mean().item<double>(), 0.5, 0.01);
  EXPECT_GE(e.min().item<double>(), 0);
  Tensor g = empty({n}, kLong).geometric_(0.25);
  EXPECT_NEAR(g.to(kDouble).mean().item<double>(), 4.0, 0.05);
  EXPECT_EQ(g.min().item<int64_t>(), 1);
  Tensor ln = empty({n}, kDouble).log_normal_(1.0, 0.5);
  EXPECT_NEAR(ln.log().mean().item<double>(), 1.0, 0.01);
  EXPECT_NEAR(ln.log().std().item<double>(), 0.5, 0.01);
  Tensor c = empty({n}).cauchy_(3.0, 2.0);
  EXPECT_NEAR(c.median().item<double>(), 3.0, 0.05);
  // Half the mass within one scale of the median.
  EXPECT_NEAR(((c - 3).abs() < 2).to(kDouble).mean().item<double>(), 0.5, 0.01);
  // The free functions take a generator: the same seed, the same draws.
  Generator g1(42), g2(42);
  Tensor a = empty({5}), b = empty({5});
  exponential_(a, 1.0, &g1);
  exponential_(b, 1.0, &g2);
  EXPECT_TRUE(equal(a, b));
  cauchy_(a, 0, 1, &g1);
  EXPECT_FALSE(equal(a, b));
  EXPECT_ERROR("exponential_ expects lambda >= 0.0", empty({2}).exponential_(-1));
  EXPECT_ERROR("exponential_: expected a floating point tensor, got Long",
               empty({2}, kLong).exponential_());
  EXPECT_ERROR("log_normal_ expects std > 0.0", empty({2}).log_normal_(1, 0));
  EXPECT_ERROR("geometric_ expects p to be in (0, 1)", empty({2}).geometric_(1));
}

TEST(StorageMethods, SpellingsMatchTheFreeFunctions) {
  manual_seed(5);
  Tensor x = randn({6, 4}, kDouble);
  EXPECT_TRUE(equal(x.quantile(0.3, 0), quantile(x, 0.3, 0)));
  EXPECT_TRUE(equal(x.nanquantile(tensor({0.1, 0.9}, kDouble)),
                    nanquantile(x, tensor({0.1, 0.9}, kDouble))));
  EXPECT_TRUE(allclose(x.t().cov(), cov(x.t())));
  Tensor spd = x.t().mm(x) + eye(4, kDouble);
  Tensor L = spd.cholesky();
  Tensor b = randn({4, 2}, kDouble);
  EXPECT_TRUE(allclose(spd.mm(b.cholesky_solve(L)), b));
  EXPECT_TRUE(allclose(L.cholesky_inverse().mm(spd), eye(4, kDouble)));
  auto [solution, unused] = b.triangular_solve(L, /*upper=*/false);
  EXPECT_TRUE(allclose(L.mm(solution), b));
  auto [counts, edges] = x.histogram(4);
  EXPECT_EQ(counts.sum().item<double>(), 24);
  EXPECT_SHAPE(edges, {5});
  Tensor y = x.clone();
  y.swapaxes_(0, 1);
  EXPECT_SHAPE(y, {4, 6});
  Tensor p = full({3}, 2.0, kDouble);
  p.float_power_(3);
  EXPECT_VALUES(p, {8, 8, 8});
  EXPECT_ERROR("float_power_ has dtype Float", full({3}, 2.0).float_power_(3));
  Tensor bits = tensor({1, 2, 3}, kInt);
  bits.bitwise_left_shift_(2);
  EXPECT_VALUES(bits, {4, 8, 12});
  Tensor cp = tensor({1.0, 2.0, 3.0});
  cp.cumprod_(0);
  EXPECT_VALUES(cp, {1, 2, 6});
  Tensor target = zeros({3});
  Tensor put = target.index_put({tensor({0, 2}, kLong)}, tensor({5.0f, 6.0f}));
  EXPECT_VALUES(put, {5, 0, 6});
  EXPECT_VALUES(target, {0, 0, 0});
  EXPECT_EQ(x.unsafe_chunk(3).size(), 3u);
  EXPECT_TRUE(equal(x.narrow_copy(0, 1, 1).view({-1}), x[1]));
}

}  // namespace
}  // namespace brasa
