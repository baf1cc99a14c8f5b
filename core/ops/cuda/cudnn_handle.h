#pragma once
// cuDNN for Brasa's ops (conv_cudnn.cpp, batch_norm_cudnn.cpp): one handle
// per thread and device, bound to the current stream at each use; errors as
// brasa::Error naming the op.
#include <brasa/cuda/stream.h>
#include <brasa/tensor/device.h>
#include <brasa/tensor/scalar_type.h>
#include <cudnn.h>

namespace brasa::cuda {

cudnnHandle_t cudnn_handle(DeviceIndex device);
void check_cudnn(const char* op, const char* call, cudnnStatus_t status);
// float, double, half or bfloat16; anything else is an error naming `op`.
cudnnDataType_t cudnn_type(ScalarType t, const char* op);

}  // namespace brasa::cuda

#define BRASA_CUDNN(op, call) ::brasa::cuda::check_cudnn(op, #call, (call))
