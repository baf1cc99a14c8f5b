#pragma once
// nn::functional: stateless layers and losses (torch::nn::functional).
#include <brasa/tensor/tensor.h>

#include <optional>
#include <string>
#include <vector>

namespace brasa {

// BatchMean (the sum over the batch's size) is kl_div's alone, as in libtorch.
enum class Reduction { None, Mean, Sum, BatchMean };
inline constexpr Reduction kNone = Reduction::None;
inline constexpr Reduction kMean = Reduction::Mean;
inline constexpr Reduction kSum = Reduction::Sum;
inline constexpr Reduction kBatchMean = Reduction::BatchMean;
// How EmbeddingBag reduces a bag: kSum, kMean (the Reduction values) or kMax.
// A class rather than an enum so that, as libtorch's variant, it is made
// from kSum and kMean too: torch::nn::EmbeddingBagMode mode = torch::kSum.
struct EmbeddingBagMode {
  enum Kind { Sum, Mean, Max };
  constexpr EmbeddingBagMode(Kind k) : kind(k) {}  // NOLINT: implicit, as libtorch's variant
  EmbeddingBagMode(Reduction r);                   // NOLINT: kSum or kMean; others are an error
  constexpr bool operator==(const EmbeddingBagMode&) const = default;
  Kind kind;
};
inline constexpr EmbeddingBagMode kMax = EmbeddingBagMode::Max;
namespace nn {
using brasa::EmbeddingBagMode;  // libtorch's spelling, torch::nn::EmbeddingBagMode
}
// F::pad modes (kConstant, kReflect, kReplicate, kCircular), the
// convolutions' padding_mode (kZeros, kReflect, kReplicate, kCircular) and
// F::grid_sample's (kZeros, kBorder, kReflection).
enum class PaddingMode { Zeros, Constant, Reflect, Replicate, Circular, Border, Reflection };
inline constexpr PaddingMode kZeros = PaddingMode::Zeros;
inline constexpr PaddingMode kConstant = PaddingMode::Constant;
inline constexpr PaddingMode kReflect = PaddingMode::Reflect;
inline constexpr PaddingMode kReplicate = PaddingMode::Replicate;
inline constexpr PaddingMode kCircular = PaddingMode::Circular;
inline constexpr PaddingMode kBorder = PaddingMode::Border;
inline constexpr PaddingMode kReflection = PaddingMode::Reflection;

// Interpolation modes (torch::kNearest, ...), for F::interpolate's options.
enum class InterpolateMode { Nearest, Linear, Bilinear, Bicubic, Trilinear, Area, NearestExact };
inline constexpr InterpolateMode kNearest = InterpolateMode::Nearest;
inline constexpr InterpolateMode kLinear = InterpolateMode::Linear;
inline constexpr InterpolateMode kBilinear = InterpolateMode::Bilinear;
inline constexpr InterpolateMode kBicubic = InterpolateMode::Bicubic;
inline constexpr InterpolateMode kTrilinear = InterpolateMode::Trilinear;
inline constexpr InterpolateMode kArea = InterpolateMode::Area;
inline constexpr InterpolateMode kNearestExact = InterpolateMode::NearestExact;

namespace nn::functional {

Tensor linear(const Tensor& input, const Tensor& weight, const Tensor& bias = {});
Tensor relu(const Tensor& x, bool inplace = false);
Tensor leaky_relu(const Tensor& x, double negative_slope = 0.01);
Tensor gelu(const Tensor& x, const std::string& approximate = "none");
Tensor silu(const Tensor& x);
Tensor dropout(const Tensor& x, double p = 0.5, bool training = true);
Tensor flatten(const Tensor& x, int64_t start_dim = 1, int64_t end_dim = -1);
Tensor log_softmax(const Tensor& x, int64_t dim);
Tensor softmax(const Tensor& x, int64_t dim);

Tensor relu6(const Tensor& x);
Tensor elu(const Tensor& x, double alpha = 1.0);
Tensor selu(const Tensor& x);
Tensor softplus(const Tensor& x, double beta = 1.0, double threshold = 20.0);
Tensor mish(const Tensor& x);
Tensor hardtanh(const Tensor& x, double min_val = -1.0, double max_val = 1.0);
// relu6(x + 3) / 6, and x times it (MobileNetV3's activations).
Tensor hardsigmoid(const Tensor& x);
Tensor hardswish(const Tensor& x);
// Zeroes whole channels (dim 1) with probability p.
Tensor dropout2d(const Tensor& x, double p = 0.5, bool training = true);

// Normalization. batch_norm updates running_mean/var in place when training
// (momentum as in PyTorch: new = (1 - momentum) * old + momentum * batch stat,
// with the unbiased variance).
Tensor batch_norm(const Tensor& x, const Tensor& running_mean, const Tensor& running_var,
                  const Tensor& weight, const Tensor& bias, bool training, double momentum = 0.1,
                  double eps = 1e-5);
Tensor layer_norm(const Tensor& x, IntArrayRef normalized_shape, const Tensor& weight = {},
                  const Tensor& bias = {}, double eps = 1e-5);
Tensor group_norm(const Tensor& x, int64_t num_groups, const Tensor& weight = {},
                  const Tensor& bias = {}, double eps = 1e-5);
// Rows of weight; rows at padding_idx get no gradient.
// max_norm: rows looked up whose norm_type-norm exceeds max_norm are first
// scaled down to it, in place in `weight` (as PyTorch does).
// scale_grad_by_freq: each row's gradient is divided by how often its index
// occurs in `indices`.
Tensor embedding(const Tensor& indices, const Tensor& weight,
                 std::optional<int64_t> padding_idx = std::nullopt,
                 std::optional<double> max_norm = std::nullopt, double norm_type = 2.0,
                 bool scale_grad_by_freq = false);
// Sums, averages or takes the max of embeddings per bag. `input` is [B, N]
// (a bag per row, no offsets) or 1-D with `offsets` [B] giving where each bag
// starts (one more entry, the end, with include_last_offset). Entries equal to
// padding_idx are left out; an empty bag gives zeros. per_sample_weights
// (like input) scale the embeddings, mode kSum only.
Tensor embedding_bag(const Tensor& input, const Tensor& weight, const Tensor& offsets = {},
                     EmbeddingBagMode mode = EmbeddingBagMode::Mean,
                     const Tensor& per_sample_weights = {}, bool include_last_offset = false,
                     std::optional<int64_t> padding_idx = std::nullopt,
                     std::optional<double> max_norm = std::nullopt, double norm_type = 2.0,
                     bool scale_grad_by_freq = false);
// Resizes the spatial dims of [N, C, L], [N, C, H, W] or [N, C, D, H, W] to
// `size`; mode "nearest", "nearest-exact", "linear", "bilinear", "bicubic",
// "trilinear" or "area" (PyTorch's mode strings; align_corners for the
// interpolating ones).
Tensor interpolate(const Tensor& x, IntArrayRef size, const std::string& mode = "nearest",
                   bool align_corners = false);
// F::interpolate(x, F::InterpolateFuncOptions().size({8, 8}).mode(torch::kBilinear)), or
// .scale_factor({2.0, 2.0}) (the output size is floor(input size * factor)), as
// libtorch's: modes kNearest, kNearestExact, kArea (any of 1-3 spatial dims),
// kLinear (3-D input), kBilinear and kBicubic (4-D; antialias when downsampling),
// kTrilinear (5-D). A scale factor also sets the sampling positions unless
// recompute_scale_factor(true).
struct InterpolateFuncOptions {
  // Getters, as libtorch's options have: options.name().
  const auto& size() const noexcept { return size_; }
  const auto& scale_factor() const noexcept { return scale_factor_; }
  const auto& mode() const noexcept { return mode_; }
  const auto& align_corners() const noexcept { return align_corners_; }
  const auto& recompute_scale_factor() const noexcept { return recompute_scale_factor_; }
  const auto& antialias() const noexcept { return antialias_; }
  // The optional forms take what the getters return; the vector forms take
  // braced lists: .size({8, 8}).
  InterpolateFuncOptions& size(std::optional<std::vector<int64_t>> v) {
    size_ = std::move(v);
    return *this;
  }
  InterpolateFuncOptions& size(std::vector<int64_t> v) {
    size_ = std::move(v);
    return *this;
  }
  InterpolateFuncOptions& scale_factor(std::optional<std::vector<double>> v) {
    scale_factor_ = std::move(v);
    return *this;
  }
  InterpolateFuncOptions& scale_factor(std::vector<double> v) {
    scale_factor_ = std::move(v);
    return *this;
  }
  InterpolateFuncOptions& mode(InterpolateMode m) {
    mode_ = m;
    return *this;
  }
  InterpolateFuncOptions& align_corners(std::optional<bool> v) {
    align_corners_ = v;
    return *this;
  }
  InterpolateFuncOptions& recompute_scale_factor(std::optional<bool> v) {
    recompute_scale_factor_ = v;
    return *this;
  }
  InterpolateFuncOptions& antialias(bool v) {
    antialias_ = v;
    return *this;
  }
  std::optional<std::vector<int64_t>> size_;
  std::optional<std::vector<double>> scale_factor_;
  InterpolateMode mode_ = kNearest;
  std::optional<bool> align_corners_;
  std::optional<bool> recompute_scale_factor_;
  bool antialias_ = false;
};
Tensor interpolate(const Tensor& x, const InterpolateFuncOptions& options);

struct NLLLossOptions {
  // Getters, as libtorch's options have: options.name().
  const auto& weight() const noexcept { return weight_; }
  const auto& ignore_index() const noexcept { return ignore_index_; }
  const auto& reduction() const noexcept { return reduction_; }
  const auto& label_smoothing() const noexcept { return label_smoothing_; }
  Tensor weight_;
  int64_t ignore_index_ = -100;
  Reduction reduction_ = kMean;
  double label_smoothing_ = 0.0;
  NLLLossOptions& weight(Tensor w) {
    weight_ = std::move(w);
    return *this;
  }
  NLLLossOptions& ignore_index(int64_t i) {
    ignore_index_ = i;
    return *this;
  }
  NLLLossOptions& reduction(Reduction r) {
    reduction_ = r;
    return *this;
  }
  NLLLossOptions& label_smoothing(double s) {
    label_smoothing_ = s;
    return *this;
  }
};
using NLLLossFuncOptions = NLLLossOptions;
using CrossEntropyFuncOptions = NLLLossOptions;

// input: log-probabilities [N, C, ...]; target: class indices [N, ...].
Tensor nll_loss(const Tensor& input, const Tensor& target, const NLLLossOptions& options = {});
// target: class indices [N, ...] (int64) or probabilities shaped like input.
Tensor cross_entropy(const Tensor& input, const Tensor& target, const NLLLossOptions& options = {});
Tensor mse_loss(const Tensor& input, const Tensor& target, Reduction reduction = kMean);
Tensor l1_loss(const Tensor& input, const Tensor& target, Reduction reduction = kMean);

Tensor binary_cross_entropy(const Tensor& input, const Tensor& target, const Tensor& weight = {},
                            Reduction reduction = kMean);
Tensor binary_cross_entropy_with_logits(const Tensor& input, const Tensor& target,
                                        const Tensor& weight = {}, const Tensor& pos_weight = {},
                                        Reduction reduction = kMean);
Tensor smooth_l1_loss(const Tensor& input, const Tensor& target, Reduction reduction = kMean,
                      double beta = 1.0);
Tensor huber_loss(const Tensor& input, const Tensor& target, Reduction reduction = kMean,
                  double delta = 1.0);
// input: log-probabilities; target: probabilities (or log-probabilities with log_target).
Tensor kl_div(const Tensor& input, const Tensor& target, Reduction reduction = kMean,
              bool log_target = false);
Tensor cosine_similarity(const Tensor& x1, const Tensor& x2, int64_t dim = 1, double eps = 1e-8);
// x / max(||x||_p, eps) along dim.
Tensor normalize(const Tensor& x, double p = 2.0, int64_t dim = 1, double eps = 1e-12);
// int64 class indices -> int64 one-hot along a new last dim.
Tensor one_hot(const Tensor& indices, int64_t num_classes = -1);
// Constant padding of the last dims: pad = {left, right, top, bottom, ...}.
Tensor pad(const Tensor& x, IntArrayRef pad, double value = 0.0);
// F::pad(x, F::PadFuncOptions({1, 1}).mode(torch::kReflect)): kConstant with
// value, or kReflect (mirror without the edge; padding < the dim's size),
// kReplicate (repeat the edge) or kCircular (wrap around; padding <= size) on
// the last pad.size() / 2 dims, which must leave the first dim unpadded.
struct PadFuncOptions {
  // Getters, as libtorch's options have: options.name().
  const auto& pad() const noexcept { return pad_; }
  const auto& mode() const noexcept { return mode_; }
  const auto& value() const noexcept { return value_; }
  PadFuncOptions(std::vector<int64_t> pad) : pad_(std::move(pad)) {}
  PadFuncOptions& pad(std::vector<int64_t> v) {
    pad_ = std::move(v);
    return *this;
  }
  PadFuncOptions& mode(PaddingMode m) {
    mode_ = m;
    return *this;
  }
  PadFuncOptions& value(double v) {
    value_ = v;
    return *this;
  }
  std::vector<int64_t> pad_;
  PaddingMode mode_ = PaddingMode::Constant;
  double value_ = 0.0;
};
Tensor pad(const Tensor& x, const PadFuncOptions& options);

namespace detail {
// A loss's per-sample values reduced as `r` says (none, sum or mean).
Tensor reduce_loss(const Tensor& per_sample, Reduction r);
// padding_idx of a weight with `rows` rows, a negative one counted from
// the end; -1 when there is none. Out of [-rows, rows) is an error.
int64_t wrap_padding_idx(const char* op, std::optional<int64_t> padding_idx, int64_t rows);
}  // namespace detail

}  // namespace nn::functional

namespace nn::utils {
// Scales all gradients so that their total p-norm is at most max_norm; returns the norm before.
double clip_grad_norm_(const std::vector<Tensor>& parameters, double max_norm,
                       double norm_type = 2.0);
void clip_grad_value_(const std::vector<Tensor>& parameters, double clip_value);
Tensor parameters_to_vector(const std::vector<Tensor>& parameters);
void vector_to_parameters(const Tensor& vec, const std::vector<Tensor>& parameters);
}  // namespace nn::utils
namespace F = nn::functional;

}  // namespace brasa

#include <brasa/nn/functional_conv.h>     // conv*/pool* with libtorch's option structs
#include <brasa/nn/functional_options.h>  // the other F:: calls with option structs
