#include <brasa/autograd/grad_mode.h>
#include <brasa/autograd/variable.h>
#include <brasa/ops/binary.h>
#include <brasa/ops/copy.h>
#include <brasa/ops/factory.h>
#include <brasa/ops/kernel_table.h>
#include <brasa/ops/kernels/optim.h>
#include <brasa/ops/unary.h>
#include <brasa/optim/optimizer.h>

#include <cmath>

namespace brasa::optim {

Optimizer::Optimizer(std::vector<OptimizerParamGroup> groups,
                     std::unique_ptr<OptimizerOptions> defaults)
    : defaults_(std::move(defaults)) {
  // (SGD and Adam pass no groups here: they check their options first.)
  if (!groups.empty()) add_param_groups(groups);
}

void Optimizer::add_param_groups(const std::vector<OptimizerParamGroup>& groups) {
  size_t count = 0;
  for (const auto& g : groups) count += g.params().size();
  // PyTorch's check: an optimizer of nothing is a mistake (a model whose
  // parameters were never registered, an exhausted generator).
  BRASA_CHECK(count > 0, "optimizer got an empty parameter list");
  for (const auto& g : groups) add_param_group(g);
}

void Optimizer::add_param_group(const OptimizerParamGroup& group) {
  OptimizerParamGroup g(group);
  if (!g.has_options()) g.set_options(defaults_->clone());
  for (size_t i = 0; i < g.params().size(); ++i) {
    const Tensor& p = g.params()[i];
    BRASA_CHECK(p.defined() && p.is_leaf(), "optimizer: can't optimize a non-leaf Tensor");
    for (size_t j = 0; j < i; ++j)
      BRASA_CHECK(!g.params()[j].is_same(p),
                  "optimizer: a parameter group contains the same parameter twice");
    for (const auto& other : groups_)
      for (const auto& q : other.params())
        BRASA_CHECK(!q.is_same(p),
                    "optimizer: some parameters appear in more than one parameter group");
  }
  groups_.push_back(std::move(g));
}

void Optimizer::zero_grad(bool set_to_none) {
  for (auto& g : groups_)
    for (auto& p : g.params()) autograd::clear_grad(p, set_to_none);
}

namespace {
// Re-evaluates the loss (with grad on) when the caller passes a closure.
Tensor run_closure(const std::function<Tensor()>& closure) {
  if (!closure) return Tensor();
  AutoGradMode on(true);
  return closure();
}
}  // namespace

// ---- SGD ----
SGD::SGD(std::vector<Tensor> params, SGDOptions options)
    : SGD(std::vector<OptimizerParamGroup>{OptimizerParamGroup(std::move(params))},
          std::move(options)) {}
SGD::SGD(std::vector<OptimizerParamGroup> groups, SGDOptions options)
    : Optimizer({}, std::make_unique<SGDOptions>(options)) {
  BRASA_CHECK(options.lr_ >= 0, "SGD: invalid learning rate: ", options.lr_);
  BRASA_CHECK(options.momentum_ >= 0, "SGD: invalid momentum value: ", options.momentum_);
  BRASA_CHECK(options.weight_decay_ >= 0,
              "SGD: invalid weight_decay value: ", options.weight_decay_);
  BRASA_CHECK(!options.nesterov_ || (options.momentum_ > 0 && options.dampening_ == 0),
              "SGD: nesterov momentum requires a momentum and zero dampening");
  add_param_groups(groups);
}

// Whether `p` (with `grad` and its state buffers) can join a device's fused
// step: the device has one, and every tensor is contiguous, float32 or
// float64, of p's dtype and on p's device (`device`, that of the list).
template <class Kernel>
static bool fusable(const Tensor& p, const Tensor& grad, const std::vector<Tensor>& buffers,
                    const std::vector<Tensor>& list) {
  if (!has_kernel<Kernel>(p.device()) || !(p.dtype() == kFloat || p.dtype() == kDouble))
    return false;
  if (!list.empty() && list[0].device() != p.device()) return false;
  for (const Tensor* t : {&p, &grad})
    if (!t->is_contiguous() || t->dtype() != p.dtype() || t->device() != p.device()) return false;
  for (const Tensor& b : buffers)
    if (!b.is_contiguous() || b.dtype() != p.dtype() || b.device() != p.device()) return false;
  return true;
}

Tensor SGD::step(std::function<Tensor()> closure) {
  Tensor loss = run_closure(closure);
  NoGradGuard ng;
  for (auto& group : groups_) {
    const auto& o = static_cast<const SGDOptions&>(group.options());
    // Parameters a device updates in a few launches for them all.
    std::vector<Tensor> fused_params, fused_grads, fused_bufs;
    for (auto& p : group.params()) {
      const Tensor& grad = p.grad();
      if (!grad.defined()) continue;
      if (o.momentum_ == 0 || state_of(p).buffers.count("momentum_buffer")) {
        std::vector<Tensor> buf;
        if (o.momentum_ != 0) buf.push_back(state_of(p).buffers["momentum_buffer"]);
        if (fusable<FusedSgdKernel>(p, grad, buf, fused_params)) {
          fused_params.push_back(p);
          fused_grads.push_back(grad);
          if (!buf.empty()) fused_bufs.push_back(buf[0]);
          continue;
        }
      }
      Tensor d = o.maximize_ ? -grad : grad;
      if (o.weight_decay_ != 0) d = d + p * o.weight_decay_;
      if (o.momentum_ != 0) {
        auto& buffers = state_of(p).buffers;
        auto it = buffers.find("momentum_buffer");
        if (it == buffers.end()) {
          it = buffers.emplace("momentum_buffer", clone(d)).first;
        } else {
          it->second.mul_(o.momentum_).add_(d, 1 - o.dampening_);
        }
        d = o.nesterov_ ? d + it->second * o.momentum_ : it->second;
      }
      p.add_(d, -o.lr_);
    }
    if (!fused_params.empty())
      kernel<FusedSgdKernel>(fused_params[0].device())(
          fused_params, fused_grads, fused_bufs,
          SgdStep{o.lr_, o.momentum_, o.dampening_, o.weight_decay_, o.nesterov_, o.maximize_});
  }
  return loss;
}

// ---- Adam / AdamW ----
Adam::Adam(std::vector<Tensor> params, AdamOptions options)
    : Adam(std::vector<OptimizerParamGroup>{OptimizerParamGroup(std::move(params))},
           std::move(options)) {}
Adam::Adam(std::vector<OptimizerParamGroup> groups, AdamOptions options)
    : Optimizer({}, options.clone()) {
  auto [b1, b2] = options.betas_;
  BRASA_CHECK(options.lr_ >= 0, "Adam: invalid learning rate: ", options.lr_);
  BRASA_CHECK(options.eps_ >= 0, "Adam: invalid epsilon value: ", options.eps_);
  BRASA_CHECK(b1 >= 0 && b1 < 1 && b2 >= 0 && b2 < 1, "Adam: invalid beta parameters: (", b1, ", ",
              b2, ")");
  BRASA_CHECK(options.weight_decay_ >= 0,
              "Adam: invalid weight_decay value: ", options.weight_decay_);
  add_param_groups(groups);
}

AdamW::AdamW(std::vector<Tensor> params, AdamWOptions options) : Adam(std::move(params), options) {
  decoupled_weight_decay_ = true;
}

Tensor Adam::step(std::function<Tensor()> closure) {
  Tensor loss = run_closure(closure);
  NoGradGuard ng;
  for (auto& group : groups_) {
    const auto& o = static_cast<const AdamOptions&>(group.options());
    auto [b1, b2] = o.betas_;
    // Parameters a device updates in a few launches for them all.
    std::vector<Tensor> fp, fg, fm, fv, fvmax;
    std::vector<double> step_sizes, bc2_sqrts;
    for (auto& p : group.params()) {
      const Tensor& g0 = p.grad();
      if (!g0.defined()) continue;
      ParamState& st = state_of(p);
      if (st.step == 0) {
        st.buffers["exp_avg"] = zeros_like(p);
        st.buffers["exp_avg_sq"] = zeros_like(p);
        if (o.amsgrad_) st.buffers["max_exp_avg_sq"] = zeros_like(p);
      }
      ++st.step;
      std::vector<Tensor> state{st.buffers["exp_avg"], st.buffers["exp_avg_sq"]};
      if (o.amsgrad_) state.push_back(st.buffers["max_exp_avg_sq"]);
      if (fusable<FusedAdamKernel>(p, g0, state, fp)) {
        fp.push_back(p);
        fg.push_back(g0);
        fm.push_back(state[0]);
        fv.push_back(state[1]);
        if (o.amsgrad_) fvmax.push_back(state[2]);
        step_sizes.push_back(o.lr_ / (1 - std::pow(b1, static_cast<double>(st.step))));
        bc2_sqrts.push_back(std::sqrt(1 - std::pow(b2, static_cast<double>(st.step))));
        continue;
      }
      Tensor grad = o.maximize_ ? -g0 : g0;
      if (o.weight_decay_ != 0) {
        if (decoupled_weight_decay_)
          p.mul_(1 - o.lr_ * o.weight_decay_);
        else
          grad = grad + p * o.weight_decay_;
      }
      Tensor& m = st.buffers["exp_avg"];
      Tensor& v = st.buffers["exp_avg_sq"];
      m.mul_(b1).add_(grad, 1 - b1);
      v.mul_(b2).addcmul_(grad, grad, 1 - b2);
      const double bc1 = 1 - std::pow(b1, static_cast<double>(st.step));
      const double bc2 = 1 - std::pow(b2, static_cast<double>(st.step));
      const double step_size = o.lr_ / bc1;
      Tensor denom;
      if (o.amsgrad_) {
        Tensor& vmax = st.buffers["max_exp_avg_sq"];
        vmax = maximum(vmax, v);
        denom = (vmax.sqrt() / std::sqrt(bc2)).add_(o.eps_);
      } else {
        denom = (v.sqrt() / std::sqrt(bc2)).add_(o.eps_);
      }
      p.addcdiv_(m, denom, -step_size);
    }
    if (!fp.empty())
      kernel<FusedAdamKernel>(fp[0].device())(
          fp, fg, fm, fv, fvmax, step_sizes, bc2_sqrts,
          AdamStep{o.lr_, b1, b2, o.eps_, o.weight_decay_, decoupled_weight_decay_, o.amsgrad_,
                   o.maximize_});
  }
  return loss;
}

// ---- RMSprop ----
RMSprop::RMSprop(std::vector<Tensor> params, RMSpropOptions options)
    : Optimizer({OptimizerParamGroup(std::move(params))}, options.clone()) {
  BRASA_CHECK(
      options.lr_ >= 0 && options.eps_ >= 0 && options.alpha_ >= 0 && options.momentum_ >= 0,
      "RMSprop: invalid options (lr ", options.lr_, ", eps ", options.eps_, ", alpha ",
      options.alpha_, ", momentum ", options.momentum_, ")");
}

Tensor RMSprop::step(std::function<Tensor()> closure) {
  Tensor loss = run_closure(closure);
  NoGradGuard ng;
  for (auto& group : groups_) {
    const auto& o = static_cast<const RMSpropOptions&>(group.options());
    for (auto& p : group.params()) {
      if (!p.grad().defined()) continue;
      Tensor grad = o.weight_decay_ != 0 ? p.grad() + p * o.weight_decay_ : p.grad();
      ParamState& st = state_of(p);
      if (st.step == 0) {
        st.buffers["square_avg"] = zeros_like(p);
        if (o.momentum_ > 0) st.buffers["momentum_buffer"] = zeros_like(p);
        if (o.centered_) st.buffers["grad_avg"] = zeros_like(p);
      }
      ++st.step;
      Tensor& sq = st.buffers["square_avg"];
      sq.mul_(o.alpha_).addcmul_(grad, grad, 1 - o.alpha_);
      Tensor avg;
      if (o.centered_) {
        Tensor& ga = st.buffers["grad_avg"];
        ga.mul_(o.alpha_).add_(grad, 1 - o.alpha_);
        avg = (sq - ga * ga).sqrt_().add_(o.eps_);
      } else {
        avg = sq.sqrt().add_(o.eps_);
      }
      if (o.momentum_ > 0) {
        Tensor& buf = st.buffers["momentum_buffer"];
        buf.mul_(o.momentum_).addcdiv_(grad, avg);
        p.add_(buf, -o.lr_);
      } else {
        p.addcdiv_(grad, avg, -o.lr_);
      }
    }
  }
  return loss;
}

// ---- Adagrad ----
Adagrad::Adagrad(std::vector<Tensor> params, AdagradOptions options)
    : Optimizer({OptimizerParamGroup(std::move(params))}, options.clone()) {
  BRASA_CHECK(options.lr_ >= 0 && options.lr_decay_ >= 0 && options.eps_ >= 0 &&
                  options.initial_accumulator_value_ >= 0,
              "Adagrad: invalid options (lr ", options.lr_, ", lr_decay ", options.lr_decay_,
              ", eps ", options.eps_, ")");
}

Tensor Adagrad::step(std::function<Tensor()> closure) {
  Tensor loss = run_closure(closure);
  NoGradGuard ng;
  for (auto& group : groups_) {
    const auto& o = static_cast<const AdagradOptions&>(group.options());
    for (auto& p : group.params()) {
      if (!p.grad().defined()) continue;
      ParamState& st = state_of(p);
      if (st.step == 0) st.buffers["sum"] = full_like(p, o.initial_accumulator_value_);
      ++st.step;
      Tensor grad = o.weight_decay_ != 0 ? p.grad() + p * o.weight_decay_ : p.grad();
      const double clr = o.lr_ / (1 + static_cast<double>(st.step - 1) * o.lr_decay_);
      Tensor& sum = st.buffers["sum"];
      sum.addcmul_(grad, grad, 1.0);
      p.addcdiv_(grad, sum.sqrt().add_(o.eps_), -clr);
    }
  }
  return loss;
}

}  // namespace brasa::optim
