#pragma once
// Optimizers with libtorch's shape: param groups with per-group options,
// zero_grad, step. Update rules follow PyTorch's (torch.optim) step for step.
#include <brasa/nn/ordered_dict.h>
#include <brasa/tensor/tensor.h>

#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

namespace brasa::optim {

struct OptimizerOptions {
  virtual ~OptimizerOptions() = default;
  virtual double get_lr() const = 0;
  virtual void set_lr(double lr) = 0;
  virtual std::unique_ptr<OptimizerOptions> clone() const = 0;
  // Calls fn(name, value) for every numeric option (flags as 0/1), by
  // reference: state_dict() reads them and load_state_dict() writes them.
  virtual void visit(const std::function<void(const char*, double&)>& fn) = 0;
};

class OptimizerParamGroup {
 public:
  OptimizerParamGroup(std::vector<Tensor> params) : params_(std::move(params)) {}
  OptimizerParamGroup(std::vector<Tensor> params, std::unique_ptr<OptimizerOptions> options)
      : params_(std::move(params)), options_(std::move(options)) {}
  OptimizerParamGroup(const OptimizerParamGroup& o)
      : params_(o.params_), options_(o.options_ ? o.options_->clone() : nullptr) {}
  OptimizerParamGroup(OptimizerParamGroup&&) = default;
  std::vector<Tensor>& params() { return params_; }
  const std::vector<Tensor>& params() const { return params_; }
  bool has_options() const { return options_ != nullptr; }
  OptimizerOptions& options() { return *options_; }
  const OptimizerOptions& options() const { return *options_; }
  void set_options(std::unique_ptr<OptimizerOptions> o) { options_ = std::move(o); }

 private:
  std::vector<Tensor> params_;
  std::unique_ptr<OptimizerOptions> options_;
};

// Per-parameter state: a step count and named buffers (momentum_buffer, exp_avg, ...).
struct ParamState {
  int64_t step = 0;
  std::unordered_map<std::string, Tensor> buffers;
};

class Optimizer {
 public:
  Optimizer(std::vector<OptimizerParamGroup> groups, std::unique_ptr<OptimizerOptions> defaults);
  virtual ~Optimizer() = default;
  Optimizer(const Optimizer&) = delete;
  Optimizer& operator=(const Optimizer&) = delete;

  // Runs one update; with a closure, re-evaluates the loss first and returns it.
  virtual Tensor step(std::function<Tensor()> closure = nullptr) = 0;
  void zero_grad(bool set_to_none = true);
  void add_param_group(const OptimizerParamGroup& group);
  std::vector<OptimizerParamGroup>& param_groups() { return groups_; }
  const std::vector<OptimizerParamGroup>& param_groups() const { return groups_; }
  const OptimizerOptions& defaults() const { return *defaults_; }
  std::unordered_map<TensorImpl*, ParamState>& state() { return state_; }
  ParamState& state_of(const Tensor& p) { return state_[p.unsafeGetTensorImpl()]; }
  // PyTorch's optimizer.state_dict() flattened to names, so that it saves
  // like a module's: "state.<i>.step" and "state.<i>.<buffer>" for the i-th
  // parameter counted across groups (PyTorch's numbering), and
  // "param_groups.<g>.<option>" (lr, momentum, betas.0, ...) as 0-dim tensors.
  OrderedDict<std::string, Tensor> state_dict() const;
  // Restores state and options; groups, parameter counts and buffer shapes
  // must match this optimizer's (a clear error names what differs).
  void load_state_dict(const OrderedDict<std::string, Tensor>& state);
  // Learning rates before any scheduler changed them (set by the first one).
  std::vector<double>& initial_lrs() { return initial_lrs_; }

 protected:
  // Adds the groups, refusing an empty parameter list (PyTorch's check).
  void add_param_groups(const std::vector<OptimizerParamGroup>& groups);
  std::vector<OptimizerParamGroup> groups_;
  std::unique_ptr<OptimizerOptions> defaults_;
  std::unordered_map<TensorImpl*, ParamState> state_;
  std::vector<double> initial_lrs_;
};

struct SGDOptions : OptimizerOptions {
  SGDOptions(double lr) : lr_(lr) {}
  SGDOptions& lr(double v) {
    lr_ = v;
    return *this;
  }
  SGDOptions& momentum(double v) {
    momentum_ = v;
    return *this;
  }
  SGDOptions& dampening(double v) {
    dampening_ = v;
    return *this;
  }
  SGDOptions& weight_decay(double v) {
    weight_decay_ = v;
    return *this;
  }
  SGDOptions& nesterov(bool v) {
    nesterov_ = v;
    return *this;
  }
  SGDOptions& maximize(bool v) {
    maximize_ = v;
    return *this;
  }
  double lr() const { return lr_; }
  double get_lr() const override { return lr_; }
  void set_lr(double v) override { lr_ = v; }
  std::unique_ptr<OptimizerOptions> clone() const override {
    return std::make_unique<SGDOptions>(*this);
  }
  void visit(const std::function<void(const char*, double&)>& fn) override;
  double lr_, momentum_ = 0, dampening_ = 0, weight_decay_ = 0;
  bool nesterov_ = false, maximize_ = false;
};

class SGD : public Optimizer {
 public:
  SGD(std::vector<Tensor> params, SGDOptions options);
  SGD(std::vector<OptimizerParamGroup> groups, SGDOptions options);
  Tensor step(std::function<Tensor()> closure = nullptr) override;
};

struct AdamOptions : OptimizerOptions {
  AdamOptions(double lr = 1e-3) : lr_(lr) {}
  AdamOptions& lr(double v) {
    lr_ = v;
    return *this;
  }
  AdamOptions& betas(std::tuple<double, double> b) {
    betas_ = b;
    return *this;
  }
  AdamOptions& eps(double v) {
    eps_ = v;
    return *this;
  }
  AdamOptions& weight_decay(double v) {
    weight_decay_ = v;
    return *this;
  }
  AdamOptions& amsgrad(bool v) {
    amsgrad_ = v;
    return *this;
  }
  AdamOptions& maximize(bool v) {
    maximize_ = v;
    return *this;
  }
  double get_lr() const override { return lr_; }
  void set_lr(double v) override { lr_ = v; }
  std::unique_ptr<OptimizerOptions> clone() const override {
    return std::make_unique<AdamOptions>(*this);
  }
  void visit(const std::function<void(const char*, double&)>& fn) override;
  double lr_;
  std::tuple<double, double> betas_{0.9, 0.999};
  double eps_ = 1e-8, weight_decay_ = 0;
  bool amsgrad_ = false, maximize_ = false;
};

// Adam; with decoupled = true it is AdamW (weight decay applied to the
// parameters, not the gradient).
class Adam : public Optimizer {
 public:
  Adam(std::vector<Tensor> params, AdamOptions options = AdamOptions());
  Adam(std::vector<OptimizerParamGroup> groups, AdamOptions options = AdamOptions());
  Tensor step(std::function<Tensor()> closure = nullptr) override;

 protected:
  bool decoupled_weight_decay_ = false;
};

struct AdamWOptions : AdamOptions {
  AdamWOptions(double lr = 1e-3) : AdamOptions(lr) { weight_decay_ = 1e-2; }
  // The setters return AdamWOptions, so that a chain stays AdamW's options.
  AdamWOptions& lr(double v) { return set(&AdamOptions::lr, v); }
  AdamWOptions& betas(std::tuple<double, double> v) { return set(&AdamOptions::betas, v); }
  AdamWOptions& eps(double v) { return set(&AdamOptions::eps, v); }
  AdamWOptions& weight_decay(double v) { return set(&AdamOptions::weight_decay, v); }
  AdamWOptions& amsgrad(bool v) { return set(&AdamOptions::amsgrad, v); }
  AdamWOptions& maximize(bool v) { return set(&AdamOptions::maximize, v); }
  std::unique_ptr<OptimizerOptions> clone() const override {
    return std::make_unique<AdamWOptions>(*this);
  }

 private:
  template <class V>
  AdamWOptions& set(AdamOptions& (AdamOptions::*setter)(V), V v) {
    (this->*setter)(v);
    return *this;
  }
};
class AdamW : public Adam {
 public:
  AdamW(std::vector<Tensor> params, AdamWOptions options = AdamWOptions());
};

struct RMSpropOptions : OptimizerOptions {
  RMSpropOptions(double lr = 1e-2) : lr_(lr) {}
  RMSpropOptions& lr(double v) {
    lr_ = v;
    return *this;
  }
  RMSpropOptions& alpha(double v) {
    alpha_ = v;
    return *this;
  }
  RMSpropOptions& eps(double v) {
    eps_ = v;
    return *this;
  }
  RMSpropOptions& weight_decay(double v) {
    weight_decay_ = v;
    return *this;
  }
  RMSpropOptions& momentum(double v) {
    momentum_ = v;
    return *this;
  }
  RMSpropOptions& centered(bool v) {
    centered_ = v;
    return *this;
  }
  double get_lr() const override { return lr_; }
  void set_lr(double v) override { lr_ = v; }
  std::unique_ptr<OptimizerOptions> clone() const override {
    return std::make_unique<RMSpropOptions>(*this);
  }
  void visit(const std::function<void(const char*, double&)>& fn) override;
  double lr_, alpha_ = 0.99, eps_ = 1e-8, weight_decay_ = 0, momentum_ = 0;
  bool centered_ = false;
};
class RMSprop : public Optimizer {
 public:
  RMSprop(std::vector<Tensor> params, RMSpropOptions options = RMSpropOptions());
  Tensor step(std::function<Tensor()> closure = nullptr) override;
};

struct AdagradOptions : OptimizerOptions {
  AdagradOptions(double lr = 1e-2) : lr_(lr) {}
  AdagradOptions& lr(double v) {
    lr_ = v;
    return *this;
  }
  AdagradOptions& lr_decay(double v) {
    lr_decay_ = v;
    return *this;
  }
  AdagradOptions& weight_decay(double v) {
    weight_decay_ = v;
    return *this;
  }
  AdagradOptions& initial_accumulator_value(double v) {
    initial_accumulator_value_ = v;
    return *this;
  }
  AdagradOptions& eps(double v) {
    eps_ = v;
    return *this;
  }
  double get_lr() const override { return lr_; }
  void set_lr(double v) override { lr_ = v; }
  std::unique_ptr<OptimizerOptions> clone() const override {
    return std::make_unique<AdagradOptions>(*this);
  }
  void visit(const std::function<void(const char*, double&)>& fn) override;
  double lr_, lr_decay_ = 0, weight_decay_ = 0, initial_accumulator_value_ = 0, eps_ = 1e-10;
};
class Adagrad : public Optimizer {
 public:
  Adagrad(std::vector<Tensor> params, AdagradOptions options = AdagradOptions());
  Tensor step(std::function<Tensor()> closure = nullptr) override;
};

}  // namespace brasa::optim
