#pragma once
// libtorch's top-level spellings of the nn functions (torch::dropout,
// torch::nll_loss, ...: the at:: operators), with their argument orders and
// defaults. Reductions are given as libtorch gives them — an integer
// (torch::Reduction::Mean is 1 there) — or as a brasa::Reduction.
#include <brasa/nn/functional.h>

#include <optional>
#include <string>
#include <tuple>

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
Tensor hardsigmoid(const Tensor& self);
Tensor hardswish(const Tensor& self);
Tensor softplus(const Tensor& self, double beta = 1.0, double threshold = 20.0);
Tensor cosine_similarity(const Tensor& x1, const Tensor& x2, int64_t dim = 1, double eps = 1e-8);

Tensor celu(const Tensor& self, double alpha = 1.0);
Tensor hardshrink(const Tensor& self, double lambd = 0.5);
Tensor pixel_shuffle(const Tensor& self, int64_t upscale_factor);
Tensor pixel_unshuffle(const Tensor& self, int64_t downscale_factor);
// Splits the channels into groups and interleaves them (ShuffleNet).
Tensor channel_shuffle(const Tensor& self, int64_t groups);
Tensor prelu(const Tensor& self, const Tensor& weight);
Tensor bilinear(const Tensor& input1, const Tensor& input2, const Tensor& weight,
                const std::optional<Tensor>& bias = {});
Tensor margin_ranking_loss(const Tensor& input1, const Tensor& input2, const Tensor& target,
                           double margin = 0.0, ReductionArg reduction = Reduction::Mean);
Tensor hinge_embedding_loss(const Tensor& self, const Tensor& target, double margin = 1.0,
                            ReductionArg reduction = Reduction::Mean);
Tensor cosine_embedding_loss(const Tensor& input1, const Tensor& input2, const Tensor& target,
                             double margin = 0.0, ReductionArg reduction = Reduction::Mean);
Tensor triplet_margin_loss(const Tensor& anchor, const Tensor& positive, const Tensor& negative,
                           double margin = 1.0, double p = 2, double eps = 1e-6, bool swap = false,
                           ReductionArg reduction = Reduction::Mean);
Tensor poisson_nll_loss(const Tensor& input, const Tensor& target, bool log_input, bool full,
                        double eps, ReductionArg reduction);
Tensor pairwise_distance(const Tensor& x1, const Tensor& x2, double p = 2, double eps = 1e-6,
                         bool keepdim = false);
// The p-norm distances between the rows of [N, M] for each pair i < j, in row-major order.
Tensor pdist(const Tensor& self, double p = 2);
Tensor adaptive_avg_pool1d(const Tensor& self, IntArrayRef output_size);
Tensor avg_pool1d(const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride = {},
                  IntArrayRef padding = 0, bool ceil_mode = false, bool count_include_pad = true);
Tensor max_pool1d(const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride = {},
                  IntArrayRef padding = 0, IntArrayRef dilation = 1, bool ceil_mode = false);
std::tuple<Tensor, Tensor> max_pool1d_with_indices(const Tensor& self, IntArrayRef kernel_size,
                                                   IntArrayRef stride = {}, IntArrayRef padding = 0,
                                                   IntArrayRef dilation = 1,
                                                   bool ceil_mode = false);
Tensor max_pool3d(const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride = {},
                  IntArrayRef padding = 0, IntArrayRef dilation = 1, bool ceil_mode = false);
std::tuple<Tensor, Tensor> max_pool3d_with_indices(const Tensor& self, IntArrayRef kernel_size,
                                                   IntArrayRef stride = {}, IntArrayRef padding = 0,
                                                   IntArrayRef dilation = 1,
                                                   bool ceil_mode = false);
// (values, positions in the flattened spatial dims), as libtorch's.
std::tuple<Tensor, Tensor> adaptive_max_pool1d(const Tensor& self, IntArrayRef output_size);
std::tuple<Tensor, Tensor> adaptive_max_pool2d(const Tensor& self, IntArrayRef output_size);
std::tuple<Tensor, Tensor> adaptive_max_pool3d(const Tensor& self, IntArrayRef output_size);
Tensor adaptive_avg_pool2d(const Tensor& self, IntArrayRef output_size);
Tensor adaptive_avg_pool3d(const Tensor& self, IntArrayRef output_size);
Tensor avg_pool3d(const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride = {},
                  IntArrayRef padding = 0, bool ceil_mode = false, bool count_include_pad = true,
                  std::optional<int64_t> divisor_override = std::nullopt);
// input @ weight^T + bias.
Tensor linear(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias = {});
Tensor one_hot(const Tensor& self, int64_t num_classes = -1);
Tensor relu6(const Tensor& self);
Tensor log_sigmoid(const Tensor& self);
Tensor glu(const Tensor& self, int64_t dim = -1);
Tensor softshrink(const Tensor& self, const Scalar& lambd = 0.5);
// padding: (left, right[, top, bottom[, front, back]]) of the last 1, 2 or 3 dims.
Tensor reflection_pad1d(const Tensor& self, IntArrayRef padding);
Tensor reflection_pad2d(const Tensor& self, IntArrayRef padding);
Tensor reflection_pad3d(const Tensor& self, IntArrayRef padding);
Tensor replication_pad1d(const Tensor& self, IntArrayRef padding);
Tensor replication_pad2d(const Tensor& self, IntArrayRef padding);
Tensor replication_pad3d(const Tensor& self, IntArrayRef padding);
// Resizing to output_size (the last 1, 2 or 3 dims); a scale (output over
// input) given for an axis sets the positions sampled along it, as
// F::interpolate's scale_factor does.
Tensor upsample_nearest1d(const Tensor& self, IntArrayRef output_size,
                          std::optional<double> scales = std::nullopt);
Tensor upsample_nearest2d(const Tensor& self, IntArrayRef output_size,
                          std::optional<double> scales_h = std::nullopt,
                          std::optional<double> scales_w = std::nullopt);
Tensor upsample_nearest3d(const Tensor& self, IntArrayRef output_size,
                          std::optional<double> scales_d = std::nullopt,
                          std::optional<double> scales_h = std::nullopt,
                          std::optional<double> scales_w = std::nullopt);
Tensor upsample_linear1d(const Tensor& self, IntArrayRef output_size, bool align_corners,
                         std::optional<double> scales = std::nullopt);
Tensor upsample_bilinear2d(const Tensor& self, IntArrayRef output_size, bool align_corners,
                           std::optional<double> scales_h = std::nullopt,
                           std::optional<double> scales_w = std::nullopt);
Tensor upsample_bicubic2d(const Tensor& self, IntArrayRef output_size, bool align_corners,
                          std::optional<double> scales_h = std::nullopt,
                          std::optional<double> scales_w = std::nullopt);
Tensor upsample_trilinear3d(const Tensor& self, IntArrayRef output_size, bool align_corners,
                            std::optional<double> scales_d = std::nullopt,
                            std::optional<double> scales_h = std::nullopt,
                            std::optional<double> scales_w = std::nullopt);
// The sliding blocks of [N, C, H, W] as columns [N, C kh kw, L] (F::unfold), and back (F::fold).
Tensor im2col(const Tensor& self, IntArrayRef kernel_size, IntArrayRef dilation,
              IntArrayRef padding, IntArrayRef stride);
Tensor col2im(const Tensor& self, IntArrayRef output_size, IntArrayRef kernel_size,
              IntArrayRef dilation, IntArrayRef padding, IntArrayRef stride);
// at::embedding_bag: (output, offset2bag: each index's bag, bag_size: the
// indices per bag, max_indices: with mode 2 (max) the row chosen per bag and
// feature, else bag_size); mode 0 sum, 1 mean, 2 max.
std::tuple<Tensor, Tensor, Tensor, Tensor> embedding_bag(
    const Tensor& weight, const Tensor& indices, const Tensor& offsets,
    bool scale_grad_by_freq = false, int64_t mode = 0, bool sparse = false,
    const std::optional<Tensor>& per_sample_weights = {}, bool include_last_offset = false,
    std::optional<int64_t> padding_idx = std::nullopt);
// A 1-d convolution over time-major input [T, B, in] with weight [k, in,
// out] and bias [out], padded by pad frames at both ends: [T', B, out].
Tensor conv_tbc(const Tensor& self, const Tensor& weight, const Tensor& bias, int64_t pad = 0);
// A convolution of 1, 2 or 3 spatial dims (by weight's), transposed or not.
Tensor convolution(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias,
                   IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation, bool transposed,
                   IntArrayRef output_padding, int64_t groups);

namespace nn::functional {
// max(0, x) + weight * min(0, x), weight one value or one per channel (dim 1).
Tensor prelu(const Tensor& x, const Tensor& weight);
// y = x1^T A x2 + b per output feature: x1 [..., in1], x2 [..., in2], weight [out, in1, in2].
Tensor bilinear(const Tensor& input1, const Tensor& input2, const Tensor& weight,
                const Tensor& bias = {});
Tensor pdist(const Tensor& input, double p = 2);
}  // namespace nn::functional

}  // namespace brasa
