#include <brasa/nn/functional_options.h>
#include <brasa/ops/binary.h>

namespace brasa {

EmbeddingBagMode::EmbeddingBagMode(Reduction r) : kind(r == Reduction::Sum ? Sum : Mean) {
  BRASA_CHECK(r == Reduction::Sum || r == Reduction::Mean,
              "EmbeddingBagMode: expected torch::kSum, torch::kMean or torch::kMax");
}

}  // namespace brasa

namespace brasa::nn::functional {

Tensor detail::apply_inplace(const Tensor& x, const Tensor& y, bool inplace) {
  if (!inplace) return y;
  Tensor out = x;
  out.copy_(y);
  return out;
}

Tensor relu(const Tensor& x, const ReLUFuncOptions& options) { return relu(x, options.inplace_); }
Tensor relu6(const Tensor& x, const ReLU6FuncOptions& options) {
  return detail::apply_inplace(x, relu6(x), options.inplace_);
}
Tensor selu(const Tensor& x, const SELUFuncOptions& options) {
  return detail::apply_inplace(x, selu(x), options.inplace_);
}
Tensor leaky_relu(const Tensor& x, const LeakyReLUFuncOptions& options) {
  return detail::apply_inplace(x, leaky_relu(x, options.negative_slope_), options.inplace_);
}
Tensor elu(const Tensor& x, const ELUFuncOptions& options) {
  return detail::apply_inplace(x, elu(x, options.alpha_), options.inplace_);
}
Tensor gelu(const Tensor& x, const GELUFuncOptions& options) {
  return gelu(x, options.approximate_);
}
Tensor softplus(const Tensor& x, const SoftplusFuncOptions& options) {
  return softplus(x, options.beta_, options.threshold_);
}
Tensor hardtanh(const Tensor& x, const HardtanhFuncOptions& options) {
  return detail::apply_inplace(x, hardtanh(x, options.min_val_, options.max_val_),
                               options.inplace_);
}
Tensor softmax(const Tensor& x, const SoftmaxFuncOptions& options) {
  return softmax(options.dtype_ ? x.to(*options.dtype_) : x, options.dim_);
}
Tensor log_softmax(const Tensor& x, const LogSoftmaxFuncOptions& options) {
  return log_softmax(options.dtype_ ? x.to(*options.dtype_) : x, options.dim_);
}
Tensor dropout(const Tensor& x, const DropoutFuncOptions& options) {
  return detail::apply_inplace(x, dropout(x, options.p_, options.training_), options.inplace_);
}
Tensor dropout2d(const Tensor& x, const Dropout2dFuncOptions& options) {
  return detail::apply_inplace(x, dropout2d(x, options.p_, options.training_), options.inplace_);
}
Tensor layer_norm(const Tensor& x, const LayerNormFuncOptions& options) {
  return layer_norm(x, options.normalized_shape_, options.weight_, options.bias_, options.eps_);
}
Tensor group_norm(const Tensor& x, const GroupNormFuncOptions& options) {
  return group_norm(x, options.num_groups_, options.weight_, options.bias_, options.eps_);
}
Tensor batch_norm(const Tensor& x, const Tensor& running_mean, const Tensor& running_var,
                  const BatchNormFuncOptions& options) {
  BRASA_CHECK(options.momentum_.has_value(),
              "batch_norm: a momentum of None (a cumulative average) needs the module's "
              "num_batches_tracked; give F::BatchNormFuncOptions a momentum");
  return batch_norm(x, running_mean, running_var, options.weight_, options.bias_, options.training_,
                    *options.momentum_, options.eps_);
}
Tensor normalize(const Tensor& x, const NormalizeFuncOptions& options) {
  if (!options.out_) return normalize(x, options.p_, options.dim_, options.eps_);
  Tensor out = *options.out_;
  return div_out(out, x, clamp_min(x.norm(options.p_, {options.dim_}, true), options.eps_));
}
Tensor embedding(const Tensor& input, const Tensor& weight, const EmbeddingFuncOptions& options) {
  BRASA_CHECK(!options.sparse_, "embedding: sparse gradients are not supported (sparse=true)");
  return embedding(input, weight, options.padding_idx_, options.max_norm_, options.norm_type_,
                   options.scale_grad_by_freq_);
}
EmbeddingBagFuncOptions& EmbeddingBagFuncOptions::mode(Reduction r) {
  BRASA_CHECK(r == Reduction::Sum || r == Reduction::Mean,
              "embedding_bag: mode must be kSum, kMean or kMax");
  mode_ = r == Reduction::Sum ? EmbeddingBagMode::Sum : EmbeddingBagMode::Mean;
  return *this;
}
Tensor embedding_bag(const Tensor& input, const Tensor& weight,
                     const EmbeddingBagFuncOptions& options) {
  BRASA_CHECK(!options.sparse_, "embedding_bag: sparse gradients are not supported (sparse=true)");
  return embedding_bag(input, weight, options.offsets_, options.mode_, options.per_sample_weights_,
                       options.include_last_offset_, options.padding_idx_, options.max_norm_,
                       options.norm_type_, options.scale_grad_by_freq_);
}

}  // namespace brasa::nn::functional
