// CPU kernels of nll_loss (NllLossKernel, NllLossBackwardKernel): one pass
// over the targets, the sums in double.
#include <brasa/ops/cpu/register.h>
#include <brasa/ops/kernels/indexing.h>

#include <cstring>

namespace brasa::cpu {
namespace {

// The shape of an nll_loss: n = N * inner elements of C classes.
struct LossShape {
  int64_t n, C, inner;
};
LossShape loss_shape(const Tensor& logp, const Tensor& target) {
  const int64_t C = logp.dim() == 1 ? logp.size(0) : logp.size(1);
  const int64_t N = logp.dim() == 1 ? 1 : logp.size(0);
  const int64_t n = target.numel();
  return {n, C, N == 0 ? 1 : n / N};
}

// Offset in logp of element j's class c.
inline int64_t class_offset(const LossShape& s, int64_t j, int64_t c) {
  const int64_t b = j / s.inner;
  return (b * s.C + c) * s.inner + (j - b * s.inner);
}

void nll_loss_cpu(const Tensor& logp, const Tensor& target, const Tensor& weight,
                  int64_t ignore_index, LossReduction reduction, const Tensor& out,
                  const Tensor& total_weight) {
  const LossShape s = loss_shape(logp, target);
  const int64_t* t = target.data_ptr<int64_t>();
  BRASA_DISPATCH_FLOATING_TYPES(logp.dtype(), "nll_loss", [&] {
    const scalar_t* lp = logp.data_ptr<scalar_t>();
    const scalar_t* w = weight.defined() ? weight.data_ptr<scalar_t>() : nullptr;
    scalar_t* each = reduction == LossReduction::None ? out.data_ptr<scalar_t>() : nullptr;
    double sum = 0, total = 0;
    for (int64_t j = 0; j < s.n; ++j) {
      const int64_t c = t[j];
      if (c == ignore_index) {
        if (each) each[j] = scalar_t(0);
        continue;
      }
      BRASA_CHECK(c >= 0 && c < s.C, "nll_loss: target ", c, " is out of bounds for ", s.C,
                  " classes");
      const double wc = w ? static_cast<double>(w[c]) : 1.0;
      const double v = -wc * static_cast<double>(lp[class_offset(s, j, c)]);
      if (each) each[j] = scalar_t(v);
      sum += v;
      total += wc;
    }
    total_weight.data_ptr<scalar_t>()[0] = scalar_t(total);
    if (!each)
      out.data_ptr<scalar_t>()[0] = scalar_t(reduction == LossReduction::Mean ? sum / total : sum);
  });
}

void nll_loss_backward_cpu(const Tensor& grad, const Tensor& target, const Tensor& weight,
                           int64_t ignore_index, LossReduction reduction,
                           const Tensor& total_weight, const Tensor& grad_input) {
  const LossShape s = loss_shape(grad_input, target);
  const int64_t* t = target.data_ptr<int64_t>();
  BRASA_DISPATCH_FLOATING_TYPES(grad_input.dtype(), "nll_loss backward", [&] {
    scalar_t* gi = grad_input.data_ptr<scalar_t>();
    std::memset(static_cast<void*>(gi), 0, grad_input.numel() * sizeof(scalar_t));
    const scalar_t* g = grad.data_ptr<scalar_t>();
    const scalar_t* w = weight.defined() ? weight.data_ptr<scalar_t>() : nullptr;
    double scale = static_cast<double>(g[0]);
    if (reduction == LossReduction::Mean)
      scale /= static_cast<double>(total_weight.data_ptr<scalar_t>()[0]);
    for (int64_t j = 0; j < s.n; ++j) {
      const int64_t c = t[j];
      if (c == ignore_index || c < 0 || c >= s.C) continue;  // the forward checked the range
      const double gj = reduction == LossReduction::None ? static_cast<double>(g[j]) : scale;
      gi[class_offset(s, j, c)] = scalar_t(-(w ? static_cast<double>(w[c]) : 1.0) * gj);
    }
  });
}

}  // namespace

void register_loss_kernels() {
  register_kernel<NllLossKernel>(kCPU, nll_loss_cpu);
  register_kernel<NllLossBackwardKernel>(kCPU, nll_loss_backward_cpu);
}

}  // namespace brasa::cpu
