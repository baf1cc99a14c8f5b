// Max pooling with positions (nn/pooling.cpp), the transposed 3-d
// convolution and the templated convolution options (nn/conv3d.h,
// nn/modules.h) and Embedding(Bag)::from_pretrained against PyTorch's
// outputs; their error paths. Gradients are in the gradcheck table, and
// those of global average pooling and 2x upsampling against references here.
#include <brasa/torch.h>

#include <cmath>
#include <limits>

#include "../ops/golden_util.h"
#include "../test_util.h"

namespace {

using namespace brasa;
namespace F = torch::nn::functional;
using brasa::testing::printed;
using golden::expect_golden;
using golden::S;
using golden::set_sequential_weights;
using golden::W;

Tensor both(const std::tuple<Tensor, Tensor>& r) {
  return torch::cat({std::get<0>(r).flatten(), std::get<1>(r).to(kDouble).flatten()});
}

TEST(MaxPoolWithIndices, MatchesPyTorch) {
  auto [v, i] = F::max_pool3d_with_indices(
      S({1, 2, 4, 5, 5}), F::MaxPool3dFuncOptions({2, 3, 2}).stride({2, 2, 1}).padding({1, 1, 0}));
  expect_golden("max_pool3d_wi_values", v);
  expect_golden("max_pool3d_wi_indices", i.to(kDouble));
  EXPECT_EQ(i.scalar_type(), kLong);
  expect_golden(
      "max_pool3d_wi_ceil_dilated",
      std::get<1>(torch::max_pool3d_with_indices(S({2, 5, 6, 5}), {2}, {2}, {0}, {2}, true))
          .to(kDouble));
  expect_golden("adaptive_max_pool1d_wi", both(torch::adaptive_max_pool1d(S({2, 3, 7}), {3})));
  expect_golden("adaptive_max_pool2d_wi",
                both(F::adaptive_max_pool2d_with_indices(S({2, 3, 5, 7}),
                                                         F::AdaptiveMaxPool2dFuncOptions({3, 4}))));
  expect_golden("adaptive_max_pool3d_wi",
                both(torch::nn::AdaptiveMaxPool3d(torch::nn::AdaptiveMaxPool3dOptions({2, 3, 4}))
                         ->forward_with_indices(S({3, 4, 5, 6}))));
  // The values are the plain pooling's; the gradient goes to the chosen elements only.
  Tensor x = S({1, 2, 5, 7}).requires_grad_();
  auto [pooled, where] = torch::adaptive_max_pool2d(x, {3, 4});
  EXPECT_TRUE(pooled.equal(
      F::adaptive_max_pool2d(S({1, 2, 5, 7}), F::AdaptiveMaxPool2dFuncOptions({3, 4}))));
  pooled.backward(S({1, 2, 3, 4}, 0.3, 0.2));
  expect_golden("adaptive_max_pool2d_grad", x.grad());
  // The positions unpool back to where the maxima were.
  auto [v2, i2] = torch::nn::MaxPool3d(torch::nn::MaxPool3dOptions(2))
                      ->forward_with_indices(S({1, 1, 4, 4, 4}));
  Tensor back = F::max_unpool3d(v2, i2, F::MaxUnpool3dFuncOptions(2));
  EXPECT_TRUE(back.flatten().gather(0, i2.flatten()).equal(v2.flatten()));
}

// Padded max pooling against a window-by-window reference: values and the
// first argmax in window order, with NaNs (which win), ties, dilation, and
// windows whose real elements are all -inf (their index is the window's
// first element in the plane, never the padding).
TEST(MaxPoolWithIndices, PaddedWindowsMatchAReference) {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::nanf("");
  Tensor x = (S({2, 3, 9, 11}, 0.77, 0.2) * 4).round().to(kFloat);  // ties
  x[0][1][4][5] = nan;
  x[1][2].narrow(0, 0, 3).narrow(1, 0, 3).fill_(-inf);
  struct Case {
    int64_t k, s, p, d;
  };
  for (const Case c :
       {Case{3, 2, 1, 1}, Case{3, 1, 1, 1}, Case{5, 2, 2, 1}, Case{3, 2, 1, 2}, Case{2, 3, 1, 1}})
    for (const ScalarType t : {kFloat, kDouble}) {
      Tensor xt = x.to(t);
      auto [v, i] = F::max_pool2d_with_indices(
          xt, F::MaxPool2dFuncOptions(c.k).stride(c.s).padding(c.p).dilation(c.d));
      const int64_t OH = v.size(2), OW = v.size(3);
      for (int64_t n = 0; n < 2; ++n)
        for (int64_t ch = 0; ch < 3; ++ch)
          for (int64_t oh = 0; oh < OH; ++oh)
            for (int64_t ow = 0; ow < OW; ++ow) {
              double best = 0;
              int64_t at = -1;
              for (int64_t a = 0; a < c.k; ++a)
                for (int64_t b = 0; b < c.k; ++b) {
                  const int64_t h = oh * c.s - c.p + a * c.d, w = ow * c.s - c.p + b * c.d;
                  if (h < 0 || h >= 9 || w < 0 || w >= 11) continue;
                  const double val = x[n][ch][h][w].item<double>();
                  if (at < 0 || (val > best) || (std::isnan(val) && !std::isnan(best))) {
                    best = val;
                    at = h * 11 + w;
                  }
                }
              const double got = v[n][ch][oh][ow].item<double>();
              EXPECT_TRUE(std::isnan(best) ? std::isnan(got) : got == best)
                  << c.k << c.s << c.p << c.d << " at " << n << ch << oh << ow;
              EXPECT_EQ(i[n][ch][oh][ow].item<int64_t>(), at)
                  << c.k << c.s << c.p << c.d << " at " << n << ch << oh << ow;
            }
    }
}

// 3-d max pooling against a direct scan of every window, on both of the
// kernel's paths: the first argmax
// in (d, h, w) window order, NaNs winning, ties across depths (the earlier
// depth keeps it), padding, dilation, ceil mode, and windows whose real
// elements are all -inf.
TEST(MaxPoolWithIndices, Volumes3dMatchAReference) {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::nanf("");
  Tensor x = (S({2, 2, 7, 9, 10}, 0.41, 0.3) * 3).round().to(kFloat);  // ties
  x[0][1][3][4][5] = nan;
  x[1][0].narrow(0, 0, 2).narrow(1, 0, 3).narrow(2, 0, 3).fill_(-inf);
  struct Case {
    int64_t k, s, p, d;
    bool ceil;
  };
  // 1 thread pools each volume's slices once where depth windows overlap;
  // 8 threads (more than the 4 volumes can feed) pool per output slice.
  const int threads_before = get_num_threads();
  for (const int threads : {1, 8})
    for (const Case c : {Case{2, 2, 0, 1, false}, Case{3, 2, 1, 1, false}, Case{3, 1, 1, 1, false},
                         Case{2, 2, 1, 2, true}, Case{3, 3, 1, 1, true}})
      for (const ScalarType t : {kFloat, kDouble}) {
        set_num_threads(threads);
        auto [v, i] = F::max_pool3d_with_indices(
            x.to(t),
            F::MaxPool3dFuncOptions(c.k).stride(c.s).padding(c.p).dilation(c.d).ceil_mode(c.ceil));
        const int64_t OD = v.size(2), OH = v.size(3), OW = v.size(4);
        const int64_t sizes[3] = {7, 9, 10};
        for (int64_t n = 0; n < 2; ++n)
          for (int64_t ch = 0; ch < 2; ++ch)
            for (int64_t od = 0; od < OD; ++od)
              for (int64_t oh = 0; oh < OH; ++oh)
                for (int64_t ow = 0; ow < OW; ++ow) {
                  double best = 0;
                  int64_t at = -1;
                  for (int64_t a = 0; a < c.k; ++a)
                    for (int64_t b = 0; b < c.k; ++b)
                      for (int64_t e = 0; e < c.k; ++e) {
                        const int64_t z = od * c.s - c.p + a * c.d, h = oh * c.s - c.p + b * c.d,
                                      w = ow * c.s - c.p + e * c.d;
                        if (z < 0 || z >= sizes[0] || h < 0 || h >= sizes[1] || w < 0 ||
                            w >= sizes[2])
                          continue;
                        const double val = x[n][ch][z][h][w].item<double>();
                        if (at < 0 || (val > best) || (std::isnan(val) && !std::isnan(best))) {
                          best = val;
                          at = (z * sizes[1] + h) * sizes[2] + w;
                        }
                      }
                  const double got = v[n][ch][od][oh][ow].item<double>();
                  EXPECT_TRUE(std::isnan(best) ? std::isnan(got) : got == best)
                      << c.k << c.s << c.p << c.d << " at " << n << ch << od << oh << ow;
                  EXPECT_EQ(i[n][ch][od][oh][ow].item<int64_t>(), at)
                      << c.k << c.s << c.p << c.d << " at " << n << ch << od << oh << ow;
                }
        // The gradient lands on the chosen elements, summed where windows
        // share one.
        Tensor xg = x.to(t).detach().clone().requires_grad_(true);
        Tensor y = F::max_pool3d(
            xg,
            F::MaxPool3dFuncOptions(c.k).stride(c.s).padding(c.p).dilation(c.d).ceil_mode(c.ceil));
        Tensor g = S(y.sizes().vec(), 0.9, 0.5).to(t);
        y.backward(g);
        Tensor want = zeros({2, 2, 7 * 9 * 10}, x.options().dtype(t))
                          .scatter_add(2, i.flatten(2), g.flatten(2))
                          .view(x.sizes());
        EXPECT_TRUE(xg.grad().equal(want)) << c.k << c.s << c.p << c.d;
      }
  set_num_threads(threads_before);
}

// conv3d against a direct sum over every tap, for depth strides, paddings
// and dilations where some taps read only padding (D 2, kernel 3, padding 2,
// dilation 2), and its input gradient against the reference's (the depth
// taps' gather and its adjoint).
TEST(Conv3d, MatchesADirectSum) {
  struct Case {
    int64_t D, KD, s, p, d;
  };
  for (const Case c : {Case{5, 3, 1, 1, 1}, Case{6, 3, 2, 1, 1}, Case{2, 3, 1, 2, 2},
                       Case{7, 2, 3, 0, 2}, Case{4, 1, 2, 0, 1}}) {
    SCOPED_TRACE(::testing::Message() << "D " << c.D << " KD " << c.KD << " stride " << c.s
                                      << " padding " << c.p << " dilation " << c.d);
    Tensor x = S({2, 3, c.D, 4, 5}).requires_grad_(true);
    Tensor w = S({2, 3, c.KD, 2, 3}, 0.53, 0.4);
    Tensor y = conv3d(x, w, Tensor(), {c.s, 1, 1}, {c.p, 1, 0}, {c.d, 1, 1});
    // The reference: y[n, o, od, oh, ow] = sum over c, kd, kh, kw.
    Tensor xr = x.detach().clone().requires_grad_(true);
    const int64_t OD = y.size(2), OH = y.size(3), OW = y.size(4);
    std::vector<Tensor> outs;
    Tensor padded = constant_pad_nd(xr, {0, 0, 1, 1, c.p, c.p});
    for (int64_t od = 0; od < OD; ++od) {
      Tensor acc = zeros({2, 2, OH, OW}, x.options().dtype(kDouble));
      for (int64_t kd = 0; kd < c.KD; ++kd)
        for (int64_t kh = 0; kh < 2; ++kh)
          for (int64_t kw = 0; kw < 3; ++kw) {
            Tensor in = padded.select(2, od * c.s + kd * c.d).narrow(2, kh, OH).narrow(3, kw, OW);
            acc = acc + einsum("nchw,oc->nohw", {in, w.select(2, kd).select(2, kh).select(2, kw)});
          }
      outs.push_back(acc);
    }
    Tensor want = stack(outs, 2);
    EXPECT_TRUE(allclose(y, want, 1e-10, 1e-10));
    Tensor g = S(y.sizes().vec(), 0.29, 0.7);
    y.backward(g);
    want.backward(g);
    EXPECT_TRUE(allclose(x.grad(), xr.grad(), 1e-10, 1e-10));
  }
}

TEST(ConvTranspose3d, MatchesPyTorch) {
  expect_golden("conv_transpose3d",
                torch::conv_transpose3d(S({2, 4, 3, 4, 3}), W({4, 3, 2, 3, 2}), S({6}, 0.9, 0.1),
                                        {2, 1, 2}, {1, 0, 1}, {1, 0, 0}, 2, {1, 2, 1}));
  expect_golden("conv_transpose3d_plain",
                F::conv_transpose3d(S({1, 2, 2, 3, 2}), W({2, 3, 2, 2, 2})));
  torch::nn::ConvTranspose3d m(torch::nn::ConvTranspose3dOptions(2, 4, {2, 3, 1})
                                   .stride(2)
                                   .padding({0, 1, 0})
                                   .output_padding(1));
  m->to(kDouble);
  set_sequential_weights(*m);
  expect_golden("conv_transpose3d_module", m(S({1, 2, 2, 3, 3})));
  EXPECT_EQ(m->weight.sizes().vec(), (std::vector<int64_t>{2, 4, 2, 3, 1}));
  EXPECT_EQ(printed(*m),
            "torch::nn::ConvTranspose3d(2, 4, kernel_size=[2, 3, 1], stride=[2, 2, 2], "
            "padding=[0, 1, 0], output_padding=[1, 1, 1])");
  // Unbatched input.
  EXPECT_SHAPE(m(S({2, 2, 3, 3})), {4, 5, 6, 6});
  // The templated spellings are the per-dimension option types.
  static_assert(std::is_same_v<torch::nn::ConvOptions<2>, torch::nn::Conv2dOptions>);
  static_assert(
      std::is_same_v<torch::nn::ConvTransposeOptions<3>, torch::nn::ConvTranspose3dOptions>);
  static_assert(std::is_same_v<torch::nn::ConvNdOptions<1>, torch::nn::Conv1dOptions>);
  torch::nn::Conv2d c(torch::nn::ConvOptions<2>(1, 2, 3).stride(2));
  EXPECT_SHAPE(c(torch::ones({1, 1, 7, 7})), {1, 2, 3, 3});
}

TEST(Embedding, FromPretrainedUsesTheTable) {
  Tensor table = S({4, 3});
  auto e = torch::nn::Embedding::from_pretrained(table);
  EXPECT_FALSE(e->weight.requires_grad());
  EXPECT_TRUE(e(torch::tensor({2, 0})).equal(torch::stack({table[2], table[0]})));
  auto trainable = torch::nn::Embedding::from_pretrained(
      table, torch::nn::EmbeddingFromPretrainedOptions().freeze(false).padding_idx(1));
  EXPECT_TRUE(trainable->weight.requires_grad());
  EXPECT_TRUE(trainable->weight.equal(table));                // the padding row is kept as given
  EXPECT_EQ(trainable->weight.data_ptr(), table.data_ptr());  // the table itself, as in PyTorch
  trainable(torch::tensor({1, 3})).sum().backward();
  EXPECT_EQ(trainable->weight.grad()[1].abs().sum().item<double>(), 0.0);  // no gradient to padding
  auto bag = torch::nn::EmbeddingBag::from_pretrained(
      table, torch::nn::EmbeddingBagFromPretrainedOptions().mode(torch::kSum));
  Tensor out = bag(torch::tensor({0, 1, 3}), torch::tensor({0, 2}));
  EXPECT_TRUE(torch::allclose(out[0], table[0] + table[1]));
  EXPECT_TRUE(torch::allclose(out[1], table[3]));
}

TEST(PoolingConv3d, BadInputGetsClearErrors) {
  EXPECT_ERROR(
      "adaptive_max_pool2d_with_indices: output_size must be positive",
      F::adaptive_max_pool2d_with_indices(S({1, 4, 4}), F::AdaptiveMaxPool2dFuncOptions({0, 2})));
  EXPECT_ERROR("max_pool3d_with_indices: expected a 4-D or 5-D input",
               F::max_pool3d_with_indices(S({4, 4}), F::MaxPool3dFuncOptions(2)));
  EXPECT_ERROR("conv_transpose3d: output padding must be smaller than either stride or dilation",
               torch::conv_transpose3d(S({1, 2, 2, 2, 2}), S({2, 1, 1, 1, 1}), {}, {1}, {0}, {1}));
  EXPECT_ERROR("conv_transpose3d: input [1, 3, 2, 2, 2] has 3 channels but weight",
               torch::conv_transpose3d(S({1, 3, 2, 2, 2}), S({2, 1, 1, 1, 1})));
  EXPECT_ERROR("Only \"zeros\" padding mode is supported for ConvTranspose3d",
               torch::nn::ConvTranspose3d(
                   torch::nn::ConvTranspose3dOptions(1, 1, 1).padding_mode(torch::kReflect)));
  EXPECT_ERROR("Embedding::from_pretrained: Embeddings parameter is expected to be 2-dimensional",
               torch::nn::Embedding::from_pretrained(S({4})));
}

}  // namespace

namespace {

using namespace brasa;
namespace F = torch::nn::functional;

TEST(FractionalMaxPool, MatchesPyTorchWithGivenSamples) {
  Tensor u2 = golden::D({0.1, 0.7, 0.55, 0.3, 0.9, 0.05, 0.4, 0.8}).view({2, 2, 2});
  auto r2 = F::fractional_max_pool2d_with_indices(golden::S({2, 2, 7, 8}),
                                                  F::FractionalMaxPool2dFuncOptions({2, 3})
                                                      .output_size(std::vector<int64_t>{4, 3})
                                                      ._random_samples(u2));
  golden::expect_golden(
      "fractional_max_pool2d",
      torch::cat({std::get<0>(r2).flatten(), std::get<1>(r2).to(kDouble).flatten()}));
  torch::nn::FractionalMaxPool2d m(
      torch::nn::FractionalMaxPool2dOptions(2).output_ratio(0.6)._random_samples(
          golden::D({0.25, 0.75, 0.6, 0.1}).view({1, 2, 2})));
  golden::expect_golden("fractional_max_pool2d_ratio", m(golden::S({1, 2, 9, 7})));
  EXPECT_EQ(brasa::testing::printed(*m), "torch::nn::FractionalMaxPool2d()");
  auto r3 = torch::nn::FractionalMaxPool3d(
                torch::nn::FractionalMaxPool3dOptions({2, 2, 3})
                    .output_size(std::vector<int64_t>{3, 4, 3})
                    ._random_samples(golden::D({0.1, 0.7, 0.35, 0.55, 0.3, 0.95}).view({1, 2, 3})))
                ->forward_with_indices(golden::S({1, 2, 6, 7, 8}));
  golden::expect_golden(
      "fractional_max_pool3d",
      torch::cat({std::get<0>(r3).flatten(), std::get<1>(r3).to(kDouble).flatten()}));
  // Drawn samples: every window lies inside the input and the values are maxima of it.
  Tensor x = torch::randn({2, 3, 10, 10});
  auto [v, i] = F::fractional_max_pool2d_with_indices(
      x, F::FractionalMaxPool2dFuncOptions(3).output_size(std::vector<int64_t>{5, 5}));
  EXPECT_SHAPE(v, {2, 3, 5, 5});
  EXPECT_TRUE(x.flatten(2).gather(2, i.flatten(2)).equal(v.flatten(2)));
  // Unbatched input.
  EXPECT_SHAPE(F::fractional_max_pool2d(torch::randn({3, 10, 10}),
                                        F::FractionalMaxPool2dFuncOptions(2).output_ratio(0.5)),
               {3, 5, 5});
}

TEST(FractionalMaxPool, BadInputGetsClearErrors) {
  EXPECT_ERROR(
      "fractional_max_pool2d: requires specifying either an output size, or a pooling ratio",
      F::fractional_max_pool2d(torch::randn({1, 1, 4, 4}), F::FractionalMaxPool2dFuncOptions(2)));
  EXPECT_ERROR("only one of output_size and output_ratio may be specified",
               F::fractional_max_pool2d(torch::randn({1, 1, 4, 4}),
                                        F::FractionalMaxPool2dFuncOptions(2)
                                            .output_size(std::vector<int64_t>{2, 2})
                                            .output_ratio(0.5)));
  EXPECT_ERROR("output_ratio must be between 0 and 1 (got 1.5)",
               F::fractional_max_pool2d(torch::randn({1, 1, 4, 4}),
                                        F::FractionalMaxPool2dFuncOptions(2).output_ratio(1.5)));
  EXPECT_ERROR("_random_samples must have shape [1, 1, 2]",
               F::fractional_max_pool2d(torch::randn({1, 1, 4, 4}),
                                        F::FractionalMaxPool2dFuncOptions(2)
                                            .output_size(std::vector<int64_t>{2, 2})
                                            ._random_samples(torch::rand({1, 1, 3}))));
}

}  // namespace

namespace {

using namespace brasa;

TEST(ConvTbcAndEmbeddingBag, MatchPyTorch) {
  golden::expect_golden("conv_tbc", torch::conv_tbc(golden::S({5, 2, 3}), golden::W({3, 3, 4}),
                                                    golden::S({4}, 0.5, 0.1), 1));
  auto [out, offset2bag, bag_size, max_indices] = torch::embedding_bag(
      golden::S({5, 3}), golden::L({0, 2, 1, 4, 3}), golden::L({0, 2, 2}), false, 2);
  golden::expect_golden("embedding_bag_max",
                        torch::cat({out.flatten(), offset2bag.to(kDouble), bag_size.to(kDouble),
                                    max_indices.to(kDouble).flatten()}));
  // A negative padding_idx counts from the end: -1 is row 4, which the bag
  // sizes and the max's chosen rows leave out.
  auto [padded, bags_of_padded, padded_size, padded_max] =
      torch::embedding_bag(golden::S({5, 3}), golden::L({0, 2, 1, 4, 3}), golden::L({0, 2, 2}),
                           false, 2, false, std::nullopt, false, -1);
  EXPECT_VALUES(padded_size, {2, 0, 2});
  EXPECT_VALUES(bags_of_padded, {0, 0, 2, 2, 2});
  EXPECT_FALSE((padded_max == 4).any().item<bool>());
  EXPECT_ERROR("conv_tbc: Input dim 2 (input channels) is not == dim 1 in the weight tensor",
               torch::conv_tbc(golden::S({5, 2, 2}), golden::W({3, 3, 4}), golden::S({4})));
  EXPECT_ERROR("embedding_bag: mode must be 0 (sum), 1 (mean) or 2 (max)",
               torch::embedding_bag(golden::S({5, 3}), golden::L({0}), golden::L({0}), false, 3));
}

}  // namespace

namespace {

using namespace brasa;
namespace F = torch::nn::functional;

// scale_grad_by_freq divides each row's gradient by its index's count in the
// batch; sparse is refused; _weight gives the table.
TEST(Embedding, ScaleGradByFreqSparseAndGivenTable) {
  Tensor w = golden::S({5, 3}).requires_grad_();
  Tensor idx = golden::L({0, 2, 2, 4, 2, 0}).view({2, 3});
  Tensor out = F::embedding(idx, w, F::EmbeddingFuncOptions().scale_grad_by_freq(true));
  EXPECT_TRUE(out.equal(F::embedding(idx, golden::S({5, 3}))));  // values unchanged
  (out * golden::S({2, 3, 3}, 0.3, 0.2)).sum().backward();
  golden::expect_golden("embedding_scale_grad_by_freq", w.grad());
  // EmbeddingBag (sum): every occurrence's gradient 1 over its index's count,
  // so each used row gets 1. (PyTorch 1.13's CPU embedding_bag divides by
  // other counts — rows 2 and 4 get 1.5 and 1/3 here — which contradicts its
  // documentation; Brasa follows the documentation.)
  w.mutable_grad() = Tensor();
  F::embedding_bag(golden::L({0, 2, 2, 4, 2, 0}), w,
                   F::EmbeddingBagFuncOptions()
                       .offsets(golden::L({0, 4}))
                       .mode(torch::kSum)
                       .scale_grad_by_freq(true))
      .sum()
      .backward();
  EXPECT_TRUE(w.grad().sum(1).equal(golden::D({3, 0, 3, 0, 3})));
  torch::nn::Embedding e(torch::nn::EmbeddingOptions(5, 3).scale_grad_by_freq(true)._weight(w));
  EXPECT_EQ(e->weight.data_ptr(), w.data_ptr());
  EXPECT_EQ(brasa::testing::printed(*e),
            "torch::nn::Embedding(num_embeddings=5, embedding_dim=3, scale_grad_by_freq=true)");
  auto bag = torch::nn::EmbeddingBag(torch::nn::EmbeddingBagOptions(5, 3)._weight(w.detach()));
  EXPECT_TRUE(bag->weight.equal(w.detach()));
  auto copy = std::dynamic_pointer_cast<torch::nn::EmbeddingBagImpl>(bag->clone());
  EXPECT_NE(copy->weight.data_ptr(), bag->weight.data_ptr());  // a clone owns its table
  EXPECT_ERROR("Embedding: sparse gradients are not supported (sparse=true)",
               torch::nn::Embedding(torch::nn::EmbeddingOptions(5, 3).sparse(true)));
  EXPECT_ERROR(
      "EmbeddingBag: Shape of _weight does not match num_embeddings and embedding_dim",
      torch::nn::EmbeddingBag(torch::nn::EmbeddingBagOptions(5, 3)._weight(w.detach().t())));
}

}  // namespace

namespace {

using namespace brasa;
namespace F = torch::nn::functional;

TEST(PoolingConv3d, MoreBadInputGetsClearErrors) {
  Tensor x = golden::S({1, 2, 2, 2, 2});
  EXPECT_ERROR("conv_transpose3d: expected a 5-D weight",
               torch::conv_transpose3d(x, golden::S({2, 1, 1, 1})));
  EXPECT_ERROR("conv_transpose3d: expected a 4-D or 5-D input",
               torch::conv_transpose3d(golden::S({2, 2}), golden::S({2, 1, 1, 1, 1})));
  EXPECT_ERROR("conv_transpose3d: groups must be positive and divide weight.size(0)",
               torch::conv_transpose3d(x, golden::S({2, 1, 1, 1, 1}), {}, {1}, {0}, {0}, 3));
  EXPECT_ERROR("conv_transpose3d: expected stride to have 1 or 3 values, got [1, 1]",
               torch::conv_transpose3d(x, golden::S({2, 1, 1, 1, 1}), {}, {1, 1}));
  EXPECT_ERROR("conv_transpose3d: stride and dilation must be positive",
               torch::conv_transpose3d(x, golden::S({2, 1, 1, 1, 1}), {}, {0}));
  EXPECT_ERROR("conv_transpose3d: expected bias of shape [1], got [2]",
               torch::conv_transpose3d(x, golden::S({2, 1, 1, 1, 1}), golden::S({2})));
  EXPECT_ERROR("conv_transpose3d: output depth 0 is not positive",
               torch::conv_transpose3d(x, golden::S({2, 1, 1, 1, 1}), {}, {1}, {1, 0, 0}));
  torch::nn::ConvTranspose3dOptions named(2, 2, 1);
  named.Conv3dOptions::padding(torch::kSame);  // reachable through the base's setter
  EXPECT_ERROR("ConvTranspose3d: padding kSame/kValid is only for convolutions",
               torch::nn::ConvTranspose3d{named});
  EXPECT_ERROR(
      "fractional_max_pool2d: output_size [4, 4] + kernel_size [2, 2] - 1 must fit the input",
      F::fractional_max_pool2d(
          torch::randn({1, 1, 4, 4}),
          F::FractionalMaxPool2dFuncOptions(2).output_size(std::vector<int64_t>{4, 4})));
  EXPECT_ERROR("max_pool3d_with_indices: expected a floating input",
               F::max_pool3d_with_indices(golden::L({1, 2, 3, 4, 5, 6, 7, 8}).view({1, 2, 2, 2}),
                                          F::MaxPool3dFuncOptions(1)));
  EXPECT_ERROR(
      "embedding_bag: sparse gradients are not supported (sparse=true)",
      torch::embedding_bag(golden::S({5, 3}), golden::L({0}), golden::L({0}), false, 0, true));
  EXPECT_ERROR("conv_tbc: Bias size must equal dim 2 in the weight tensor",
               torch::conv_tbc(golden::S({5, 2, 3}), golden::W({3, 3, 4}), golden::S({3})));
  EXPECT_ERROR("conv_tbc: Weight tensor must have 3 dims",
               torch::conv_tbc(golden::S({5, 2, 3}), golden::S({3, 3}), golden::S({3})));
  EXPECT_ERROR(
      "EmbeddingBag::from_pretrained: Embeddings parameter is expected to be 2-dimensional",
      torch::nn::EmbeddingBag::from_pretrained(golden::S({4})));
}

}  // namespace

namespace brasa {
namespace {

namespace F = torch::nn::functional;

// Global average pooling (output 1 in every spatial dim) is the spatial mean,
// 2-d and 3-d, with the gradient 1 / (number of cells) everywhere; nearest
// 2x upsampling's gradient (the transposed resampling that gathers each
// input's taps) sums each 2x2 block of the output gradient, and bilinear's
// matches a dense reference (the adjoint of the forward as a matrix).
TEST(GlobalPoolingAndUpsampling, ValuesAndGradients) {
  manual_seed(9);
  Tensor x = randn({2, 3, 5, 7}, TensorOptions().dtype(kDouble)).requires_grad_(true);
  Tensor y = F::adaptive_avg_pool2d(x, F::AdaptiveAvgPool2dFuncOptions(1));
  EXPECT_EQ(y.sizes(), IntArrayRef({2, 3, 1, 1}));
  EXPECT_TRUE(y.allclose(x.detach().mean({2, 3}, true), 1e-14, 1e-14));
  (y * arange(6, TensorOptions().dtype(kDouble)).view({2, 3, 1, 1})).sum().backward();
  EXPECT_TRUE(x.grad().allclose(
      (arange(6, TensorOptions().dtype(kDouble)) / 35.0).view({2, 3, 1, 1}).expand({2, 3, 5, 7}),
      1e-14, 1e-14));
  Tensor v = randn({1, 2, 3, 4, 5});
  EXPECT_TRUE(F::adaptive_avg_pool3d(v, F::AdaptiveAvgPool3dFuncOptions(1))
                  .allclose(v.mean({2, 3, 4}, true), 1e-6, 1e-6));

  Tensor u = randn({2, 3, 4, 5}, TensorOptions().dtype(kDouble)).requires_grad_(true);
  Tensor g = randn({2, 3, 8, 10}, TensorOptions().dtype(kDouble));
  F::interpolate(
      u, F::InterpolateFuncOptions().scale_factor(std::vector<double>{2, 2}).mode(torch::kNearest))
      .backward(g);
  Tensor blocks = g.view({2, 3, 4, 2, 5, 2}).sum({3, 5});
  EXPECT_TRUE(u.grad().allclose(blocks, 1e-13, 1e-13));

  // Bilinear on one axis as a matrix: out = M in; the gradient is M^T g.
  Tensor w = randn({1, 1, 1, 6}, TensorOptions().dtype(kDouble)).requires_grad_(true);
  auto bilinear = F::InterpolateFuncOptions()
                      .size(std::vector<int64_t>{1, 15})
                      .mode(torch::kBilinear)
                      .align_corners(false);
  Tensor m = F::interpolate(eye(6, TensorOptions().dtype(kDouble)).view({6, 1, 1, 6}), bilinear)
                 .view({6, 15})
                 .t();  // [15, 6]
  Tensor gb = randn({1, 1, 1, 15}, TensorOptions().dtype(kDouble));
  F::interpolate(w, bilinear).backward(gb);
  EXPECT_TRUE(w.grad().view({6}).allclose(m.t().mv(gb.view({15})), 1e-13, 1e-13));
}

}  // namespace
}  // namespace brasa

// Nearest resizing of the last two dims in one pass on the CPU (float and
// double), against the per-axis gathers other dtypes take (half here, on
// integers it holds exactly): enlarging, shrinking and mixed, 4-D and 5-D,
// nearest and nearest-exact, on 1 and 2 threads.
namespace {

using namespace brasa;
namespace F = torch::nn::functional;

TEST(Interpolate, NearestInOnePassMatchesThePerAxisGathers) {
  manual_seed(12);
  const int threads = get_num_threads();
  for (int t : {1, 2}) {
    set_num_threads(t);
    for (auto mode : {InterpolateMode(torch::kNearest), InterpolateMode(torch::kNearestExact)})
      for (std::vector<int64_t> size : {std::vector<int64_t>{14, 18}, {5, 4}, {7, 20}, {3, 9}}) {
        SCOPED_TRACE(::testing::Message() << t << " threads, size " << IntArrayRef(size));
        Tensor x = randint(-100, 100, {2, 3, 7, 9}).to(kFloat);
        auto o = F::InterpolateFuncOptions().size(size).mode(mode);
        Tensor fused = F::interpolate(x, o);
        EXPECT_TRUE(equal(fused, F::interpolate(x.to(kHalf), o).to(kFloat)));
        EXPECT_TRUE(equal(F::interpolate(x.to(kDouble), o), fused.to(kDouble)));
        Tensor v = randint(-100, 100, {1, 2, 3, 7, 9}).to(kFloat);
        auto o3 =
            F::InterpolateFuncOptions().size(std::vector<int64_t>{5, size[0], size[1]}).mode(mode);
        EXPECT_TRUE(equal(F::interpolate(v, o3), F::interpolate(v.to(kHalf), o3).to(kFloat)));
      }
  }
  set_num_threads(threads);
}

}  // namespace
