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

kernels::Loop plan_loop(const detail::Elementwise& e) {
  if (e.flat()) {
    kernels::Loop l;
    l.ndim = 1;
    l.numel = e.output().numel();
    l.sizes[0] = l.numel;
    l.n_operands = static_cast<int>(e.inputs().size()) + 1;
    for (int k = 0; k < l.n_operands; ++k) {
      l.data[k] = e.flat_data()[k];
      l.strides[k][0] = e.flat_strides()[k];
    }
    return l;
  }
  kernels::Loop l = make_loop(e.op(), e.shape());
  add_operand(l, e.output());
  for (const Tensor& in : e.inputs()) add_operand(l, in);
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
  cudaStream_t s = launch_stream(dst.device());
  kernels::launch_copy(l, code(dst.dtype()), code(src.dtype()), s);
  BRASA_CUDA_LAUNCH_CHECK("copy_", s);
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

}  // namespace

void register_elementwise_kernels() {
  register_kernel<FillKernel>(kCUDA, fill_cuda);
  register_kernel<CopyKernel>(kCUDA, copy_cuda);
  register_kernel<BinaryKernel>(kCUDA, binary_cuda);
  register_kernel<CompareKernel>(kCUDA, compare_cuda);
  register_kernel<BitwiseKernel>(kCUDA, bitwise_cuda);
  register_kernel<UnaryKernel>(kCUDA, unary_cuda);
  register_kernel<WhereKernel>(kCUDA, where_cuda);
  register_kernel<ThresholdBackwardKernel>(kCUDA, threshold_backward_cuda);
}

}  // namespace brasa::cuda
