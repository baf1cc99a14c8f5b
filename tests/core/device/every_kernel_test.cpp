// Every op code has a CPU kernel, and the seam is complete: a test device
// whose kernels are the CPU's (its memory is host memory) trains a small
// network to the same numbers as the CPU, so no op reaches for the CPU
// behind the registry's back.
#include <brasa/device/device_runtime.h>
#include <brasa/ops/kernel_table.h>
#include <brasa/ops/kernels/conv.h>
#include <brasa/ops/kernels/copy.h>
#include <brasa/ops/kernels/elementwise.h>
#include <brasa/ops/kernels/indexing.h>
#include <brasa/ops/kernels/linalg.h>
#include <brasa/ops/kernels/normalization.h>
#include <brasa/ops/kernels/pooling.h>
#include <brasa/ops/kernels/reduction.h>
#include <brasa/ops/kernels/sort.h>

#include <cstdlib>
#include <cstring>

#include "../test_util.h"

namespace brasa {
namespace {

// Calls f.template operator()<Op>() for every op code.
template <class F>
void for_each_op_code(F&& f) {
  f.template operator()<BinaryKernel>();
  f.template operator()<CompareKernel>();
  f.template operator()<BitwiseKernel>();
  f.template operator()<UnaryKernel>();
  f.template operator()<LerpKernel>();
  f.template operator()<AddcKernel>();
  f.template operator()<WhereKernel>();
  f.template operator()<ClampKernel>();
  f.template operator()<IsCloseKernel>();
  f.template operator()<NanToNumKernel>();
  f.template operator()<ThresholdBackwardKernel>();
  f.template operator()<CopyKernel>();
  f.template operator()<FillKernel>();
  f.template operator()<FlipKernel>();
  f.template operator()<ReduceRowsKernel>();
  f.template operator()<ArgExtremeKernel>();
  f.template operator()<MapRowsKernel>();
  f.template operator()<SoftmaxBackwardKernel>();
  f.template operator()<AdvancedIndexKernel>();
  f.template operator()<AdvancedIndexPutKernel>();
  f.template operator()<ScatterKernel>();
  f.template operator()<GatherKernel>();
  f.template operator()<IndexSelectKernel>();
  f.template operator()<MaskedSelectKernel>();
  f.template operator()<MaskedPutKernel>();
  f.template operator()<NonzeroKernel>();
  f.template operator()<ClassTargetKernel>();
  f.template operator()<NllLossKernel>();
  f.template operator()<NllLossBackwardKernel>();
  f.template operator()<GroupNormKernel>();
  f.template operator()<GroupNormBackwardKernel>();
  f.template operator()<GemmKernel>();
  f.template operator()<BmmKernel>();
  f.template operator()<Im2ColKernel>();
  f.template operator()<Col2ImKernel>();
  f.template operator()<ConvForwardKernel>();
  f.template operator()<MaxPool2dKernel>();
  f.template operator()<SortRowsKernel>();
  f.template operator()<UniqueKernel>();
}

TEST(KernelTable, TheCPUImplementsEveryOpCode) {
  int n = 0;
  for_each_op_code([&]<class Op>() {
    EXPECT_NE(kernel<Op>(Device(kCPU)), nullptr) << Op::name;
    ++n;
  });
  EXPECT_EQ(n, 39);
}

const Device kHostDevice(kPrivateUse1, 0);

class HostAllocator final : public Allocator {
 public:
  DataPtr allocate(size_t nbytes) override {
    void* p = std::aligned_alloc(64, (nbytes + 63) / 64 * 64 + 64);
    return DataPtr(p, p, std::free, kHostDevice);
  }
};
class HostRuntime final : public DeviceRuntime {
 public:
  DeviceType type() const override { return kPrivateUse1; }
  int device_count() const override { return 1; }
  Allocator* allocator(Device) override { return &allocator_; }
  void copy_bytes(void* dst, Device, const void* src, Device, size_t n) override {
    ++copies;
    if (n) std::memcpy(dst, src, n);
  }
  int copies = 0;

 private:
  HostAllocator allocator_;
};

struct NetImpl : nn::Module {
  NetImpl() {
    conv = register_module("conv", nn::Conv2d(nn::Conv2dOptions(1, 4, 3).padding(1)));
    fc = register_module("fc", nn::Linear(4 * 4 * 4, 3));
  }
  Tensor forward(Tensor x) {
    x = max_pool2d(relu(conv->forward(x)), {2});
    return fc->forward(x.flatten(1));
  }
  nn::Conv2d conv{nullptr};
  nn::Linear fc{nullptr};
};

// Three SGD steps of a conv + pool + linear network with cross-entropy;
// returns the losses and the final parameters (on the CPU).
std::vector<Tensor> train(Device device) {
  manual_seed(3);
  NetImpl net;
  net.to(device);
  optim::SGD opt(net.parameters(), optim::SGDOptions(0.1).momentum(0.9));
  manual_seed(4);
  Tensor x = randn({6, 1, 8, 8}).to(device);
  Tensor y = tensor({0, 1, 2, 1, 0, 2}).to(device);
  std::vector<Tensor> out;
  for (int step = 0; step < 3; ++step) {
    opt.zero_grad();
    Tensor loss = nn::functional::cross_entropy(net.forward(x), y);
    loss.backward();
    opt.step();
    EXPECT_EQ(loss.device(), device);
    out.push_back(loss.detach().to(Device(kCPU)));
  }
  for (const auto& p : net.parameters()) {
    EXPECT_EQ(p.device(), device);
    out.push_back(p.detach().to(Device(kCPU)));
  }
  return out;
}

TEST(KernelTable, ADeviceWithTheCPUsKernelsTrainsLikeTheCPU) {
  HostRuntime runtime;
  register_device_runtime(&runtime);
  for_each_op_code(
      [&]<class Op>() { register_kernel<Op>(kPrivateUse1, kernel<Op>(Device(kCPU))); });
  std::vector<Tensor> on_cpu = train(Device(kCPU));
  std::vector<Tensor> on_device = train(kHostDevice);
  for_each_op_code([&]<class Op>() { register_kernel<Op>(kPrivateUse1, nullptr); });
  unregister_device_runtime(kPrivateUse1);
  ASSERT_EQ(on_cpu.size(), on_device.size());
  for (size_t i = 0; i < on_cpu.size(); ++i) EXPECT_TRUE(on_cpu[i].equal(on_device[i])) << i;
  EXPECT_GE(runtime.copies, 2);  // the data went in and the results came out through the runtime
}

}  // namespace
}  // namespace brasa
