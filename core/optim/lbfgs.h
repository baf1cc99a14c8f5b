#pragma once
// L-BFGS (torch::optim::LBFGS): a quasi-Newton method over all parameters
// as one flat vector, keeping the last history_size steps and gradient
// changes; step(closure) runs up to max_iter iterations, each evaluating the
// closure, optionally with a strong-Wolfe line search. Follows PyTorch's
// algorithm step for step (one parameter group).
#include <brasa/optim/optimizer.h>

#include <deque>
#include <optional>
#include <string>

namespace brasa::optim {

struct LBFGSOptions : OptimizerOptions {
  LBFGSOptions(double lr = 1) : lr_(lr) {}  // NOLINT: implicit, as libtorch's
  LBFGSOptions& lr(double v) {
    lr_ = v;
    return *this;
  }
  LBFGSOptions& max_iter(int64_t v) {
    max_iter_ = v;
    return *this;
  }
  // Closure evaluations per step (max_iter * 5 / 4 when not set).
  LBFGSOptions& max_eval(std::optional<int64_t> v) {
    max_eval_ = v;
    return *this;
  }
  LBFGSOptions& tolerance_grad(double v) {
    tolerance_grad_ = v;
    return *this;
  }
  LBFGSOptions& tolerance_change(double v) {
    tolerance_change_ = v;
    return *this;
  }
  LBFGSOptions& history_size(int64_t v) {
    history_size_ = v;
    return *this;
  }
  // "strong_wolfe", or none: a fixed step of lr.
  LBFGSOptions& line_search_fn(std::optional<std::string> v) {
    line_search_fn_ = std::move(v);
    return *this;
  }
  double get_lr() const override { return lr_; }
  void set_lr(double v) override { lr_ = v; }
  std::unique_ptr<OptimizerOptions> clone() const override {
    return std::make_unique<LBFGSOptions>(*this);
  }
  void visit(const std::function<void(const char*, double&)>& fn) override;
  double lr_;
  int64_t max_iter_ = 20;
  std::optional<int64_t> max_eval_;
  double tolerance_grad_ = 1e-7, tolerance_change_ = 1e-9;
  int64_t history_size_ = 100;
  std::optional<std::string> line_search_fn_;
};

class LBFGS : public Optimizer {
 public:
  LBFGS(std::vector<Tensor> params, LBFGSOptions options = LBFGSOptions());
  // The closure clears the gradients, computes the loss and calls backward;
  // returns the loss of its first evaluation. A closure is required.
  Tensor step(std::function<Tensor()> closure) override;
  int64_t func_evals() const { return func_evals_; }
  int64_t n_iter() const { return n_iter_; }

 private:
  Tensor flat_grad() const;
  void add_to_params(double t, const Tensor& d);  // params += t * d
  void set_params(const std::vector<Tensor>& values);
  // The loss and flat gradient at params + t * d (params restored after).
  std::pair<double, Tensor> evaluate_at(const std::function<Tensor()>& closure,
                                        const std::vector<Tensor>& start, double t,
                                        const Tensor& d);
  // (loss, flat gradient, step) found by a strong-Wolfe line search from
  // step t along d; adds the closure evaluations to `evals`.
  std::tuple<double, Tensor, double> strong_wolfe(const std::function<Tensor()>& closure, double t,
                                                  const Tensor& d, double loss, const Tensor& grad,
                                                  double gtd, int64_t& evals);

  // State carried from step to step.
  Tensor d_, prev_flat_grad_;
  double t_ = 0, h_diag_ = 1, prev_loss_ = 0;
  std::deque<Tensor> old_dirs_, old_steps_;
  std::deque<double> ro_;
  int64_t func_evals_ = 0, n_iter_ = 0;
};

}  // namespace brasa::optim
