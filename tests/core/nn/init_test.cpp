// nn::init (nn/init.h): the initializers' distributions and libtorch's
// spellings of their arguments.
#include <cmath>

#include "../test_util.h"

namespace brasa {
namespace {

TEST(Init, OrthogonalXavierKaiming) {
  manual_seed(6);
  Tensor w = empty({3, 5});
  nn::init::orthogonal_(w, 2.0);
  EXPECT_TRUE(w.mm(w.t()).allclose(eye(3) * 4, 1e-5, 1e-5));  // orthonormal rows, times gain^2
  Tensor tall = empty({6, 2, 2});
  nn::init::orthogonal_(tall);
  Tensor m = tall.view({6, 4});
  EXPECT_TRUE(m.t().mm(m).allclose(eye(4), 1e-5, 1e-5));
  Tensor x = empty({100, 200});
  nn::init::xavier_uniform_(x);
  EXPECT_LE(x.abs().max().item<double>(), std::sqrt(6.0 / 300) + 1e-6);
  nn::init::kaiming_normal_(x, 0, kFanIn, kReLU);
  EXPECT_NEAR(x.std().item<double>(), std::sqrt(2.0 / 200), 0.005);
  EXPECT_THROW(nn::init::xavier_uniform_(empty({3})), Error);
}

// libtorch's spellings: FanModeType and NonlinearityType, calculate_gain,
// dirac_, eye_, sparse_.
TEST(Init, LibtorchSpellingsAndTheRestOfTheInitializers) {
  manual_seed(7);
  EXPECT_DOUBLE_EQ(nn::init::calculate_gain(kReLU), std::sqrt(2.0));
  EXPECT_DOUBLE_EQ(nn::init::calculate_gain(kTanh), 5.0 / 3);
  EXPECT_DOUBLE_EQ(nn::init::calculate_gain(kLeakyReLU, 0.2), std::sqrt(2.0 / 1.04));
  EXPECT_DOUBLE_EQ(nn::init::calculate_gain(kLeakyReLU), std::sqrt(2.0 / 1.0001));
  for (nn::init::NonlinearityType n :
       {nn::init::NonlinearityType(kLinear), nn::init::NonlinearityType(kConv2D),
        nn::init::NonlinearityType(kConvTranspose3D), nn::init::NonlinearityType(kSigmoid)})
    EXPECT_DOUBLE_EQ(nn::init::calculate_gain(n), 1.0);
  EXPECT_ERROR("no gain for GELU", nn::init::calculate_gain(kGELU));
  EXPECT_ERROR("an interpolation mode is not a nonlinearity", nn::init::calculate_gain(kBilinear));
  // A ResNet's init: fan_out, relu: std = sqrt(2 / (out * k * k)).
  Tensor w = empty({64, 32, 3, 3});
  nn::init::kaiming_normal_(w, 0, kFanOut, kReLU);
  EXPECT_NEAR(w.std().item<double>(), std::sqrt(2.0 / (64 * 9)), 0.002);
  nn::init::kaiming_uniform_(w, 0.2, kFanIn, kLeakyReLU);
  EXPECT_LE(w.abs().max().item<double>(), std::sqrt(3.0 * 2.0 / 1.04 / (32 * 9)) + 1e-6);
  auto [fan_in, fan_out] = nn::init::_calculate_fan_in_and_fan_out(w);
  EXPECT_EQ(fan_in, 32 * 9);
  EXPECT_EQ(fan_out, 64 * 9);
  // dirac_: the convolution with it is the identity on the first channels.
  Tensor d = empty({4, 3, 3, 3});
  nn::init::dirac_(d);
  Tensor image = randn({1, 3, 5, 5});
  Tensor y = conv2d(image, d, {}, 1, 1);
  EXPECT_TRUE(y.narrow(1, 0, 3).allclose(image));
  EXPECT_EQ(y.select(1, 3).abs().sum().item<double>(), 0);
  EXPECT_ERROR("Only tensors with 3, 4, or 5 dimensions", nn::init::dirac_(empty({3, 3})));
  EXPECT_ERROR("eye_: Only tensors with 2 dimensions", nn::init::eye_(empty({3})));
  EXPECT_ERROR("sparse_: Only tensors with 2 dimensions", nn::init::sparse_(empty({3}), 0.5));
  EXPECT_ERROR("sparse_: sparsity must be in [0, 1]", nn::init::sparse_(empty({3, 3}), 1.5));
  Tensor e = empty({2, 3});
  nn::init::eye_(e);
  EXPECT_VALUES(e.flatten(), {1, 0, 0, 0, 1, 0});
  Tensor sp = empty({10, 6});
  nn::init::sparse_(sp, 0.3, 0.5);
  for (int64_t c = 0; c < 6; ++c) EXPECT_EQ((sp.select(1, c) == 0).sum().item<int64_t>(), 3);
  Tensor ints = empty({3}, kLong);
  nn::init::constant_(ints, 7);
  EXPECT_VALUES(ints, {7, 7, 7});
}

}  // namespace
}  // namespace brasa
