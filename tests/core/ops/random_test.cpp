#include "../test_util.h"

using namespace brasa;

TEST(Random, SameSeedSameNumbersAnyThreadCount) {
  manual_seed(42);
  set_num_threads(1);
  auto a = randn({1000});
  auto ai = randint(0, 10, {100});
  manual_seed(42);
  set_num_threads(2);
  auto b = randn({1000});
  auto bi = randint(0, 10, {100});
  EXPECT_TRUE(a.equal(b));
  EXPECT_TRUE(ai.equal(bi));
  Generator g(7), h(7);
  EXPECT_TRUE(rand({10}, &g).equal(rand({10}, &h)));
}

TEST(Random, Distributions) {
  manual_seed(0);
  auto u = rand({100000});
  EXPECT_GE(u.min().item<float>(), 0.0f);
  EXPECT_LT(u.max().item<float>(), 1.0f);
  EXPECT_NEAR(u.mean().item<float>(), 0.5, 0.01);
  auto n = randn({100000}, kDouble);
  EXPECT_NEAR(n.mean().item<double>(), 0.0, 0.02);
  EXPECT_NEAR(n.std().item<double>(), 1.0, 0.02);
  auto nn = normal(3.0, 2.0, {100000});
  EXPECT_NEAR(nn.mean().item<float>(), 3.0, 0.05);
  EXPECT_NEAR(nn.std().item<float>(), 2.0, 0.05);
  auto ri = randint(-3, 3, {10000});
  EXPECT_EQ(ri.dtype(), kLong);
  EXPECT_EQ(ri.min().item<int64_t>(), -3);
  EXPECT_EQ(ri.max().item<int64_t>(), 2);
  auto p = randperm(50);
  EXPECT_TRUE(std::get<0>(p.sort()).equal(arange(50)));
  auto e = empty({20000});
  e.uniform_(-2, 2);
  EXPECT_GE(e.min().item<float>(), -2.0f);
  EXPECT_NEAR(e.mean().item<float>(), 0.0, 0.05);
  e.bernoulli_(0.25);
  EXPECT_NEAR(e.mean().item<float>(), 0.25, 0.02);
  e.normal_(1, 0.5);
  EXPECT_NEAR(e.mean().item<float>(), 1.0, 0.02);
  auto bp = bernoulli(full({10000}, 0.75));
  EXPECT_NEAR(bp.mean().item<float>(), 0.75, 0.02);
  auto m = multinomial(tensor({0.0, 1.0, 0.0}), 3, true);
  EXPECT_VALUES(m, {1, 1, 1});
  auto nt = randn({4, 4}).t();  // non-contiguous in-place fill
  nt.uniform_();
  EXPECT_GE(nt.min().item<float>(), 0.0f);
}
