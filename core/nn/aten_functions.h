#pragma once
// libtorch's top-level spellings of the nn functions (torch::dropout,
// torch::nll_loss, ...: the at:: operators), with their argument orders and
// defaults. Reductions are given as libtorch gives them — an integer
// (torch::Reduction::Mean is 1 there) — or as a brasa::Reduction.
#include <brasa/nn/functional.h>

#include <optional>
#include <string>

namespace brasa {

// at::Reduction's integers (None 0, Mean 1, Sum 2) or a Reduction.
struct ReductionArg {
  ReductionArg(Reduction r) : value(r) {}  // NOLINT: implicit, as libtorch's int64_t
  ReductionArg(int64_t r);                 // NOLINT
  Reduction value;
};

Tensor dropout(const Tensor& input, double p, bool train);
Tensor feature_dropout(const Tensor& input, double p, bool train);
Tensor nll_loss(const Tensor& self, const Tensor& target, const std::optional<Tensor>& weight = {},
                ReductionArg reduction = Reduction::Mean, int64_t ignore_index = -100);
Tensor cross_entropy_loss(const Tensor& self, const Tensor& target,
                          const std::optional<Tensor>& weight = {},
                          ReductionArg reduction = Reduction::Mean, int64_t ignore_index = -100,
                          double label_smoothing = 0.0);
Tensor mse_loss(const Tensor& self, const Tensor& target, ReductionArg reduction = Reduction::Mean);
Tensor l1_loss(const Tensor& self, const Tensor& target, ReductionArg reduction = Reduction::Mean);
Tensor smooth_l1_loss(const Tensor& self, const Tensor& target,
                      ReductionArg reduction = Reduction::Mean, double beta = 1.0);
Tensor huber_loss(const Tensor& self, const Tensor& target,
                  ReductionArg reduction = Reduction::Mean, double delta = 1.0);
Tensor binary_cross_entropy(const Tensor& self, const Tensor& target,
                            const std::optional<Tensor>& weight = {},
                            ReductionArg reduction = Reduction::Mean);
Tensor binary_cross_entropy_with_logits(const Tensor& self, const Tensor& target,
                                        const std::optional<Tensor>& weight = {},
                                        const std::optional<Tensor>& pos_weight = {},
                                        ReductionArg reduction = Reduction::Mean);
Tensor kl_div(const Tensor& self, const Tensor& target, ReductionArg reduction = Reduction::Mean,
              bool log_target = false);
Tensor gelu(const Tensor& self, const std::string& approximate = "none");
Tensor layer_norm(const Tensor& input, IntArrayRef normalized_shape,
                  const std::optional<Tensor>& weight = {}, const std::optional<Tensor>& bias = {},
                  double eps = 1e-5, bool cudnn_enable = true);
Tensor group_norm(const Tensor& input, int64_t num_groups, const std::optional<Tensor>& weight = {},
                  const std::optional<Tensor>& bias = {}, double eps = 1e-5,
                  bool cudnn_enabled = true);
// Note the order, as in libtorch: the weight first, then the indices.
Tensor embedding(const Tensor& weight, const Tensor& indices, int64_t padding_idx = -1,
                 bool scale_grad_by_freq = false, bool sparse = false);
// mode "constant" (with value, default 0), "reflect", "replicate" or "circular".
Tensor pad(const Tensor& self, IntArrayRef pad, const std::string& mode = "constant",
           std::optional<double> value = std::nullopt);
Tensor constant_pad_nd(const Tensor& self, IntArrayRef pad, double value = 0.0);
// Elements at or below `threshold` become `value`.
Tensor threshold(const Tensor& self, double threshold, double value);
Tensor hardtanh(const Tensor& self, double min_val = -1.0, double max_val = 1.0);
Tensor leaky_relu(const Tensor& self, double negative_slope = 0.01);
Tensor elu(const Tensor& self, double alpha = 1.0);
Tensor selu(const Tensor& self);
Tensor silu(const Tensor& self);
Tensor mish(const Tensor& self);
Tensor softplus(const Tensor& self, double beta = 1.0, double threshold = 20.0);
Tensor cosine_similarity(const Tensor& x1, const Tensor& x2, int64_t dim = 1, double eps = 1e-8);

}  // namespace brasa
