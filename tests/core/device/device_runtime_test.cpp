// The device seam without a GPU: a test device (PrivateUse1) registers a
// runtime whose memory is host memory it counts, and kernels that count
// their calls and run the CPU's. Ops on its tensors must reach exactly
// those kernels, copies to and from it must go through its runtime, and
// what it lacks must be a clear error.
#include <brasa/device/device_runtime.h>
#include <brasa/nn/functional.h>
#include <brasa/ops/kernel_table.h>
#include <brasa/ops/kernels/copy.h>
#include <brasa/ops/kernels/elementwise.h>

#include <cstdlib>
#include <cstring>

#include "../test_util.h"

namespace brasa {
namespace {

const Device kTestDevice(kPrivateUse1, 0);

struct Counts {
  int allocations = 0, copies = 0, binary = 0, copy_kernel = 0, fill = 0;
};
Counts counts;

class TestAllocator final : public Allocator {
 public:
  DataPtr allocate(size_t nbytes) override {
    ++counts.allocations;
    void* p = std::malloc(nbytes ? nbytes : 1);
    return DataPtr(p, p, std::free, kTestDevice);
  }
};

class TestRuntime final : public DeviceRuntime {
 public:
  DeviceType type() const override { return kPrivateUse1; }
  int device_count() const override { return 1; }
  Allocator* allocator(Device) override { return &allocator_; }
  void copy_bytes(void* dst, Device, const void* src, Device, size_t n) override {
    ++counts.copies;
    std::memcpy(dst, src, n);
  }

 private:
  TestAllocator allocator_;
};

// The test device's kernels: count, then run the CPU's (its memory is host memory).
template <class Op>
typename Op::Fn cpu_kernel() {
  return kernel<Op>(Device(kCPU));
}
void binary_on_test_device(detail::Elementwise& e, BinaryOp op, ScalarType t, const Scalar& alpha) {
  ++counts.binary;
  cpu_kernel<BinaryKernel>()(e, op, t, alpha);
}
void copy_on_test_device(const Tensor& dst, const Tensor& src) {
  ++counts.copy_kernel;
  cpu_kernel<CopyKernel>()(dst, src);
}
void fill_on_test_device(const Tensor& dst, const Scalar& v) {
  ++counts.fill;
  cpu_kernel<FillKernel>()(dst, v);
}

class DeviceSeam : public ::testing::Test {
 protected:
  void SetUp() override {
    counts = {};
    register_device_runtime(&runtime_);
    register_kernel<BinaryKernel>(kPrivateUse1, binary_on_test_device);
    register_kernel<CopyKernel>(kPrivateUse1, copy_on_test_device);
    register_kernel<FillKernel>(kPrivateUse1, fill_on_test_device);
  }
  void TearDown() override {
    register_kernel<BinaryKernel>(kPrivateUse1, nullptr);
    register_kernel<CopyKernel>(kPrivateUse1, nullptr);
    register_kernel<FillKernel>(kPrivateUse1, nullptr);
    unregister_device_runtime(kPrivateUse1);
  }
  TestRuntime runtime_;
};

TEST_F(DeviceSeam, FactoriesAllocateThroughTheRuntimeAndFillThroughItsKernel) {
  Tensor z = zeros({2, 3}, kTestDevice);
  EXPECT_EQ(z.device(), kTestDevice);
  EXPECT_EQ(counts.allocations, 1);
  EXPECT_EQ(counts.fill, 1);
  Tensor o = ones({4}, TensorOptions().device(kTestDevice).dtype(kLong));
  EXPECT_EQ(counts.fill, 2);
  EXPECT_EQ(o.device().str(), "privateuseone:0");
  // Values computed on the host (arange) arrive by a copy through the runtime.
  Tensor a = arange(5, TensorOptions().device(kTestDevice));
  EXPECT_EQ(a.device(), kTestDevice);
  EXPECT_GE(counts.copies, 1);
  EXPECT_VALUES(a.cpu(), {0, 1, 2, 3, 4});
}

TEST_F(DeviceSeam, ElementwiseOpsRunTheDevicesKernel) {
  Tensor a = tensor({1.0, 2.0, 3.0}).to(kTestDevice);
  Tensor b = tensor({10.0, 20.0, 30.0}).to(kTestDevice);
  EXPECT_EQ(counts.copies, 2);
  Tensor c = a + b * 2;  // the number 2 joins as a 0-dim tensor on the device
  EXPECT_EQ(counts.binary, 2);
  EXPECT_EQ(c.device(), kTestDevice);
  Tensor d = c * tensor(1.0);  // a 0-dim CPU tensor may join a device op, as in PyTorch
  EXPECT_EQ(d.device(), kTestDevice);
  const int copies = counts.copies;
  Tensor back = d.to(Device(kCPU));
  EXPECT_EQ(counts.copies, copies + 1);
  EXPECT_TRUE(back.is_cpu());
  EXPECT_VALUES(back, {21, 42, 63});
  a.add_(1);
  EXPECT_EQ(counts.binary, 4);
  EXPECT_VALUES(a.cpu(), {2, 3, 4});
}

TEST_F(DeviceSeam, StridedAndConvertingCopiesOnTheDevice) {
  Tensor m = arange(6, TensorOptions().dtype(kFloat)).view({2, 3}).to(kTestDevice);
  Tensor t = m.t().contiguous();  // clone: the device's copy kernel
  EXPECT_GE(counts.copy_kernel, 1);
  EXPECT_VALUES(t.cpu(), {0, 3, 1, 4, 2, 5});
  Tensor d = m.to(kDouble);  // same device, new dtype
  EXPECT_EQ(d.device(), kTestDevice);
  EXPECT_EQ(d.dtype(), kDouble);
  // Into a strided CPU destination: moved as bytes, then placed by the CPU's kernel.
  Tensor dst = zeros({3, 2}).t();
  dst.copy_(m);
  EXPECT_VALUES(dst, {0, 1, 2, 3, 4, 5});
}

TEST_F(DeviceSeam, GradientsFlowBackAcrossTheCopy) {
  Tensor x = tensor({1.0, -2.0}).requires_grad_();
  Tensor y = x.to(kTestDevice);
  Tensor z = (y * y).to(Device(kCPU)).sum();
  z.backward();
  EXPECT_TRUE(x.grad().is_cpu());
  EXPECT_VALUES(x.grad(), {2, -4});
}

// nll_loss's class targets must be on the input's device: said before any
// kernel reads them.
TEST_F(DeviceSeam, AClassTargetOnAnotherDeviceIsAClearError) {
  Tensor logits = ones({2, 3}, kTestDevice);
  EXPECT_ERROR(
      "nll_loss: expected the target on privateuseone:0 (the input's device), got it on cpu",
      nn::functional::nll_loss(logits, tensor({int64_t(0), 2})));
}

TEST_F(DeviceSeam, WhatTheDeviceLacksIsAClearError) {
  Tensor a = ones({2}, kTestDevice);
  EXPECT_ERROR("not implemented for device privateuseone:0", a.exp());
  EXPECT_ERROR("expected all tensors to be on the same device", a + ones({2}));
  EXPECT_ERROR("device privateuseone:3 does not exist (1 privateuseone device(s) present)",
               zeros({2}, Device(kPrivateUse1, 3)));
  EXPECT_ERROR("a runtime for privateuseone is already registered",
               register_device_runtime(&runtime_));
}

// Growing a device storage (resize_, or an out= result that is too small)
// allocates through the runtime and moves the old bytes with its copy: the
// memory may not be host-addressable.
TEST_F(DeviceSeam, GrowingADeviceStorageCopiesThroughTheRuntime) {
  Tensor t = tensor({1.0f, 2.0f, 3.0f}).to(kTestDevice);
  const int allocations = counts.allocations, copies = counts.copies;
  t.resize_({2, 3});
  EXPECT_EQ(counts.allocations, allocations + 1);
  EXPECT_EQ(counts.copies, copies + 1);
  EXPECT_EQ(t.device(), kTestDevice);
  EXPECT_SHAPE(t, {2, 3});
  EXPECT_VALUES(t.cpu().view({-1}).slice(0, 0, 3), {1, 2, 3});
  t.resize_({2});  // shrinking keeps the storage
  EXPECT_EQ(counts.allocations, allocations + 1);

  Tensor a = tensor({1.0f, 2.0f, 3.0f, 4.0f}).to(kTestDevice);
  Tensor out = empty({0}, kTestDevice);
  add_out(out, a, a);
  EXPECT_SHAPE(out, {4});
  EXPECT_VALUES(out.cpu(), {2, 4, 6, 8});

  EXPECT_ERROR("set_: expected source on privateuseone:0, got cpu",
               zeros({2}, kTestDevice).set_(zeros({2})));
}

TEST_F(DeviceSeam, MixingDevicesIsAClearError) {
  Tensor m = ones({2, 2}, kTestDevice);
  EXPECT_ERROR("mm: expected mat1 and mat2 on the same device, got privateuseone:0 and cpu",
               mm(m, ones({2, 2})));
  using namespace indexing;
  Tensor idx = tensor({0}).to(kTestDevice);
  EXPECT_ERROR("index: indices on privateuseone:0 for a tensor on cpu (expected the same device)",
               ones({3}).index({idx}));
  EXPECT_ERROR(
      "masked_select: mask on privateuseone:0 for a tensor on cpu (expected the same device)",
      masked_select(ones({3}), tensor({true, false, true}).to(kTestDevice)));
  Tensor target = zeros({3});
  EXPECT_ERROR(
      "index_put_: values on privateuseone:0 for a tensor on cpu (expected the same device)",
      index_put_(target, {tensor({0, 2})}, ones({2}).to(kTestDevice)));
  EXPECT_ERROR("move_to: the allocator gives memory on privateuseone:0 but the storage is on cpu",
               ones({2}).storage()->move_to(runtime_.allocator(kTestDevice)));
}

TEST(DeviceRuntime, MissingDevicesAndTheCPURuntime) {
  EXPECT_EQ(find_device_runtime(kPrivateUse1), nullptr);
  EXPECT_ERROR("empty: device privateuseone is not available in this build",
               empty({2}, Device("privateuseone")));
  // "... in this build" in a CPU-only build, "...: no cuda device is present (why)" in a
  // CUDA build on a machine without a usable device.
  if (!cuda::is_available())
    EXPECT_ERROR("to: device cuda:0 is not available", ones({2}).to(Device("cuda:0")));
  DeviceRuntime& cpu = device_runtime("test", Device(kCPU));
  EXPECT_EQ(cpu.type(), kCPU);
  EXPECT_EQ(cpu.current_stream(Device(kCPU)).id, 0);
  Event e(kCPU);
  e.record(cpu.current_stream(Device(kCPU)));
  EXPECT_TRUE(e.query());
  { DeviceGuard g{Device(kCPU)}; }
  EXPECT_ERROR("unregister_device_runtime: the CPU runtime is built in",
               unregister_device_runtime(kCPU));
}

}  // namespace
}  // namespace brasa
