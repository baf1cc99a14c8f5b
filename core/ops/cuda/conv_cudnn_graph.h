#pragma once
// conv2d through cuDNN's graph (backend) API: the execution plan of each
// (direction, device, dtype, math mode, geometry) is built once from cuDNN's
// heuristics and cached, so a call costs a variant pack and one
// cudnnBackendExecute. The legacy calls (cudnnConvolutionForward, ...) build
// their plan inside every call: about twice the host time per convolution.
// conv_cudnn.cpp falls back to them where no plan could be built.
#include <brasa/cuda/stream.h>
#include <brasa/ops/kernels/conv.h>
#include <cudnn.h>

#include <cstdint>
#include <memory>

namespace brasa::cuda::graph {

enum class ConvDirection { kForward, kBackwardData, kBackwardFilter };

struct ConvPlan;  // a finalized execution plan and its workspace size

// The plan for one convolution (groups == 1, NCHW, contiguous operands), or
// null where cuDNN builds none (then the caller uses the legacy API).
// `deterministic` keeps only deterministic engines; `allow_tf32` lets float
// run on tensor cores.
std::shared_ptr<ConvPlan> conv_plan(ConvDirection dir, DeviceIndex device, ScalarType dtype,
                                    const detail::ConvGeometry& g, bool allow_tf32,
                                    bool deterministic, cudnnHandle_t handle);
int64_t workspace_size(const ConvPlan& plan);
// Runs it: x, w, y are the forward's input, weight and output (for the
// backward directions, dx / dw / dy take their places); pointers 16-byte aligned.
void execute(const ConvPlan& plan, cudnnHandle_t handle, void* x, void* w, void* y,
             void* workspace);
// Whether a pointer meets the alignment the plans are built for.
bool aligned(const void* p);

}  // namespace brasa::cuda::graph
