#pragma once
// The layers of the main job and their holders: Linear, Conv2d, MaxPool2d,
// ReLU, Dropout, Flatten; the containers (Sequential, ModuleList, ModuleDict)
// come with it.
#include <brasa/nn/containers.h>
#include <brasa/nn/conv3d.h>
#include <brasa/nn/functional.h>
#include <brasa/nn/module.h>
#include <brasa/nn/module_options.h>
#include <brasa/nn/embedding_modules.h>
#include <brasa/nn/pooling_modules.h>
#include <brasa/ops/conv.h>

#include <functional>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

namespace brasa::nn {

struct LinearOptions {
  // Getters, as libtorch's options have: options.name().
  const auto& in_features() const noexcept { return in_features_; }
  const auto& out_features() const noexcept { return out_features_; }
  const auto& bias() const noexcept { return bias_; }
  LinearOptions(int64_t in, int64_t out) : in_features_(in), out_features_(out) {}
  LinearOptions& in_features(int64_t v) {
    in_features_ = v;
    return *this;
  }
  LinearOptions& out_features(int64_t v) {
    out_features_ = v;
    return *this;
  }
  LinearOptions& bias(bool b) {
    bias_ = b;
    return *this;
  }
  int64_t in_features_, out_features_;
  bool bias_ = true;
};
class LinearImpl : public Cloneable<LinearImpl> {
 public:
  LinearImpl(int64_t in, int64_t out) : LinearImpl(LinearOptions(in, out)) {}
  explicit LinearImpl(const LinearOptions& o);
  // Copies build their own parameters (the members refer to registry slots).
  LinearImpl(const LinearImpl& o) : LinearImpl(o.options) {}
  void reset_parameters();
  Tensor forward(const Tensor& x);
  void pretty_print(std::ostream& os) const override;
  LinearOptions options;
  // References to the registered slots: fc->weight = t replaces what
  // parameters() and state_dict() see, so the registry never goes stale.
  Tensor& weight;
  Tensor& bias;
};
BRASA_MODULE(Linear);

struct Conv2dOptions {
  // Getters, as libtorch's options have: options.name().
  const auto& in_channels() const noexcept { return in_channels_; }
  const auto& out_channels() const noexcept { return out_channels_; }
  const auto& kernel_size() const noexcept { return kernel_size_; }
  const auto& stride() const noexcept { return stride_; }
  const auto& padding() const noexcept { return padding_; }
  const auto& dilation() const noexcept { return dilation_; }
  const auto& named_padding() const noexcept { return named_padding_; }
  const auto& groups() const noexcept { return groups_; }
  const auto& bias() const noexcept { return bias_; }
  const auto& padding_mode() const noexcept { return padding_mode_; }
  Conv2dOptions(int64_t in, int64_t out, int64_t kernel)
      : Conv2dOptions(in, out, {kernel, kernel}) {}
  Conv2dOptions(int64_t in, int64_t out, std::vector<int64_t> kernel)
      : in_channels_(in), out_channels_(out), kernel_size_(expand(std::move(kernel))) {}
  Conv2dOptions& in_channels(int64_t v) {
    in_channels_ = v;
    return *this;
  }
  Conv2dOptions& out_channels(int64_t v) {
    out_channels_ = v;
    return *this;
  }
  Conv2dOptions& kernel_size(std::vector<int64_t> v) {
    kernel_size_ = expand(std::move(v));
    return *this;
  }
  Conv2dOptions& kernel_size(int64_t k) {
    kernel_size_ = {k, k};
    return *this;
  }
  Conv2dOptions& stride(std::vector<int64_t> s) {
    stride_ = expand(s);
    return *this;
  }
  Conv2dOptions& stride(int64_t s) {
    stride_ = {s, s};
    return *this;
  }
  Conv2dOptions& padding(int64_t p) {
    padding_ = {p, p};
    return *this;
  }
  Conv2dOptions& padding(std::vector<int64_t> p) {
    padding_ = expand(p);
    return *this;
  }
  // torch::kSame (output as large as the input; stride 1) or torch::kValid.
  Conv2dOptions& padding(ConvPadding p) {
    named_padding_ = p;
    return *this;
  }
  Conv2dOptions& dilation(int64_t d) {
    dilation_ = {d, d};
    return *this;
  }
  Conv2dOptions& dilation(std::vector<int64_t> d) {
    dilation_ = expand(d);
    return *this;
  }
  Conv2dOptions& groups(int64_t g) {
    groups_ = g;
    return *this;
  }
  Conv2dOptions& bias(bool b) {
    bias_ = b;
    return *this;
  }
  // torch::kZeros (default), kReflect, kReplicate or kCircular.
  Conv2dOptions& padding_mode(PaddingMode m) {
    padding_mode_ = m;
    return *this;
  }
  static std::vector<int64_t> expand(std::vector<int64_t> v) {
    return v.size() == 1 ? std::vector<int64_t>{v[0], v[0]} : v;
  }
  int64_t in_channels_, out_channels_;
  std::vector<int64_t> kernel_size_, stride_{1, 1}, padding_{0, 0}, dilation_{1, 1};
  std::optional<ConvPadding> named_padding_;
  int64_t groups_ = 1;
  bool bias_ = true;
  PaddingMode padding_mode_ = PaddingMode::Zeros;
};
class Conv2dImpl : public Cloneable<Conv2dImpl> {
 public:
  Conv2dImpl(int64_t in, int64_t out, int64_t kernel)
      : Conv2dImpl(Conv2dOptions(in, out, kernel)) {}
  explicit Conv2dImpl(const Conv2dOptions& o);
  Conv2dImpl(const Conv2dImpl& o) : Conv2dImpl(o.options) {}
  void reset_parameters();
  Tensor forward(const Tensor& x);
  void pretty_print(std::ostream& os) const override;
  Conv2dOptions options;
  Tensor& weight;  // registered slots (see LinearImpl)
  Tensor& bias;
};
BRASA_MODULE(Conv2d);

struct ConvTranspose2dOptions : Conv2dOptions {
  ConvTranspose2dOptions(int64_t in, int64_t out, int64_t kernel)
      : Conv2dOptions(in, out, kernel) {}
  ConvTranspose2dOptions& output_padding(int64_t p) {
    output_padding_ = {p, p};
    return *this;
  }
  ConvTranspose2dOptions& output_padding(std::vector<int64_t> p) {
    output_padding_ = expand(std::move(p));
    return *this;
  }
  // The inherited setters, returning this type so that calls chain.
  ConvTranspose2dOptions& stride(int64_t s) {
    Conv2dOptions::stride(s);
    return *this;
  }
  ConvTranspose2dOptions& stride(std::vector<int64_t> s) {
    Conv2dOptions::stride(std::move(s));
    return *this;
  }
  ConvTranspose2dOptions& padding(int64_t p) {
    Conv2dOptions::padding(p);
    return *this;
  }
  ConvTranspose2dOptions& padding(std::vector<int64_t> p) {
    Conv2dOptions::padding(std::move(p));
    return *this;
  }
  ConvTranspose2dOptions& dilation(int64_t d) {
    Conv2dOptions::dilation(d);
    return *this;
  }
  ConvTranspose2dOptions& dilation(std::vector<int64_t> d) {
    Conv2dOptions::dilation(std::move(d));
    return *this;
  }
  ConvTranspose2dOptions& groups(int64_t g) {
    Conv2dOptions::groups(g);
    return *this;
  }
  ConvTranspose2dOptions& bias(bool b) {
    Conv2dOptions::bias(b);
    return *this;
  }
  ConvTranspose2dOptions& padding_mode(PaddingMode m) {
    Conv2dOptions::padding_mode(m);
    return *this;
  }
  // Getters, as libtorch's options have (the setters above hide Conv*Options').
  const auto& stride() const noexcept { return stride_; }
  const auto& padding() const noexcept { return padding_; }
  const auto& output_padding() const noexcept { return output_padding_; }
  const auto& dilation() const noexcept { return dilation_; }
  const auto& groups() const noexcept { return groups_; }
  const auto& bias() const noexcept { return bias_; }
  const auto& padding_mode() const noexcept { return padding_mode_; }
  std::vector<int64_t> output_padding_{0, 0};
};
// Weight [in, out / groups, kh, kw], as PyTorch.
class ConvTranspose2dImpl : public Cloneable<ConvTranspose2dImpl> {
 public:
  ConvTranspose2dImpl(int64_t in, int64_t out, int64_t kernel)
      : ConvTranspose2dImpl(ConvTranspose2dOptions(in, out, kernel)) {}
  explicit ConvTranspose2dImpl(const ConvTranspose2dOptions& o);
  ConvTranspose2dImpl(const ConvTranspose2dImpl& o) : ConvTranspose2dImpl(o.options) {}
  Tensor forward(const Tensor& x);
  void pretty_print(std::ostream& os) const override;
  ConvTranspose2dOptions options;
  Tensor& weight;  // registered slots (see LinearImpl)
  Tensor& bias;
};
BRASA_MODULE(ConvTranspose2d);

class ReLUImpl : public Cloneable<ReLUImpl> {
 public:
  explicit ReLUImpl(const ReLUOptions& o = {}) : Cloneable("ReLU"), inplace_(o.inplace_) {}
  Tensor forward(const Tensor& x);
  void pretty_print(std::ostream& os) const override;
  bool inplace_;
};
BRASA_MODULE(ReLU);

class DropoutImpl : public Cloneable<DropoutImpl> {
 public:
  explicit DropoutImpl(const DropoutOptions& o = {})
      : Cloneable("Dropout"), p(o.p_), inplace(o.inplace_) {}
  Tensor forward(const Tensor& x);
  void pretty_print(std::ostream& os) const override;
  double p;
  bool inplace;
};
BRASA_MODULE(Dropout);

class FlattenImpl : public Cloneable<FlattenImpl> {
 public:
  explicit FlattenImpl(int64_t start_dim = 1, int64_t end_dim = -1)
      : Cloneable("Flatten"), start_dim(start_dim), end_dim(end_dim) {}
  explicit FlattenImpl(const FlattenOptions& o) : FlattenImpl(o.start_dim_, o.end_dim_) {}
  Tensor forward(const Tensor& x);
  void pretty_print(std::ostream& os) const override;
  int64_t start_dim, end_dim;
};
BRASA_MODULE(Flatten);

// Activations without state: forward applies one nn::functional call.
// `args` is what libtorch prints between the parentheses ("negative_slope=0.01").
// With `inplace`, forward writes the result into its input and returns it.
class ActivationImpl : public Module {
 public:
  ActivationImpl(std::string name, std::function<Tensor(const Tensor&)> fn, std::string args = "",
                 bool inplace = false)
      : Module(std::move(name)), fn_(std::move(fn)), args_(std::move(args)), inplace_(inplace) {}
  Tensor forward(const Tensor& x);
  void pretty_print(std::ostream& os) const override;

 private:
  std::function<Tensor(const Tensor&)> fn_;
  std::string args_;
  bool inplace_;
};
class IdentityImpl : public Cloneable<IdentityImpl, ActivationImpl> {
 public:
  IdentityImpl();
};
BRASA_MODULE(Identity);
class SigmoidImpl : public Cloneable<SigmoidImpl, ActivationImpl> {
 public:
  SigmoidImpl();
};
BRASA_MODULE(Sigmoid);
class TanhImpl : public Cloneable<TanhImpl, ActivationImpl> {
 public:
  TanhImpl();
};
BRASA_MODULE(Tanh);
class GELUImpl : public Cloneable<GELUImpl, ActivationImpl> {
 public:
  explicit GELUImpl(std::string approximate = "none");
  explicit GELUImpl(const GELUOptions& o) : GELUImpl(o.approximate_) {}
};
BRASA_MODULE(GELU);
class SiLUImpl : public Cloneable<SiLUImpl, ActivationImpl> {
 public:
  SiLUImpl();
};
BRASA_MODULE(SiLU);
class MishImpl : public Cloneable<MishImpl, ActivationImpl> {
 public:
  MishImpl();
};
BRASA_MODULE(Mish);
class SELUImpl : public Cloneable<SELUImpl, ActivationImpl> {
 public:
  explicit SELUImpl(const SELUOptions& o = {});
};
BRASA_MODULE(SELU);
class ReLU6Impl : public Cloneable<ReLU6Impl, ActivationImpl> {
 public:
  explicit ReLU6Impl(const ReLU6Options& o = {});
};
BRASA_MODULE(ReLU6);
class LeakyReLUImpl : public Cloneable<LeakyReLUImpl, ActivationImpl> {
 public:
  explicit LeakyReLUImpl(double negative_slope = 0.01)
      : LeakyReLUImpl(LeakyReLUOptions().negative_slope(negative_slope)) {}
  explicit LeakyReLUImpl(const LeakyReLUOptions& o);
};
BRASA_MODULE(LeakyReLU);
class ELUImpl : public Cloneable<ELUImpl, ActivationImpl> {
 public:
  explicit ELUImpl(double alpha = 1.0) : ELUImpl(ELUOptions().alpha(alpha)) {}
  explicit ELUImpl(const ELUOptions& o);
};
BRASA_MODULE(ELU);
class SoftplusImpl : public Cloneable<SoftplusImpl, ActivationImpl> {
 public:
  explicit SoftplusImpl(double beta = 1.0, double threshold = 20.0);
  explicit SoftplusImpl(const SoftplusOptions& o) : SoftplusImpl(o.beta_, o.threshold_) {}
};
BRASA_MODULE(Softplus);
class HardtanhImpl : public Cloneable<HardtanhImpl, ActivationImpl> {
 public:
  explicit HardtanhImpl(double min_val = -1.0, double max_val = 1.0)
      : HardtanhImpl(HardtanhOptions().min_val(min_val).max_val(max_val)) {}
  explicit HardtanhImpl(const HardtanhOptions& o);
};
BRASA_MODULE(Hardtanh);
class SoftmaxImpl : public Cloneable<SoftmaxImpl, ActivationImpl> {
 public:
  explicit SoftmaxImpl(int64_t dim);
  explicit SoftmaxImpl(const SoftmaxOptions& o) : SoftmaxImpl(o.dim_) {}
};
BRASA_MODULE(Softmax);
class LogSoftmaxImpl : public Cloneable<LogSoftmaxImpl, ActivationImpl> {
 public:
  explicit LogSoftmaxImpl(int64_t dim);
  explicit LogSoftmaxImpl(const LogSoftmaxOptions& o) : LogSoftmaxImpl(o.dim_) {}
};
BRASA_MODULE(LogSoftmax);

class Dropout2dImpl : public Cloneable<Dropout2dImpl> {
 public:
  explicit Dropout2dImpl(const Dropout2dOptions& o = {})
      : Cloneable("Dropout2d"), p(o.p_), inplace(o.inplace_) {}
  Tensor forward(const Tensor& x);
  void pretty_print(std::ostream& os) const override;
  double p;
  bool inplace;
};
BRASA_MODULE(Dropout2d);

struct BatchNormOptions {
  // Getters, as libtorch's options have: options.name().
  const auto& num_features() const noexcept { return num_features_; }
  const auto& eps() const noexcept { return eps_; }
  const auto& momentum() const noexcept { return momentum_; }
  const auto& affine() const noexcept { return affine_; }
  const auto& track_running_stats() const noexcept { return track_running_stats_; }
  BatchNormOptions(int64_t num_features) : num_features_(num_features) {}
  BatchNormOptions& num_features(int64_t v) {
    num_features_ = v;
    return *this;
  }
  BatchNormOptions& eps(double v) {
    eps_ = v;
    return *this;
  }
  BatchNormOptions& momentum(double v) {
    momentum_ = v;
    return *this;
  }
  BatchNormOptions& affine(bool v) {
    affine_ = v;
    return *this;
  }
  BatchNormOptions& track_running_stats(bool v) {
    track_running_stats_ = v;
    return *this;
  }
  int64_t num_features_;
  double eps_ = 1e-5, momentum_ = 0.1;
  bool affine_ = true, track_running_stats_ = true;
};
// BatchNorm over dim 1 of [N, C] / [N, C, L] (1d) or [N, C, H, W] (2d).
class BatchNormImpl : public Module {
 public:
  BatchNormImpl(const BatchNormOptions& o, int64_t input_dims, std::string name);
  BatchNormImpl(const BatchNormImpl& o) : BatchNormImpl(o.options, o.input_dims_, o.name()) {
    sync_forward = o.sync_forward;
  }
  Tensor forward(const Tensor& x);
  void reset_running_stats();
  void pretty_print(std::ostream& os) const override;
  BatchNormOptions options;
  Tensor& weight;  // registered slots (see LinearImpl)
  Tensor& bias;
  Tensor& running_mean;
  Tensor& running_var;
  Tensor& num_batches_tracked;
  // When set, training-mode forwards call it instead: batch statistics over
  // more than this process (SyncBatchNorm, convert_sync_batchnorm).
  std::function<Tensor(BatchNormImpl&, const Tensor&)> sync_forward;

 protected:
  // 1: [N, C] or [N, C, L]; 2: [N, C, H, W]; 3: [N, C, D, H, W]; 0: any [N, C, ...].
  int64_t input_dims_;
};
class BatchNorm1dImpl : public Cloneable<BatchNorm1dImpl, BatchNormImpl> {
 public:
  BatchNorm1dImpl(const BatchNormOptions& o) : Cloneable(o, 1, "BatchNorm1d") {}
  BatchNorm1dImpl(int64_t n) : BatchNorm1dImpl(BatchNormOptions(n)) {}
};
BRASA_MODULE(BatchNorm1d);
class BatchNorm2dImpl : public Cloneable<BatchNorm2dImpl, BatchNormImpl> {
 public:
  BatchNorm2dImpl(const BatchNormOptions& o) : Cloneable(o, 2, "BatchNorm2d") {}
  BatchNorm2dImpl(int64_t n) : BatchNorm2dImpl(BatchNormOptions(n)) {}
};
BRASA_MODULE(BatchNorm2d);
using BatchNorm1dOptions = BatchNormOptions;
using BatchNorm2dOptions = BatchNormOptions;

class LayerNormImpl : public Cloneable<LayerNormImpl> {
 public:
  explicit LayerNormImpl(std::vector<int64_t> normalized_shape, double eps = 1e-5,
                         bool elementwise_affine = true);
  explicit LayerNormImpl(const LayerNormOptions& o)
      : LayerNormImpl(o.normalized_shape_, o.eps_, o.elementwise_affine_) {}
  LayerNormImpl(const LayerNormImpl& o)
      : LayerNormImpl(o.normalized_shape, o.eps, o.weight.defined()) {}
  Tensor forward(const Tensor& x);
  void pretty_print(std::ostream& os) const override;
  std::vector<int64_t> normalized_shape;
  double eps;
  Tensor& weight;  // registered slots (see LinearImpl)
  Tensor& bias;
};
BRASA_MODULE(LayerNorm);

class GroupNormImpl : public Cloneable<GroupNormImpl> {
 public:
  GroupNormImpl(int64_t num_groups, int64_t num_channels, double eps = 1e-5, bool affine = true);
  explicit GroupNormImpl(const GroupNormOptions& o)
      : GroupNormImpl(o.num_groups_, o.num_channels_, o.eps_, o.affine_) {}
  GroupNormImpl(const GroupNormImpl& o)
      : GroupNormImpl(o.num_groups, o.num_channels, o.eps, o.weight.defined()) {}
  Tensor forward(const Tensor& x);
  void pretty_print(std::ostream& os) const override;
  int64_t num_groups, num_channels;
  double eps;
  Tensor& weight;  // registered slots (see LinearImpl)
  Tensor& bias;
};
BRASA_MODULE(GroupNorm);

class UnflattenImpl : public Cloneable<UnflattenImpl> {
 public:
  UnflattenImpl(int64_t dim, std::vector<int64_t> sizes)
      : Cloneable("Unflatten"), dim(dim), sizes(std::move(sizes)) {}
  explicit UnflattenImpl(const UnflattenOptions& o) : UnflattenImpl(o.dim_, o.sizes_) {
    BRASA_CHECK(o.dimname_.empty() && o.namedshape_.empty(), "Unflatten: dimname \"", o.dimname_,
                "\" and a namedshape are for named tensors, which Brasa does not have; give dim "
                "and sizes");
  }
  Tensor forward(const Tensor& x) { return x.unflatten(dim, sizes); }
  int64_t dim;
  void pretty_print(std::ostream& os) const override;
  std::vector<int64_t> sizes;
};
BRASA_MODULE(Unflatten);

struct Conv1dOptions {
  // Getters, as libtorch's options have: options.name().
  const auto& in_channels() const noexcept { return in_channels_; }
  const auto& out_channels() const noexcept { return out_channels_; }
  const auto& kernel_size() const noexcept { return kernel_size_; }
  const auto& stride() const noexcept { return stride_; }
  const auto& padding() const noexcept { return padding_; }
  const auto& dilation() const noexcept { return dilation_; }
  const auto& groups() const noexcept { return groups_; }
  const auto& named_padding() const noexcept { return named_padding_; }
  const auto& bias() const noexcept { return bias_; }
  const auto& padding_mode() const noexcept { return padding_mode_; }
  Conv1dOptions(int64_t in, int64_t out, int64_t kernel)
      : in_channels_(in), out_channels_(out), kernel_size_(kernel) {}
  Conv1dOptions& in_channels(int64_t v) {
    in_channels_ = v;
    return *this;
  }
  Conv1dOptions& out_channels(int64_t v) {
    out_channels_ = v;
    return *this;
  }
  Conv1dOptions& kernel_size(int64_t v) {
    kernel_size_ = v;
    return *this;
  }
  Conv1dOptions& stride(int64_t s) {
    stride_ = s;
    return *this;
  }
  Conv1dOptions& padding(int64_t p) {
    padding_ = p;
    return *this;
  }
  // torch::kSame (output as long as the input; stride 1) or torch::kValid.
  Conv1dOptions& padding(ConvPadding p) {
    named_padding_ = p;
    return *this;
  }
  Conv1dOptions& dilation(int64_t d) {
    dilation_ = d;
    return *this;
  }
  Conv1dOptions& groups(int64_t g) {
    groups_ = g;
    return *this;
  }
  Conv1dOptions& bias(bool b) {
    bias_ = b;
    return *this;
  }
  // torch::kZeros (default), kReflect, kReplicate or kCircular.
  Conv1dOptions& padding_mode(PaddingMode m) {
    padding_mode_ = m;
    return *this;
  }
  int64_t in_channels_, out_channels_, kernel_size_, stride_ = 1, padding_ = 0, dilation_ = 1,
                                                     groups_ = 1;
  std::optional<ConvPadding> named_padding_;
  bool bias_ = true;
  PaddingMode padding_mode_ = PaddingMode::Zeros;
};
class Conv1dImpl : public Cloneable<Conv1dImpl> {
 public:
  Conv1dImpl(int64_t in, int64_t out, int64_t kernel)
      : Conv1dImpl(Conv1dOptions(in, out, kernel)) {}
  explicit Conv1dImpl(const Conv1dOptions& o);
  Conv1dImpl(const Conv1dImpl& o) : Conv1dImpl(o.options) {}
  Tensor forward(const Tensor& x);
  void pretty_print(std::ostream& os) const override;
  Conv1dOptions options;
  Tensor& weight;  // registered slots (see LinearImpl)
  Tensor& bias;
};
BRASA_MODULE(Conv1d);

struct ConvTranspose1dOptions {
  // Getters, as libtorch's options have: options.name().
  const auto& in_channels() const noexcept { return in_channels_; }
  const auto& out_channels() const noexcept { return out_channels_; }
  const auto& kernel_size() const noexcept { return kernel_size_; }
  const auto& stride() const noexcept { return stride_; }
  const auto& padding() const noexcept { return padding_; }
  const auto& output_padding() const noexcept { return output_padding_; }
  const auto& dilation() const noexcept { return dilation_; }
  const auto& groups() const noexcept { return groups_; }
  const auto& bias() const noexcept { return bias_; }
  const auto& padding_mode() const noexcept { return padding_mode_; }
  ConvTranspose1dOptions(int64_t in, int64_t out, int64_t kernel)
      : in_channels_(in), out_channels_(out), kernel_size_(kernel) {}
  ConvTranspose1dOptions& in_channels(int64_t v) {
    in_channels_ = v;
    return *this;
  }
  ConvTranspose1dOptions& out_channels(int64_t v) {
    out_channels_ = v;
    return *this;
  }
  ConvTranspose1dOptions& kernel_size(int64_t v) {
    kernel_size_ = v;
    return *this;
  }
  // Only torch::kZeros is supported, as in PyTorch (the module says so).
  ConvTranspose1dOptions& padding_mode(PaddingMode m) {
    padding_mode_ = m;
    return *this;
  }
  ConvTranspose1dOptions& stride(int64_t s) {
    stride_ = s;
    return *this;
  }
  ConvTranspose1dOptions& padding(int64_t p) {
    padding_ = p;
    return *this;
  }
  ConvTranspose1dOptions& output_padding(int64_t p) {
    output_padding_ = p;
    return *this;
  }
  ConvTranspose1dOptions& dilation(int64_t d) {
    dilation_ = d;
    return *this;
  }
  ConvTranspose1dOptions& groups(int64_t g) {
    groups_ = g;
    return *this;
  }
  ConvTranspose1dOptions& bias(bool b) {
    bias_ = b;
    return *this;
  }
  int64_t in_channels_, out_channels_, kernel_size_, stride_ = 1, padding_ = 0, output_padding_ = 0,
                                                     dilation_ = 1, groups_ = 1;
  bool bias_ = true;
  PaddingMode padding_mode_ = PaddingMode::Zeros;
};
class ConvTranspose1dImpl : public Cloneable<ConvTranspose1dImpl> {
 public:
  ConvTranspose1dImpl(int64_t in, int64_t out, int64_t kernel)
      : ConvTranspose1dImpl(ConvTranspose1dOptions(in, out, kernel)) {}
  explicit ConvTranspose1dImpl(const ConvTranspose1dOptions& o);
  ConvTranspose1dImpl(const ConvTranspose1dImpl& o) : ConvTranspose1dImpl(o.options) {}
  Tensor forward(const Tensor& x);
  void pretty_print(std::ostream& os) const override;
  ConvTranspose1dOptions options;
  Tensor& weight;  // [in, out / groups, k]; registered slots (see LinearImpl)
  Tensor& bias;
};
BRASA_MODULE(ConvTranspose1d);

// PReLU: max(0, x) + a * min(0, x) with a learned slope per channel (or one).
class PReLUImpl : public Cloneable<PReLUImpl> {
 public:
  explicit PReLUImpl(int64_t num_parameters = 1, double init = 0.25);
  explicit PReLUImpl(const PReLUOptions& o) : PReLUImpl(o.num_parameters_, o.init_) {}
  PReLUImpl(const PReLUImpl& o) : PReLUImpl(o.weight.numel()) {}
  Tensor forward(const Tensor& x);
  void pretty_print(std::ostream& os) const override;
  Tensor& weight;
};
BRASA_MODULE(PReLU);

// y = x1^T A x2 + b for each output feature.
class BilinearImpl : public Cloneable<BilinearImpl> {
 public:
  BilinearImpl(int64_t in1, int64_t in2, int64_t out, bool bias = true);
  explicit BilinearImpl(const BilinearOptions& o)
      : BilinearImpl(o.in1_features_, o.in2_features_, o.out_features_, o.bias_) {}
  BilinearImpl(const BilinearImpl& o)
      : BilinearImpl(o.weight.size(1), o.weight.size(2), o.weight.size(0), o.bias.defined()) {}
  Tensor forward(const Tensor& x1, const Tensor& x2);
  void pretty_print(std::ostream& os) const override;
  Tensor& weight;  // [out, in1, in2]
  Tensor& bias;
};
BRASA_MODULE(Bilinear);

// Wraps a function as a module (for Sequential).
class FunctionalImpl : public Cloneable<FunctionalImpl> {
 public:
  explicit FunctionalImpl(std::function<Tensor(const Tensor&)> fn)
      : Cloneable("Functional"), fn_(std::move(fn)) {}
  // Functional(torch::leaky_relu, 0.2): fn(input, args...), the arguments bound here.
  template <class Fn, class Arg, class... Args>
  FunctionalImpl(Fn fn, Arg arg, Args... args)
      : FunctionalImpl(std::function<Tensor(const Tensor&)>(
            [fn, arg, args...](const Tensor& x) { return fn(x, arg, args...); })) {}
  Tensor forward(const Tensor& x) { return fn_(x); }

 private:
  std::function<Tensor(const Tensor&)> fn_;
};
BRASA_MODULE(Functional);

// libtorch's templated spellings of the convolution options: ConvOptions<2>
// is Conv2dOptions, ConvTransposeOptions<3> is ConvTranspose3dOptions.
// ConvNdOptions<D> (libtorch's common base of both) names ConvOptions<D>.
namespace detail {
template <size_t D>
struct ConvOptionsOf;
template <>
struct ConvOptionsOf<1> {
  using conv = Conv1dOptions;
  using transpose = ConvTranspose1dOptions;
};
template <>
struct ConvOptionsOf<2> {
  using conv = Conv2dOptions;
  using transpose = ConvTranspose2dOptions;
};
template <>
struct ConvOptionsOf<3> {
  using conv = Conv3dOptions;
  using transpose = ConvTranspose3dOptions;
};
}  // namespace detail
template <size_t D>
using ConvOptions = typename detail::ConvOptionsOf<D>::conv;
template <size_t D>
using ConvNdOptions = ConvOptions<D>;
template <size_t D>
using ConvTransposeOptions = typename detail::ConvOptionsOf<D>::transpose;

}  // namespace brasa::nn

// The sequence layers (attention, transformer encoder, LSTM, GRU) build on
// the layers above; they live in a header of their own.
#include <brasa/nn/sequence_modules.h>
