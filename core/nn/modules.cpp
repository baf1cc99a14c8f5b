#include <brasa/autograd/grad_mode.h>
#include <brasa/nn/aten_functions.h>
#include <brasa/nn/functional.h>
#include <brasa/nn/init.h>
#include <brasa/nn/modules.h>
#include <brasa/nn/multi_head_attention.h>
#include <brasa/nn/recurrent_cells.h>
#include <brasa/ops/binary.h>
#include <brasa/ops/conv.h>
#include <brasa/ops/factory.h>
#include <brasa/ops/linalg.h>
#include <brasa/ops/pooling.h>
#include <brasa/ops/reduction.h>
#include <brasa/ops/shape.h>
#include <brasa/ops/unary.h>

#include <cmath>
#include <ostream>

namespace brasa::nn {

// ---- Linear ----
LinearImpl::LinearImpl(const LinearOptions& o)
    : Cloneable("Linear"),
      options(o),
      weight(register_parameter("weight", empty({o.out_features_, o.in_features_}))),
      bias(register_parameter("bias", o.bias_ ? empty({o.out_features_}) : Tensor())) {
  reset_parameters();
}

// PyTorch's default: kaiming_uniform(a = sqrt(5)) for the weight, U(-1/sqrt(in), 1/sqrt(in)) for
// the bias.
void LinearImpl::reset_parameters() { init::default_layer_init_(weight, bias); }

Tensor LinearImpl::forward(const Tensor& x) { return F::linear(x, weight, bias); }

// ---- Conv2d ----
static Conv2dOptions checked(Conv2dOptions o) {
  o.kernel_size_ = Conv2dOptions::expand(o.kernel_size_);
  BRASA_CHECK(o.kernel_size_.size() == 2, "Conv2d: kernel_size must have 1 or 2 values");
  BRASA_CHECK(o.named_padding_ != ConvPadding::Same || (o.stride_[0] == 1 && o.stride_.back() == 1),
              "Conv2d: padding kSame needs stride 1, got stride [", o.stride_[0], ", ",
              o.stride_.back(), "]");
  BRASA_CHECK(o.in_channels_ % o.groups_ == 0 && o.out_channels_ % o.groups_ == 0,
              "Conv2d: in_channels (", o.in_channels_, ") and out_channels (", o.out_channels_,
              ") must be divisible by groups (", o.groups_, ")");
  F::detail::check_conv_padding_mode("Conv2d", o.padding_mode_);
  return o;
}

Conv2dImpl::Conv2dImpl(const Conv2dOptions& o)
    : Cloneable("Conv2d"),
      options(checked(o)),
      weight(register_parameter(
          "weight", empty({options.out_channels_, options.in_channels_ / options.groups_,
                           options.kernel_size_[0], options.kernel_size_[1]}))),
      bias(register_parameter("bias", options.bias_ ? empty({options.out_channels_}) : Tensor())) {
  reset_parameters();
}

void Conv2dImpl::reset_parameters() { init::default_layer_init_(weight, bias); }

Tensor Conv2dImpl::forward(const Tensor& x) {
  if (options.padding_mode_ != PaddingMode::Zeros) {
    Tensor padded =
        F::detail::pad_for_conv(x, options.padding_mode_, options.padding_, options.named_padding_,
                                options.kernel_size_, options.dilation_);
    return conv2d(padded, weight, bias, options.stride_, {0, 0}, options.dilation_,
                  options.groups_);
  }
  if (options.named_padding_)
    return conv2d(x, weight, bias, options.stride_, *options.named_padding_, options.dilation_,
                  options.groups_);
  return conv2d(x, weight, bias, options.stride_, options.padding_, options.dilation_,
                options.groups_);
}

// ---- ConvTranspose2d ----
ConvTranspose2dImpl::ConvTranspose2dImpl(const ConvTranspose2dOptions& o)
    : Cloneable("ConvTranspose2d"),
      options(o),
      weight(register_parameter("weight", empty({o.in_channels_, o.out_channels_ / o.groups_,
                                                 Conv2dOptions::expand(o.kernel_size_)[0],
                                                 Conv2dOptions::expand(o.kernel_size_)[1]}))),
      bias(register_parameter("bias", o.bias_ ? empty({o.out_channels_}) : Tensor())) {
  options.kernel_size_ = Conv2dOptions::expand(options.kernel_size_);
  BRASA_CHECK(o.in_channels_ % o.groups_ == 0 && o.out_channels_ % o.groups_ == 0,
              "ConvTranspose2d: channels must be divisible by groups (", o.groups_, ")");
  BRASA_CHECK(!o.named_padding_,
              "ConvTranspose2d: padding kSame/kValid is only for convolutions; give numbers");
  BRASA_CHECK(o.padding_mode_ == PaddingMode::Zeros,
              "ConvTranspose2d: only padding_mode kZeros is supported");
  init::default_layer_init_(weight, bias);
}
Tensor ConvTranspose2dImpl::forward(const Tensor& x) {
  return conv_transpose2d(x, weight, bias, options.stride_, options.padding_,
                          options.output_padding_, options.groups_, options.dilation_);
}

// ---- pooling, activations, dropout, flatten ----
Tensor ReLUImpl::forward(const Tensor& x) { return F::relu(x, inplace_); }
Tensor DropoutImpl::forward(const Tensor& x) { return F::dropout(x, p, is_training()); }

Tensor FlattenImpl::forward(const Tensor& x) { return F::flatten(x, start_dim, end_dim); }

// ---- activations ----
IdentityImpl::IdentityImpl() : Cloneable("Identity", [](const Tensor& x) { return x; }) {}
SigmoidImpl::SigmoidImpl() : Cloneable("Sigmoid", [](const Tensor& x) { return sigmoid(x); }) {}
TanhImpl::TanhImpl() : Cloneable("Tanh", [](const Tensor& x) { return tanh(x); }) {}
GELUImpl::GELUImpl(std::string a)
    : Cloneable("GELU", [a](const Tensor& x) { return F::gelu(x, a); }) {}
SiLUImpl::SiLUImpl() : Cloneable("SiLU", [](const Tensor& x) { return F::silu(x); }) {}
MishImpl::MishImpl() : Cloneable("Mish", [](const Tensor& x) { return F::mish(x); }) {}
SELUImpl::SELUImpl(const SELUOptions& o)
    : Cloneable(
          "SELU", [](const Tensor& x) { return F::selu(x); }, o.inplace_ ? "inplace=true" : "",
          o.inplace_) {}
ReLU6Impl::ReLU6Impl(const ReLU6Options& o)
    : Cloneable(
          "ReLU6", [](const Tensor& x) { return F::relu6(x); }, o.inplace_ ? "inplace=true" : "",
          o.inplace_) {}
LeakyReLUImpl::LeakyReLUImpl(const LeakyReLUOptions& o)
    : Cloneable(
          "LeakyReLU", [s = o.negative_slope_](const Tensor& x) { return F::leaky_relu(x, s); },
          ::brasa::detail::str("negative_slope=", o.negative_slope_,
                               o.inplace_ ? ", inplace=true" : ""),
          o.inplace_) {}
ELUImpl::ELUImpl(const ELUOptions& o)
    : Cloneable(
          "ELU", [a = o.alpha_](const Tensor& x) { return F::elu(x, a); },
          ::brasa::detail::str("alpha=", o.alpha_, o.inplace_ ? ", inplace=true" : ""),
          o.inplace_) {}
SoftplusImpl::SoftplusImpl(double b, double t)
    : Cloneable(
          "Softplus", [b, t](const Tensor& x) { return F::softplus(x, b, t); },
          ::brasa::detail::str("beta=", b, ", threshold=", t)) {}
HardtanhImpl::HardtanhImpl(const HardtanhOptions& o)
    : Cloneable(
          "Hardtanh",
          [lo = o.min_val_, hi = o.max_val_](const Tensor& x) { return F::hardtanh(x, lo, hi); },
          ::brasa::detail::str("min_val=", o.min_val_, ", max_val=", o.max_val_,
                               o.inplace_ ? ", inplace=true" : ""),
          o.inplace_) {}
SoftmaxImpl::SoftmaxImpl(int64_t d)
    : Cloneable(
          "Softmax", [d](const Tensor& x) { return softmax(x, d); },
          ::brasa::detail::str("dim=", d)) {}
LogSoftmaxImpl::LogSoftmaxImpl(int64_t d)
    : Cloneable(
          "LogSoftmax", [d](const Tensor& x) { return log_softmax(x, d); },
          ::brasa::detail::str("dim=", d)) {}

Tensor ActivationImpl::forward(const Tensor& x) {
  if (!inplace_) return fn_(x);
  Tensor out = x;
  return out.copy_(fn_(x));
}

Tensor Dropout2dImpl::forward(const Tensor& x) { return F::dropout2d(x, p, is_training()); }

// ---- normalization ----
BatchNormImpl::BatchNormImpl(const BatchNormOptions& o, int64_t input_dims, std::string name)
    : Module(std::move(name)),
      options(o),
      weight(register_parameter("weight", o.affine_ ? ones({o.num_features_}) : Tensor())),
      bias(register_parameter("bias", o.affine_ ? zeros({o.num_features_}) : Tensor())),
      running_mean(register_buffer("running_mean",
                                   o.track_running_stats_ ? zeros({o.num_features_}) : Tensor())),
      running_var(register_buffer("running_var",
                                  o.track_running_stats_ ? ones({o.num_features_}) : Tensor())),
      num_batches_tracked(register_buffer(
          "num_batches_tracked",
          o.track_running_stats_ ? zeros({}, TensorOptions().dtype(kLong)) : Tensor())),
      input_dims_(input_dims) {}

void BatchNormImpl::reset_running_stats() {
  if (!options.track_running_stats_) return;
  NoGradGuard g;
  running_mean.zero_();
  running_var.fill_(1);
  num_batches_tracked.zero_();
}

Tensor BatchNormImpl::forward(const Tensor& x) {
  const bool ok = input_dims_ == 0   ? x.dim() >= 2
                  : input_dims_ == 1 ? (x.dim() == 2 || x.dim() == 3)
                                     : x.dim() == input_dims_ + 2;
  BRASA_CHECK(ok, name(), ": expected ",
              input_dims_ == 0   ? "at least 2-D"
              : input_dims_ == 1 ? "2-D or 3-D"
              : input_dims_ == 2 ? "4-D"
                                 : "5-D",
              " input, got shape ", x.sizes());
  const bool use_batch_stats = is_training() || !options.track_running_stats_;
  if (is_training() && options.track_running_stats_) {
    NoGradGuard g;
    num_batches_tracked.add_(1);
  }
  if (sync_forward && is_training()) return sync_forward(*this, x);
  return F::batch_norm(x, options.track_running_stats_ ? running_mean : Tensor(),
                       options.track_running_stats_ ? running_var : Tensor(), weight, bias,
                       use_batch_stats, options.momentum_, options.eps_);
}

LayerNormImpl::LayerNormImpl(std::vector<int64_t> shape, double eps, bool affine)
    : Cloneable("LayerNorm"),
      normalized_shape(std::move(shape)),
      eps(eps),
      weight(register_parameter("weight", affine ? ones(normalized_shape) : Tensor())),
      bias(register_parameter("bias", affine ? zeros(normalized_shape) : Tensor())) {}
Tensor LayerNormImpl::forward(const Tensor& x) {
  return F::layer_norm(x, normalized_shape, weight, bias, eps);
}

GroupNormImpl::GroupNormImpl(int64_t groups, int64_t channels, double eps, bool affine)
    : Cloneable("GroupNorm"),
      num_groups(groups),
      num_channels(channels),
      eps(eps),
      weight(register_parameter("weight", affine ? ones({channels}) : Tensor())),
      bias(register_parameter("bias", affine ? zeros({channels}) : Tensor())) {
  BRASA_CHECK(groups > 0 && channels % groups == 0, "GroupNorm: num_channels (", channels,
              ") must be divisible by num_groups (", groups, ")");
}
Tensor GroupNormImpl::forward(const Tensor& x) {
  return F::group_norm(x, num_groups, weight, bias, eps);
}

EmbeddingImpl::EmbeddingImpl(int64_t n, int64_t dim, std::optional<int64_t> pad)
    : Cloneable("Embedding"),
      padding_idx(pad),
      weight(register_parameter("weight", empty({n, dim}))) {
  if (pad)
    BRASA_CHECK(*pad >= -n && *pad < n,
                "Embedding: padding_idx must be within num_embeddings, got ", *pad);
  init::normal_(weight);
  if (pad) {
    NoGradGuard g;
    weight[*pad < 0 ? *pad + n : *pad].zero_();
  }
}
namespace {
// A table given through the options' _weight, checked against their sizes.
void use_given_table(Tensor& weight, const Tensor& given, int64_t n, int64_t dim, bool sparse,
                     const char* op) {
  BRASA_CHECK(!sparse, op, ": sparse gradients are not supported (sparse=true)");
  if (!given.defined()) return;
  BRASA_CHECK(given.dim() == 2 && given.size(0) == n && given.size(1) == dim, op,
              ": Shape of _weight does not match num_embeddings and embedding_dim (", n, ", ", dim,
              "), got ", given.sizes());
  weight = given;
}
}  // namespace

EmbeddingImpl::EmbeddingImpl(const EmbeddingOptions& o)
    : EmbeddingImpl(o.num_embeddings_, o.embedding_dim_, o.padding_idx_) {
  BRASA_CHECK(!o.max_norm_ || *o.max_norm_ > 0, "Embedding: max_norm must be positive, got ",
              *o.max_norm_);
  max_norm = o.max_norm_;
  norm_type = o.norm_type_;
  scale_grad_by_freq = o.scale_grad_by_freq_;
  use_given_table(weight, o._weight_, o.num_embeddings_, o.embedding_dim_, o.sparse_, "Embedding");
}
EmbeddingImpl::EmbeddingImpl(const EmbeddingImpl& o)
    : EmbeddingImpl(o.weight.size(0), o.weight.size(1), o.padding_idx) {
  max_norm = o.max_norm;
  norm_type = o.norm_type;
  scale_grad_by_freq = o.scale_grad_by_freq;
}
Tensor EmbeddingImpl::forward(const Tensor& indices) {
  return F::embedding(indices, weight, padding_idx, max_norm, norm_type, scale_grad_by_freq);
}

namespace {
// Replaces a fresh module's table by `embeddings` (frozen unless asked).
// The module's table becomes `embeddings` itself (its storage, as in
// PyTorch), trainable unless frozen.
void load_pretrained(Tensor& weight, const Tensor& embeddings, bool freeze) {
  weight = embeddings.detach();
  weight.requires_grad_(!freeze);
}
void check_pretrained(const Tensor& embeddings, bool sparse, const char* op) {
  BRASA_CHECK(embeddings.defined() && embeddings.dim() == 2, op,
              ": Embeddings parameter is expected to be 2-dimensional, got shape ",
              embeddings.defined() ? embeddings.sizes() : IntArrayRef{});
  BRASA_CHECK(!sparse, op, ": sparse gradients are not supported (sparse=true)");
}
}  // namespace

Embedding Embedding::from_pretrained(const Tensor& embeddings,
                                     const EmbeddingFromPretrainedOptions& options) {
  const char* op = "Embedding::from_pretrained";
  check_pretrained(embeddings, options.sparse_, op);
  EmbeddingOptions o(embeddings.size(0), embeddings.size(1));
  if (options.padding_idx_) o.padding_idx(*options.padding_idx_);
  if (options.max_norm_) o.max_norm(*options.max_norm_);
  o.norm_type(options.norm_type_).scale_grad_by_freq(options.scale_grad_by_freq_);
  Embedding e(o);
  load_pretrained(e->weight, embeddings, options.freeze_);
  return e;
}

EmbeddingBag EmbeddingBag::from_pretrained(const Tensor& embeddings,
                                           const EmbeddingBagFromPretrainedOptions& options) {
  const char* op = "EmbeddingBag::from_pretrained";
  check_pretrained(embeddings, options.sparse_, op);
  EmbeddingBagOptions o(embeddings.size(0), embeddings.size(1));
  o.mode(options.mode_).include_last_offset(options.include_last_offset_);
  if (options.padding_idx_) o.padding_idx(*options.padding_idx_);
  if (options.max_norm_) o.max_norm(*options.max_norm_);
  o.norm_type(options.norm_type_).scale_grad_by_freq(options.scale_grad_by_freq_);
  EmbeddingBag e(o);
  load_pretrained(e->weight, embeddings, options.freeze_);
  return e;
}

EmbeddingBagOptions& EmbeddingBagOptions::mode(Reduction r) {
  BRASA_CHECK(r == Reduction::Sum || r == Reduction::Mean,
              "EmbeddingBag: mode must be kSum, kMean or kMax");
  mode_ = r == Reduction::Sum ? EmbeddingBagMode::Sum : EmbeddingBagMode::Mean;
  return *this;
}

EmbeddingBagImpl::EmbeddingBagImpl(const EmbeddingBagOptions& o)
    : Cloneable("EmbeddingBag"),
      options(o),
      weight(register_parameter("weight", empty({o.num_embeddings_, o.embedding_dim_}))) {
  const int64_t n = o.num_embeddings_;
  if (o.padding_idx_)
    BRASA_CHECK(*o.padding_idx_ >= -n && *o.padding_idx_ < n,
                "EmbeddingBag: padding_idx must be within num_embeddings, got ", *o.padding_idx_);
  init::normal_(weight);
  if (o.padding_idx_) {
    NoGradGuard g;
    weight[*o.padding_idx_ < 0 ? *o.padding_idx_ + n : *o.padding_idx_].zero_();
  }
  use_given_table(weight, o._weight_, n, o.embedding_dim_, o.sparse_, "EmbeddingBag");
  options._weight_ = Tensor();  // the module holds the table; copies make their own
}
Tensor EmbeddingBagImpl::forward(const Tensor& input, const Tensor& offsets,
                                 const Tensor& per_sample_weights) {
  return F::embedding_bag(input, weight, offsets, options.mode_, per_sample_weights,
                          options.include_last_offset_, options.padding_idx_, options.max_norm_,
                          options.norm_type_, options.scale_grad_by_freq_);
}

// ---- 1-d layers (through their 2-d forms) ----
Conv1dImpl::Conv1dImpl(const Conv1dOptions& o)
    : Cloneable("Conv1d"),
      options(o),
      weight(register_parameter(
          "weight", empty({o.out_channels_, o.in_channels_ / o.groups_, o.kernel_size_}))),
      bias(register_parameter("bias", o.bias_ ? empty({o.out_channels_}) : Tensor())) {
  BRASA_CHECK(o.in_channels_ % o.groups_ == 0 && o.out_channels_ % o.groups_ == 0,
              "Conv1d: channels must be divisible by groups (", o.groups_, ")");
  BRASA_CHECK(o.named_padding_ != ConvPadding::Same || o.stride_ == 1,
              "Conv1d: padding kSame needs stride 1, got stride ", o.stride_);
  F::detail::check_conv_padding_mode("Conv1d", o.padding_mode_);
  init::default_layer_init_(weight, bias);
}
Tensor Conv1dImpl::forward(const Tensor& x) {
  if (options.padding_mode_ != PaddingMode::Zeros) {
    Tensor padded = F::detail::pad_for_conv(x, options.padding_mode_, {options.padding_},
                                            options.named_padding_, {options.kernel_size_},
                                            {options.dilation_});
    return conv1d(padded, weight, bias, {options.stride_}, {0}, {options.dilation_},
                  options.groups_);
  }
  if (options.named_padding_)
    return conv1d(x, weight, bias, {options.stride_}, *options.named_padding_, {options.dilation_},
                  options.groups_);
  return conv1d(x, weight, bias, {options.stride_}, {options.padding_}, {options.dilation_},
                options.groups_);
}

ConvTranspose1dImpl::ConvTranspose1dImpl(const ConvTranspose1dOptions& o)
    : Cloneable("ConvTranspose1d"),
      options(o),
      weight(register_parameter(
          "weight", empty({o.in_channels_, o.out_channels_ / o.groups_, o.kernel_size_}))),
      bias(register_parameter("bias", o.bias_ ? empty({o.out_channels_}) : Tensor())) {
  BRASA_CHECK(o.in_channels_ % o.groups_ == 0 && o.out_channels_ % o.groups_ == 0,
              "ConvTranspose1d: channels must be divisible by groups (", o.groups_, ")");
  BRASA_CHECK(o.padding_mode_ == PaddingMode::Zeros,
              "ConvTranspose1d: only padding_mode kZeros is supported");
  init::default_layer_init_(weight, bias);
}
Tensor ConvTranspose1dImpl::forward(const Tensor& x) {
  return conv_transpose1d(x, weight, bias, {options.stride_}, {options.padding_},
                          {options.output_padding_}, options.groups_, {options.dilation_});
}

PReLUImpl::PReLUImpl(int64_t n, double init)
    : Cloneable("PReLU"), weight(register_parameter("weight", full({n}, init))) {}
Tensor PReLUImpl::forward(const Tensor& x) { return F::prelu(x, weight); }

BilinearImpl::BilinearImpl(int64_t in1, int64_t in2, int64_t out, bool with_bias)
    : Cloneable("Bilinear"),
      weight(register_parameter("weight", empty({out, in1, in2}))),
      bias(register_parameter("bias", with_bias ? empty({out}) : Tensor())) {
  double bound = 1.0 / std::sqrt(static_cast<double>(in1));
  init::uniform_(weight, -bound, bound);
  if (bias.defined()) init::uniform_(bias, -bound, bound);
}
Tensor BilinearImpl::forward(const Tensor& x1, const Tensor& x2) {
  return F::bilinear(x1, x2, weight, bias);
}

// ---- attention ----
namespace {
// Checked before any parameter is made.
const MultiheadAttentionOptions& checked(const MultiheadAttentionOptions& o) {
  BRASA_CHECK(o.num_heads_ > 0 && o.embed_dim_ % o.num_heads_ == 0,
              "MultiheadAttention: embed_dim (", o.embed_dim_, ") must be divisible by num_heads (",
              o.num_heads_, ")");
  BRASA_CHECK(o.kdim_ > 0 && o.vdim_ > 0,
              "MultiheadAttention: kdim and vdim must be positive, got ", o.kdim_, " and ",
              o.vdim_);
  return o;
}
}  // namespace

MultiheadAttentionImpl::MultiheadAttentionImpl(const MultiheadAttentionOptions& o)
    : Cloneable("MultiheadAttention"),
      options(checked(o)),
      embed_dim(o.embed_dim_),
      num_heads(o.num_heads_),
      head_dim(o.embed_dim_ / o.num_heads_),
      dropout(o.dropout_),
      _qkv_same_embed_dim(o.kdim_ == o.embed_dim_ && o.vdim_ == o.embed_dim_),
      q_proj_weight(register_parameter(
          "q_proj_weight", _qkv_same_embed_dim ? Tensor() : empty({embed_dim, embed_dim}))),
      k_proj_weight(register_parameter(
          "k_proj_weight", _qkv_same_embed_dim ? Tensor() : empty({embed_dim, o.kdim_}))),
      v_proj_weight(register_parameter(
          "v_proj_weight", _qkv_same_embed_dim ? Tensor() : empty({embed_dim, o.vdim_}))),
      in_proj_weight(register_parameter(
          "in_proj_weight", _qkv_same_embed_dim ? empty({3 * embed_dim, embed_dim}) : Tensor())),
      in_proj_bias(register_parameter("in_proj_bias", o.bias_ ? zeros({3 * embed_dim}) : Tensor())),
      bias_k(register_parameter("bias_k", o.add_bias_kv_ ? empty({1, 1, embed_dim}) : Tensor())),
      bias_v(register_parameter("bias_v", o.add_bias_kv_ ? empty({1, 1, embed_dim}) : Tensor())) {
  if (_qkv_same_embed_dim) {
    init::xavier_uniform_(in_proj_weight);
  } else {
    init::xavier_uniform_(q_proj_weight);
    init::xavier_uniform_(k_proj_weight);
    init::xavier_uniform_(v_proj_weight);
  }
  out_proj = register_module(
      "out_proj", std::make_shared<LinearImpl>(LinearOptions(embed_dim, embed_dim).bias(o.bias_)));
  if (o.bias_) init::zeros_(out_proj->bias);
  if (o.add_bias_kv_) {
    init::xavier_normal_(bias_k);
    init::xavier_normal_(bias_v);
  }
}

std::tuple<Tensor, Tensor> MultiheadAttentionImpl::forward(
    const Tensor& query, const Tensor& key, const Tensor& value, const Tensor& key_padding_mask,
    bool need_weights, const Tensor& attn_mask, bool average_attn_weights) {
  BRASA_CHECK(query.dim() == 3 && key.dim() == 3 && value.dim() == 3 &&
                  query.size(2) == embed_dim && key.size(2) == options.kdim_ &&
                  value.size(2) == options.vdim_,
              "MultiheadAttention: expected query [L, N, ", embed_dim, "], key [S, N, ",
              options.kdim_, "] and value [S, N, ", options.vdim_, "], got ", query.sizes(), ", ",
              key.sizes(), ", ", value.sizes());
  return F::multi_head_attention_forward(
      query, key, value,
      F::MultiheadAttentionForwardFuncOptions(embed_dim, num_heads, in_proj_weight, in_proj_bias,
                                              bias_k, bias_v, options.add_zero_attn_, dropout,
                                              out_proj->weight, out_proj->bias)
          .training(is_training())
          .key_padding_mask(key_padding_mask)
          .need_weights(need_weights)
          .attn_mask(attn_mask)
          .use_separate_proj_weight(!_qkv_same_embed_dim)
          .q_proj_weight(q_proj_weight)
          .k_proj_weight(k_proj_weight)
          .v_proj_weight(v_proj_weight)
          .average_attn_weights(average_attn_weights));
}

TransformerEncoderLayerOptions& TransformerEncoderLayerOptions::activation(
    const std::string& name) {
  unknown_activation_.clear();
  if (name == "relu")
    activation_ = kReLU;
  else if (name == "gelu")
    activation_ = kGELU;
  else
    unknown_activation_ = name;
  return *this;
}

void detail::check_activation(const char* layer, const activation_t& a) {
  if (const auto* fn = std::get_if<std::function<Tensor(const Tensor&)>>(&a)) {
    BRASA_CHECK(static_cast<bool>(*fn), layer, ": the activation callable is empty");
    return;
  }
  const ActivationKind kind = std::get<ActivationKind>(a);
  BRASA_CHECK(kind == kReLU || kind == kGELU, layer,
              ": activation must be torch::kReLU, torch::kGELU or a callable, got torch::kTanh");
}

Tensor detail::apply_activation(const activation_t& a, const Tensor& x) {
  if (const auto* fn = std::get_if<std::function<Tensor(const Tensor&)>>(&a)) return (*fn)(x);
  return std::get<ActivationKind>(a) == kGELU ? F::gelu(x) : relu(x);
}

TransformerEncoderLayerImpl::TransformerEncoderLayerImpl(const TransformerEncoderLayerOptions& o)
    : Cloneable("TransformerEncoderLayer"), options(o) {
  BRASA_CHECK(o.unknown_activation_.empty(),
              "TransformerEncoderLayer: activation must be relu or gelu, got ",
              o.unknown_activation_);
  detail::check_activation("TransformerEncoderLayer", o.activation_);
  // Registered in libtorch's order, so that printing and state_dict match.
  self_attn = register_module("self_attn", MultiheadAttention(o.d_model_, o.nhead_, o.dropout_));
  linear1 = register_module("linear1", Linear(o.d_model_, o.dim_feedforward_));
  dropout = register_module("dropout", Dropout(o.dropout_));
  linear2 = register_module("linear2", Linear(o.dim_feedforward_, o.d_model_));
  norm1 = register_module("norm1", LayerNorm(std::vector<int64_t>{o.d_model_}));
  norm2 = register_module("norm2", LayerNorm(std::vector<int64_t>{o.d_model_}));
  dropout1 = register_module("dropout1", Dropout(o.dropout_));
  dropout2 = register_module("dropout2", Dropout(o.dropout_));
}

// libtorch 1.13 prints this one with its Impl name.
void TransformerEncoderLayerImpl::pretty_print(std::ostream& os) const {
  os << "torch::nn::TransformerEncoderLayerImpl";
}

Tensor TransformerEncoderLayerImpl::forward(const Tensor& src, const Tensor& src_mask,
                                            const Tensor& src_key_padding_mask) {
  auto sa = [&](const Tensor& x) {
    return dropout1->forward(
        std::get<0>(self_attn->forward(x, x, x, src_key_padding_mask, false, src_mask)));
  };
  auto ff = [&](const Tensor& x) {
    Tensor h = linear1->forward(x);
    h = detail::apply_activation(options.activation_, h);
    return dropout2->forward(linear2->forward(dropout->forward(h)));
  };
  if (options.norm_first_) {
    Tensor x = src + sa(norm1->forward(src));
    return x + ff(norm2->forward(x));
  }
  Tensor x = norm1->forward(src + sa(src));
  return norm2->forward(x + ff(x));
}

// ---- recurrent layers ----
static std::string rnn_param_name(const char* kind, int64_t layer, int64_t dir) {
  return std::string(kind) + "_l" + std::to_string(layer) + (dir ? "_reverse" : "");
}

RNNBaseImpl::RNNBaseImpl(std::string name, const RNNOptions& o, int64_t gates)
    : Module(std::move(name)), options(o), gates_(gates) {
  BRASA_CHECK(o.input_size_ > 0 && o.hidden_size_ > 0 && o.num_layers_ > 0, this->name(),
              ": input_size, hidden_size and num_layers must be positive");
  BRASA_CHECK(o.dropout_ >= 0 && o.dropout_ <= 1, this->name(), ": dropout must be in [0, 1], got ",
              o.dropout_);
  BRASA_CHECK(o.proj_size_ >= 0, this->name(),
              ": proj_size should be a positive integer or zero to disable projections, got ",
              o.proj_size_);
  BRASA_CHECK(o.proj_size_ == 0 || gates == 4, this->name(),
              ": proj_size argument is only supported for LSTM, not RNN or GRU");
  BRASA_CHECK(o.proj_size_ < o.hidden_size_, this->name(), ": proj_size (", o.proj_size_,
              ") has to be smaller than hidden_size (", o.hidden_size_, ")");
  const int64_t dirs = o.bidirectional_ ? 2 : 1, H = o.hidden_size_;
  const int64_t out = o.proj_size_ > 0 ? o.proj_size_ : H;  // the size of h
  const double bound = 1.0 / std::sqrt(static_cast<double>(H));
  for (int64_t l = 0; l < o.num_layers_; ++l)
    for (int64_t d = 0; d < dirs; ++d) {
      const int64_t in = l == 0 ? o.input_size_ : out * dirs;
      std::vector<Tensor*> made;
      made.push_back(
          &register_parameter(rnn_param_name("weight_ih", l, d), empty({gates * H, in})));
      made.push_back(
          &register_parameter(rnn_param_name("weight_hh", l, d), empty({gates * H, out})));
      if (o.bias_) {
        made.push_back(&register_parameter(rnn_param_name("bias_ih", l, d), empty({gates * H})));
        made.push_back(&register_parameter(rnn_param_name("bias_hh", l, d), empty({gates * H})));
      }
      if (o.proj_size_ > 0)
        made.push_back(
            &register_parameter(rnn_param_name("weight_hr", l, d), empty({o.proj_size_, H})));
      for (Tensor* t : made) init::uniform_(*t, -bound, bound);
    }
}

std::vector<Tensor> RNNBaseImpl::initial_states(const Tensor& input,
                                                std::vector<Tensor> given) const {
  BRASA_CHECK(input.dim() == 3, name(), ": expected a 3-D input, got shape ", input.sizes());
  BRASA_CHECK(input.size(2) == options.input_size_, name(), ": input size ", input.size(2),
              " != input_size ", options.input_size_);
  const int64_t N = input.size(options.batch_first_ ? 0 : 1),
                LD = options.num_layers_ * (options.bidirectional_ ? 2 : 1);
  for (size_t i = 0; i < given.size(); ++i) {
    // h is proj_size wide with projections; c stays hidden_size wide.
    const int64_t H = i == 0 && options.proj_size_ > 0 ? options.proj_size_ : options.hidden_size_;
    Tensor& h = given[i];
    if (!h.defined()) h = zeros({LD, N, H}, input.options());
    BRASA_CHECK(h.sizes() == IntArrayRef({LD, N, H}), name(), ": expected ",
                i == 0 ? "hidden" : "cell", " state of shape [", LD, ", ", N, ", ", H, "], got ",
                h.sizes());
  }
  return given;
}

std::vector<Tensor> RNNBaseImpl::initial_states(const utils::rnn::PackedSequence& input,
                                                std::vector<Tensor> given) const {
  const Tensor& data = input.data();
  BRASA_CHECK(data.defined() && data.dim() == 2, name(),
              ": expected packed data [sum of lengths, input_size], got shape ",
              data.defined() ? data.sizes() : IntArrayRef{});
  BRASA_CHECK(data.size(1) == options.input_size_, name(), ": input size ", data.size(1),
              " != input_size ", options.input_size_);
  BRASA_CHECK(input.batch_sizes().numel() > 0, name(), ": expected a non-empty PackedSequence");
  const int64_t N = input.batch_sizes().data_ptr<int64_t>()[0],
                LD = options.num_layers_ * (options.bidirectional_ ? 2 : 1);
  for (size_t i = 0; i < given.size(); ++i) {
    const int64_t H = i == 0 && options.proj_size_ > 0 ? options.proj_size_ : options.hidden_size_;
    Tensor& h = given[i];
    if (!h.defined()) {
      h = zeros({LD, N, H}, data.options());
      continue;
    }
    BRASA_CHECK(h.sizes() == IntArrayRef({LD, N, H}), name(), ": expected ",
                i == 0 ? "hidden" : "cell", " state of shape [", LD, ", ", N, ", ", H, "], got ",
                h.sizes());
    if (input.sorted_indices().defined()) h = h.index_select(1, input.sorted_indices());
  }
  return given;
}

std::vector<Tensor> RNNBaseImpl::flat_weights() const { return parameters_.values(); }

Tensor RNNBaseImpl::in_original_order(const Tensor& state,
                                      const utils::rnn::PackedSequence& packed) {
  const Tensor& order = packed.unsorted_indices();
  return order.defined() ? state.index_select(1, order) : state;
}

// The sequence math is libtorch's top-level lstm / gru (nn/recurrent_cells.h).
std::tuple<Tensor, std::tuple<Tensor, Tensor>> LSTMImpl::forward(
    const Tensor& input, std::optional<std::tuple<Tensor, Tensor>> hx) {
  const auto& o = options;
  auto h0 =
      initial_states(input, {hx ? std::get<0>(*hx) : Tensor(), hx ? std::get<1>(*hx) : Tensor()});
  auto [out, h, c] = lstm(input, h0, flat_weights(), o.bias_, o.num_layers_, o.dropout_,
                          is_training(), o.bidirectional_, o.batch_first_);
  return {out, {h, c}};
}

std::tuple<utils::rnn::PackedSequence, std::tuple<Tensor, Tensor>>
LSTMImpl::forward_with_packed_input(const utils::rnn::PackedSequence& packed,
                                    std::optional<std::tuple<Tensor, Tensor>> hx) {
  const auto& o = options;
  auto h0 =
      initial_states(packed, {hx ? std::get<0>(*hx) : Tensor(), hx ? std::get<1>(*hx) : Tensor()});
  auto [out, h, c] = lstm(packed.data(), packed.batch_sizes(), h0, flat_weights(), o.bias_,
                          o.num_layers_, o.dropout_, is_training(), o.bidirectional_);
  return {utils::rnn::PackedSequence(out, packed.batch_sizes(), packed.sorted_indices(),
                                     packed.unsorted_indices()),
          {in_original_order(h, packed), in_original_order(c, packed)}};
}

std::tuple<utils::rnn::PackedSequence, Tensor> GRUImpl::forward_with_packed_input(
    const utils::rnn::PackedSequence& packed, Tensor hx) {
  const auto& o = options;
  auto [out, h] =
      gru(packed.data(), packed.batch_sizes(), initial_states(packed, {hx})[0], flat_weights(),
          o.bias_, o.num_layers_, o.dropout_, is_training(), o.bidirectional_);
  return {utils::rnn::PackedSequence(out, packed.batch_sizes(), packed.sorted_indices(),
                                     packed.unsorted_indices()),
          in_original_order(h, packed)};
}

std::tuple<Tensor, Tensor> GRUImpl::forward(const Tensor& input, const Tensor& hx) {
  const auto& o = options;
  return gru(input, initial_states(input, {hx})[0], flat_weights(), o.bias_, o.num_layers_,
             o.dropout_, is_training(), o.bidirectional_, o.batch_first_);
}
}  // namespace brasa::nn
