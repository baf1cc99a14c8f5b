// The CUDA entry of random numbers (random_kernels.cu): Philox blocks
// keyed by the generator's seed, at its device offset.
#include <brasa/cuda/cuda_check.h>
#include <brasa/ops/cuda/launch_util.h>
#include <brasa/ops/cuda/register.h>
#include <brasa/ops/kernel_table.h>
#include <brasa/ops/kernels/random.h>

namespace brasa::cuda {
namespace {

uint64_t random_cuda(const Tensor& out, RandomDistribution kind, double a, double b, uint64_t seed,
                     uint64_t offset) {
  const int k = static_cast<int>(kind);
  const int dtype = static_cast<int>(out.dtype());
  BRASA_CHECK(kind == RandomDistribution::kBernoulli || kind == RandomDistribution::kRandomInt ||
                  out.is_floating_point(),
              "random: uniform and normal numbers need a floating point tensor, got ", out.dtype());
  const uint64_t range =
      kind == RandomDistribution::kRandomInt ? static_cast<uint64_t>(int64_t(b) - int64_t(a)) : 0;
  cudaStream_t s = launch_stream(out.device());
  kernels::launch_random(out.data_ptr(), out.numel(), dtype, k, a, b, range, seed, offset, s);
  BRASA_CUDA_LAUNCH_CHECK("random", s);
  const int per = kernels::per_counter(k, dtype);
  return static_cast<uint64_t>((out.numel() + per - 1) / per);
}

}  // namespace

void register_random_kernels() { register_kernel<RandomFillKernel>(kCUDA, random_cuda); }

}  // namespace brasa::cuda
