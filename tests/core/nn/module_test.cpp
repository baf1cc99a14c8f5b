// Modules: registry, names, state_dict, train/eval, layers' values.
#include <algorithm>

#include <brasa/device/device_runtime.h>

#include "../test_util.h"

namespace brasa {
namespace {

struct NetImpl : nn::Module {
  NetImpl() : nn::Module("Net") {
    features = register_module("features",
                               nn::Sequential(nn::Conv2d(1, 2, 3), nn::ReLU(), nn::MaxPool2d(2)));
    fc = register_module("fc", nn::Linear(8, 3));
    register_buffer("steps", zeros({1}));
  }
  Tensor forward(const Tensor& x) { return fc->forward(features->forward(x).flatten(1)); }
  nn::Sequential features{nullptr};
  nn::Linear fc{nullptr};
};
BRASA_MODULE(Net);

TEST(Module, NamesStateDictAndRoundTrip) {
  manual_seed(0);
  Net net;
  auto names = net->named_parameters().keys();
  EXPECT_EQ(names, (std::vector<std::string>{"features.0.weight", "features.0.bias", "fc.weight",
                                             "fc.bias"}));
  auto sd = net->state_dict();
  EXPECT_TRUE(sd.contains("steps"));
  EXPECT_EQ(sd.size(), 5u);
  Tensor x = randn({2, 1, 6, 6});
  Tensor y = net->forward(x);
  EXPECT_SHAPE(y, {2, 3});

  manual_seed(1);
  Net other;
  EXPECT_FALSE(other->forward(x).allclose(y));
  other->load_state_dict(net->state_dict());
  EXPECT_TRUE(other->forward(x).allclose(y));

  auto partial = net->state_dict();
  OrderedDict<std::string, Tensor> missing;
  for (auto& item : partial)
    if (item.key() != "fc.bias") missing.insert(item.key(), item.value());
  EXPECT_THROW(other->load_state_dict(missing), Error);
  other->load_state_dict(missing, /*strict=*/false);
  OrderedDict<std::string, Tensor> wrong;
  for (auto& item : partial)
    wrong.insert(item.key(), item.key() == "fc.weight" ? zeros({3, 9}) : item.value());
  try {
    other->load_state_dict(wrong);
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("size mismatch for fc.weight"), std::string::npos)
        << e.what();
  }
}

TEST(Module, TrainEvalZeroGradModulesAndPrinting) {
  Net net;
  EXPECT_TRUE(net->fc->is_training());
  net->eval();
  EXPECT_FALSE(net->features->children()[0]->is_training());
  net->train();
  net->forward(randn({1, 1, 6, 6})).sum().backward();
  EXPECT_TRUE(net->fc->weight.grad().defined());
  net->zero_grad(false);
  EXPECT_VALUES(net->fc->bias.grad(), {0, 0, 0});
  net->zero_grad();
  EXPECT_FALSE(net->fc->bias.grad().defined());
  EXPECT_EQ(
      net->named_modules().keys(),
      (std::vector<std::string>{"", "features", "features.0", "features.1", "features.2", "fc"}));
  std::ostringstream os;
  os << *net;
  EXPECT_TRUE(os.str().starts_with("Net(\n  (features): torch::nn::Sequential(\n"));
  EXPECT_NE(os.str().find("(fc): torch::nn::Linear(in_features=8, out_features=3, bias=true)"),
            std::string::npos)
      << os.str();
  EXPECT_THROW(net->register_parameter("a.b", zeros({1})), Error);
  EXPECT_THROW(net->register_parameter("fc", zeros({1})), Error)
      << "a submodule already has that name";
}

TEST(Module, ReassigningAParameterMemberUpdatesTheRegistry) {
  nn::Linear fc(3, 2);
  Tensor w = ones({2, 3}).requires_grad_();
  fc->weight = w;
  EXPECT_TRUE(fc->named_parameters()["weight"].is_same(w));
  EXPECT_TRUE(fc->state_dict()["weight"].is_same(w));
  EXPECT_TRUE(fc->parameters()[0].is_same(w));
  EXPECT_VALUES(fc(ones({1, 3})) - fc->bias, {3, 3});
  nn::Linear nobias(nn::LinearOptions(3, 2).bias(false));
  EXPECT_EQ(nobias->parameters().size(), 1u);
  EXPECT_FALSE(nobias->bias.defined());
}

TEST(Layers, LinearMatchesItsFormulaAndDefaultInitBounds) {
  manual_seed(3);
  nn::Linear fc(4, 3);
  Tensor x = randn({5, 4});
  EXPECT_TRUE(fc(x).allclose(x.mm(fc->weight.t()) + fc->bias, 1e-5, 1e-6));
  EXPECT_LE(fc->weight.abs().max().item<double>(),
            0.5 + 1e-7);  // kaiming_uniform(a=sqrt 5): 1/sqrt(in)
  EXPECT_LE(fc->bias.abs().max().item<double>(), 0.5 + 1e-7);
  EXPECT_THROW(fc(randn({2, 5})), Error);
}

// conv2d against a direct sum, with stride, padding, dilation and groups.
TEST(Layers, Conv2dMatchesDirectSum) {
  manual_seed(4);
  auto opt = TensorOptions().dtype(kDouble);
  Tensor x = randn({2, 4, 6, 5}, opt), w = randn({6, 2, 3, 2}, opt), b = randn({6}, opt);
  const int64_t sh = 2, sw = 1, ph = 1, pw = 0, dh = 1, dw = 2, groups = 2;
  Tensor y = conv2d(x, w, b, {sh, sw}, {ph, pw}, {dh, dw}, groups);
  auto xa = x.accessor<double, 4>(), wa = w.accessor<double, 4>();
  for (int64_t n = 0; n < 2; ++n)
    for (int64_t o = 0; o < 6; ++o)
      for (int64_t oh = 0; oh < y.size(2); ++oh)
        for (int64_t ow = 0; ow < y.size(3); ++ow) {
          double s = b[o].item<double>();
          int64_t g = o / 3;
          for (int64_t c = 0; c < 2; ++c)
            for (int64_t i = 0; i < 3; ++i)
              for (int64_t j = 0; j < 2; ++j) {
                int64_t ih = oh * sh - ph + i * dh, iw = ow * sw - pw + j * dw;
                if (ih >= 0 && ih < 6 && iw >= 0 && iw < 5)
                  s += xa[n][g * 2 + c][ih][iw] * wa[o][c][i][j];
              }
          EXPECT_NEAR(y[n][o][oh][ow].item<double>(), s, 1e-10);
        }
  EXPECT_SHAPE(y, {2, 6, 3, 3});
  EXPECT_THROW(conv2d(x, randn({6, 3, 3, 3}, opt)), Error);
  EXPECT_THROW(conv2d(x.select(0, 0), w), Error);
}

TEST(Layers, ConvTranspose2dMatchesPyTorch) {
  auto d = TensorOptions().dtype(kDouble);
  Tensor x = (arange(48, d) * 0.3).sin().view({2, 4, 3, 2}),
         w = (arange(72, d) * 0.2).cos().view({4, 3, 3, 2});
  Tensor b = tensor({0.1, -0.2, 0.3, 0.0, 0.5, -0.1}, d);
  Tensor y = conv_transpose2d(x, w, b, {2, 1}, {1, 0}, {1, 0}, 2, {1, 2});
  EXPECT_SHAPE(y, {2, 6, 6, 4});
  EXPECT_CLOSE(
      y.flatten().slice(0, 0, 12),
      (std::vector<double>{-0.536549291617, -0.192039160684, -0.377439339375, -0.079294381599,
                           -0.240380206008, 0.44066870374, 0.009898177548, 0.592527975009,
                           0.178557958706, 0.54213772961, 0.234866409301, 0.536979985525}),
      1e-10);
  EXPECT_NEAR(y.sum().item<double>(), 125.89341759, 1e-7);
  EXPECT_NEAR((y * y).sum().item<double>(), 373.2908598699, 1e-7);
  Tensor xi = x.detach().requires_grad_(), wi = w.detach().requires_grad_(),
         bi = b.detach().requires_grad_();
  EXPECT_TRUE(autograd::gradcheck(
      [](const autograd::variable_list& v) {
        return autograd::variable_list{
            conv_transpose2d(v[0], v[1], v[2], {2, 1}, {1, 0}, {1, 0}, 2, {1, 2})};
      },
      {xi, wi, bi}));
  nn::ConvTranspose2d up(nn::ConvTranspose2dOptions(3, 2, 2).stride(2).output_padding(1));
  EXPECT_SHAPE(up(randn({1, 3, 4, 5})), {1, 2, 9, 11});
}

TEST(Layers, SamePaddingMatchesPyTorch) {
  auto d = TensorOptions().dtype(kDouble);
  Tensor x = arange(25, d).view({1, 1, 5, 5}), w = arange(16, d).view({1, 1, 4, 4});
  // PyTorch: F.conv2d(x, w, padding="same") == F.conv2d(F.pad(x, (1, 2, 1, 2)), w)
  Tensor y = conv2d(x, w, Tensor(), {1, 1}, kSame);
  EXPECT_SHAPE(y, {1, 1, 5, 5});
  EXPECT_VALUES(y[0][0][0], {666, 916, 1030, 774, 515});
  EXPECT_EQ(::brasa::testing::values(conv2d(x, w, Tensor(), {1, 1}, kValid)),
            ::brasa::testing::values(conv2d(x, w)));
  nn::Conv2d same(nn::Conv2dOptions(3, 4, 4).padding(kSame).dilation(2));
  EXPECT_SHAPE(same(randn({2, 3, 9, 7})), {2, 4, 9, 7});
  nn::Conv1d same1(nn::Conv1dOptions(2, 3, 4).padding(kSame));
  EXPECT_SHAPE(same1(randn({2, 2, 10})), {2, 3, 10});
  EXPECT_ERROR("Conv2d: padding kSame needs stride 1",
               nn::Conv2d(nn::Conv2dOptions(3, 4, 3).padding(kSame).stride(2)));
  EXPECT_ERROR("Conv1d: padding kSame needs stride 1",
               nn::Conv1d(nn::Conv1dOptions(3, 4, 3).padding(kSame).stride(2)));
  EXPECT_ERROR("conv2d: padding=\"same\" needs stride 1", conv2d(x, w, Tensor(), {2, 1}, kSame));
  EXPECT_ERROR("conv2d: expected a 4-D weight, got shape [1, 4, 4]",
               conv2d(x, w[0], Tensor(), {1, 1}, kSame));
  EXPECT_ERROR("conv3d: expected a 5-D weight, got shape [1, 1, 4, 4]",
               conv3d(x, w, Tensor(), {1}, kSame));
}

TEST(Layers, Conv3dMatchesPyTorch) {
  auto d = TensorOptions().dtype(kDouble);
  Tensor x = arange(320, d).view({1, 4, 5, 4, 4}).sin(),
         w = arange(96, d).view({4, 2, 2, 2, 3}).cos();
  Tensor b = tensor({0.5, -1.0, 2.0, 0.0}, d);
  // PyTorch: F.conv3d(x, w, b, stride=(2,1,1), padding=(1,0,1), dilation=(2,1,1), groups=2)
  Tensor y = conv3d(x, w, b, {2, 1, 1}, {1, 0, 1}, {2, 1, 1}, 2);
  EXPECT_SHAPE(y, {1, 4, 3, 3, 4});
  EXPECT_TRUE(y.is_contiguous());
  EXPECT_CLOSE(y[0][1][1][2],
               (std::vector<double>{-5.4918836512, 1.7715776757, 6.9880033749, 2.9519890491}),
               1e-9);
  EXPECT_NEAR(y.sum().item<double>(), 27.0822698683, 1e-9);
  // padding="same" with an even kernel: the extra zero goes at the end.
  Tensor y2 =
      conv3d(arange(27, d).view({1, 1, 3, 3, 3}), ones({1, 1, 2, 2, 2}, d), Tensor(), {1}, kSame);
  EXPECT_SHAPE(y2, {1, 1, 3, 3, 3});
  EXPECT_VALUES(y2[0][0][0].flatten(), {52, 60, 32, 76, 84, 44, 44, 48, 25});

  nn::Conv3d conv(nn::Conv3dOptions(3, 6, {3, 1, 2}).stride(2).padding({1, 0, 0}).groups(3));
  EXPECT_SHAPE(conv->weight, {6, 1, 3, 1, 2});
  EXPECT_SHAPE(conv(randn({2, 3, 7, 5, 6})), {2, 6, 4, 3, 3});
  std::ostringstream os;
  os << *conv;
  EXPECT_EQ(os.str(),
            "torch::nn::Conv3d(3, 6, kernel_size=[3, 1, 2], stride=[2, 2, 2], padding=[1, 0, 0], "
            "groups=3)");
  EXPECT_ERROR("conv3d: expected a 5-D input [N, C, D, H, W]", conv(randn({3, 7, 5, 6})));
  EXPECT_ERROR("conv3d: expected input [2, 4, 7, 5, 6] to have 3 channels",
               conv(randn({2, 4, 7, 5, 6})));
  EXPECT_ERROR("conv3d: kernel depth 3 (dilation 1) is larger than the padded input depth 2",
               conv3d(randn({1, 1, 2, 3, 3}), randn({1, 1, 3, 1, 1})));
  EXPECT_ERROR(
      "Conv3d: in_channels (4) and out_channels (6) must be positive and divisible by groups (3)",
      nn::Conv3d(nn::Conv3dOptions(4, 6, 3).groups(3)));
}

// F::conv*/pool* with libtorch's option structs, against PyTorch's values.
TEST(Functional, ConvAndPoolOptionStructsMatchPyTorch) {
  auto d = TensorOptions().dtype(kDouble);
  Tensor x = arange(42, d).view({2, 3, 7}).sin();
  EXPECT_CLOSE(
      F::max_pool1d(x, F::MaxPool1dFuncOptions(3).stride(2).padding(1).ceil_mode(true))[1][2],
      (std::vector<double>{-0.4281826695, 0.2963685787, 0.9637953863, 0.7451131605}), 1e-9);
  EXPECT_CLOSE(
      F::avg_pool1d(x,
                    F::AvgPool1dFuncOptions(2).stride(2).padding(1).count_include_pad(false))[1][2],
      (std::vector<double>{-0.4281826695, -0.8176584934, 0.6300819825, 0.2932452458}), 1e-9);
  Tensor y = arange(60, d).view({1, 2, 5, 6}).cos();
  Tensor mp = F::max_pool2d(
      y,
      F::MaxPool2dFuncOptions({2, 3}).stride({1, 2}).padding(1).dilation({2, 1}).ceil_mode(true));
  EXPECT_SHAPE(mp, {1, 2, 5, 4});
  EXPECT_CLOSE(mp[0][1].flatten().narrow(0, 0, 6),
               (std::vector<double>{0.7654140519, 0.955073644, 0.2666429324, -0.9873392775,
                                    0.9147423578, 0.9998433086}),
               1e-9);
  auto [values, indices] = F::max_pool2d_with_indices(y, F::MaxPool2dFuncOptions(2));
  EXPECT_TRUE(values.equal(max_pool2d(y, {2, 2})));
  EXPECT_SHAPE(indices, {1, 2, 2, 3});
  EXPECT_CLOSE(
      F::avg_pool2d(
          y, F::AvgPool2dFuncOptions(2).stride(2).padding(1).ceil_mode(true).count_include_pad(
                 false))[0][0]
          .flatten()
          .narrow(0, 0, 4),
      (std::vector<double>{1.0, 0.0620777347, -0.8218180587, 0.2836621855}), 1e-9);

  // The conv forms are the ops with the options spelled out.
  Tensor img = randn({2, 4, 7, 6}, d), w = randn({6, 2, 3, 3}, d), b = randn({6}, d);
  EXPECT_TRUE(
      F::conv2d(img, w,
                F::Conv2dFuncOptions().bias(b).stride({2, 1}).padding(1).dilation({1, 2}).groups(2))
          .equal(conv2d(img, w, b, {2, 1}, {1, 1}, {1, 2}, 2)));
  EXPECT_TRUE(F::conv2d(img, w, F::Conv2dFuncOptions().padding(kSame).groups(2))
                  .equal(conv2d(img, w, Tensor(), {1, 1}, kSame, {1, 1}, 2)));
  Tensor seq = randn({2, 4, 9}, d), w1 = randn({3, 4, 2}, d);
  EXPECT_TRUE(
      F::conv1d(seq, w1, F::Conv1dFuncOptions().stride(2)).equal(conv1d(seq, w1, Tensor(), {2})));
  Tensor vol = randn({1, 2, 4, 4, 4}, d), w3 = randn({3, 2, 2, 2, 2}, d);
  EXPECT_TRUE(F::conv3d(vol, w3, F::Conv3dFuncOptions().padding({1, 0, 0}))
                  .equal(conv3d(vol, w3, Tensor(), {1}, {1, 0, 0})));
  Tensor wt = randn({4, 3, 3, 3}, d);
  EXPECT_TRUE(
      F::conv_transpose2d(img, wt, F::ConvTranspose2dFuncOptions().stride(2).output_padding(1))
          .equal(conv_transpose2d(img, wt, Tensor(), {2, 2}, {0, 0}, {1, 1})));
  Tensor wt1 = randn({4, 2, 3}, d);
  EXPECT_TRUE(F::conv_transpose1d(seq, wt1, F::ConvTranspose1dFuncOptions().padding(1))
                  .equal(conv_transpose1d(seq, wt1, Tensor(), {1}, {1})));
  EXPECT_ERROR("expected 1 or 2 values, got 3", F::Conv2dFuncOptions().stride({1, 2, 3}));
  EXPECT_ERROR("max_pool1d: expected a 2-D or 3-D input, got shape [7]",
               F::max_pool1d(randn({7}), F::MaxPool1dFuncOptions(2)));
}

TEST(Functional, PadModesAndConvPaddingModesMatchPyTorch) {
  auto d = TensorOptions().dtype(kDouble);
  Tensor x = arange(24, d).view({1, 2, 3, 4});
  EXPECT_VALUES(
      F::pad(x, F::PadFuncOptions({2, 1, 1, 2}).mode(kReflect))[0][1].flatten(),
      {18, 17, 16, 17, 18, 19, 18, 14, 13, 12, 13, 14, 15, 14, 18, 17, 16, 17, 18, 19, 18,
       22, 21, 20, 21, 22, 23, 22, 18, 17, 16, 17, 18, 19, 18, 14, 13, 12, 13, 14, 15, 14});
  EXPECT_VALUES(F::pad(x, F::PadFuncOptions({2, 1, 1, 2}).mode(kReplicate))[0][0].flatten(),
                {0, 0, 0, 1, 2,  3,  3,  0, 0, 0, 1, 2,  3,  3,  4, 4, 4, 5, 6,  7,  7,
                 8, 8, 8, 9, 10, 11, 11, 8, 8, 8, 9, 10, 11, 11, 8, 8, 8, 9, 10, 11, 11});
  Tensor circ = F::pad(x, F::PadFuncOptions({4, 1, 3, 0}).mode(kCircular));
  EXPECT_SHAPE(circ, {1, 2, 6, 9});
  EXPECT_VALUES(circ[0][1][0], {12, 13, 14, 15, 12, 13, 14, 15, 12});
  EXPECT_VALUES(circ[0][1][5], {20, 21, 22, 23, 20, 21, 22, 23, 20});
  EXPECT_VALUES(
      F::pad(arange(6, d).view({1, 1, 6}), F::PadFuncOptions({3, 2}).mode(kReflect)).flatten(),
      {3, 2, 1, 0, 1, 2, 3, 4, 5, 4, 3});
  EXPECT_VALUES(F::pad(x, F::PadFuncOptions({1, 0}).value(-1.0))[0][0][0], {-1, 0, 1, 2, 3});

  Tensor w = arange(24, d).view({2, 2, 3, 2}).cos(), b = tensor({0.5, -0.25}, d);
  nn::Conv2d reflect(
      nn::Conv2dOptions(2, 2, {3, 2}).padding({1, 2}).dilation({1, 2}).padding_mode(kReflect));
  nn::Conv2d circular(nn::Conv2dOptions(2, 2, {3, 2}).padding(kSame).padding_mode(kCircular));
  for (nn::Conv2d* c : {&reflect, &circular}) {
    (*c)->to(kDouble);
    NoGradGuard g;
    (*c)->weight.copy_(w);
    (*c)->bias.copy_(b);
  }
  Tensor yr = reflect(x);
  EXPECT_SHAPE(yr, {1, 2, 3, 6});
  EXPECT_CLOSE(yr[0][1][0],
               (std::vector<double>{2.1905242621, 1.87989249, 1.5692607179, 1.4413682263,
                                    1.7519999984, 2.0626317706}),
               1e-9);
  EXPECT_NEAR(yr.sum().item<double>(), -347.3837535147, 1e-8);
  Tensor yc = circular(x);
  EXPECT_SHAPE(yc, {1, 2, 3, 4});
  EXPECT_NEAR(yc.sum().item<double>(), -61.5901154887, 1e-8);
  EXPECT_CLOSE(yc[0][0][0],
               (std::vector<double>{19.2712163647, 18.8581943162, 18.4451722677, 19.3074714785}),
               1e-9);
  nn::Conv1d rep(nn::Conv1dOptions(1, 1, 3).padding(2).bias(false).padding_mode(kReplicate));
  {
    NoGradGuard g;
    rep->weight.copy_(tensor({1.0, 2.0, 3.0}).view({1, 1, 3}));
  }
  EXPECT_VALUES(rep(arange(6, kFloat).view({1, 1, 6})).flatten(), {0, 3, 8, 14, 20, 26, 29, 30});
  nn::Conv3d vol(nn::Conv3dOptions(1, 1, 3).padding(1).padding_mode(kCircular));
  EXPECT_SHAPE(vol(randn({1, 1, 4, 4, 4})), {1, 1, 4, 4, 4});

  EXPECT_ERROR("pad: reflect padding (3, 0) of dim 2 must be smaller than its size 3",
               F::pad(x, F::PadFuncOptions({0, 0, 3, 0}).mode(kReflect)));
  EXPECT_ERROR("pad: circular padding (5, 0) of dim 3 needs a size of at least 5, got 4",
               F::pad(x, F::PadFuncOptions({5, 0}).mode(kCircular)));
  EXPECT_ERROR(
      "pad: replicate padding takes an even number of values for at most dim - 1 = 3 last dims",
      F::pad(x, F::PadFuncOptions({1, 1, 1, 1, 1, 1, 1, 1}).mode(kReplicate)));
  EXPECT_ERROR("pad: mode kZeros is a convolution padding_mode; use kConstant",
               F::pad(x, F::PadFuncOptions({1, 1}).mode(kZeros)));
  EXPECT_ERROR("Conv2d: padding_mode must be kZeros, kReflect, kReplicate or kCircular",
               nn::Conv2d(nn::Conv2dOptions(2, 2, 3).padding_mode(kConstant)));
  EXPECT_ERROR("ConvTranspose2d: only padding_mode kZeros is supported",
               nn::ConvTranspose2d(nn::ConvTranspose2dOptions(2, 2, 3).padding_mode(kReflect)));
  EXPECT_ERROR("ConvTranspose1d: only padding_mode kZeros is supported",
               nn::ConvTranspose1d(nn::ConvTranspose1dOptions(2, 2, 3).padding_mode(kCircular)));
}

TEST(Layers, ConvTranspose1dMatchesPyTorch) {
  auto d = TensorOptions().dtype(kDouble);
  Tensor x = arange(14, d).view({1, 2, 7}), w = arange(12, d).view({2, 2, 3});
  // PyTorch: F.conv_transpose1d(x, w, stride=2, padding=1, output_padding=1)
  Tensor y = conv_transpose1d(x, w, Tensor(), {2}, {1}, {1});
  EXPECT_SHAPE(y, {1, 2, 14});
  EXPECT_VALUES(y[0][0], {49, 104, 57, 120, 65, 136, 73, 152, 81, 168, 89, 184, 97, 116});
  nn::ConvTranspose1d up(nn::ConvTranspose1dOptions(3, 4, 3).stride(2).output_padding(1));
  EXPECT_SHAPE(up->weight, {3, 4, 3});
  EXPECT_SHAPE(up(randn({2, 3, 5})), {2, 4, 12});
  EXPECT_ERROR("conv_transpose1d: expected a 3-D input [N, C, L]",
               conv_transpose1d(randn({3, 5}), w));
}

TEST(Layers, EmbeddingBagAndMaxNormMatchPyTorch) {
  auto d = TensorOptions().dtype(kDouble);
  Tensor w = arange(15, d).view({5, 3});
  Tensor in = tensor({1, 2, 4, 4, 3, 0, 2}, TensorOptions().dtype(kLong)),
         off = tensor({0, 2, 2, 5}, TensorOptions().dtype(kLong));
  // Values from torch.nn.functional.embedding_bag (bag 1 is empty).
  EXPECT_VALUES(F::embedding_bag(in, w, off, EmbeddingBagMode::Sum).flatten(),
                {9, 11, 13, 0, 0, 0, 33, 36, 39, 6, 8, 10});
  EXPECT_VALUES(F::embedding_bag(in, w, off, EmbeddingBagMode::Mean).flatten(),
                {4.5, 5.5, 6.5, 0, 0, 0, 11, 12, 13, 3, 4, 5});
  EXPECT_VALUES(F::embedding_bag(in, w, off, kMax).flatten(),
                {6, 7, 8, 0, 0, 0, 12, 13, 14, 6, 7, 8});
  Tensor psw = tensor({1.0, 2.0, 0.5, 1.0, 1.0, 3.0, 1.0}, d);
  EXPECT_VALUES(F::embedding_bag(in, w, off, EmbeddingBagMode::Sum, psw).flatten(),
                {15, 18, 21, 0, 0, 0, 27, 29.5, 32, 6, 10, 14});
  EXPECT_VALUES(F::embedding_bag(in, w, off, EmbeddingBagMode::Mean, {}, false, 4).flatten(),
                {4.5, 5.5, 6.5, 0, 0, 0, 9, 10, 11, 3, 4, 5});
  EXPECT_VALUES(F::embedding_bag(tensor({{1, 2}, {0, 4}}, TensorOptions().dtype(kLong)), w, {},
                                 EmbeddingBagMode::Sum)
                    .flatten(),
                {9, 11, 13, 12, 14, 16});
  EXPECT_VALUES(F::embedding_bag(in, w, tensor({0, 2, 2, 5, 7}, TensorOptions().dtype(kLong)),
                                 EmbeddingBagMode::Sum, {}, true)
                    .flatten(),
                {9, 11, 13, 0, 0, 0, 33, 36, 39, 6, 8, 10});
  EXPECT_ERROR("per_sample_weights are only supported with mode kSum",
               F::embedding_bag(in, w, off, EmbeddingBagMode::Mean, psw));
  EXPECT_ERROR("a 1-D input needs offsets", F::embedding_bag(in, w));
  EXPECT_ERROR("offsets must be non-decreasing",
               F::embedding_bag(in, w, tensor({0, 3, 2}, TensorOptions().dtype(kLong))));
  // Gradients flow into the rows used (each once per use, mean divides).
  Tensor wg = w.detach().requires_grad_();
  F::embedding_bag(in, wg, off, EmbeddingBagMode::Mean).sum().backward();
  EXPECT_CLOSE(wg.grad().select(1, 0), (std::vector<double>{0.5, 0.5, 1.0, 1.0 / 3, 2.0 / 3}),
               1e-12);
  // Max: each bag's gradient goes to its largest row, once even when the row
  // is in the bag twice (bag 2 holds row 4 twice); padding rows never win.
  wg.mutable_grad() = Tensor();
  F::embedding_bag(in, wg, off, kMax).sum().backward();
  EXPECT_VALUES(wg.grad().select(1, 0), {0, 0, 2, 0, 1});
  wg.mutable_grad() = Tensor();
  Tensor padded_max = F::embedding_bag(in, wg, off, kMax, {}, false, 4);
  EXPECT_VALUES(padded_max.flatten(), {6, 7, 8, 0, 0, 0, 9, 10, 11, 6, 7, 8});
  padded_max.sum().backward();
  EXPECT_VALUES(wg.grad().select(1, 0), {0, 0, 2, 1, 0});

  // max_norm renormalizes the looked-up rows in place, as torch.nn.functional.embedding.
  Tensor w2 = w.clone();
  Tensor e = F::embedding(tensor({1, 3, 1}, TensorOptions().dtype(kLong)), w2, std::nullopt, 5.0);
  EXPECT_CLOSE(e[1], (std::vector<double>{2.5894590045173, 2.8771766716858886, 3.1648943388544777}),
               1e-9);
  EXPECT_CLOSE(
      w2[1], (std::vector<double>{2.121320313559643, 2.8284270847461905, 3.535533855932738}), 1e-9);
  EXPECT_VALUES(w2[2], {6, 7, 8});  // not looked up, not touched

  nn::EmbeddingBag bag(nn::EmbeddingBagOptions(10, 4).mode(kSum).padding_idx(0));
  EXPECT_SHAPE(bag(tensor({{1, 0, 3}, {2, 2, 0}}, TensorOptions().dtype(kLong))), {2, 4});
  EXPECT_VALUES(bag->weight[0], {0, 0, 0, 0});
  nn::Embedding capped(nn::EmbeddingOptions(6, 3).max_norm(1.0));
  Tensor looked = capped(tensor({0, 5}, TensorOptions().dtype(kLong)));
  EXPECT_LE(looked[0].norm().item<double>(), 1.0 + 1e-6);
  // nn::EmbeddingBagMode is made from kSum, kMean and kMax (torch::nn::EmbeddingBagMode m =
  // torch::kSum), as libtorch's variant.
  nn::EmbeddingBagMode sum_mode = kSum, max_mode = kMax;
  EXPECT_TRUE(sum_mode == EmbeddingBagMode::Sum);
  EXPECT_TRUE(max_mode == EmbeddingBagMode::Max);
  EXPECT_ERROR("EmbeddingBagMode: expected torch::kSum, torch::kMean or torch::kMax",
               nn::EmbeddingBagMode(kNone));
  EXPECT_ERROR("EmbeddingBag: mode must be kSum, kMean or kMax",
               nn::EmbeddingBagOptions(3, 2).mode(kNone));
  EXPECT_ERROR("the first offset must be 0",
               F::embedding_bag(in, w, tensor({1, 2}, TensorOptions().dtype(kLong))));
  EXPECT_ERROR("with include_last_offset the last offset must be the input's length 7",
               F::embedding_bag(in, w, off, EmbeddingBagMode::Sum, {}, true));
  EXPECT_ERROR("offsets go with a 1-D input", F::embedding_bag(in.view({7, 1}), w, off));
  EXPECT_ERROR("Embedding: max_norm must be positive, got -1",
               nn::Embedding(nn::EmbeddingOptions(3, 2).max_norm(-1)));
  // ConvTranspose2dOptions hides padding(kSame); set through the base it is refused.
  nn::ConvTranspose2dOptions transposed(2, 2, 3);
  static_cast<nn::Conv2dOptions&>(transposed).padding(kSame);
  EXPECT_ERROR("ConvTranspose2d: padding kSame/kValid is only for convolutions",
               nn::ConvTranspose2d(transposed));
}

TEST(Module, ToDevice) {
  nn::Linear fc(3, 2);
  Tensor before = fc->weight.clone();
  fc->to(kCPU);
  fc->to(Device("cpu"), kDouble);
  EXPECT_EQ(fc->weight.dtype(), kDouble);
  EXPECT_TRUE(fc->weight.is_cpu());
  EXPECT_CLOSE(fc->weight.to(kFloat).flatten(), ::brasa::testing::values(before), 1e-7);
  if (!find_device_runtime(kCUDA))
    EXPECT_ERROR("Linear.to(cuda:0): this build of Brasa has no cuda:0 support (CPU only)",
                 fc->to(Device("cuda:0")));
  else if (!cuda::is_available())
    EXPECT_ERROR("Linear.to: device cuda:0 is not available: no cuda device is present",
                 fc->to(Device("cuda:0")));
}

TEST(Layers, PoolingValues) {
  Tensor x = arange(16, TensorOptions().dtype(kFloat)).view({1, 1, 4, 4});
  auto [v, i] = max_pool2d_with_indices(x, {2});
  EXPECT_VALUES(v, {5, 7, 13, 15});
  EXPECT_VALUES(i, {5, 7, 13, 15});
  EXPECT_VALUES(avg_pool2d(x, {2}), {2.5, 4.5, 10.5, 12.5});
  EXPECT_VALUES(max_pool2d(x, {3}, {1}, {1}).slice(3, 0, 1).flatten(), {5, 9, 13, 13});
  // Ties keep the first position; NaN wins over numbers.
  Tensor t = tensor({{1.0f, 1.0f}, {0.0f, 1.0f}}).view({1, 1, 2, 2});
  EXPECT_VALUES(std::get<1>(max_pool2d_with_indices(t, {2})), {0});
  Tensor n = tensor({{1.0f, NAN}, {5.0f, NAN}}).view({1, 1, 2, 2});
  auto [nv, ni] = max_pool2d_with_indices(n, {2});
  EXPECT_TRUE(std::isnan(nv.item<float>()));
  EXPECT_EQ(ni.item<int64_t>(), 1);
  EXPECT_TRUE(std::isnan(max_pool2d(n, {2}).item<float>()));
}

TEST(Layers, NormalizationMatchesPyTorch) {
  // Expected values from torch.nn.BatchNorm1d / LayerNorm / GroupNorm on the same input.
  Tensor x = tensor({{1.0, 2.0, 3.0}, {4.0, 0.0, -1.0}, {2.0, 2.0, 5.0}, {0.5, -3.0, 1.0}});
  nn::BatchNorm1d bn(3);
  Tensor y = bn(x);
  EXPECT_CLOSE(bn->running_mean, (std::vector<double>{0.1875, 0.025, 0.2}), 1e-6);
  EXPECT_CLOSE(bn->running_var, (std::vector<double>{1.139583, 1.458333, 1.566667}), 1e-6);
  EXPECT_CLOSE(y[0], (std::vector<double>{-0.65275, 0.85519, 0.44721}), 1e-5);
  EXPECT_EQ(bn->num_batches_tracked.item<int64_t>(), 1);
  bn->eval();
  EXPECT_CLOSE(bn(x)[1], (std::vector<double>{3.57137, -0.0207, -0.95872}), 1e-5);
  nn::LayerNorm ln(std::vector<int64_t>{3});
  EXPECT_CLOSE(ln(x)[1], (std::vector<double>{1.38873, -0.46291, -0.92582}), 1e-5);
  nn::GroupNorm gn(1, 3);
  EXPECT_CLOSE(gn(x.view({4, 3, 1}))[1].flatten(),
               (std::vector<double>{1.38873, -0.46291, -0.92582}), 1e-5);
  EXPECT_VALUES(
      nn::AdaptiveAvgPool2d(std::vector<int64_t>{3, 2})(arange(20, kFloat).view({1, 1, 4, 5}))
          .flatten(),
      {3.5, 5.5, 8.5, 10.5, 13.5, 15.5});
  EXPECT_THROW(bn(randn({2, 3, 4, 5})), Error);
  nn::Embedding emb(5, 2, 0);
  Tensor e = emb(tensor(std::vector<int64_t>{0, 3, 0}));
  EXPECT_VALUES(e[0], {0, 0});
  e.sum().backward();
  EXPECT_VALUES(emb->weight.grad()[0], {0, 0});  // padding row: no gradient
  EXPECT_VALUES(emb->weight.grad()[3], {1, 1});
}

TEST(Layers, OneDimensionalLayersPReLUBilinearDictAndFunctional) {
  manual_seed(8);
  nn::Conv1d c(nn::Conv1dOptions(2, 3, 3).padding(1).stride(2));
  Tensor x = randn({2, 2, 7});
  Tensor y = c(x);
  EXPECT_SHAPE(y, {2, 3, 4});
  EXPECT_TRUE(
      y.allclose(conv2d(x.unsqueeze(2), c->weight.unsqueeze(2), c->bias, {1, 2}, {0, 1}).squeeze(2),
                 1e-5, 1e-6));
  Tensor seq = arange(6, kFloat).view({1, 1, 6});
  EXPECT_VALUES(nn::MaxPool1d(2)(seq), {1, 3, 5});
  EXPECT_VALUES(nn::AvgPool1d(3)(seq), {1, 4});
  EXPECT_VALUES(nn::AdaptiveAvgPool1d(2)(seq), {1, 4});

  nn::PReLU pr(2, 0.5);
  EXPECT_VALUES(pr(tensor({{-2.0f, 3.0f}, {4.0f, -1.0f}}).view({2, 2})), {-1, 3, 4, -0.5});
  pr->to(kDouble);
  Tensor px = randn({3, 2}, kDouble).requires_grad_();
  EXPECT_TRUE(autograd::gradcheck(
      [&](const autograd::variable_list& v) { return autograd::variable_list{pr(v[0])}; },
      {px, pr->weight}));

  nn::Bilinear bl(3, 2, 4);
  bl->to(kDouble);
  Tensor a = randn({5, 3}, kDouble).requires_grad_(), b = randn({5, 2}, kDouble).requires_grad_();
  Tensor direct =
      (a.unsqueeze(1).unsqueeze(3) * bl->weight.unsqueeze(0) * b.unsqueeze(1).unsqueeze(2))
          .sum({2, 3});
  EXPECT_TRUE(bl->forward(a, b).allclose(direct + bl->bias));
  EXPECT_TRUE(autograd::gradcheck(
      [&](const autograd::variable_list& v) {
        return autograd::variable_list{bl->forward(v[0], v[1])};
      },
      {a, b, bl->weight, bl->bias}));

  nn::ModuleDict dict;
  dict->insert("fc", nn::Linear(2, 2));
  dict->insert("act", nn::Functional([](const Tensor& t) { return t * 2; }));
  EXPECT_TRUE(dict->contains("fc"));
  EXPECT_EQ(dict->keys(), (std::vector<std::string>{"fc", "act"}));
  EXPECT_EQ(dict->parameters().size(), 2u);
  nn::Sequential s(nn::Functional([](const Tensor& t) { return t + 1; }), nn::Sigmoid());
  EXPECT_NEAR(s(zeros({1})).item<double>(), 1 / (1 + std::exp(-1.0)), 1e-6);
}

TEST(Functional, InterpolateAndAdaptiveMaxMatchPyTorch) {
  Tensor x = arange(12, kFloat).view({1, 1, 3, 4});
  EXPECT_VALUES(F::interpolate(x, {5, 3}), {0, 1, 2, 0, 1, 2, 4, 5, 6, 4, 5, 6, 8, 9, 10});
  EXPECT_CLOSE(
      F::interpolate(x, {5, 3}, "bilinear").flatten(),
      (std::vector<double>{0.166667, 1.5, 2.833333, 1.766667, 3.1, 4.433333, 4.166667, 5.5,
                           6.833333, 6.566667, 7.900001, 9.233334, 8.166667, 9.5, 10.833333}),
      1e-5);
  EXPECT_CLOSE(F::interpolate(x, {5, 3}, "bilinear", true).flatten(),
               (std::vector<double>{0, 1.5, 3, 2, 3.5, 5, 4, 5.5, 7, 6, 7.5, 9, 8, 9.5, 11}), 1e-5);
  Tensor y = arange(20, kFloat).view({1, 1, 4, 5}) * tensor({1.0f, -1.0f, 1.0f, -1.0f, 1.0f});
  EXPECT_VALUES(nn::AdaptiveMaxPool2d(std::vector<int64_t>{3, 2})(y).flatten(),
                {7, 9, 12, 14, 17, 19});
  EXPECT_THROW(F::interpolate(x, {2, 2}, "cubic"), Error);
  EXPECT_THROW(F::interpolate(x, {2, 2}, "nearest", true), Error);
}

// Reference outputs: PyTorch 1.13 TransformerEncoderLayer(4, 2, dim_feedforward=6, dropout=0) and
// MultiheadAttention(4, 2), every parameter (sorted by name, index k) filled with
// 0.5 * sin(0.37 i + 0.11 k), input sin(0.3 i) viewed [3, 2, 4].
void fill_like_reference(nn::Module& m) {
  NoGradGuard g;
  auto sd = m.state_dict();
  auto keys = sd.keys();
  std::sort(keys.begin(), keys.end());
  for (size_t k = 0; k < keys.size(); ++k) {
    Tensor t = sd[keys[k]];
    Tensor vals =
        (arange(t.numel(), TensorOptions().dtype(kDouble)) * 0.37 + 0.11 * static_cast<double>(k))
            .sin() *
        0.5;
    t.copy_(vals.view(t.sizes()));
  }
}

TEST(Layers, TransformerEncoderLayerAndAttentionMatchPyTorch) {
  nn::TransformerEncoderLayer layer(
      nn::TransformerEncoderLayerOptions(4, 2).dim_feedforward(6).dropout(0.0));
  layer->to(kDouble);
  fill_like_reference(*layer);
  EXPECT_EQ(layer->state_dict().size(), 12u);
  Tensor x = (arange(24, TensorOptions().dtype(kDouble)) * 0.3).sin().view({3, 2, 4});
  Tensor mask = tensor({{false, false, true}, {false, true, false}});
  EXPECT_CLOSE(
      layer(x),
      (std::vector<double>{
          0.3581956991, -0.1563174812, 0.3207950631, 1.1967890417,  0.5916513202, -0.1716707155,
          0.1921361568, 1.0162134848,  0.7093034823, -0.2132784998, 0.2760758008, 0.8187339308,
          0.414588325,  -0.2311680749, 0.4005055395, 1.1220222298,  0.3819201355, -0.1620710337,
          0.3063927672, 1.1841015229,  0.3446620023, -0.0627885506, 0.194895032,  1.2374074997}),
      1e-8);
  EXPECT_CLOSE(
      layer(x, Tensor(), mask),
      (std::vector<double>{
          0.371860951,  -0.1771520976, 0.3421035837, 1.1795964563,  0.5697151416, -0.1876969747,
          0.2239494847, 1.0326710694,  0.5835509219, -0.2611244585, 0.357290392,  0.963464547,
          0.5936072942, -0.2440838556, 0.3194600121, 0.9679419397,  0.3813853373, -0.1911930704,
          0.3572662041, 1.1668132219,  0.3895214889, -0.1582474469, 0.2928638999, 1.1826026277}),
      1e-8);
  nn::MultiheadAttention mha(4, 2);
  mha->to(kDouble);
  fill_like_reference(*mha);
  auto [o, w] = mha(x, x, x, mask);
  EXPECT_CLOSE(o, (std::vector<double>{-0.2481827718, 0.4005633385, 0.789086667,  0.4320094716,
                                       -0.2743052748, 0.6861545565, 0.8669992093, 0.1605471671,
                                       -0.237980318,  0.3911686246, 0.7771805452, 0.4392450906,
                                       -0.2906017405, 0.432473857,  0.8372923927, 0.408840736,
                                       -0.2129756253, 0.3632203655, 0.7471076245, 0.4617398285,
                                       -0.261378404,  0.5669198763, 0.8324499342, 0.2735165696}),
               1e-8);
  EXPECT_CLOSE(
      w,
      (std::vector<double>{0.5525066467, 0.4474933533, 0.0, 0.5030662434, 0.4969337566, 0.0,
                           0.3689869446, 0.6310130554, 0.0, 0.8116598507, 0.0, 0.1883401493,
                           0.2140070438, 0.0, 0.7859929562, 0.5066377978, 0.0, 0.4933622022}),
      1e-8);
  // Gradients flow to every parameter.
  layer(x).sum().backward();
  for (auto& p : layer->parameters()) EXPECT_TRUE(p.grad().defined());
}

TEST(Layers, LstmAndGruMatchPyTorch) {
  // PyTorch 1.13 LSTM(3, 4, num_layers=2, bidirectional, batch_first) and
  // GRU(3, 4, num_layers=2), parameters filled as fill_like_reference.
  Tensor x = (arange(18, TensorOptions().dtype(kDouble)) * 0.3).sin().view({2, 3, 3});
  nn::LSTM lstm(nn::LSTMOptions(3, 4).num_layers(2).bidirectional(true).batch_first(true));
  lstm->to(kDouble);
  fill_like_reference(*lstm);
  EXPECT_EQ(lstm->parameters().size(), 16u);
  auto [o, hc] = lstm(x);
  EXPECT_SHAPE(o, {2, 3, 8});
  EXPECT_CLOSE(
      o,
      (std::vector<double>{
          -0.070043748395, -0.05650282502,  -0.161806331595, -0.19099559808,  -0.112140462968,
          -0.189511247588, -0.300705259219, -0.372791089091, -0.10618492205,  -0.109552497185,
          -0.261085928077, -0.284575750429, -0.11062541063,  -0.147950024384, -0.274585732808,
          -0.31884781315,  -0.118319976469, -0.144015465156, -0.305433324022, -0.338996077355,
          -0.08055637414,  -0.094516435141, -0.183245026155, -0.211683440731, -0.069219290541,
          -0.044521136189, -0.152783493482, -0.178641046952, -0.12885450613,  -0.117566363682,
          -0.277849428511, -0.276435545027, -0.09278567841,  -0.054557421102, -0.212933571757,
          -0.230249487895, -0.105840660767, -0.051659200203, -0.223714413774, -0.21693718166,
          -0.106769891466, -0.064834318354, -0.251335953715, -0.244074071086, -0.08224175677,
          -0.014096506172, -0.158599126924, -0.150764702574}),
      1e-9);
  EXPECT_CLOSE(
      std::get<0>(hc),
      (std::vector<double>{-0.386643602188, -0.152360614906, -0.059653766213, 0.07161802632,
                           0.020606664289,  0.06710891442,   -0.493259955834, -0.580600319117,
                           -0.258761626727, -0.170513795804, -0.114015316157, -0.008272546436,
                           -0.041099447484, -0.088793465009, -0.278186360379, -0.361753824147,
                           -0.118319976469, -0.144015465156, -0.305433324022, -0.338996077355,
                           -0.106769891466, -0.064834318354, -0.251335953715, -0.244074071086,
                           -0.112140462968, -0.189511247588, -0.300705259219, -0.372791089091,
                           -0.12885450613,  -0.117566363682, -0.277849428511, -0.276435545027}),
      1e-9);
  EXPECT_CLOSE(
      std::get<1>(hc),
      (std::vector<double>{-1.199160503163, -1.443448529097, -0.55493940215,  0.252580036095,
                           0.197042219003,  0.204820223932,  -0.882760232709, -1.542692195443,
                           -1.199414899169, -1.306473709339, -0.519478039771, -0.018806391998,
                           -0.168043672624, -0.402923925629, -1.05943204681,  -1.11300231186,
                           -0.562402619076, -0.716995969094, -0.894549020516, -0.930650835644,
                           -0.788714652445, -0.189440657454, -1.105407220181, -0.478344954367,
                           -0.707153379558, -0.7535760978,   -0.995334703019, -0.798414594086,
                           -0.920849299001, -0.34835044693,  -1.166565793455, -0.514423465119}),
      1e-9);
  nn::GRU gru(nn::GRUOptions(3, 4).num_layers(2));
  gru->to(kDouble);
  fill_like_reference(*gru);
  auto [go, gh] = gru(x);
  EXPECT_CLOSE(
      go, (std::vector<double>{-0.058382684816, -0.155628150361, -0.146446444183, -0.202215012961,
                               -0.032549817972, -0.177200679655, -0.174699265777, -0.185640837544,
                               -0.039467494901, -0.175180537496, -0.167425642122, -0.186071124814,
                               -0.173385917571, -0.347519664834, -0.197172754752, -0.219761343777,
                               -0.136981108631, -0.316908633787, -0.223686778107, -0.254183515677,
                               -0.130185983274, -0.288542414414, -0.221581435653, -0.284627113399}),
      1e-9);
  EXPECT_CLOSE(
      gh, (std::vector<double>{-0.052265141827, -0.272110070513, -0.25757332367,  -0.239655819668,
                               -0.127025955511, 0.123461459854,  -0.183644421428, -0.363196064882,
                               -0.108907925417, 0.224009698852,  -0.027710604586, -0.475922074784,
                               -0.173385917571, -0.347519664834, -0.197172754752, -0.219761343777,
                               -0.136981108631, -0.316908633787, -0.223686778107, -0.254183515677,
                               -0.130185983274, -0.288542414414, -0.221581435653, -0.284627113399}),
      1e-9);
  Tensor xi = x.detach().requires_grad_();
  EXPECT_TRUE(autograd::gradcheck(
      [&](const autograd::variable_list& v) {
        return autograd::variable_list{std::get<0>(gru(v[0]))};
      },
      {xi}));
  EXPECT_THROW(gru(randn({2, 3, 5}, kDouble)), Error);
}

TEST(Functional, CrossEntropyMatchesPyTorchValues) {
  // Values from torch.nn.functional.cross_entropy on the same inputs.
  Tensor logits = tensor({{1.0, 2.0, 0.5}, {0.1, -1.0, 3.0}});
  Tensor target = tensor(std::vector<int64_t>{1, 2});
  EXPECT_NEAR(F::cross_entropy(logits, target).item<double>(), 0.26757150888442993, 1e-6);
  EXPECT_NEAR(F::cross_entropy(logits, target, F::CrossEntropyFuncOptions().label_smoothing(0.1))
                  .item<double>(),
              0.4242382049560547, 1e-6);
  Tensor w = tensor({1.0, 2.0, 0.5});
  EXPECT_NEAR(
      F::cross_entropy(logits, target, F::CrossEntropyFuncOptions().weight(w)).item<double>(),
      0.3856498599052429, 1e-6);
  EXPECT_NEAR(F::cross_entropy(logits, tensor(std::vector<int64_t>{1, -100})).item<double>(),
              0.4643687903881073, 1e-6);
  EXPECT_THROW(F::cross_entropy(logits, tensor(std::vector<int64_t>{1, 3})), Error);
}

TEST(Functional, LossesMatchPyTorchValues) {
  auto d = TensorOptions().dtype(kDouble);
  Tensor x = tensor({{0.2, 0.7, 0.9}, {0.5, 0.1, 0.6}}, d),
         t = tensor({{0.0, 1.0, 1.0}, {1.0, 0.0, 0.0}}, d);
  Tensor l = tensor({{1.5, -0.3, 2.0}, {0.1, -2.0, 0.4}}, d), pw = tensor({2.0, 0.5, 1.0}, d);
  EXPECT_NEAR(F::binary_cross_entropy(x, t).item<double>(), 0.39999623983378246, 1e-12);
  EXPECT_NEAR(F::binary_cross_entropy_with_logits(l, t, Tensor(), pw).item<double>(),
              0.7640425824750093, 1e-12);
  EXPECT_NEAR(F::smooth_l1_loss(l, t, kMean, 0.5).item<double>(), 0.935, 1e-12);
  EXPECT_NEAR(F::huber_loss(l, t, kMean, 0.7).item<double>(), 0.5908333333333333, 1e-12);
  Tensor lp = l.log_softmax(1), q = l.flip({1}).softmax(1);
  EXPECT_NEAR(F::kl_div(lp, q, kSum).item<double>(), 0.15771910397379094, 1e-12);
  // batchmean: the sum over the batch size (PyTorch's value), by function and module.
  EXPECT_NEAR(F::kl_div(lp, q, F::KLDivFuncOptions().reduction(kBatchMean)).item<double>(),
              0.07885955198689547, 1e-12);
  EXPECT_NEAR(
      nn::KLDivLoss(nn::KLDivLossOptions().reduction(kBatchMean))->forward(lp, q).item<double>(),
      0.07885955198689547, 1e-12);
  EXPECT_ERROR("kl_div's alone", F::mse_loss(lp, q, kBatchMean));
  EXPECT_CLOSE(F::cosine_similarity(l, t),
               (std::vector<double>{0.4774075628564708, 0.04897021068743918}), 1e-12);
  EXPECT_CLOSE(F::normalize(l)[0],
               (std::vector<double>{0.5957261030921532, -0.11914522061843064, 0.7943014707895376}),
               1e-12);
  EXPECT_VALUES(F::pad(arange(6, kDouble).view({2, 3}), {1, 0, 0, 1}),
                {0, 0, 1, 2, 0, 3, 4, 5, 0, 0, 0, 0});
  EXPECT_VALUES(F::one_hot(tensor(std::vector<int64_t>{2, 0}), 3), {0, 0, 1, 1, 0, 0});
  EXPECT_THROW(F::binary_cross_entropy(x + 1, t), Error);
  EXPECT_THROW(F::one_hot(tensor(std::vector<int64_t>{3}), 3), Error);
}

TEST(Utils, ClipGradNormValueAndVectors) {
  Tensor a = tensor({3.0, 0.0}, TensorOptions().dtype(kDouble)).requires_grad_();
  Tensor b = tensor({0.0, 4.0}, TensorOptions().dtype(kDouble)).requires_grad_();
  (a * a.detach() + b * b.detach()).sum().backward();  // grads = (3, 0), (0, 4): total norm 5
  EXPECT_NEAR(nn::utils::clip_grad_norm_({a, b}, 1.0), 5.0, 1e-12);
  EXPECT_CLOSE(a.grad(), (std::vector<double>{0.6, 0}), 1e-6);
  EXPECT_CLOSE(b.grad(), (std::vector<double>{0, 0.8}), 1e-6);
  nn::utils::clip_grad_value_({a, b}, 0.7);
  EXPECT_CLOSE(b.grad(), (std::vector<double>{0, 0.7}), 1e-12);
  Tensor v = nn::utils::parameters_to_vector({a, b});
  EXPECT_VALUES(v, {3, 0, 0, 4});
  nn::utils::vector_to_parameters(v * 2, {a, b});
  EXPECT_VALUES(b, {0, 8});
}

}  // namespace
}  // namespace brasa
