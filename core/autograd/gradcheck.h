#pragma once
// gradcheck / gradgradcheck: compare the Jacobian autograd computes with
// central finite differences, in float64.
#include <brasa/autograd/node.h>

namespace brasa::autograd {

struct GradcheckOptions {
  double eps = 1e-6;
  double atol = 1e-5;
  double rtol = 1e-3;
  bool raise_exception = true;  // false: return false instead of throwing
};

using GradcheckFn = std::function<variable_list(const variable_list&)>;

// Inputs that require grad must be float64; others are passed through.
bool gradcheck(const GradcheckFn& fn, const variable_list& inputs,
               const GradcheckOptions& opt = {});
// Checks the gradient of the gradient; grad_outputs default to random.
bool gradgradcheck(const GradcheckFn& fn, const variable_list& inputs,
                   const variable_list& grad_outputs = {}, const GradcheckOptions& opt = {});

}  // namespace brasa::autograd
