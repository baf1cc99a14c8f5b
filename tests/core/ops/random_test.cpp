#include <brasa/ops/mersenne_twister.h>

#include <random>

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

// The Generator's engine is MT19937-64: word for word std::mt19937_64's
// stream, whether drawn one at a time or in blocks of any length.
TEST(Random, TheTwisterIsTheStandardStream) {
  for (uint64_t seed : {uint64_t{0}, uint64_t{5489}, uint64_t{67280421310721}, ~uint64_t{0}}) {
    std::mt19937_64 reference(seed);
    MersenneTwister64 twister(seed);
    std::vector<uint64_t> block(1000);
    for (int64_t length : {1, 7, 311, 312, 313, 1000, 2}) {
      twister.fill(block.data(), length);
      for (int64_t k = 0; k < length; ++k) ASSERT_EQ(block[k], reference()) << "seed " << seed;
      ASSERT_EQ(twister(), reference()) << "seed " << seed;
    }
  }
  MersenneTwister64 reseeded(1);
  reseeded();
  reseeded.seed(9);
  EXPECT_EQ(reseeded(), std::mt19937_64(9)());
}

// Each distribution is its formula applied to the stream's words in element
// order: uniform and bernoulli one word each; normal by Box-Muller on pairs
// of words, in double for double tensors and in float (24-bit uniforms, the
// vectorized log and sincos) for the others, within float rounding of the
// same formula in double.
TEST(Random, DistributionsAreTheirFormulasOfTheWords) {
  const uint64_t seed = 123;
  const int64_t n = 5001;  // odd: the last normal value is its pair's first
  auto word_float = [](uint64_t w) { return static_cast<double>(w >> 40) * 0x1.0p-24; };
  auto word_double = [](uint64_t w) { return static_cast<double>(w >> 11) * 0x1.0p-53; };

  Generator g(seed);
  std::mt19937_64 words(seed);
  Tensor u = rand({n}, &g);
  Tensor b = empty({n}, TensorOptions().dtype(kDouble));
  bernoulli_(b, 0.3, &g);
  for (int64_t i = 0; i < n; ++i)
    ASSERT_EQ(u.data_ptr<float>()[i], static_cast<float>(word_float(words()))) << i;
  for (int64_t i = 0; i < n; ++i)
    ASSERT_EQ(b.data_ptr<double>()[i], word_double(words()) < 0.3 ? 1.0 : 0.0) << i;

  Tensor nf = normal(0.5, 2.0, {n}, &g);
  Tensor nd = normal(0.5, 2.0, {n}, &g, TensorOptions().dtype(kDouble));
  Tensor nh = normal(0.5, 2.0, {n}, &g, TensorOptions().dtype(kBFloat16));
  auto check_normal = [&](const Tensor& t, auto to_uniform, double tolerance) {
    Tensor d = t.to(kDouble);
    double worst = 0;
    for (int64_t i = 0; i < n; i += 2) {
      const double u1 = 1.0 - to_uniform(words()), u2 = to_uniform(words());
      const double r = std::sqrt(-2.0 * std::log(u1)), th = 2.0 * M_PI * u2;
      const double first = 0.5 + 2.0 * r * std::cos(th), second = 0.5 + 2.0 * r * std::sin(th);
      worst = std::max(worst, std::abs(d.data_ptr<double>()[i] - first) / (1 + std::abs(first)));
      if (i + 1 < n)
        worst = std::max(worst,
                         std::abs(d.data_ptr<double>()[i + 1] - second) / (1 + std::abs(second)));
    }
    EXPECT_LE(worst, tolerance) << t.dtype();
  };
  check_normal(nf, word_float, 2e-6);
  check_normal(nd, word_double, 1e-15);
  check_normal(nh, word_float, 1e-2);  // bfloat16's rounding
}

// The float normal path over a million values: the moments and tails of N(0, 1).
TEST(Random, FloatNormalsHaveTheMomentsAndTails) {
  Generator g(5);
  Tensor x = randn({1 << 20}, &g);
  const double mean = x.mean().item<double>(), sd = x.std().item<double>();
  EXPECT_NEAR(mean, 0.0, 0.005);
  EXPECT_NEAR(sd, 1.0, 0.005);
  EXPECT_NEAR(((x * x * x * x).mean()).item<double>(), 3.0, 0.05);  // kurtosis
  EXPECT_NEAR((x.abs() > 1.96).to(kDouble).mean().item<double>(), 0.05, 0.002);
  EXPECT_NEAR((x.abs() > 3).to(kDouble).mean().item<double>(), 0.0027, 0.0005);
  EXPECT_LE(x.abs().max().item<float>(), 5.8f);  // 24-bit uniforms: r <= sqrt(2 log 2^24)
}

// Dropout's mask is bernoulli_ then div_: kept elements 1 / keep as div_
// rounds it in the tensor's dtype, others 0, on any layout.
TEST(Random, DropoutMaskIsBernoulliThenDivide) {
  for (ScalarType t : {kFloat, kDouble, kHalf, kBFloat16}) {
    for (double keep : {0.9, 0.5, 1.0 / 3}) {
      Generator g1(11), g2(11);
      Tensor expected = empty({1001}, TensorOptions().dtype(t));
      bernoulli_(expected, keep, &g1);
      expected.div_(keep);
      Tensor mask = empty({1001}, TensorOptions().dtype(t));
      detail::dropout_mask_(mask, keep, &g2);
      EXPECT_TRUE(mask.equal(expected)) << t << " keep " << keep;
      Tensor strided = empty({1001, 2}, TensorOptions().dtype(t)).select(1, 0);
      Generator g3(11);
      detail::dropout_mask_(strided, keep, &g3);
      EXPECT_TRUE(strided.equal(expected)) << t << " keep " << keep << ", strided";
    }
  }
}
