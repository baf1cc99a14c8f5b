#include <brasa/autograd/grad_mode.h>
#include <brasa/ops/factory.h>
#include <brasa/ops/linalg.h>
#include <brasa/ops/shape.h>
#include <brasa/optim/lbfgs.h>

#include <algorithm>
#include <cmath>

namespace brasa::optim {

void LBFGSOptions::visit(const std::function<void(const char*, double&)>& fn) {
  fn("lr", lr_);
  double max_iter = static_cast<double>(max_iter_), history = static_cast<double>(history_size_);
  fn("max_iter", max_iter);
  fn("tolerance_grad", tolerance_grad_);
  fn("tolerance_change", tolerance_change_);
  fn("history_size", history);
  max_iter_ = static_cast<int64_t>(max_iter);
  history_size_ = static_cast<int64_t>(history);
}

LBFGS::LBFGS(std::vector<Tensor> params, LBFGSOptions options)
    : Optimizer({}, std::make_unique<LBFGSOptions>(options)) {
  BRASA_CHECK(options.lr_ > 0, "LBFGS: invalid learning rate: ", options.lr_);
  BRASA_CHECK(options.max_iter_ > 0 && options.history_size_ > 0,
              "LBFGS: max_iter and history_size must be positive");
  BRASA_CHECK(!options.line_search_fn_ || *options.line_search_fn_ == "strong_wolfe",
              "LBFGS: only 'strong_wolfe' is supported as line_search_fn, got '",
              *options.line_search_fn_, "'");
  add_param_groups({OptimizerParamGroup(std::move(params))});
}

Tensor LBFGS::flat_grad() const {
  std::vector<Tensor> parts;
  for (const Tensor& p : groups_[0].params()) {
    const Tensor& g = p.grad();
    parts.push_back(g.defined() ? g.reshape({-1}) : zeros_like(p).reshape({-1}));
  }
  return cat(parts, 0);
}

void LBFGS::add_to_params(double t, const Tensor& d) {
  int64_t offset = 0;
  for (Tensor& p : groups_[0].params()) {
    const int64_t n = p.numel();
    p.add_(d.narrow(0, offset, n).view(p.sizes()), t);
    offset += n;
  }
}

void LBFGS::set_params(const std::vector<Tensor>& values) {
  auto& params = groups_[0].params();
  for (size_t i = 0; i < params.size(); ++i) params[i].copy_(values[i]);
}

std::pair<double, Tensor> LBFGS::evaluate_at(const std::function<Tensor()>& closure,
                                             const std::vector<Tensor>& start, double t,
                                             const Tensor& d) {
  add_to_params(t, d);
  double loss;
  {
    AutoGradMode on(true);
    loss = closure().item<double>();
  }
  Tensor g = flat_grad();
  set_params(start);
  return {loss, g};
}

namespace {
// The minimizer of the cubic through (x1, f1) and (x2, f2) with slopes g1,
// g2, kept in [lo, hi]; the middle of the interval when the cubic has none.
double cubic_minimum(double x1, double f1, double g1, double x2, double f2, double g2,
                     std::optional<std::pair<double, double>> bounds = std::nullopt) {
  const auto [lo, hi] = bounds ? *bounds : std::pair{std::min(x1, x2), std::max(x1, x2)};
  const double d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2);
  const double d2_square = d1 * d1 - g1 * g2;
  if (d2_square < 0) return (lo + hi) / 2;
  const double d2 = std::sqrt(d2_square);
  const double at = x1 <= x2 ? x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
                             : x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2));
  return std::min(std::max(at, lo), hi);
}
double dot_value(const Tensor& a, const Tensor& b) { return brasa::dot(a, b).item<double>(); }
double abs_max(const Tensor& t) { return t.abs().max().item<double>(); }
}  // namespace

std::tuple<double, Tensor, double> LBFGS::strong_wolfe(const std::function<Tensor()>& closure,
                                                       double t, const Tensor& d, double loss,
                                                       const Tensor& grad, double gtd,
                                                       int64_t& evals) {
  const double c1 = 1e-4, c2 = 0.9, tolerance_change = 1e-9;
  const int max_ls = 25;
  const double d_norm = abs_max(d);
  std::vector<Tensor> start;
  for (const Tensor& p : groups_[0].params()) start.push_back(p.clone());
  auto [f_new, g_new] = evaluate_at(closure, start, t, d);
  ++evals;
  double gtd_new = dot_value(g_new, d);
  double t_prev = 0, f_prev = loss, gtd_prev = gtd;
  Tensor g_prev = grad;
  // A bracket [low, high] of steps around an acceptable one, with their
  // losses, gradients and directional derivatives.
  struct Point {
    double t, f;
    Tensor g;
    double gtd;
  };
  std::vector<Point> bracket;
  bool done = false;
  int ls_iter = 0;
  while (ls_iter < max_ls) {
    if (f_new > loss + c1 * t * gtd || (ls_iter > 1 && f_new >= f_prev)) {
      bracket = {{t_prev, f_prev, g_prev, gtd_prev}, {t, f_new, g_new, gtd_new}};
      break;
    }
    if (std::abs(gtd_new) <= -c2 * gtd) {
      bracket = {{t, f_new, g_new, gtd_new}};
      done = true;
      break;
    }
    if (gtd_new >= 0) {
      bracket = {{t_prev, f_prev, g_prev, gtd_prev}, {t, f_new, g_new, gtd_new}};
      break;
    }
    // Extrapolate.
    const double min_step = t + 0.01 * (t - t_prev), max_step = t * 10, previous = t;
    t = cubic_minimum(t_prev, f_prev, gtd_prev, t, f_new, gtd_new, std::pair{min_step, max_step});
    t_prev = previous;
    f_prev = f_new;
    g_prev = g_new;
    gtd_prev = gtd_new;
    std::tie(f_new, g_new) = evaluate_at(closure, start, t, d);
    ++evals;
    gtd_new = dot_value(g_new, d);
    ++ls_iter;
  }
  if (ls_iter == max_ls) bracket = {{0, loss, grad, gtd}, {t, f_new, g_new, gtd_new}};

  // Zoom into the bracket.
  bool insufficient_progress = false;
  size_t low = bracket.front().f <= bracket.back().f ? 0 : 1, high = 1 - low;
  while (!done && ls_iter < max_ls && bracket.size() == 2) {
    if (std::abs(bracket[1].t - bracket[0].t) * d_norm < tolerance_change) break;
    t = cubic_minimum(bracket[0].t, bracket[0].f, bracket[0].gtd, bracket[1].t, bracket[1].f,
                      bracket[1].gtd);
    const double b_max = std::max(bracket[0].t, bracket[1].t),
                 b_min = std::min(bracket[0].t, bracket[1].t), eps = 0.1 * (b_max - b_min);
    if (std::min(b_max - t, t - b_min) < eps) {
      // Too close to an end: move away from it, unless progress was fine.
      if (insufficient_progress || t >= b_max || t <= b_min) {
        t = std::abs(t - b_max) < std::abs(t - b_min) ? b_max - eps : b_min + eps;
        insufficient_progress = false;
      } else {
        insufficient_progress = true;
      }
    } else {
      insufficient_progress = false;
    }
    std::tie(f_new, g_new) = evaluate_at(closure, start, t, d);
    ++evals;
    gtd_new = dot_value(g_new, d);
    ++ls_iter;
    if (f_new > loss + c1 * t * gtd || f_new >= bracket[low].f) {
      bracket[high] = {t, f_new, g_new, gtd_new};
      low = bracket[0].f <= bracket[1].f ? 0 : 1;
      high = 1 - low;
    } else {
      if (std::abs(gtd_new) <= -c2 * gtd)
        done = true;
      else if (gtd_new * (bracket[high].t - bracket[low].t) >= 0)
        bracket[high] = bracket[low];
      bracket[low] = {t, f_new, g_new, gtd_new};
    }
  }
  const Point& best = bracket[low < bracket.size() ? low : 0];
  return {best.f, best.g, best.t};
}

Tensor LBFGS::step(std::function<Tensor()> closure) {
  BRASA_CHECK(closure != nullptr, "LBFGS: step() needs a closure that computes the loss");
  const auto& o = static_cast<const LBFGSOptions&>(groups_[0].options());
  const int64_t max_eval = o.max_eval_.value_or(o.max_iter_ * 5 / 4);
  Tensor orig_loss;
  {
    AutoGradMode on(true);
    orig_loss = closure();
  }
  NoGradGuard ng;
  double loss = orig_loss.item<double>();
  int64_t current_evals = 1;
  ++func_evals_;
  Tensor g = flat_grad();
  if (abs_max(g) <= o.tolerance_grad_) return orig_loss;

  for (int64_t n_iter = 1; n_iter <= o.max_iter_; ++n_iter) {
    ++n_iter_;
    if (n_iter_ == 1) {
      d_ = -g;
      old_dirs_.clear();
      old_steps_.clear();
      ro_.clear();
      h_diag_ = 1;
    } else {
      // Update the history with the last step s and gradient change y.
      Tensor y = g - prev_flat_grad_, s = d_ * t_;
      const double ys = dot_value(y, s);
      if (ys > 1e-10) {
        if (static_cast<int64_t>(old_dirs_.size()) == o.history_size_) {
          old_dirs_.pop_front();
          old_steps_.pop_front();
          ro_.pop_front();
        }
        old_dirs_.push_back(y);
        old_steps_.push_back(s);
        ro_.push_back(1.0 / ys);
        h_diag_ = ys / dot_value(y, y);
      }
      // The two-loop recursion: d = -H g.
      const size_t k = old_dirs_.size();
      std::vector<double> al(k);
      Tensor q = -g;
      for (size_t i = k; i-- > 0;) {
        al[i] = dot_value(old_steps_[i], q) * ro_[i];
        q = q - old_dirs_[i] * al[i];
      }
      Tensor r = q * h_diag_;
      for (size_t i = 0; i < k; ++i) {
        const double be = dot_value(old_dirs_[i], r) * ro_[i];
        r = r + old_steps_[i] * (al[i] - be);
      }
      d_ = r;
    }
    prev_flat_grad_ = g.clone();
    prev_loss_ = loss;
    // The first step of all is scaled by the gradient's size.
    t_ = n_iter_ == 1 ? std::min(1.0, 1.0 / g.abs().sum().item<double>()) * o.lr_ : o.lr_;
    const double gtd = dot_value(g, d_);
    if (gtd > -o.tolerance_change_) break;  // not a descent direction any more

    int64_t ls_evals = 0;
    bool converged = false;
    if (o.line_search_fn_) {
      std::tie(loss, g, t_) = strong_wolfe(closure, t_, d_, loss, g, gtd, ls_evals);
      add_to_params(t_, d_);
      converged = abs_max(g) <= o.tolerance_grad_;
    } else {
      add_to_params(t_, d_);
      if (n_iter != o.max_iter_) {
        AutoGradMode on(true);
        loss = closure().item<double>();
        g = flat_grad();
        converged = abs_max(g) <= o.tolerance_grad_;
        ls_evals = 1;
      }
    }
    current_evals += ls_evals;
    func_evals_ += ls_evals;
    if (n_iter == o.max_iter_ || current_evals >= max_eval || converged) break;
    if (abs_max(d_ * t_) <= o.tolerance_change_) break;
    if (std::abs(loss - prev_loss_) < o.tolerance_change_) break;
  }
  return orig_loss;
}

}  // namespace brasa::optim
