#pragma once
// Runs an elementwise plan (ops/elementwise.h) on the CPU: one flat 1-D run
// when every operand is contiguous, the strided loop otherwise.
#include <brasa/ops/cpu/variant.h>
#include <brasa/ops/cpu/loops.h>
#include <brasa/ops/elementwise.h>

namespace brasa::cpu {
inline namespace BRASA_CPU_VARIANT {

// The strided loop over the plan's operands: the output first, then the inputs.
inline StridedLoop make_loop(const detail::Elementwise& e) {
  StridedLoop loop(e.shape());
  loop.add(e.output());
  for (const auto& in : e.inputs()) loop.add(in);
  loop.order_dims_by_first_operand();
  return loop;
}

// out = f(in...) elementwise with Out/In the storage types (f works on
// opmath types), then finishes the plan.
template <class Out, class... In, class F>
void run(detail::Elementwise& e, const F& f) {
  static_assert(kMaxOperands == detail::Elementwise::kMaxOperands);
  if (e.flat()) {
    const int64_t n = e.output().numel();
    char* const* data = e.flat_data();
    const int64_t* strides = e.flat_strides();
    constexpr int kOperands = sizeof...(In) + 1;
    bool stream = false;
    if constexpr (sizeof...(In) == 1 || sizeof...(In) == 2)
      stream = stream_output(n * int64_t(sizeof(Out)), data[0], data[1], data[2]);
    parallel_for(0, n, kGrain, [&](int64_t b, int64_t end) {
      char* ptrs[kMaxOperands];
      for (int k = 0; k < kOperands; ++k) ptrs[k] = data[k] + b * strides[k];
      if constexpr (sizeof...(In) == 2)
        binary_run<Out, In...>(ptrs, strides, end - b, f, stream);
      else if constexpr (sizeof...(In) == 1)
        unary_run<Out, In...>(ptrs, strides, end - b, f, stream);
      else
        nary_run<Out, In...>(ptrs, strides, end - b, f, std::index_sequence_for<In...>{});
    });
  } else {
    StridedLoop loop = make_loop(e);
    cpu_kernel<Out, In...>(loop, f);
  }
  e.finish();
}

}  // namespace BRASA_CPU_VARIANT
}  // namespace brasa::cpu
