// Gradcheck table entries of convolution, pooling and nn::functional
// (losses, normalization, padding, embedding, dropout): the part of the
// table gradcheck_table_test.cpp runs that exercises nn's building blocks.
#include <brasa/nn/modules.h>

#include "gradcheck_table.h"

namespace brasa {

void add_nn_entries(std::vector<OpCase>& t) {
  auto entry = [&](std::string name, std::function<variable_list()> in, Fn fn, bool gg = true) {
    t.push_back({std::move(name), std::move(in), std::move(fn), gg});
  };
  auto r34 = [] { return R({3, 4}); };

  entry(
      "conv2d stride/padding/dilation/groups",
      [] {
        return variable_list{R({2, 4, 7, 6}), R({6, 2, 3, 2}), R({6})};
      },
      [](const variable_list& v) {
        return one(conv2d(v[0], v[1], v[2], {2, 1}, {1, 0}, {1, 2}, 2));
      });
  entry(
      "conv_transpose2d",
      [] {
        return variable_list{R({1, 2, 3, 3}), R({2, 2, 2, 3}), R({2})};
      },
      [](const variable_list& v) {
        return one(conv_transpose2d(v[0], v[1], v[2], {2, 2}, {0, 1}, {1, 0}));
      });
  entry(
      "conv1d",
      [] {
        return variable_list{R({2, 3, 9}), R({4, 3, 3})};
      },
      [](const variable_list& v) { return one(conv1d(v[0], v[1], Tensor(), {2}, {1})); });
  entry(
      "conv_transpose1d",
      [] {
        return variable_list{R({2, 4, 5}), R({4, 3, 3}), R({6})};
      },
      [](const variable_list& v) {
        return one(conv_transpose1d(v[0], v[1], v[2], {2}, {1}, {1}, 2));
      });
  entry(
      "conv2d padding kSame (even kernel: extra padding at the end)",
      [] {
        return variable_list{R({1, 2, 5, 4}), R({3, 2, 4, 2}), R({3})};
      },
      [](const variable_list& v) {
        return one(conv2d(v[0], v[1], v[2], {1, 1}, kSame, {1, 2}));
      });
  entry(
      "conv3d stride/padding/dilation/groups",
      [] {
        return variable_list{R({1, 4, 5, 4, 4}), R({4, 2, 2, 2, 3}), R({4})};
      },
      [](const variable_list& v) {
        return one(conv3d(v[0], v[1], v[2], {2, 1, 1}, {1, 0, 1}, {2, 1, 1}, 2));
      });
  entry(
      "conv3d padding kSame",
      [] {
        return variable_list{R({1, 2, 3, 3, 4}), R({2, 2, 2, 3, 2})};
      },
      [](const variable_list& v) { return one(conv3d(v[0], v[1], Tensor(), {1}, kSame)); });
  entry(
      "pad reflect / replicate / circular",
      [] {
        return variable_list{R({1, 2, 3, 4})};
      },
      [](const variable_list& v) {
        return variable_list{F::pad(v[0], F::PadFuncOptions({2, 1, 1, 2}).mode(kReflect)),
                             F::pad(v[0], F::PadFuncOptions({1, 3}).mode(kReplicate)),
                             F::pad(v[0], F::PadFuncOptions({4, 1, 3, 0}).mode(kCircular))};
      });
  entry(
      "conv1d padding kSame",
      [] {
        return variable_list{R({2, 2, 6}), R({2, 2, 4})};
      },
      [](const variable_list& v) { return one(conv1d(v[0], v[1], Tensor(), {1}, kSame)); }, false);
  entry("max_pool2d (overlapping windows, padding)", in1([] {
          return R({2, 3, 7, 7});
        }),
        [](const variable_list& v) { return one(max_pool2d(v[0], {3}, {2}, {1})); });
  // The 2x2 stride-2 path and its plane-parallel backward; an odd width
  // leaves a column out.
  entry("max_pool2d 2x2 stride 2", in1([] {
          return R({2, 3, 6, 7});
        }),
        [](const variable_list& v) { return one(max_pool2d(v[0], {2})); });
  entry("avg_pool2d ceil_mode and padding", in1([] {
          return R({1, 2, 6, 5});
        }),
        [](const variable_list& v) {
          return variable_list{avg_pool2d(v[0], {2}, {2}, {1}, true),
                               avg_pool2d(v[0], {3, 2}, {1}, {0}, false, false)};
        });
  entry(
      "linear",
      [] {
        return variable_list{R({5, 4}), R({3, 4}), R({3})};
      },
      [](const variable_list& v) { return one(F::linear(v[0], v[1], v[2])); });
  entry(
      "cross_entropy (weights, ignore_index, label smoothing)",
      [] {
        return variable_list{R({5, 4}), Pos({4})};
      },
      [](const variable_list& v) {
        Tensor target = Idx({0, 3, -100, 1, 3});
        return variable_list{
            F::cross_entropy(v[0], target),
            F::cross_entropy(v[0], target,
                             F::CrossEntropyFuncOptions().weight(v[1]).label_smoothing(0.2)),
            F::nll_loss(v[0].log_softmax(1), target, F::NLLLossFuncOptions().reduction(kSum))};
      });
  entry("cross_entropy with probabilities",
        in2(
            [] {
              return R({3, 4});
            },
            [] {
              return Pos({3, 4});
            }),
        [](const variable_list& v) { return one(F::cross_entropy(v[0], v[1].softmax(1))); });
  entry("mse/l1 loss", in2(r34, r34), [](const variable_list& v) {
    return variable_list{F::mse_loss(v[0], v[1]), F::l1_loss(v[0], v[1], kSum)};
  });
  entry("gelu/silu/leaky_relu", in1(r34), [](const variable_list& v) {
    return variable_list{F::gelu(v[0]), F::gelu(v[0], "tanh"), F::silu(v[0]),
                         F::leaky_relu(v[0], 0.1)};
  });
  entry("elu/selu/softplus/mish/hardtanh/relu6", in1(r34), [](const variable_list& v) {
    return variable_list{F::elu(v[0], 0.7),
                         F::selu(v[0]),
                         F::softplus(v[0], 2.0, 1.0),
                         F::mish(v[0]),
                         F::hardtanh(v[0], -0.5, 0.5),
                         F::relu6(v[0] * 4)};
  });
  entry("hardsigmoid/hardswish", in1(r34), [](const variable_list& v) {
    return variable_list{F::hardsigmoid(v[0] * 8), F::hardswish(v[0] * 8)};
  });
  entry(
      "batch_norm (training, running stats updated)",
      [] {
        return variable_list{R({4, 3, 2}), R({3}), R({3})};
      },
      [](const variable_list& v) {
        Tensor rm = zeros({3}, f64()), rv = ones({3}, f64());
        return one(F::batch_norm(v[0], rm, rv, v[1], v[2], true));
      });
  entry(
      "batch_norm (eval)",
      [] {
        return variable_list{R({4, 3}), R({3})};
      },
      [](const variable_list& v) {
        return one(F::batch_norm(v[0], full({3}, 0.1, f64()), full({3}, 2.0, f64()), v[1], Tensor(),
                                 false));
      });
  entry(
      "layer_norm / group_norm",
      [] {
        return variable_list{R({2, 4, 3}), R({3}), R({4})};
      },
      [](const variable_list& v) {
        return variable_list{
            F::layer_norm(v[0], {3}, v[1], Tensor()),
            F::layer_norm(v[0], {3}, v[1], v[1] * 0.5),
            F::layer_norm(v[0], {4, 3}, Tensor(), v[2].view({4, 1}).expand({4, 3})),
            F::group_norm(v[0], 2, v[2], v[2] * 0.3 + 1),
            F::group_norm(v[0], 4, v[2], Tensor()),
            F::group_norm(v[0].unsqueeze(-1), 1, Tensor(), v[2])};
      });
  // padding_idx 3 is not looked up: its zero gradient is by design (not a Jacobian), tested in nn/.
  entry("embedding with padding_idx", in1([] {
          return R({5, 3});
        }),
        [](const variable_list& v) {
          return one(F::embedding(Idx({1, 0, 4, 1}).view({2, 2}), v[0], 3));
        });
  entry(
      "embedding_bag sum (per_sample_weights), mean, max",
      [] {
        return variable_list{R({5, 3}), R({7})};
      },
      [](const variable_list& v) {
        Tensor in = Idx({1, 2, 4, 4, 3, 0, 2}), off = Idx({0, 2, 2, 5});
        return variable_list{F::embedding_bag(in, v[0], off, EmbeddingBagMode::Sum, v[1]),
                             F::embedding_bag(in, v[0], off, EmbeddingBagMode::Mean),
                             F::embedding_bag(in, v[0], off, kMax)};
      },
      false);
  entry("adaptive_avg_pool2d", in1([] {
          return R({1, 2, 5, 4});
        }),
        [](const variable_list& v) {
          return one(F::adaptive_avg_pool2d(v[0], {3, 3}));
        });
  entry("global average pooling (adaptive output 1, the spatial mean)", in1([] {
          return R({2, 3, 5, 4});
        }),
        [](const variable_list& v) {
          return variable_list{F::adaptive_avg_pool2d(v[0], {1, 1}),
                               F::adaptive_avg_pool3d(v[0].unsqueeze(2), {1, 1, 1})};
        });
  entry("interpolate nearest/bilinear, adaptive_max_pool2d", in1([] {
          return R({1, 2, 3, 4});
        }),
        [](const variable_list& v) {
          return variable_list{
              F::interpolate(v[0], {5, 3}), F::interpolate(v[0], {4, 6}, "bilinear"),
              F::interpolate(v[0], {2, 7}, "bilinear", true), F::adaptive_max_pool2d(v[0], {2, 3})};
        });
  entry("multi-head attention (module, float mask)", in1([] {
          return R({3, 2, 4});
        }),
        [](const variable_list& v) {
          static nn::MultiheadAttention mha = [] {
            manual_seed(21);
            nn::MultiheadAttention m(4, 2);
            m->to(kDouble);
            return m;
          }();
          Tensor mask = tensor({{0.0, -1.0, 0.5}, {0.2, 0.0, -0.3}, {0.0, 0.0, 0.0}}, f64());
          auto [o, w] = on_case_device(mha)(v[0], v[0], v[0], Tensor(), true, mask);
          return variable_list{o, w};
        });
  entry("dropout2d (fixed seed)", in1([] {
          return R({2, 4, 3, 3});
        }),
        [](const variable_list& v) {
          manual_seed(4);
          return one(F::dropout2d(v[0], 0.5, true));
        });
  t.back().draws_random = true;
  entry("bce / bce_with_logits / smooth_l1 / huber / kl_div",
        in2(
            [] {
              return Unit({3, 4});
            },
            [] {
              return (rand({3, 4}, f64()) * 0.8 + 0.1).detach().requires_grad_();
            }),
        [](const variable_list& v) {
          Tensor p = v[1];
          manual_seed(9);  // drawn on the CPU: CUDA's generator gives other numbers
          Tensor fixed = on_case_device(rand({3, 4}, TensorOptions().dtype(kDouble)));
          return variable_list{
              F::binary_cross_entropy(p, fixed),
              F::binary_cross_entropy_with_logits(v[0], fixed, Tensor(), full({4}, 2.0, f64())),
              F::smooth_l1_loss(v[0], fixed * 0.2, kSum, 0.5),
              F::huber_loss(v[0], fixed, kMean, 0.3),
              F::kl_div(v[0].log_softmax(1), p.softmax(1), kSum),
              F::kl_div(v[0].log_softmax(1), p.softmax(1), kBatchMean)};
        });
  entry("smooth_l1 / huber / bce_with_logits: the target's gradient too", in2(r34, r34),
        [](const variable_list& v) {
          return variable_list{F::smooth_l1_loss(v[0], v[1] * 0.5, kSum, 0.3),
                               F::huber_loss(v[0], v[1], kNone, 0.4),
                               F::binary_cross_entropy_with_logits(v[0], v[1].sigmoid())};
        });
  entry("cosine_similarity / normalize / pad", in2(r34, r34), [](const variable_list& v) {
    return variable_list{F::cosine_similarity(v[0], v[1]), F::normalize(v[0], 2.0, 0),
                         F::pad(v[0], {1, 2, 0, 1}, 0.5), F::pad(v[0], {-1, 2, 1, -1}),
                         F::pad(v[0].unsqueeze(0), {0, 0, 0, 0, 1, 1})};
  });
  entry(
      "nll_loss over [N, C, d1, d2] (constant weights; none, mean, sum)",
      [] {
        return variable_list{R({2, 3, 2, 2})};
      },
      [](const variable_list& v) {
        Tensor target = Idx({0, 2, -100, 1, 1, 0, 2, 2}).view({2, 2, 2});
        auto o = F::NLLLossFuncOptions().weight(full({3}, 1.5, f64()));
        return variable_list{F::nll_loss(v[0], target, o.reduction(kNone)),
                             F::nll_loss(v[0], target, o.reduction(kMean)),
                             F::cross_entropy(v[0], target, o.reduction(kSum))};
      });
  entry("dropout (fixed seed)", in1(r34), [](const variable_list& v) {
    manual_seed(3);
    return one(F::dropout(v[0], 0.3, true));
  });
  t.back().draws_random = true;
}

}  // namespace brasa
