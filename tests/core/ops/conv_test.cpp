// The float32 convolution through oneDNN (its forward, and in training its
// gradients too) agrees with the im2col + GEMM path (itself checked against
// PyTorch and gradchecked) on every geometry, at 1 and 2 threads.
#include <brasa/ops/cpu/conv_onednn.h>

#include <cstdlib>

#include "../test_util.h"

namespace brasa {
namespace {

struct Geometry {
  std::vector<int64_t> x, w, stride, padding, dilation;
  int64_t groups;
  bool bias;
};

struct Result {
  Tensor y, gx, gb, gw;
};

// Forward with oneDNN on or off, the weight frozen; backward to the input
// and the bias when `gy` is given.
Result run(bool onednn, const Geometry& g, const Tensor& x0, const Tensor& w, const Tensor& b0,
           const Tensor& gy) {
  set_onednn_enabled(onednn);
  Tensor x = x0.clone().requires_grad_(gy.defined());
  Tensor b = g.bias ? b0.clone().requires_grad_(gy.defined()) : Tensor();
  Tensor y = conv2d(x, w, b, g.stride, g.padding, g.dilation, g.groups);
  if (gy.defined()) y.backward(gy);
  set_onednn_enabled(true);
  return {y.detach(), x.grad(), g.bias ? b.grad() : Tensor(), Tensor()};
}

void expect_close(const Tensor& a, const Tensor& b, const char* what) {
  ASSERT_EQ(a.defined(), b.defined()) << what;
  if (!a.defined()) return;
  ASSERT_EQ(a.sizes(), b.sizes()) << what;
  const double scale = std::max(1.0, b.abs().max().item<double>());
  EXPECT_LT((a - b).abs().max().item<double>(), 2e-5 * scale) << what;
}

const std::vector<Geometry> kCases{
    {{64, 1, 28, 28}, {10, 1, 5, 5}, {1, 1}, {0, 0}, {1, 1}, 1, true},  // the main job's first
                                                                        // layer
    {{7, 10, 12, 12}, {20, 10, 5, 5}, {1, 1}, {0, 0}, {1, 1}, 1, true},
    {{5, 4, 9, 11}, {6, 2, 3, 2}, {2, 1}, {1, 0}, {1, 2}, 2, false},
    {{3, 6, 8, 8}, {6, 1, 3, 3}, {1, 1}, {1, 1}, {2, 2}, 6, true},  // depthwise, dilated
    {{1, 3, 5, 5}, {4, 3, 1, 1}, {2, 2}, {0, 0}, {1, 1}, 1, true},
    {{5, 32, 10, 10}, {32, 32, 3, 3}, {1, 1}, {1, 1}, {1, 1}, 1, false},  // a ResNet block's
    {{4, 16, 14, 14}, {32, 16, 4, 4}, {2, 2}, {1, 1}, {1, 1}, 1, false},  // a DCGAN layer
    // Stride 1 with channels in blocks of 16: the input gradient runs as a
    // forward convolution (flipped, swapped weights), here dilated with
    // unequal padding and kernel sides; then a padding wider than the
    // dilated kernel, which keeps oneDNN's backward-data kernel.
    {{2, 16, 9, 7}, {32, 16, 3, 2}, {1, 1}, {2, 0}, {2, 3}, 1, true},
    {{2, 16, 6, 6}, {16, 16, 3, 3}, {1, 1}, {3, 3}, {1, 1}, 1, false},
    // Grouped and depthwise layers with outputs of 7x7 or more, which take
    // oneDNN's blocked kernels: depthwise (stride 1 and 2), channel
    // multiplier 2, groups of 6 channels (not a whole block of 8 or 16).
    {{4, 32, 12, 12}, {32, 1, 3, 3}, {1, 1}, {1, 1}, {1, 1}, 32, true},
    {{2, 16, 15, 15}, {16, 1, 3, 3}, {2, 2}, {1, 1}, {1, 1}, 16, false},
    {{2, 8, 9, 9}, {16, 1, 3, 3}, {1, 1}, {1, 1}, {1, 1}, 8, true},
    {{3, 24, 10, 10}, {48, 6, 3, 3}, {1, 1}, {1, 1}, {1, 1}, 4, true},
    // Grouped layers on maps under 7x7 (ShuffleNet's and MobileNet's last
    // stages), which take the blocked kernels too: depthwise 3x3 at 3x3,
    // stride 2 from 6x6, and 4 groups at 5x5.
    {{4, 32, 3, 3}, {32, 1, 3, 3}, {1, 1}, {1, 1}, {1, 1}, 32, true},
    {{3, 48, 6, 6}, {48, 1, 3, 3}, {2, 2}, {1, 1}, {1, 1}, 48, false},
    {{2, 16, 5, 5}, {32, 4, 3, 3}, {1, 1}, {1, 1}, {1, 1}, 4, true},
    // A classifier's 1x1 head with few outputs on a small map, which trains
    // on oneDNN (few_output_channels).
    {{3, 64, 6, 6}, {10, 64, 1, 1}, {1, 1}, {0, 0}, {1, 1}, 1, true},
    // Small outputs whose column matrix would be 8x the input or more, which
    // take the blocked kernels: 7x7/2 from 7x7 to 4x4, 3x3 at 2x2 and 3x3.
    {{2, 16, 7, 7}, {8, 16, 7, 7}, {2, 2}, {3, 3}, {1, 1}, 1, true},
    {{3, 16, 2, 2}, {16, 16, 3, 3}, {1, 1}, {1, 1}, {1, 1}, 1, true},
    {{2, 32, 3, 3}, {24, 32, 3, 3}, {1, 1}, {1, 1}, {1, 1}, 1, false},
};

TEST(Conv, OneDnnForwardAgreesWithIm2col) {
  if (!has_onednn())
    GTEST_SKIP() << "this build has no oneDNN (BRASA_ONEDNN=OFF or libdnnl-dev missing)";
  const std::vector<Geometry>& cases = kCases;
  for (int threads : {1, 2}) {
    set_num_threads(threads);
    for (const auto& g : cases) {
      SCOPED_TRACE(::testing::Message() << "threads " << threads << " x " << IntArrayRef(g.x)
                                        << " w " << IntArrayRef(g.w));
      manual_seed(7);
      Tensor x = randn(g.x), w = randn(g.w), b = randn({g.w[0]});
      Result a = run(true, g, x, w, b, Tensor()), c = run(false, g, x, w, b, Tensor());
      expect_close(a.y, c.y, "inference output");
      Tensor gy = randn(a.y.sizes());
      a = run(true, g, x, w, b, gy);
      c = run(false, g, x, w, b, gy);
      expect_close(a.y, c.y, "output");
      expect_close(a.gx, c.gx, "input gradient");
      expect_close(a.gb, c.gb, "bias gradient");
    }
  }
  set_num_threads(2);
}

// Training with every gradient wanted, on the path forced.
Result train(ConvTrainingPath path, const Geometry& g, const Tensor& x0, const Tensor& w0,
             const Tensor& b0, const Tensor& gy) {
  set_conv_training_path(path);
  Tensor x = x0.clone().requires_grad_(true), w = w0.clone().requires_grad_(true);
  Tensor b = g.bias ? b0.clone().requires_grad_(true) : Tensor();
  Tensor y = conv2d(x, w, b, g.stride, g.padding, g.dilation, g.groups);
  y.backward(gy);
  set_conv_training_path(ConvTrainingPath::kAuto);
  return {y.detach(), x.grad(), g.bias ? b.grad() : Tensor(), w.grad()};
}

// The im2col path (itself checked against PyTorch and gradchecked) in
// float64, its results as float32: the reference of the oneDNN tests.
Result float64_reference(const Geometry& g, const Tensor& x, const Tensor& w, const Tensor& b,
                         const Tensor& gy) {
  Result r = train(ConvTrainingPath::kIm2col, g, x.to(kDouble), w.to(kDouble), b.to(kDouble),
                   gy.to(kDouble));
  auto as_float = [](const Tensor& t) { return t.defined() ? t.to(kFloat) : Tensor(); };
  return {as_float(r.y), as_float(r.gx), as_float(r.gb), as_float(r.gw)};
}

TEST(Conv, OneDnnTrainingAgreesWithIm2col) {
  if (!has_onednn())
    GTEST_SKIP() << "this build has no oneDNN (BRASA_ONEDNN=OFF or libdnnl-dev missing)";
  for (int threads : {1, 2}) {
    set_num_threads(threads);
    for (const auto& g : kCases) {
      SCOPED_TRACE(::testing::Message() << "threads " << threads << " x " << IntArrayRef(g.x)
                                        << " w " << IntArrayRef(g.w));
      manual_seed(11);
      Tensor x = randn(g.x), w = randn(g.w), b = randn({g.w[0]});
      Tensor gy = randn(conv2d(x, w, {}, g.stride, g.padding, g.dilation, g.groups).sizes());
      Result a = train(ConvTrainingPath::kOneDNN, g, x, w, b, gy);
      Result c = train(ConvTrainingPath::kIm2col, g, x, w, b, gy);
      expect_close(a.y, c.y, "output");
      expect_close(a.gx, c.gx, "input gradient");
      expect_close(a.gw, c.gw, "weight gradient");
      expect_close(a.gb, c.gb, "bias gradient");
    }
  }
  set_num_threads(2);
  // A frozen weight: only the input gradient, through oneDNN as well.
  set_conv_training_path(ConvTrainingPath::kOneDNN);
  Tensor x = randn({3, 8, 6, 6}).requires_grad_(true), w = randn({4, 8, 3, 3});
  conv2d(x, w).sum().backward();
  set_conv_training_path(ConvTrainingPath::kIm2col);
  Tensor x2 = x.detach().clone().requires_grad_(true);
  conv2d(x2, w).sum().backward();
  set_conv_training_path(ConvTrainingPath::kAuto);
  expect_close(x.grad(), x2.grad(), "input gradient, frozen weight");
}

// conv_transpose2d's gradients are conv2d's forward and weight gradient of
// the same geometry: through oneDNN where conv2d would train directly, the
// same values as through im2col.
TEST(Conv, TransposedConvolutionGradientsAgreeOnBothPaths) {
  if (!has_onednn())
    GTEST_SKIP() << "this build has no oneDNN (BRASA_ONEDNN=OFF or libdnnl-dev missing)";
  struct Case {
    std::vector<int64_t> x, w, stride, padding, output_padding, dilation;
    int64_t groups;
  };
  const std::vector<Case> cases = {
      {{4, 16, 7, 7}, {16, 8, 4, 4}, {2, 2}, {1, 1}, {0, 0}, {1, 1}, 1},  // DCGAN's generator
      {{2, 8, 6, 5}, {8, 6, 3, 3}, {2, 2}, {1, 1}, {1, 0}, {1, 1}, 2},
      {{3, 6, 9, 9}, {6, 4, 3, 3}, {1, 1}, {2, 2}, {0, 0}, {2, 2}, 1},
  };
  for (int threads : {1, 2}) {
    set_num_threads(threads);
    for (const Case& c : cases) {
      SCOPED_TRACE(::testing::Message() << "threads " << threads << " x " << IntArrayRef(c.x)
                                        << " w " << IntArrayRef(c.w));
      manual_seed(12);
      Tensor x0 = randn(c.x), w0 = randn(c.w);
      std::vector<Tensor> grads[2];
      for (int path = 0; path < 2; ++path) {
        set_conv_training_path(path == 0 ? ConvTrainingPath::kOneDNN : ConvTrainingPath::kIm2col);
        Tensor x = x0.clone().requires_grad_(true), w = w0.clone().requires_grad_(true);
        Tensor y =
            conv_transpose2d(x, w, {}, c.stride, c.padding, c.output_padding, c.groups, c.dilation);
        manual_seed(13);
        y.backward(randn(y.sizes()));
        grads[path] = {y.detach(), x.grad(), w.grad()};
      }
      set_conv_training_path(ConvTrainingPath::kAuto);
      expect_close(grads[0][0], grads[1][0], "output");
      expect_close(grads[0][1], grads[1][1], "input gradient");
      expect_close(grads[0][2], grads[1][2], "weight gradient");
    }
  }
  set_num_threads(2);
}

// 3x3 stride-1 layers with channels in blocks of 16 take oneDNN's Winograd
// kernels where the CPU has them (AVX-512); with the switch off, its direct
// ones. Both agree with a float64 (im2col) reference, in every direction.
TEST(Conv, WinogradLayersAgreeWithAFloat64Reference) {
  if (!has_onednn())
    GTEST_SKIP() << "this build has no oneDNN (BRASA_ONEDNN=OFF or libdnnl-dev missing)";
  // (Batches that give every slice at least 784 output pixels, below which
  // the direct kernels are faster.)
  const std::vector<Geometry> cases{
      {{3, 64, 20, 20}, {64, 64, 3, 3}, {1, 1}, {1, 1}, {1, 1}, 1, false},
      {{32, 16, 9, 9}, {32, 16, 3, 3}, {1, 1}, {0, 0}, {1, 1}, 1, true},  // unpadded: 7x7 out
      {{22, 32, 7, 11}, {48, 32, 3, 3}, {1, 1}, {1, 1}, {1, 1}, 1, true},
  };
  EXPECT_TRUE(conv_winograd_enabled());
  for (bool winograd : {true, false}) {
    set_conv_winograd_enabled(winograd);
    EXPECT_EQ(conv_winograd_enabled(), winograd);
    for (int threads : {1, 2}) {
      set_num_threads(threads);
      for (const auto& g : cases) {
        SCOPED_TRACE(::testing::Message() << "winograd " << winograd << " threads " << threads
                                          << " x " << IntArrayRef(g.x));
        manual_seed(5);
        Tensor x = randn(g.x), w = randn(g.w) * 0.1, b = randn({g.w[0]});
        Tensor gy = randn(conv2d(x, w, {}, g.stride, g.padding).sizes());
        Result a = train(ConvTrainingPath::kOneDNN, g, x, w, b, gy);
        Result ref = float64_reference(g, x, w, b, gy);
        expect_close(a.y, ref.y, "output");
        expect_close(a.gx, ref.gx, "input gradient");
        expect_close(a.gw, ref.gw, "weight gradient");
        expect_close(a.gb, ref.gb, "bias gradient");
        // Inference (no gradient wanted) takes the same kernels.
        expect_close(conv2d(x, w, g.bias ? b : Tensor(), g.stride, g.padding), ref.y,
                     "inference output");
      }
    }
  }
  set_conv_winograd_enabled(true);
  set_num_threads(2);
}

// Winograd's kernels transform the weights on every call: layers with few
// output pixels per batch slice keep the direct kernels (ResNet's last stage
// at batch 1), whatever the CPU; with Winograd off no layer takes them.
TEST(Conv, WinogradIsLeftForFewOutputPixelsPerSlice) {
  if (!has_onednn())
    GTEST_SKIP() << "this build has no oneDNN (BRASA_ONEDNN=OFF or libdnnl-dev missing)";
  auto layer = [](int64_t n, int64_t channels, int64_t side) {
    return detail::ConvGeometry{n, channels, side, side, channels, 3,    3,    1,
                                1, 1,        1,    1,    1,        side, side, 1};
  };
  for (int threads : {1, 2}) {
    set_num_threads(threads);
    SCOPED_TRACE(::testing::Message() << "threads " << threads);
    EXPECT_FALSE(detail::onednn_conv_uses_winograd(layer(1, 512, 7)));
    EXPECT_FALSE(detail::onednn_conv_uses_winograd(layer(8, 512, 7)));  // 392 per slice at most
    EXPECT_FALSE(detail::onednn_conv_uses_winograd(layer(1, 256, 14)));
    EXPECT_FALSE(detail::onednn_conv_uses_winograd(layer(threads, 128, 16)));
  }
  set_conv_winograd_enabled(false);
  EXPECT_FALSE(detail::onednn_conv_uses_winograd(layer(16, 64, 56)));
  set_conv_winograd_enabled(true);
  set_num_threads(2);
}

// A batch that does not fill the thread pool evenly, or whose weights
// outweigh a batch slice's activations, is split along the channels instead
// (each part a convolution of whole blocks of 16 channels over the whole
// batch): batch 1, 2 and 3 at 2 and 4 threads, a ResNet stem (7x7 / 2 from
// 3 channels), a 3x3 layer where the whole layer would take Winograd, 40
// and 20 output channels (the last part not a whole block), a strided 1x1,
// with and without bias, and a channels-last input; inference and training
// agree with float64.
// The gradients are split too: the input's along the input channels (by
// the forward of flipped weights at stride 1, by oneDNN's backward-data
// kernel otherwise), the weight's along the output channels.
TEST(Conv, UnevenBatchesAndLargeWeightsAreSplitAlongChannels) {
  if (!has_onednn())
    GTEST_SKIP() << "this build has no oneDNN (BRASA_ONEDNN=OFF or libdnnl-dev missing)";
  const std::vector<Geometry> cases{
      {{1, 3, 40, 40}, {64, 3, 7, 7}, {2, 2}, {3, 3}, {1, 1}, 1, false},
      {{1, 64, 30, 30}, {64, 64, 3, 3}, {1, 1}, {1, 1}, {1, 1}, 1, true},
      {{2, 16, 12, 12}, {40, 16, 3, 3}, {1, 1}, {1, 1}, {1, 1}, 1, true},
      {{1, 8, 9, 9}, {20, 8, 3, 3}, {1, 1}, {0, 0}, {1, 1}, 1, false},
      {{1, 32, 14, 14}, {48, 32, 1, 1}, {2, 2}, {0, 0}, {1, 1}, 1, true},
      {{3, 32, 10, 10}, {48, 32, 3, 3}, {1, 1}, {1, 1}, {1, 1}, 1, false},  // 3 on 2 threads
      {{1, 48, 9, 9}, {64, 48, 3, 3}, {2, 2}, {1, 1}, {1, 1}, 1, false},
      {{1, 32, 20, 20}, {32, 32, 3, 3}, {1, 1}, {1, 1}, {1, 1}, 1, true},  // (flipped weights)
      // Weights larger than a batch slice's activations, at even batches:
      // the blocked kernels (6x6 out), the plain-layout forward (5x5 out).
      {{4, 64, 6, 6}, {96, 64, 3, 3}, {1, 1}, {1, 1}, {1, 1}, 1, true},
      {{4, 64, 5, 5}, {64, 64, 3, 3}, {1, 1}, {1, 1}, {1, 1}, 1, false},
  };
  for (int threads : {2, 4}) {
    set_num_threads(threads);
    for (const auto& g : cases) {
      SCOPED_TRACE(::testing::Message() << "threads " << threads << " x " << IntArrayRef(g.x)
                                        << " w " << IntArrayRef(g.w));
      manual_seed(8);
      Tensor x = randn(g.x), w = randn(g.w) * 0.1, b = randn({g.w[0]});
      Tensor gy = randn(conv2d(x, w, {}, g.stride, g.padding).sizes());
      Result ref = float64_reference(g, x, w, b, gy);
      const Tensor bias = g.bias ? b : Tensor();
      expect_close(conv2d(x, w, bias, g.stride, g.padding), ref.y, "inference output");
      Tensor x_cl = x.permute({0, 2, 3, 1}).contiguous().permute({0, 3, 1, 2});
      expect_close(conv2d(x_cl, w, bias, g.stride, g.padding), ref.y,
                   "channels-last inference output");
      Result a = train(ConvTrainingPath::kOneDNN, g, x, w, b, gy);
      expect_close(a.y, ref.y, "training output");
      expect_close(a.gx, ref.gx, "input gradient");
      expect_close(a.gw, ref.gw, "weight gradient");
    }
  }
  set_num_threads(2);
}

// Depthwise layers whose weight gradient oneDNN does only by GEMM (all but
// 3x3) take Brasa's own kernel (cpu/depthwise_kernels.cpp): 5x5 and 7x7,
// strided, dilated, unequal kernel sides (a Conv1d's 1x15), padding wider
// and narrower than the kernel's half. Against a float64 reference.
TEST(Conv, DepthwiseWeightGradientsAgreeWithAFloat64Reference) {
  if (!has_onednn())
    GTEST_SKIP() << "this build has no oneDNN (BRASA_ONEDNN=OFF or libdnnl-dev missing)";
  const std::vector<Geometry> cases{
      {{3, 16, 12, 12}, {16, 1, 7, 7}, {1, 1}, {3, 3}, {1, 1}, 16, true},
      {{2, 24, 15, 13}, {24, 1, 5, 5}, {2, 2}, {2, 2}, {1, 1}, 24, false},
      {{2, 8, 16, 16}, {8, 1, 5, 5}, {1, 2}, {4, 1}, {2, 1}, 8, true},
      {{4, 32, 1, 100}, {32, 1, 1, 15}, {1, 1}, {0, 7}, {1, 1}, 32, true},
      {{2, 16, 11, 11}, {16, 1, 7, 5}, {3, 2}, {1, 0}, {1, 2}, 16, false},
  };
  for (int threads : {1, 2}) {
    set_num_threads(threads);
    for (const auto& g : cases) {
      SCOPED_TRACE(::testing::Message() << "threads " << threads << " x " << IntArrayRef(g.x)
                                        << " w " << IntArrayRef(g.w));
      manual_seed(3);
      Tensor x = randn(g.x), w = randn(g.w), b = randn({g.w[0]});
      Tensor gy = randn(conv2d(x, w, {}, g.stride, g.padding, g.dilation, g.groups).sizes());
      Result a = train(ConvTrainingPath::kOneDNN, g, x, w, b, gy);
      Result ref = float64_reference(g, x, w, b, gy);
      expect_close(a.gw, ref.gw, "weight gradient");
      expect_close(a.gx, ref.gx, "input gradient");
      expect_close(a.y, ref.y, "output");
    }
  }
  set_num_threads(2);
}

// An input that lies channels last (a text CNN's embeddings transposed to
// [N, C, L], or a tensor the user made channels last) is read by oneDNN as
// it lies, and its gradient comes back channels last; values and all three
// gradients agree with a float64 reference on NCHW, at 1 and 2 threads: 1-d
// layers, 3x3 ones with channels in blocks of 16 (where contiguous inputs
// would take Winograd or the forward-convolution input gradient), strided,
// padded, dilated, with and without bias, and with a frozen weight.
TEST(Conv, ChannelsLastInputsAreReadAsTheyLie) {
  if (!has_onednn())
    GTEST_SKIP() << "this build has no oneDNN (BRASA_ONEDNN=OFF or libdnnl-dev missing)";
  const std::vector<Geometry> cases{
      {{4, 24, 1, 60}, {10, 24, 1, 3}, {1, 1}, {0, 0}, {1, 1}, 1, true},  // conv1d, k = 3
      {{3, 20, 1, 90}, {7, 20, 1, 5}, {1, 2}, {0, 2}, {1, 2}, 1, false},  // strided, dilated
      {{2, 32, 9, 9}, {32, 32, 3, 3}, {1, 1}, {1, 1}, {1, 1}, 1, true},
      {{3, 16, 16, 14}, {20, 16, 3, 3}, {2, 2}, {1, 0}, {1, 1}, 1, false},
  };
  // (Outputs of at least 36 pixels: smaller ones train by im2col, which
  // takes a contiguous copy of the input.)
  for (int threads : {1, 2}) {
    set_num_threads(threads);
    for (const auto& g : cases) {
      SCOPED_TRACE(::testing::Message() << "threads " << threads << " x " << IntArrayRef(g.x)
                                        << " w " << IntArrayRef(g.w));
      manual_seed(21);
      // [N, H, W, C] in memory, seen as [N, C, H, W].
      Tensor nhwc = randn({g.x[0], g.x[2], g.x[3], g.x[1]});
      Tensor w0 = randn(g.w), b0 = randn({g.w[0]});
      Tensor x_ref = nhwc.permute({0, 3, 1, 2}).contiguous();
      Tensor gy = randn(conv2d(x_ref, w0, {}, g.stride, g.padding, g.dilation).sizes());
      Result ref = float64_reference(g, x_ref, w0, b0, gy);
      for (bool frozen : {false, true}) {
        SCOPED_TRACE(frozen ? "frozen weight" : "trained weight");
        Tensor base = nhwc.clone().requires_grad_(true);
        Tensor x = base.permute({0, 3, 1, 2});
        ASSERT_TRUE(x.is_contiguous(MemoryFormat::ChannelsLast));
        Tensor w = w0.clone().requires_grad_(!frozen);
        Tensor b = g.bias ? b0.clone().requires_grad_(true) : Tensor();
        Tensor y = conv2d(x, w, b, g.stride, g.padding, g.dilation);
        expect_close(y.detach(), ref.y, "output");
        // The input gradient as conv2d returns it (before the permute's backward).
        const auto grads = autograd::grad({y}, {x}, {gy}, /*retain_graph=*/true);
        expect_close(grads[0], ref.gx, "input gradient");
        // (Channels last where this CPU's oneDNN has kernels for it: not on
        // AVX2 for every shape.)
        const detail::ConvGeometry geo{g.x[0],        g.x[1],       g.x[2],       g.x[3],
                                       g.w[0],        g.w[2],       g.w[3],       g.stride[0],
                                       g.stride[1],   g.padding[0], g.padding[1], g.dilation[0],
                                       g.dilation[1], y.size(2),    y.size(3),    1};
        if (!frozen && detail::onednn_reads_channels_last(geo, true)) {
          EXPECT_TRUE(grads[0].is_contiguous(MemoryFormat::ChannelsLast))
              << "strides " << grads[0].strides();
        }
        y.backward(gy);
        expect_close(base.grad().permute({0, 3, 1, 2}), ref.gx, "leaf gradient");
        if (!frozen) expect_close(w.grad(), ref.gw, "weight gradient");
        if (g.bias) expect_close(b.grad(), ref.gb, "bias gradient");
      }
    }
  }
  set_num_threads(2);
}

// Shapes for which oneDNN has only its reference loops train and run by
// im2col instead (40x faster); where channels-last gradients have only
// reference loops (AVX2: a 16->3 9x9 layer, a style-transfer network's last)
// they take oneDNN's own layouts. Values agree with a float64 reference
// either way. ctest runs this suite again with oneDNN held to AVX2
// (core.convolutions_on_avx2_onednn) and to SSE4.1 (..._sse41_onednn, where
// the 16->3 layer has no JIT kernel at all).
TEST(Conv, OneDnnReferenceLoopsAreLeftToIm2col) {
  if (!has_onednn())
    GTEST_SKIP() << "this build has no oneDNN (BRASA_ONEDNN=OFF or libdnnl-dev missing)";
  // (N, C, H, W, O, kh, kw, sh, sw, ph, pw, dh, dw, OH, OW, groups)
  const detail::ConvGeometry resnet{16, 64, 32, 32, 64, 3, 3, 1, 1, 1, 1, 1, 1, 32, 32, 1};
  const detail::ConvGeometry last{2, 16, 24, 24, 3, 9, 9, 1, 1, 0, 0, 1, 1, 16, 16, 1};
  EXPECT_TRUE(detail::onednn_conv_is_fast(resnet, true, true));
  const char* isa_env = std::getenv("ONEDNN_MAX_CPU_ISA");
  const std::string isa = isa_env ? isa_env : "";
  if (isa == "AVX2") {
    EXPECT_TRUE(detail::onednn_conv_is_fast(last, true, true));
  }
  if (isa == "SSE41") {
    EXPECT_FALSE(detail::onednn_conv_is_fast(last, true, true));
  }
  const Geometry g{{2, 16, 24, 24}, {3, 16, 9, 9}, {1, 1}, {0, 0}, {1, 1}, 1, true};
  manual_seed(23);
  Tensor x = randn(g.x), w = randn(g.w) * 0.1, b = randn({3});
  Tensor gy = randn({2, 3, 16, 16});
  Result a = train(ConvTrainingPath::kAuto, g, x, w, b, gy);
  Result ref = float64_reference(g, x, w, b, gy);
  expect_close(a.y, ref.y, "output");
  expect_close(a.gx, ref.gx, "input gradient");
  expect_close(a.gw, ref.gw, "weight gradient");
  expect_close(a.gb, ref.gb, "bias gradient");
}

// Three 1-d convolutions of one transposed embedding (Kim's text CNN): the
// channels-last input gradients are summed in place by autograd, and the
// embedding's gradient equals the float64 reference's.
TEST(Conv, ChannelsLastGradientsOfSeveralUsesAddUp) {
  if (!has_onednn())
    GTEST_SKIP() << "this build has no oneDNN (BRASA_ONEDNN=OFF or libdnnl-dev missing)";
  manual_seed(22);
  Tensor table = randn({50, 32});
  Tensor words = randint(0, 50, {6, 40}, TensorOptions().dtype(kLong));
  std::vector<Tensor> ws;
  for (int64_t k : {3, 4, 5}) ws.push_back(randn({12, 32, k}) * 0.2);
  auto loss_of = [&](const Tensor& t, const std::vector<Tensor>& weights) {
    Tensor e = t.index_select(0, words.flatten()).view({6, 40, 32}).transpose(1, 2);  // [6, 32, 40]
    Tensor total;
    for (const Tensor& w : weights) {
      Tensor s = relu(conv1d(e, w)).amax(2).sum();
      total = total.defined() ? total + s : s;
    }
    return total;
  };
  Tensor t = table.clone().requires_grad_(true);
  std::vector<Tensor> w;
  for (const Tensor& v : ws) w.push_back(v.clone().requires_grad_(true));
  loss_of(t, w).backward();
  Tensor t64 = table.to(kDouble).requires_grad_(true);
  std::vector<Tensor> w64;
  for (const Tensor& v : ws) w64.push_back(v.to(kDouble).requires_grad_(true));
  loss_of(t64, w64).backward();
  expect_close(t.grad(), t64.grad().to(kFloat), "embedding gradient");
  for (size_t i = 0; i < w.size(); ++i)
    expect_close(w[i].grad(), w64[i].grad().to(kFloat), "weight gradient");
}

// 1x1 convolutions of stride 1 without padding on maps of 256 pixels or
// more run as one product per sample on NCHW; they agree with the same
// product written as an einsum (autograd through bmm), in float and
// double, with and without bias, as conv2d and as conv1d, at 1 and 2
// threads, and for a frozen weight and an empty batch.
TEST(Conv, PointwiseLayersAgreeWithAnEinsum) {
  struct Case {
    std::vector<int64_t> x;
    int64_t out;
    bool bias;
  };
  const std::vector<Case> cases{{{3, 5, 16, 20}, 7, true},
                                {{2, 64, 16, 16}, 128, false},
                                {{4, 3, 1, 300}, 16, true},
                                {{1, 9, 17, 31}, 2, true}};
  for (int threads : {1, 2})
    for (ScalarType dtype : {kFloat, kDouble})
      for (const auto& c : cases) {
        set_num_threads(threads);
        SCOPED_TRACE(::testing::Message() << "threads " << threads << " " << toString(dtype)
                                          << " x " << IntArrayRef(c.x) << " out " << c.out);
        manual_seed(5);
        const TensorOptions o = TensorOptions().dtype(dtype);
        Tensor x0 = randn(c.x, o), w0 = randn({c.out, c.x[1], 1, 1}, o), b0 = randn({c.out}, o);
        Tensor x = x0.clone().requires_grad_(), w = w0.clone().requires_grad_();
        Tensor b = c.bias ? b0.clone().requires_grad_() : Tensor();
        Tensor y = conv2d(x, w, b);
        Tensor gy = randn(y.sizes(), o);
        y.backward(gy);
        Tensor xr = x0.clone().requires_grad_(), wr = w0.clone().requires_grad_();
        Tensor br = c.bias ? b0.clone().requires_grad_() : Tensor();
        Tensor yr = einsum("oc,nchw->nohw", {wr.view({c.out, c.x[1]}), xr});
        if (c.bias) yr = yr + br.view({1, c.out, 1, 1});
        yr.backward(gy);
        expect_close(y.detach(), yr.detach(), "output");
        expect_close(x.grad(), xr.grad(), "input gradient");
        expect_close(w.grad(), wr.grad(), "weight gradient");
        if (c.bias) expect_close(b.grad(), br.grad(), "bias gradient");
        EXPECT_EQ(y.grad_fn()->name(), "ConvolutionBackward0");
        if (c.x[2] == 1) {  // conv1d takes the same path
          Tensor y1 = conv1d(x0.squeeze(2), w0.squeeze(3), c.bias ? b0 : Tensor());
          expect_close(y1, yr.detach().squeeze(2), "conv1d");
        }
      }
  set_num_threads(2);
  // A frozen weight (the input's gradient only), and an empty batch.
  Tensor x = randn({2, 6, 16, 16}).requires_grad_(), w = randn({4, 6, 1, 1});
  conv2d(x, w).sum().backward();
  expect_close(x.grad(), w.view({4, 6}).sum(0).view({1, 6, 1, 1}).expand({2, 6, 16, 16}),
               "input gradient, frozen weight");
  Tensor empty_x = randn({0, 6, 16, 16}), ew = randn({4, 6, 1, 1}).requires_grad_();
  Tensor ey = conv2d(empty_x, ew);
  EXPECT_EQ(ey.sizes(), IntArrayRef({0, 4, 16, 16}));
  ey.sum().backward();
  EXPECT_EQ(ew.grad().abs().sum().item<double>(), 0.0);
}

// An empty batch is an empty output and zero weight and bias gradients on
// every path (oneDNN's used to divide by its zero slices), depthwise and
// transposed included.
TEST(Conv, AnEmptyBatchGivesEmptyOutputsAndZeroGradients) {
  for (ConvTrainingPath path : {ConvTrainingPath::kOneDNN, ConvTrainingPath::kIm2col}) {
    set_conv_training_path(path);
    for (int64_t groups : {1, 8}) {
      Tensor x = randn({0, 8, 10, 10}).requires_grad_(true);
      Tensor w = randn({8, 8 / groups, 7, 7}).requires_grad_(true), b = randn({8});
      b.requires_grad_(true);
      Tensor y = conv2d(x, w, b, {1, 1}, {3, 3}, {1, 1}, groups);
      EXPECT_SHAPE(y, {0, 8, 10, 10});
      y.sum().backward();
      EXPECT_SHAPE(x.grad(), {0, 8, 10, 10});
      EXPECT_EQ(w.grad().abs().sum().item<float>(), 0.0f);
      EXPECT_EQ(b.grad().abs().sum().item<float>(), 0.0f);
      {
        NoGradGuard no_grad;
        EXPECT_SHAPE(conv2d(x, w, b, {1, 1}, {3, 3}, {1, 1}, groups), {0, 8, 10, 10});
      }
    }
    Tensor xt = randn({0, 4, 5, 5}).requires_grad_(true), wt = randn({4, 2, 3, 3});
    wt.requires_grad_(true);
    Tensor yt = conv_transpose2d(xt, wt, {}, {2, 2});
    EXPECT_SHAPE(yt, {0, 2, 11, 11});
    yt.sum().backward();
    EXPECT_EQ(wt.grad().abs().sum().item<float>(), 0.0f);
  }
  set_conv_training_path(ConvTrainingPath::kAuto);
  // Max pooling and group norm of an empty batch: empty outputs, a gradient of the input's shape.
  Tensor x = randn({0, 8, 10, 10}).requires_grad_(true);
  Tensor pooled = max_pool2d(x, {2, 2});
  EXPECT_SHAPE(pooled, {0, 8, 5, 5});
  pooled.sum().backward();
  EXPECT_SHAPE(x.grad(), {0, 8, 10, 10});
  Tensor gamma = ones({8}).requires_grad_(true);
  Tensor normed = nn::functional::group_norm(x, 2, gamma, Tensor());
  EXPECT_SHAPE(normed, {0, 8, 10, 10});
  normed.sum().backward();
  EXPECT_EQ(gamma.grad().abs().sum().item<float>(), 0.0f);
  // The global average (a mean over the spatial dims) stays in the graph.
  Tensor empty_input = randn({0, 8, 10, 10}).requires_grad_(true);
  Tensor averaged = empty_input.mean({2, 3}, true);
  EXPECT_TRUE(averaged.requires_grad());
  EXPECT_SHAPE(averaged, {0, 8, 1, 1});
  averaged.sum().backward();
  EXPECT_SHAPE(empty_input.grad(), {0, 8, 10, 10});
  EXPECT_TRUE(std::isnan(randn({3, 0}).mean(1)[0].item<float>()));  // 0 / 0, as PyTorch
}

TEST(Conv, TrainingPathSwitch) {
  EXPECT_EQ(conv_training_path(), ConvTrainingPath::kAuto);
  set_conv_training_path(ConvTrainingPath::kIm2col);
  EXPECT_EQ(conv_training_path(), ConvTrainingPath::kIm2col);
  set_conv_training_path(ConvTrainingPath::kAuto);
}

TEST(Conv, Float64AndDisabledOneDnnUseIm2col) {
  // Both paths give PyTorch's values (F.conv2d(arange(16).view(1,1,4,4), ones(1,1,2,2))).
  for (bool on : {true, false}) {
    set_onednn_enabled(on);
    EXPECT_EQ(onednn_enabled(), on && has_onednn());
    for (ScalarType t : {kFloat, kDouble}) {
      Tensor y =
          conv2d(arange(16, TensorOptions().dtype(t)).view({1, 1, 4, 4}), ones({1, 1, 2, 2}, t));
      EXPECT_VALUES(y.flatten(), {10, 14, 18, 26, 30, 34, 42, 46, 50});
    }
  }
  set_onednn_enabled(true);
}

}  // namespace
}  // namespace brasa
