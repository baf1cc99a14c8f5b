#include "../test_util.h"

using namespace brasa;
using namespace brasa::indexing;

TEST(Shape, ViewReshapeFlatten) {
  auto t = arange(12);
  EXPECT_SHAPE(t.view({3, -1}), {3, 4});
  EXPECT_SHAPE(t.view({2, 2, 3}).flatten(1), {2, 6});
  EXPECT_SHAPE(t.view({2, 2, 3}).flatten(), {12});
  EXPECT_SHAPE(t.view({3, 4}).unflatten(1, {2, 2}), {3, 2, 2});
  auto tt = t.view({3, 4}).t();
  EXPECT_THROW(tt.view({12}), Error);
  auto r = tt.reshape({12});  // copies
  EXPECT_FALSE(r.is_alias_of(t));
  EXPECT_VALUES(r, {0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11});
  EXPECT_TRUE(t.view({3, 4}).reshape({4, 3}).is_alias_of(t));
  // A non-contiguous view that can still be viewed: split a dim of a transposed tensor.
  auto nc = arange(24).view({2, 3, 4}).permute({1, 0, 2});
  EXPECT_TRUE(nc.view({3, 2, 2, 2}).is_alias_of(nc));
  EXPECT_SHAPE(zeros({0, 4}).view({-1, 2}), {0, 2});
  EXPECT_SHAPE(scalar_tensor(1).view({1, 1}), {1, 1});
}

TEST(Shape, PermuteTransposeSqueezeUnsqueezeExpand) {
  auto t = arange(6).view({1, 2, 3});
  EXPECT_SHAPE(t.permute({2, 0, 1}), {3, 1, 2});
  EXPECT_VALUES(t.permute({2, 0, 1}), {0, 3, 1, 4, 2, 5});
  EXPECT_SHAPE(t.transpose(0, 2), {3, 2, 1});
  EXPECT_SHAPE(t.squeeze(), {2, 3});
  EXPECT_SHAPE(t.squeeze(1), {1, 2, 3});
  EXPECT_SHAPE(t.unsqueeze(-1), {1, 2, 3, 1});
  EXPECT_SHAPE(t.unsqueeze(0), {1, 1, 2, 3});
  auto e = tensor({1, 2, 3}).expand({2, 3});
  EXPECT_EQ(e.stride(0), 0);
  EXPECT_VALUES(e, {1, 2, 3, 1, 2, 3});
  EXPECT_SHAPE(ones({3, 1}).expand({2, -1, 4}), {2, 3, 4});
  EXPECT_SHAPE(t.movedim(0, 2), {2, 3, 1});
  auto m = arange(6).view({2, 3});
  m.t_();
  EXPECT_SHAPE(m, {3, 2});
  m.unsqueeze_(0);
  EXPECT_SHAPE(m, {1, 3, 2});
  m.squeeze_();
  EXPECT_SHAPE(m, {3, 2});
}

TEST(Shape, NarrowSliceSelectUnfoldDiagonal) {
  auto t = arange(10);
  EXPECT_VALUES(t.narrow(0, 2, 3), {2, 3, 4});
  EXPECT_VALUES(t.narrow(0, -3, 2), {7, 8});
  EXPECT_VALUES(t.slice(0, 1, 8, 3), {1, 4, 7});
  EXPECT_VALUES(t.slice(0, -3), {7, 8, 9});
  EXPECT_VALUES(t.slice(0, 5, 100), {5, 6, 7, 8, 9});
  EXPECT_EQ(t.slice(0, 8, 2).numel(), 0);
  EXPECT_EQ(t.select(0, -1).item<int64_t>(), 9);
  auto u = arange(7).unfold(0, 3, 2);
  EXPECT_SHAPE(u, {3, 3});
  EXPECT_VALUES(u, {0, 1, 2, 2, 3, 4, 4, 5, 6});
  auto m = arange(9).view({3, 3});
  EXPECT_VALUES(m.diagonal(), {0, 4, 8});
  EXPECT_VALUES(m.diagonal(1), {1, 5});
  EXPECT_VALUES(m.diagonal(-2), {6});
  auto s = m.as_strided({2, 2}, {1, 3}, 1);
  EXPECT_VALUES(s, {1, 4, 2, 5});
}

TEST(Shape, ChunkSplitUnbind) {
  auto t = arange(10);
  auto c = t.chunk(3);
  ASSERT_EQ(c.size(), 3u);
  EXPECT_VALUES(c[2], {8, 9});
  auto s = t.split(4);
  ASSERT_EQ(s.size(), 3u);
  EXPECT_VALUES(s[1], {4, 5, 6, 7});
  auto w = t.split({2, 8});
  EXPECT_VALUES(w[0], {0, 1});
  auto u = arange(6).view({2, 3}).unbind(1);
  ASSERT_EQ(u.size(), 3u);
  EXPECT_VALUES(u[1], {1, 4});
  EXPECT_TRUE(c[0].is_alias_of(t));
}

TEST(Shape, CatStackAndFriends) {
  auto a = arange(4).view({2, 2}), b = arange(4, 6).view({2, 1});
  auto c = cat({a, b}, 1);
  EXPECT_SHAPE(c, {2, 3});
  EXPECT_VALUES(c, {0, 1, 4, 2, 3, 5});
  EXPECT_VALUES(cat({tensor({1}), tensor({2.5})}), {1, 2.5});  // promotes
  EXPECT_EQ(cat({tensor({1}), tensor({2.5})}).dtype(), kFloat);
  EXPECT_VALUES(cat({empty({0}), tensor({1.0, 2.0})}), {1, 2});  // legacy empty skip
  auto s = stack({tensor({1, 2}), tensor({3, 4})}, 1);
  EXPECT_SHAPE(s, {2, 2});
  EXPECT_VALUES(s, {1, 3, 2, 4});
  EXPECT_VALUES(hstack({tensor({1}), tensor({2, 3})}), {1, 2, 3});
  EXPECT_SHAPE(vstack({tensor({1, 2}), tensor({3, 4})}), {2, 2});
}

// Contiguous inputs of the result's dtype are copied run by run (the CPU's
// fast path); others element by element. Both against slices of the result,
// over every dim, with empty inputs, and split across threads.
TEST(Shape, CatOfContiguousInputsRunByRun) {
  manual_seed(7);
  Tensor a = randn({5, 3, 4}), b = randn({5, 2, 4}), e = randn({5, 0, 4});
  Tensor c = cat({a, e, b, a}, 1);
  EXPECT_SHAPE(c, {5, 8, 4});
  EXPECT_TRUE(equal(c.narrow(1, 0, 3), a));
  EXPECT_TRUE(equal(c.narrow(1, 3, 2), b));
  EXPECT_TRUE(equal(c.narrow(1, 5, 3), a));
  EXPECT_TRUE(equal(cat({a, a.flip({0})}, 0).narrow(0, 5, 5), a.flip({0})));
  EXPECT_TRUE(equal(cat({a, randn({5, 3, 1})}, 2).narrow(2, 0, 4), a));
  // A non-contiguous input and one of another dtype take the general copy.
  Tensor t = randn({4, 5}).t();
  EXPECT_TRUE(equal(cat({a.select(2, 0), t}, 1).narrow(1, 3, 4), t));
  Tensor mixed = cat({a, b.to(kDouble)}, 1);
  EXPECT_EQ(mixed.dtype(), kDouble);
  EXPECT_TRUE(equal(mixed.narrow(1, 0, 3), a.to(kDouble)));
  // Large enough for the pool to split the rows.
  Tensor big = randn({512, 100}), other = randint(0, 9, {512, 30}).to(kFloat);
  const int threads = get_num_threads();
  set_num_threads(2);
  Tensor joined = cat({big, other}, 1);
  set_num_threads(threads);
  EXPECT_TRUE(equal(joined.narrow(1, 0, 100), big));
  EXPECT_TRUE(equal(joined.narrow(1, 100, 30), other));
}

TEST(Shape, FlipRollRepeatTile) {
  auto m = arange(6).view({2, 3});
  EXPECT_VALUES(m.flip({1}), {2, 1, 0, 5, 4, 3});
  EXPECT_VALUES(m.flip({0, 1}), {5, 4, 3, 2, 1, 0});
  EXPECT_VALUES(arange(5).roll({2}), {3, 4, 0, 1, 2});
  EXPECT_VALUES(m.roll({1}, {1}), {2, 0, 1, 5, 3, 4});
  EXPECT_VALUES(m.roll({-1}), {1, 2, 3, 4, 5, 0});
  auto r = tensor({1, 2}).repeat({2, 2});
  EXPECT_SHAPE(r, {2, 4});
  EXPECT_VALUES(r, {1, 2, 1, 2, 1, 2, 1, 2});
  EXPECT_VALUES(tensor({1, 2}).tile({2}), {1, 2, 1, 2});
  EXPECT_SHAPE(m.tile({2}), {2, 6});
  EXPECT_VALUES(tril(ones({3, 3})), {1, 0, 0, 1, 1, 0, 1, 1, 1});
  EXPECT_VALUES(triu(ones({2, 3}), 1), {0, 1, 1, 0, 0, 1});
  // The methods, and the in-place forms on a bool mask (a causal mask).
  EXPECT_VALUES(ones({2, 3}).tril(-1), {0, 0, 0, 1, 0, 0});
  EXPECT_VALUES(ones({2, 2}).triu(), {1, 1, 0, 1});
  Tensor mask = ones({3, 3}, TensorOptions().dtype(kBool));
  mask.triu_(1);
  EXPECT_VALUES(mask.to(kLong), {0, 1, 1, 0, 0, 1, 0, 0, 0});
  Tensor lower = ones({2, 2});
  EXPECT_VALUES(lower.tril_(), {1, 0, 1, 1});
  EXPECT_VALUES(diag(tensor({1, 2})), {1, 0, 0, 2});
}

TEST(Shape, BroadcastTensors) {
  auto r = broadcast_tensors({ones({3, 1}), ones({4})});
  EXPECT_SHAPE(r[0], {3, 4});
  EXPECT_SHAPE(r[1], {3, 4});
}
