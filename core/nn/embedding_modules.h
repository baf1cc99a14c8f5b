#pragma once
// Lookup-table layers with libtorch's options: nn::Embedding and
// nn::EmbeddingBag (and their from_pretrained), over F::embedding and
// F::embedding_bag.
#include <brasa/nn/functional.h>
#include <brasa/nn/module.h>

#include <optional>

namespace brasa::nn {

struct EmbeddingOptions {
  // Getters, as libtorch's options have: options.name().
  const auto& num_embeddings() const noexcept { return num_embeddings_; }
  const auto& embedding_dim() const noexcept { return embedding_dim_; }
  const auto& padding_idx() const noexcept { return padding_idx_; }
  const auto& max_norm() const noexcept { return max_norm_; }
  const auto& norm_type() const noexcept { return norm_type_; }
  const auto& scale_grad_by_freq() const noexcept { return scale_grad_by_freq_; }
  const auto& sparse() const noexcept { return sparse_; }
  const auto& _weight() const noexcept { return _weight_; }
  EmbeddingOptions(int64_t num_embeddings, int64_t embedding_dim)
      : num_embeddings_(num_embeddings), embedding_dim_(embedding_dim) {}
  EmbeddingOptions& num_embeddings(int64_t v) {
    num_embeddings_ = v;
    return *this;
  }
  EmbeddingOptions& embedding_dim(int64_t v) {
    embedding_dim_ = v;
    return *this;
  }
  EmbeddingOptions& padding_idx(std::optional<int64_t> v) {
    padding_idx_ = v;
    return *this;
  }
  EmbeddingOptions& max_norm(std::optional<double> v) {
    max_norm_ = v;
    return *this;
  }
  EmbeddingOptions& norm_type(double p) {
    norm_type_ = p;
    return *this;
  }
  // Each row's gradient divided by how often its index occurs in the batch.
  EmbeddingOptions& scale_grad_by_freq(bool s) {
    scale_grad_by_freq_ = s;
    return *this;
  }
  // Sparse gradients: not supported (an error names it).
  EmbeddingOptions& sparse(bool s) {
    sparse_ = s;
    return *this;
  }
  // The table to use ([num_embeddings, embedding_dim]) instead of a fresh one.
  EmbeddingOptions& _weight(Tensor w) {
    _weight_ = std::move(w);
    return *this;
  }
  int64_t num_embeddings_, embedding_dim_;
  std::optional<int64_t> padding_idx_;
  std::optional<double> max_norm_;
  double norm_type_ = 2.0;
  bool scale_grad_by_freq_ = false;
  bool sparse_ = false;
  Tensor _weight_;
};
class EmbeddingImpl : public Cloneable<EmbeddingImpl> {
 public:
  EmbeddingImpl(int64_t num_embeddings, int64_t embedding_dim,
                std::optional<int64_t> padding_idx = std::nullopt);
  explicit EmbeddingImpl(const EmbeddingOptions& o);
  EmbeddingImpl(const EmbeddingImpl& o);
  Tensor forward(const Tensor& indices);
  void pretty_print(std::ostream& os) const override;
  std::optional<int64_t> padding_idx;
  std::optional<double> max_norm;
  double norm_type = 2.0;
  bool scale_grad_by_freq = false;
  Tensor& weight;  // registered slot (see LinearImpl)
};
// Options of Embedding::from_pretrained: the table is frozen (no gradient)
// unless freeze(false).
struct EmbeddingFromPretrainedOptions {
  BRASA_ARG(bool, freeze, true);
  BRASA_ARG(std::optional<int64_t>, padding_idx, std::nullopt);
  BRASA_ARG(std::optional<double>, max_norm, std::nullopt);
  BRASA_ARG(double, norm_type, 2.0);
  BRASA_ARG(bool, scale_grad_by_freq, false);
  BRASA_ARG(bool, sparse, false);
};
class Embedding : public ModuleHolder<EmbeddingImpl> {
 public:
  using ModuleHolder<EmbeddingImpl>::ModuleHolder;
  // An Embedding whose table is `embeddings` [num_embeddings, embedding_dim].
  static Embedding from_pretrained(const Tensor& embeddings,
                                   const EmbeddingFromPretrainedOptions& options = {});
};

struct EmbeddingBagOptions {
  // Getters, as libtorch's options have: options.name().
  const auto& num_embeddings() const noexcept { return num_embeddings_; }
  const auto& embedding_dim() const noexcept { return embedding_dim_; }
  const auto& mode() const noexcept { return mode_; }
  const auto& padding_idx() const noexcept { return padding_idx_; }
  const auto& max_norm() const noexcept { return max_norm_; }
  const auto& norm_type() const noexcept { return norm_type_; }
  const auto& include_last_offset() const noexcept { return include_last_offset_; }
  const auto& scale_grad_by_freq() const noexcept { return scale_grad_by_freq_; }
  const auto& sparse() const noexcept { return sparse_; }
  const auto& _weight() const noexcept { return _weight_; }
  EmbeddingBagOptions(int64_t num_embeddings, int64_t embedding_dim)
      : num_embeddings_(num_embeddings), embedding_dim_(embedding_dim) {}
  EmbeddingBagOptions& mode(EmbeddingBagMode m) {
    mode_ = m;
    return *this;
  }
  // torch::kSum / torch::kMean
  EmbeddingBagOptions& mode(Reduction r);
  EmbeddingBagOptions& num_embeddings(int64_t v) {
    num_embeddings_ = v;
    return *this;
  }
  EmbeddingBagOptions& embedding_dim(int64_t v) {
    embedding_dim_ = v;
    return *this;
  }
  EmbeddingBagOptions& padding_idx(std::optional<int64_t> v) {
    padding_idx_ = v;
    return *this;
  }
  EmbeddingBagOptions& max_norm(std::optional<double> v) {
    max_norm_ = v;
    return *this;
  }
  EmbeddingBagOptions& norm_type(double p) {
    norm_type_ = p;
    return *this;
  }
  EmbeddingBagOptions& include_last_offset(bool b) {
    include_last_offset_ = b;
    return *this;
  }
  EmbeddingBagOptions& scale_grad_by_freq(bool s) {
    scale_grad_by_freq_ = s;
    return *this;
  }
  EmbeddingBagOptions& sparse(bool s) {  // not supported (an error names it)
    sparse_ = s;
    return *this;
  }
  EmbeddingBagOptions& _weight(Tensor w) {
    _weight_ = std::move(w);
    return *this;
  }
  int64_t num_embeddings_, embedding_dim_;
  EmbeddingBagMode mode_ = EmbeddingBagMode::Mean;
  std::optional<int64_t> padding_idx_;
  std::optional<double> max_norm_;
  double norm_type_ = 2.0;
  bool include_last_offset_ = false;
  bool scale_grad_by_freq_ = false;
  bool sparse_ = false;
  Tensor _weight_;
};
class EmbeddingBagImpl : public Cloneable<EmbeddingBagImpl> {
 public:
  EmbeddingBagImpl(int64_t num_embeddings, int64_t embedding_dim)
      : EmbeddingBagImpl(EmbeddingBagOptions(num_embeddings, embedding_dim)) {}
  explicit EmbeddingBagImpl(const EmbeddingBagOptions& o);
  EmbeddingBagImpl(const EmbeddingBagImpl& o) : EmbeddingBagImpl(o.options) {}
  // See F::embedding_bag for input, offsets and per_sample_weights.
  Tensor forward(const Tensor& input, const Tensor& offsets = {},
                 const Tensor& per_sample_weights = {});
  void pretty_print(std::ostream& os) const override;
  EmbeddingBagOptions options;
  Tensor& weight;  // registered slot (see LinearImpl)
};
struct EmbeddingBagFromPretrainedOptions {
  // Getters, as libtorch's options have: options.name().
  const auto& mode() const noexcept { return mode_; }
  BRASA_ARG(bool, freeze, true);
  BRASA_ARG(std::optional<double>, max_norm, std::nullopt);
  BRASA_ARG(double, norm_type, 2.0);
  BRASA_ARG(bool, scale_grad_by_freq, false);
  BRASA_ARG(bool, sparse, false);
  BRASA_ARG(bool, include_last_offset, false);
  BRASA_ARG(std::optional<int64_t>, padding_idx, std::nullopt);
  EmbeddingBagMode mode_ = EmbeddingBagMode::Mean;
  EmbeddingBagFromPretrainedOptions& mode(EmbeddingBagMode m) {
    mode_ = m;
    return *this;
  }
  // torch::kSum / torch::kMean
  EmbeddingBagFromPretrainedOptions& mode(Reduction r) {
    mode_ = EmbeddingBagOptions(1, 1).mode(r).mode_;
    return *this;
  }
};
class EmbeddingBag : public ModuleHolder<EmbeddingBagImpl> {
 public:
  using ModuleHolder<EmbeddingBagImpl>::ModuleHolder;
  static EmbeddingBag from_pretrained(const Tensor& embeddings,
                                      const EmbeddingBagFromPretrainedOptions& options = {});
};

}  // namespace brasa::nn
