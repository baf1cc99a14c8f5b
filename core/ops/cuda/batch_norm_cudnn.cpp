// Batch norm in training mode through cuDNN (spatial mode: statistics per
// channel over N and the spatial dims), forward and backward each one fused
// pass, instead of the composite's dozen of reductions and elementwise ops.
// [N, C], [N, C, L] and [N, C, H, W] inputs are all seen as [N, C, H, W].
#include <brasa/cuda/stream.h>
#include <brasa/ops/cuda/cudnn_handle.h>
#include <brasa/ops/cuda/register.h>
#include <brasa/ops/factory.h>
#include <brasa/ops/kernel_table.h>
#include <brasa/ops/kernels/normalization.h>

namespace brasa::cuda {
namespace {

// x's descriptor (as 4-D NCHW) and the derived per-channel one.
struct BnDescriptors {
  cudnnTensorDescriptor_t x = nullptr, channel = nullptr;

  BnDescriptors(const Tensor& t, const char* op) {
    const int64_t N = t.size(0), C = t.size(1);
    const int64_t H = t.dim() > 2 ? t.size(2) : 1, W = t.dim() > 3 ? t.size(3) : 1;
    BRASA_CUDNN(op, cudnnCreateTensorDescriptor(&x));
    BRASA_CUDNN(op, cudnnCreateTensorDescriptor(&channel));
    BRASA_CUDNN(op, cudnnSetTensor4dDescriptor(x, CUDNN_TENSOR_NCHW, cudnn_type(t.dtype(), op),
                                               int(N), int(C), int(H), int(W)));
    BRASA_CUDNN(op, cudnnDeriveBNTensorDescriptor(channel, x, CUDNN_BATCHNORM_SPATIAL));
  }
  ~BnDescriptors() {
    cudnnDestroyTensorDescriptor(channel);
    cudnnDestroyTensorDescriptor(x);
  }
  BnDescriptors(const BnDescriptors&) = delete;
  BnDescriptors& operator=(const BnDescriptors&) = delete;
};

// The dtype of the per-channel tensors cuDNN takes.
ScalarType stats_type(ScalarType t) { return t == kDouble ? kDouble : kFloat; }

// A per-channel tensor as cuDNN wants it: contiguous, of the statistics
// dtype; `fill` when undefined.
Tensor channel_tensor(const Tensor& t, int64_t C, ScalarType st, Device d, double fill) {
  if (!t.defined()) return full({C}, fill, TensorOptions().dtype(st).device(d));
  return t.to(st).contiguous();
}

struct Scale {
  float f;
  double d;
  const void* of(ScalarType t) const { return t == kDouble ? static_cast<const void*>(&d) : &f; }
};
constexpr Scale kOne{1.f, 1.0}, kZero{0.f, 0.0};

std::tuple<Tensor, Tensor, Tensor> batch_norm_cudnn(const Tensor& input, const Tensor& weight,
                                                    const Tensor& bias, const Tensor& running_mean,
                                                    const Tensor& running_var, double momentum,
                                                    double eps) {
  const char* op = "batch_norm";
  const Device dev = input.device();
  CUDAGuard guard(dev.index());
  const int64_t C = input.size(1);
  const ScalarType st = stats_type(input.dtype());
  Tensor x = input.contiguous();
  Tensor y = empty(x.sizes(), x.options());
  Tensor scale = channel_tensor(weight, C, st, dev, 1.0);
  Tensor shift = channel_tensor(bias, C, st, dev, 0.0);
  Tensor save_mean = empty({C}, TensorOptions().dtype(st).device(dev));
  Tensor save_invstd = empty({C}, TensorOptions().dtype(st).device(dev));
  // cuDNN updates the running statistics in place: hand it tensors it can
  // write (contiguous, of the statistics dtype) and copy back if they are copies.
  const bool running = running_mean.defined() && running_var.defined();
  Tensor rm = running ? channel_tensor(running_mean, C, st, dev, 0.0) : Tensor();
  Tensor rv = running ? channel_tensor(running_var, C, st, dev, 1.0) : Tensor();
  BnDescriptors desc(x, op);
  BRASA_CUDNN(
      op, cudnnBatchNormalizationForwardTraining(
              cudnn_handle(dev.index()), CUDNN_BATCHNORM_SPATIAL, kOne.of(st), kZero.of(st), desc.x,
              x.data_ptr(), desc.x, y.data_ptr(), desc.channel, scale.data_ptr(), shift.data_ptr(),
              momentum, running ? rm.data_ptr() : nullptr, running ? rv.data_ptr() : nullptr, eps,
              save_mean.data_ptr(), save_invstd.data_ptr()));
  if (running) {
    Tensor mean_out = running_mean, var_out = running_var;  // handles to the caller's tensors
    if (!rm.is_same(mean_out)) mean_out.copy_(rm);
    if (!rv.is_same(var_out)) var_out.copy_(rv);
  }
  return {y, save_mean, save_invstd};
}

std::tuple<Tensor, Tensor, Tensor> batch_norm_backward_cudnn(
    const Tensor& grad_out, const Tensor& input, const Tensor& weight, const Tensor& save_mean,
    const Tensor& save_invstd, double eps) {
  const char* op = "batch_norm backward";
  const Device dev = input.device();
  CUDAGuard guard(dev.index());
  const int64_t C = input.size(1);
  const ScalarType st = stats_type(input.dtype());
  Tensor x = input.contiguous(), dy = grad_out.contiguous();
  Tensor scale = channel_tensor(weight, C, st, dev, 1.0);
  Tensor dx = empty(x.sizes(), x.options());
  Tensor dscale = empty({C}, TensorOptions().dtype(st).device(dev));
  Tensor dshift = empty({C}, TensorOptions().dtype(st).device(dev));
  BnDescriptors desc(x, op);
  BRASA_CUDNN(op, cudnnBatchNormalizationBackward(
                      cudnn_handle(dev.index()), CUDNN_BATCHNORM_SPATIAL, kOne.of(st), kZero.of(st),
                      kOne.of(st), kZero.of(st), desc.x, x.data_ptr(), desc.x, dy.data_ptr(),
                      desc.x, dx.data_ptr(), desc.channel, scale.data_ptr(), dscale.data_ptr(),
                      dshift.data_ptr(), eps, save_mean.data_ptr(), save_invstd.data_ptr()));
  const ScalarType wt = weight.defined() ? weight.dtype() : st;
  return {dx, dscale.to(wt), dshift.to(wt)};
}

}  // namespace

void register_cudnn_batch_norm_kernels() {
  register_kernel<BatchNormKernel>(kCUDA, batch_norm_cudnn);
  register_kernel<BatchNormBackwardKernel>(kCUDA, batch_norm_backward_cudnn);
}

}  // namespace brasa::cuda
