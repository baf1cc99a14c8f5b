// Gradcheck table entries of the ops and modules added for libtorch
// programs (ops/arrange.h, ops/counting.h, nn/activations.h,
// nn/loss_modules.h, nn/image_modules.h).
#include "gradcheck_table.h"

namespace brasa {

void add_libtorch_port_entries(std::vector<OpCase>& t) {
  auto entry = [&](std::string name, std::function<variable_list()> in, Fn fn, bool gg = true) {
    t.push_back({std::move(name), std::move(in), std::move(fn), gg});
  };
  auto r34 = [] { return R({3, 4}); };
  auto r4 = [] { return R({4}); };

  entry("trace / kron / diff",
        in2(r34,
            [] {
              return R({2, 2});
            }),
        [](const variable_list& v) {
          return variable_list{
              trace(v[0]), kron(v[0], v[1]),
              diff(v[0], 2, 1, v[1].reshape({-1}).narrow(0, 0, 3).reshape({3, 1}))};
        });
  entry("rot90 / diag_embed", in1(r34), [](const variable_list& v) {
    return variable_list{rot90(v[0], 1), rot90(v[0], -1, {1, 0}), diag_embed(v[0], 1, 0, 2),
                         diag_embed(v[0], -2)};
  });
  entry("meshgrid / repeat_interleave", in2(r4, [] { return R({3}); }), [](const variable_list& v) {
    auto g = meshgrid({v[0], v[1]}, "xy");
    return variable_list{g[0] * g[1], repeat_interleave(v[0], Idx({2, 0, 1, 3}), 0)};
  });
  entry("cross / cdist",
        in2(
            [] {
              return R({4, 3});
            },
            [] {
              return R({2, 3});
            }),
        [](const variable_list& v) {
          return variable_list{cross(v[0], v[0].flip({0}), 1), cdist(v[0], v[1]),
                               cdist(v[0], v[1], 1.5)};
        });
  entry("index_copy / index_fill / masked_scatter",
        in2(r34,
            [] {
              return R({3, 2});
            }),
        [](const variable_list& v) {
          return variable_list{
              index_copy(v[0], 1, Idx({3, 0}), v[1]), index_fill(v[0], 0, Idx({1}), v[1].sum()),
              masked_scatter(v[0], v[0].detach() > 0, v[1].reshape({-1}).repeat({2}))};
        });
  entry("softmin / softsign / shrinks / logsigmoid / celu / glu", in1(r34),
        [](const variable_list& v) {
          return variable_list{F::softmin(v[0], 1),
                               F::softsign(v[0]),
                               F::softshrink(v[0], 0.3),
                               F::hardshrink(v[0], 0.3),
                               F::tanhshrink(v[0]),
                               F::logsigmoid(v[0]),
                               F::celu(v[0], F::CELUFuncOptions().alpha(0.7)),
                               F::glu(v[0], 1)};
        });
  entry("ranking / hinge / cosine / triplet / poisson / multilabel losses",
        in2(r34,
            [] {
              return R({3, 4});
            }),
        [](const variable_list& v) {
          Tensor sign = tensor(std::vector<double>{1, -1, 1}, f64());
          Tensor y = (v[1].detach() > 0).to(kDouble);
          return variable_list{F::margin_ranking_loss(v[0].select(1, 0), v[1].select(1, 0), sign),
                               F::hinge_embedding_loss(v[0], sign.unsqueeze(1).expand({3, 4})),
                               F::cosine_embedding_loss(v[0], v[1], sign),
                               F::triplet_margin_loss(v[0], v[1], v[1].flip({0})),
                               F::poisson_nll_loss(v[0], y * 2),
                               F::multilabel_soft_margin_loss(v[0], y),
                               F::pairwise_distance(v[0], v[1])};
        });
  entry("pixel_shuffle / unshuffle / padding modules", in1([] {
          return R({1, 4, 2, 2});
        }),
        [](const variable_list& v) {
          return variable_list{F::pixel_shuffle(v[0], 2), F::pixel_unshuffle(v[0], 2),
                               nn::ReflectionPad2d(1)(v[0]), nn::ZeroPad2d(1)(v[0])};
        });
  entry("median / mode / threshold", in1(r34), [](const variable_list& v) {
    return variable_list{median(v[0]), std::get<0>(median(v[0], 1, true)),
                         std::get<0>(mode(v[0], 0)), threshold(v[0], 0.1, 2.0)};
  });
  entry("3-d, adaptive and divisor-override pooling", in1([] {
          return R({1, 2, 4, 5, 5});
        }),
        [](const variable_list& v) {
          Tensor x1 = v[0].flatten(2);  // [1, 2, 100]
          return variable_list{
              F::max_pool3d(v[0], F::MaxPool3dFuncOptions(3).stride(2).padding(1)),
              F::max_pool3d(v[0], F::MaxPool3dFuncOptions(2).dilation({1, 2, 2}).ceil_mode(true)),
              F::avg_pool3d(v[0], F::AvgPool3dFuncOptions(3).stride(2).padding(1).ceil_mode(true)),
              F::avg_pool3d(v[0], F::AvgPool3dFuncOptions(3).padding(1).count_include_pad(false)),
              F::avg_pool2d(v[0][0], F::AvgPool2dFuncOptions(2).divisor_override(3)),
              F::adaptive_avg_pool3d(v[0], {2, 3, 2}),
              F::adaptive_max_pool3d(v[0], {3, 2, 4}),
              F::adaptive_avg_pool1d(x1, 7),
              F::adaptive_max_pool1d(x1, 6)};
        });
  entry("acosh / asinh / atanh / hypot / logaddexp / xlogy / logit / sinc / nansum", in2(r34, r34),
        [](const variable_list& v) {
          Tensor p = v[0].abs() + 0.1, q = v[1].abs() + 0.1;
          return variable_list{acosh(p + 1.2),    asinh(v[0] * 3),       atanh(v[0].tanh() * 0.9),
                               hypot(v[0], v[1]), logaddexp(v[0], v[1]), logaddexp2(v[0], v[1]),
                               xlogy(v[0], q),    logit(p.sigmoid()),    sinc(v[0] + 0.05),
                               nansum(v[0]),      nanmean(v[1]),         deg2rad(v[0])};
        });
}

}  // namespace brasa
