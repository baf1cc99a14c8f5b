// The CUDA entries of the elementwise kernel tables: each reads the plan or
// tensors on the host, builds the loop of loop.h and launches the kernel of
// elementwise_kernels.cu on the current stream.
#include <brasa/cuda/cuda_check.h>
#include <brasa/cuda/stream.h>
#include <brasa/ops/cuda/launch_util.h>
#include <brasa/ops/cuda/register.h>
#include <brasa/ops/kernel_table.h>
#include <brasa/ops/kernels/copy.h>
#include <brasa/ops/kernels/elementwise.h>

#include <cstring>

namespace brasa::cuda {

kernels::Loop make_loop(const char* op, IntArrayRef shape) {
  kernels::Loop l;
  BRASA_CHECK(shape.size() <= size_t(kernels::kMaxDims), op, ": CUDA kernels take at most ",
              kernels::kMaxDims, " dims, got a tensor of ", shape.size(), " dims");
  l.numel = 1;
  for (size_t d = 0; d < shape.size(); ++d) {
    l.sizes[d] = shape[d];
    l.numel *= shape[d];
  }
  l.ndim = static_cast<int>(shape.size());
  if (l.ndim == 0) {  // a 0-dim tensor: one element
    l.ndim = 1;
    l.sizes[0] = 1;
  }
  return l;
}

void add_operand(kernels::Loop& l, const Tensor& t) {
  BRASA_INTERNAL_ASSERT(l.n_operands < kernels::kMaxLoopOperands, "CUDA loop: too many operands");
  const int k = l.n_operands++;
  l.data[k] = static_cast<char*>(t.data_ptr());
  const int64_t es = t.element_size();
  const int64_t lead = l.ndim - t.dim();
  for (int d = 0; d < l.ndim; ++d) {
    const int64_t td = d - lead;
    l.strides[k][d] = (td < 0 || t.size(td) == 1) ? 0 : t.stride(td) * es;
  }
}

// Merges adjacent dims that every operand steps through as one (the inner
// dim's extent times its stride is the outer one's stride) and drops dims of
// size 1, so that a broadcast or a contiguous block becomes a flat loop (one
// division per element fewer for each dim saved; a flat loop can be vectorised).
void coalesce(kernels::Loop& l) {
  int out = 0;  // dims kept so far, innermost last
  int64_t sizes[kernels::kMaxDims];
  int64_t strides[kernels::kMaxLoopOperands][kernels::kMaxDims];
  for (int d = 0; d < l.ndim; ++d) {
    if (l.sizes[d] == 1) continue;
    bool merge = out > 0;
    for (int k = 0; merge && k < l.n_operands; ++k)
      merge = strides[k][out - 1] == l.strides[k][d] * l.sizes[d];
    if (merge) {
      sizes[out - 1] *= l.sizes[d];
      for (int k = 0; k < l.n_operands; ++k) strides[k][out - 1] = l.strides[k][d];
    } else {
      sizes[out] = l.sizes[d];
      for (int k = 0; k < l.n_operands; ++k) strides[k][out] = l.strides[k][d];
      ++out;
    }
  }
  if (out == 0) {  // a single element
    sizes[0] = 1;
    for (int k = 0; k < l.n_operands; ++k) strides[k][0] = 0;
    out = 1;
  }
  l.ndim = out;
  for (int d = 0; d < out; ++d) {
    l.sizes[d] = sizes[d];
    for (int k = 0; k < l.n_operands; ++k) l.strides[k][d] = strides[k][d];
  }
}

// A CPU scalar input (detail::Elementwise keeps them on the CPU for CUDA
// ops) travels in the loop itself.
void pass_cpu_scalars(kernels::Loop& l, const detail::Elementwise& e) {
  for (size_t i = 0; i < e.inputs().size(); ++i) {
    const Tensor& in = e.inputs()[i];
    if (!in.is_cpu()) continue;
    const int k = static_cast<int>(i) + 1;
    BRASA_INTERNAL_ASSERT(in.numel() == 1 && in.element_size() <= 16, e.op(),
                          ": only a CPU scalar can join a CUDA op");
    std::memcpy(l.scalars[k], in.data_ptr(), static_cast<size_t>(in.element_size()));
    l.data[k] = nullptr;
    for (int d = 0; d < kernels::kMaxDims; ++d) l.strides[k][d] = 0;
  }
}

kernels::Loop plan_loop(const detail::Elementwise& e) {
  kernels::Loop l;
  if (e.flat()) {
    l.ndim = 1;
    l.numel = e.output().numel();
    l.sizes[0] = l.numel;
    l.n_operands = static_cast<int>(e.inputs().size()) + 1;
    for (int k = 0; k < l.n_operands; ++k) {
      l.data[k] = e.flat_data()[k];
      l.strides[k][0] = e.flat_strides()[k];
    }
  } else {
    l = make_loop(e.op(), e.shape());
    add_operand(l, e.output());
    for (const Tensor& in : e.inputs()) add_operand(l, in);
  }
  pass_cpu_scalars(l, e);
  coalesce(l);
  return l;
}

cudaStream_t launch_stream(Device d) {
  const auto index = d.has_index() ? d.index() : current_device();
  if (index != current_device()) set_device(index);
  return getCurrentCUDAStream(index).stream();
}

kernels::Number number_of(const Scalar& s) { return {s.toDouble(), s.toLong()}; }

namespace {

int code(ScalarType t) { return static_cast<int>(t); }

void fill_cuda(const Tensor& dst, const Scalar& v) {
  kernels::Loop l = make_loop("fill_", dst.sizes());
  add_operand(l, dst);
  coalesce(l);
  cudaStream_t s = launch_stream(dst.device());
  kernels::launch_fill(l, code(dst.dtype()), number_of(v), s);
  BRASA_CUDA_LAUNCH_CHECK("fill_", s);
}

void copy_cuda(const Tensor& dst, const Tensor& src) {
  BRASA_CHECK(dst.device() == src.device(), "copy_: the CUDA copy kernel expects one device, got ",
              dst.device(), " and ", src.device());
  kernels::Loop l = make_loop("copy_", dst.sizes());
  add_operand(l, dst);
  add_operand(l, src);
  coalesce(l);
  cudaStream_t s = launch_stream(dst.device());
  kernels::launch_copy(l, code(dst.dtype()), code(src.dtype()), s);
  BRASA_CUDA_LAUNCH_CHECK("copy_", s);
}

// A copy that walks the flipped dims of t backwards: its loop starts at
// their last element and steps with negated strides.
void flip_cuda(const Tensor& out, const Tensor& t, const std::vector<bool>& flipped) {
  kernels::Loop l = make_loop("flip", out.sizes());
  add_operand(l, out);
  add_operand(l, t);
  const int lead = l.ndim - static_cast<int>(t.dim());
  for (int64_t d = 0; d < t.dim(); ++d) {
    const int ld = lead + static_cast<int>(d);
    if (!flipped[static_cast<size_t>(d)] || l.strides[1][ld] == 0) continue;
    l.data[1] += (t.size(d) - 1) * l.strides[1][ld];
    l.strides[1][ld] = -l.strides[1][ld];
  }
  coalesce(l);
  cudaStream_t s = launch_stream(out.device());
  kernels::launch_copy(l, code(out.dtype()), code(t.dtype()), s);
  BRASA_CUDA_LAUNCH_CHECK("flip", s);
}

// Launches a plan's kernel on the current stream, checks it, finishes the plan.
template <class Launch>
void run_plan(detail::Elementwise& e, const Launch& launch) {
  kernels::Loop l = plan_loop(e);
  cudaStream_t s = launch_stream(e.device());
  launch(l, s);
  BRASA_CUDA_LAUNCH_CHECK(e.op(), s);
  e.finish();
}

void binary_cuda(detail::Elementwise& e, BinaryOp op, ScalarType t, const Scalar& alpha) {
  BRASA_CHECK(t != kBool || op == BinaryOp::Add || op == BinaryOp::Mul || op == BinaryOp::Minimum ||
                  op == BinaryOp::Maximum,
              e.op(), ": not implemented for 'Bool' on CUDA");
  run_plan(e, [&](const kernels::Loop& l, cudaStream_t s) {
    kernels::launch_binary(l, static_cast<int>(op), code(t), number_of(alpha), s);
  });
}

void compare_cuda(detail::Elementwise& e, CompareOp op, ScalarType t) {
  run_plan(e, [&](const kernels::Loop& l, cudaStream_t s) {
    kernels::launch_compare(l, static_cast<int>(op), code(t), s);
  });
}

void bitwise_cuda(detail::Elementwise& e, BitwiseOp op, ScalarType t) {
  BRASA_CHECK(isIntegralType(t, /*includeBool=*/true), e.op(), ": not implemented for '", t,
              "' (integral or bool tensors expected)");
  run_plan(e, [&](const kernels::Loop& l, cudaStream_t s) {
    kernels::launch_bitwise(l, static_cast<int>(op), code(t), s);
  });
}

void unary_cuda(detail::Elementwise& e, UnaryOp op, ScalarType t) {
  run_plan(e, [&](const kernels::Loop& l, cudaStream_t s) {
    kernels::launch_unary(l, static_cast<int>(op), code(t), code(e.inputs()[0].dtype()), s);
  });
}

void where_cuda(detail::Elementwise& e, ScalarType t) {
  run_plan(e,
           [&](const kernels::Loop& l, cudaStream_t s) { kernels::launch_where(l, code(t), s); });
}

void threshold_backward_cuda(detail::Elementwise& e, ScalarType t) {
  run_plan(e, [&](const kernels::Loop& l, cudaStream_t s) {
    kernels::launch_threshold_backward(l, code(t), s);
  });
}

void lerp_cuda(detail::Elementwise& e, ScalarType t) {
  BRASA_CHECK(isFloatingType(t), "lerp: not implemented for '", t, "' on CUDA");
  run_plan(e, [&](const kernels::Loop& l, cudaStream_t s) { kernels::launch_lerp(l, code(t), s); });
}

void addc_cuda(detail::Elementwise& e, ScalarType t, const Scalar& value, bool div) {
  BRASA_CHECK(t != kBool, e.op(), ": not implemented for 'Bool' on CUDA");
  run_plan(e, [&](const kernels::Loop& l, cudaStream_t s) {
    kernels::launch_addc(l, code(t), number_of(value), div, s);
  });
}

void clamp_cuda(detail::Elementwise& e, ScalarType t, const std::optional<Scalar>& lo,
                const std::optional<Scalar>& hi) {
  BRASA_CHECK(t != kBool, "clamp: not implemented for 'Bool'");
  run_plan(e, [&](const kernels::Loop& l, cudaStream_t s) {
    kernels::launch_clamp(l, code(t), lo.has_value(), lo ? number_of(*lo) : kernels::Number{},
                          hi.has_value(), hi ? number_of(*hi) : kernels::Number{}, s);
  });
}

void isclose_cuda(detail::Elementwise& e, ScalarType t, double rtol, double atol, bool equal_nan) {
  run_plan(e, [&](const kernels::Loop& l, cudaStream_t s) {
    kernels::launch_isclose(l, code(t), rtol, atol, equal_nan, s);
  });
}

void nan_to_num_cuda(detail::Elementwise& e, ScalarType t, double nan, double posinf,
                     double neginf) {
  BRASA_CHECK(isFloatingType(t), "nan_to_num: not implemented for '", t, "' on CUDA");
  run_plan(e, [&](const kernels::Loop& l, cudaStream_t s) {
    kernels::launch_nan_to_num(l, code(t), nan, posinf, neginf, s);
  });
}

}  // namespace

void register_elementwise_kernels() {
  register_kernel<FillKernel>(kCUDA, fill_cuda);
  register_kernel<CopyKernel>(kCUDA, copy_cuda);
  register_kernel<FlipKernel>(kCUDA, flip_cuda);
  register_kernel<BinaryKernel>(kCUDA, binary_cuda);
  register_kernel<CompareKernel>(kCUDA, compare_cuda);
  register_kernel<BitwiseKernel>(kCUDA, bitwise_cuda);
  register_kernel<UnaryKernel>(kCUDA, unary_cuda);
  register_kernel<WhereKernel>(kCUDA, where_cuda);
  register_kernel<ThresholdBackwardKernel>(kCUDA, threshold_backward_cuda);
  register_kernel<LerpKernel>(kCUDA, lerp_cuda);
  register_kernel<AddcKernel>(kCUDA, addc_cuda);
  register_kernel<ClampKernel>(kCUDA, clamp_cuda);
  register_kernel<IsCloseKernel>(kCUDA, isclose_cuda);
  register_kernel<NanToNumKernel>(kCUDA, nan_to_num_cuda);
}

}  // namespace brasa::cuda
