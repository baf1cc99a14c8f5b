// Complex tensors on CUDA: the ops work through the real view, so every one
// runs on the device with the real kernels; results and gradients against
// the CPU's, and the errors for parts on two devices (skipped without a
// device).
#include <brasa/cuda/stream.h>
#include <brasa/torch.h>

#include "../test_util.h"

namespace brasa {
namespace {

#define REQUIRE_CUDA() \
  if (!cuda::is_available()) GTEST_SKIP() << "no CUDA device"

Tensor parts(std::vector<int64_t> shape, double shift) {
  shape.push_back(2);
  return torch::sin(torch::arange(compute_numel(shape), kDouble).view(shape) * 0.7 + shift);
}

TEST(CudaComplex, OpsAndGradientsMatchTheCpu) {
  REQUIRE_CUDA();
  Tensor x = parts({3, 4}, 0.1), y = parts({4, 3}, 0.5) + 1.5;
  auto run = [](const Tensor& xp, const Tensor& yp) {
    Tensor a = xp.detach().requires_grad_(), b = yp.detach().requires_grad_();
    Tensor z = torch::view_as_complex(a), w = torch::view_as_complex(b);
    Tensor out = torch::cat({torch::view_as_real(torch::matmul(z, w)).flatten(),
                             torch::view_as_real(z / w.t()).flatten(),
                             torch::view_as_real(z.exp() * w.t().sqrt()).flatten(),
                             torch::view_as_real(z.prod(1)).flatten(), z.abs().flatten(),
                             z.angle().flatten(), torch::view_as_real(z.sgn()).flatten()});
    (out * torch::cos(torch::arange(out.numel(), out.options()))).sum().backward();
    return std::vector<Tensor>{out.detach(), a.grad(), b.grad()};
  };
  std::vector<Tensor> cpu = run(x, y), gpu = run(x.cuda(), y.cuda());
  for (size_t i = 0; i < cpu.size(); ++i) {
    ASSERT_TRUE(gpu[i].is_cuda()) << i;
    EXPECT_TRUE(gpu[i].cpu().allclose(cpu[i], 1e-10, 1e-12)) << i;
  }
}

TEST(CudaComplex, PartsOnTwoDevicesAreAnError) {
  REQUIRE_CUDA();
  Tensor re = torch::ones({3}, kDouble), im = torch::ones({3}, kDouble).cuda();
  EXPECT_ERROR("complex: expected both inputs on one device, got cpu and cuda:0",
               torch::complex(re, im));
  EXPECT_ERROR("polar: expected both inputs on one device, got cuda:0 and cpu",
               torch::polar(im, re));
}

}  // namespace
}  // namespace brasa
