#pragma once
// How the special functions (ops/special.cpp, ops/special_functions.cpp)
// apply a scalar function: elementwise in double on the CPU, with a
// recorded derivative where there is one. Internal to the ops.
#include <brasa/autograd/record.h>
#include <brasa/ops/factory.h>
#include <brasa/tensor/tensor.h>

namespace brasa::detail {

// f applied to every element in double on the CPU; the result has self's
// floating dtype (float for integer input) and device.
template <class F>
Tensor map_values(const char* op, const Tensor& self, F f) {
  BRASA_CHECK(self.defined(), op, ": expected a defined tensor");
  BRASA_CHECK(self.scalar_type() != kBool, op, ": not implemented for dtype Bool");
  BRASA_CHECK(!self.is_complex(), op, ": not implemented for complex tensors, got ",
              self.scalar_type());
  const ScalarType out_type = self.is_floating_point() ? self.scalar_type() : kFloat;
  Tensor x = self.detach().to(kCPU).to(kDouble).contiguous();
  Tensor y = empty_like(x);
  const double* in = x.data_ptr<double>();
  double* out = y.data_ptr<double>();
  for (int64_t i = 0; i < x.numel(); ++i) out[i] = f(in[i]);
  return y.to(out_type).to(self.device());
}

// map_values with a recorded backward: grad * derivative(self).
template <class F, class D>
Tensor special_op(const autograd::BackwardName& name, const char* op, const Tensor& self, F f,
                  D derivative) {
  autograd::Recorder r(name, self);
  Tensor y = map_values(op, self, f);
  if (r)
    r.save(self).finish(y,
                        [derivative](autograd::FormulaNode& n, const autograd::variable_list& g) {
                          return autograd::variable_list{g[0] * derivative(n.saved(0))};
                        });
  return y;
}

}  // namespace brasa::detail
