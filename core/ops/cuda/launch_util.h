#pragma once
// Host-side helpers of the CUDA kernel table functions: the strided loop of
// loop.h built from tensors or an elementwise plan, and the stream to launch on.
#include <brasa/ops/cuda/loop.h>
#include <brasa/ops/elementwise.h>
#include <brasa/tensor/tensor.h>

namespace brasa::cuda {

// An empty loop over `shape`; add the operands with add_operand (output first).
kernels::Loop make_loop(const char* op, IntArrayRef shape);
// Adds `t`, broadcast to the loop's shape (its dims aligned to the right).
void add_operand(kernels::Loop& l, const Tensor& t);
// The loop of an elementwise plan: its output, then its inputs.
kernels::Loop plan_loop(const detail::Elementwise& e);
// The calling thread's current stream on `d`, which is made the current device.
cudaStream_t launch_stream(Device d);
kernels::Number number_of(const Scalar& s);

}  // namespace brasa::cuda
