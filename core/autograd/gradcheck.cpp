#include <brasa/autograd/engine.h>
#include <brasa/autograd/gradcheck.h>
#include <brasa/autograd/grad_mode.h>
#include <brasa/ops/factory.h>
#include <brasa/ops/random.h>

#include <cmath>
#include <sstream>

namespace brasa::autograd {
namespace {

// Pointer to element k (row-major order) of a float64 tensor of any strides.
double* element(const Tensor& t, int64_t k) {
  double* p = static_cast<double*>(t.data_ptr());
  for (int64_t d = t.dim() - 1; d >= 0; --d) {
    p += (k % t.size(d)) * t.stride(d);
    k /= t.size(d);
  }
  return p;
}

std::vector<double> flat_values(const Tensor& t) {
  Tensor c = t.detach().to(kDouble).contiguous();
  const double* p = c.data_ptr<double>();
  return std::vector<double>(p, p + c.numel());
}

variable_list differentiable_outputs(const variable_list& outs) {
  variable_list r;
  for (const auto& o : outs)
    if (o.defined() && o.is_floating_point()) r.push_back(o);
  return r;
}

bool fail(const GradcheckOptions& opt, const std::string& msg) {
  if (opt.raise_exception) BRASA_ERROR(msg);
  return false;
}

}  // namespace

bool gradcheck(const GradcheckFn& fn, const variable_list& inputs, const GradcheckOptions& opt) {
  std::vector<size_t> diff;  // indices of inputs that require grad
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i].defined() || !inputs[i].requires_grad()) continue;
    BRASA_CHECK(inputs[i].dtype() == kDouble, "gradcheck: input ", i,
                " requires grad but has dtype ", inputs[i].dtype(),
                "; gradcheck needs float64 inputs for reliable finite differences");
    diff.push_back(i);
  }
  BRASA_CHECK(!diff.empty(), "gradcheck: no input requires grad");
  variable_list diff_inputs;
  for (size_t i : diff) diff_inputs.push_back(inputs[i]);

  variable_list outs = differentiable_outputs(fn(inputs));
  // analytical[o][i]: rows = output elements, cols = input elements.
  std::vector<std::vector<std::vector<double>>> analytical(
      outs.size(), std::vector<std::vector<double>>(diff.size()));
  for (size_t o = 0; o < outs.size(); ++o) {
    const int64_t m = outs[o].numel();
    for (size_t i = 0; i < diff.size(); ++i)
      analytical[o][i].assign(m * diff_inputs[i].numel(), 0.0);
    if (!outs[o].requires_grad()) continue;
    for (int64_t j = 0; j < m; ++j) {
      Tensor go = zeros_like(outs[o]);
      *element(go, j) = 1.0;
      variable_list g =
          grad({outs[o]}, diff_inputs, {go}, /*retain_graph=*/true, false, /*allow_unused=*/true);
      for (size_t i = 0; i < diff.size(); ++i) {
        if (!g[i].defined()) continue;
        BRASA_CHECK(g[i].sizes() == diff_inputs[i].sizes(), "gradcheck: gradient of input ",
                    diff[i], " has shape ", g[i].sizes(), " but the input has shape ",
                    diff_inputs[i].sizes());
        auto v = flat_values(g[i]);
        for (size_t k = 0; k < v.size(); ++k) analytical[o][i][j * v.size() + k] = v[k];
      }
    }
  }

  // Grad mode stays on: gradgradcheck's function itself calls grad().
  for (size_t i = 0; i < diff.size(); ++i) {
    const Tensor& x = diff_inputs[i];
    const int64_t n = x.numel();
    for (int64_t k = 0; k < n; ++k) {
      double* p = element(x, k);
      const double orig = *p;
      // Outputs may alias the inputs: read them before the next write.
      auto evaluate = [&](double value) {
        *p = value;
        std::vector<std::vector<double>> r;
        for (const auto& o : differentiable_outputs(fn(inputs))) r.push_back(flat_values(o));
        return r;
      };
      auto plus = evaluate(orig + opt.eps);
      auto minus = evaluate(orig - opt.eps);
      *p = orig;
      for (size_t o = 0; o < outs.size(); ++o) {
        const auto& a = plus[o];
        const auto& b = minus[o];
        for (size_t j = 0; j < a.size(); ++j) {
          const double num = (a[j] - b[j]) / (2 * opt.eps);
          const double ana = analytical[o][i][j * n + k];
          if (std::abs(ana - num) > opt.atol + opt.rtol * std::abs(num) ||
              std::isnan(ana) != std::isnan(num)) {
            std::ostringstream os;
            os << "gradcheck: Jacobian mismatch for output " << o << " with respect to input "
               << diff[i] << " at (output element " << j << ", input element " << k
               << "): numerical " << num << ", analytical " << ana << " (atol " << opt.atol
               << ", rtol " << opt.rtol << ")";
            return fail(opt, os.str());
          }
        }
      }
    }
  }
  return true;
}

bool gradgradcheck(const GradcheckFn& fn, const variable_list& inputs,
                   const variable_list& grad_outputs, const GradcheckOptions& opt) {
  std::vector<size_t> diff;
  for (size_t i = 0; i < inputs.size(); ++i)
    if (inputs[i].defined() && inputs[i].requires_grad()) diff.push_back(i);
  variable_list outs = differentiable_outputs(fn(inputs));
  variable_list gos = grad_outputs;
  if (gos.empty()) {
    for (const auto& o : outs)
      gos.push_back(randn(o.sizes(), TensorOptions().dtype(kDouble)).requires_grad_());
  }
  BRASA_CHECK(gos.size() == outs.size(), "gradgradcheck: got ", gos.size(), " grad_outputs for ",
              outs.size(), " differentiable outputs");
  const size_t n_in = inputs.size();
  GradcheckFn first_order = [&fn, n_in, diff](const variable_list& all) {
    variable_list in(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(n_in));
    variable_list go(all.begin() + static_cast<std::ptrdiff_t>(n_in), all.end());
    variable_list o = differentiable_outputs(fn(in));
    variable_list xs, used_o, used_go;
    for (size_t i : diff) xs.push_back(in[i]);
    for (size_t k = 0; k < o.size(); ++k)
      if (o[k].requires_grad()) {
        used_o.push_back(o[k]);
        used_go.push_back(go[k]);
      }
    if (used_o.empty()) return variable_list{};
    variable_list g = grad(used_o, xs, used_go, /*retain_graph=*/true, /*create_graph=*/true,
                           /*allow_unused=*/true);
    for (size_t k = 0; k < g.size(); ++k)
      if (!g[k].defined()) g[k] = zeros_like(xs[k]);
    return g;
  };
  variable_list all = inputs;
  all.insert(all.end(), gos.begin(), gos.end());
  return gradcheck(first_order, all, opt);
}

}  // namespace brasa::autograd
