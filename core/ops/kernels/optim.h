#pragma once
// Op codes of a device's fused optimizer steps (optional: without them an
// optimizer runs one elementwise op per parameter per term). One call
// updates a whole list of parameters in a few launches. Every tensor is
// contiguous, of one floating dtype and on one device; lists are parallel.
#include <brasa/tensor/tensor.h>

#include <vector>

namespace brasa {

// d = (maximize ? -grad : grad) + weight_decay * param;
// with momentum: buf = momentum * buf + (1 - dampening) * d, and
//   d = nesterov ? d + momentum * buf : buf;
// param -= lr * d. bufs is empty without momentum.
struct SgdStep {
  double lr, momentum, dampening, weight_decay;
  bool nesterov, maximize;
};
struct FusedSgdKernel {
  static constexpr const char* name = "SGD step (fused)";
  using Fn = void (*)(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
                      const std::vector<Tensor>& bufs, const SgdStep& h);
};

// Adam/AdamW: g = maximize ? -grad : grad; decoupled: param *= 1 - lr * wd,
// else g += wd * param; m = b1 m + (1 - b1) g; v = b2 v + (1 - b2) g^2;
// vmax = max(vmax, v) (amsgrad); param -= step_size[i] * m / (sqrt(v or vmax)
// / bc2_sqrt[i] + eps), step_size[i] = lr / (1 - b1^step) and
// bc2_sqrt[i] = sqrt(1 - b2^step) of parameter i's own step count.
struct AdamStep {
  double lr, beta1, beta2, eps, weight_decay;
  bool decoupled, amsgrad, maximize;
};
struct FusedAdamKernel {
  static constexpr const char* name = "Adam step (fused)";
  using Fn = void (*)(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
                      const std::vector<Tensor>& exp_avgs, const std::vector<Tensor>& exp_avg_sqs,
                      const std::vector<Tensor>& max_exp_avg_sqs,
                      const std::vector<double>& step_sizes, const std::vector<double>& bc2_sqrts,
                      const AdamStep& h);
};

}  // namespace brasa
