// CUDA benchmarks (CUDA builds, on a machine with a GPU): Brasa beside the
// machine's own limits, measured in one process and printed as `ratio` lines;
// cuda_bench_torch.py measures the same with PyTorch (scripts/bench cuda
// prints brasa/torch ratios from both):
//   tiny_op      host time per call of a 1-element add (no synchronisation)
//   add_256MB    float32 c = a + b on 64 Mi elements, GB/s, against a
//                device-to-device cudaMemcpy of the same bytes
//   gemm_4096    float32 mm 4096^3 through Brasa against cublasSgemm directly
//   mlp_step     an MNIST-sized MLP training step (784-256-10, batch 64, SGD),
//                and the cudaMallocs made after the second step (should be 0)
#include <brasa/cuda/memory.h>
#include <brasa/cuda/stream.h>
#include <brasa/torch.h>
#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

void device_sync() { cudaDeviceSynchronize(); }

// The best of `reps` timings of `iters` calls of f, in seconds per call.
double best_seconds(int reps, int iters, const std::function<void()>& f, bool synchronize = true) {
  double best = 1e30;
  for (int r = 0; r < reps; ++r) {
    if (synchronize) device_sync();
    const auto t0 = Clock::now();
    for (int i = 0; i < iters; ++i) f();
    if (synchronize) device_sync();
    best = std::min(best, std::chrono::duration<double>(Clock::now() - t0).count() / iters);
  }
  return best;
}

void result(const char* what, double value, const char* unit) {
  std::printf("result brasa %s %.4f %s\n", what, value, unit);
}

void ratio(const char* what, double value, const char* note) {
  std::printf("ratio %s %.3f (%s)\n", what, value, note);
}

}  // namespace

int main() {
  if (!torch::cuda::is_available()) {
    std::printf("no CUDA device: nothing to measure\n");
    return 0;
  }
  const auto on_gpu = torch::TensorOptions().device(torch::kCUDA);

  // Host time per tiny op: the launch path, not the kernel.
  {
    torch::Tensor x = torch::ones({1}, on_gpu);
    for (int i = 0; i < 100; ++i) x.add_(1);
    const double s = best_seconds(
        5, 10000, [&] { x.add_(1); }, false);
    device_sync();
    result("tiny_op_host_us", s * 1e6, "us");
  }

  // Bandwidth: add against the device's own copy.
  {
    const int64_t n = int64_t(64) << 20;
    torch::Tensor a = torch::ones({n}, on_gpu), b = torch::ones({n}, on_gpu);
    torch::Tensor c = torch::empty({n}, on_gpu);
    const double bytes = 4.0 * n;
    const double add = best_seconds(5, 10, [&] { torch::add_out(c, a, b); });
    const double copy = best_seconds(5, 10, [&] {
      cudaMemcpyAsync(c.data_ptr(), a.data_ptr(), size_t(bytes), cudaMemcpyDeviceToDevice,
                      brasa::cuda::getCurrentCUDAStream().stream());
    });
    const double add_gbs = 3 * bytes / add / 1e9, copy_gbs = 2 * bytes / copy / 1e9;
    result("add_256MB_GBps", add_gbs, "GB/s");
    result("d2d_copy_256MB_GBps", copy_gbs, "GB/s");
    ratio("add_256MB/d2d_copy", add_gbs / copy_gbs, "bandwidth; target >= 0.90");
  }

  // GEMM: Brasa's mm against cuBLAS called directly (TF32 off in both).
  {
    const int n = 4096;
    torch::Tensor a = torch::randn({n, n}).to(torch::kCUDA),
                  b = torch::randn({n, n}).to(torch::kCUDA);
    torch::Tensor c = torch::empty({n, n}, on_gpu);
    const double brasa_s = best_seconds(5, 5, [&] { torch::mm_out(c, a, b); });
    cublasHandle_t h;
    cublasCreate(&h);
    cublasSetStream(h, brasa::cuda::getCurrentCUDAStream().stream());
    const float one = 1, zero = 0;
    const double raw_s = best_seconds(5, 5, [&] {
      cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, b.data_ptr<float>(), n,
                  a.data_ptr<float>(), n, &zero, c.data_ptr<float>(), n);
    });
    cublasDestroy(h);
    const double flops = 2.0 * n * n * n;
    result("gemm_4096_TFLOPs", flops / brasa_s / 1e12, "TFLOP/s");
    ratio("gemm_4096/cublas", raw_s / brasa_s, "throughput; target >= 0.98");
  }

  // An MLP training step, and the device allocations after warm-up.
  {
    torch::manual_seed(0);
    auto net = torch::nn::Sequential(torch::nn::Linear(784, 256), torch::nn::ReLU(),
                                     torch::nn::Linear(256, 10));
    net->to(torch::kCUDA);
    torch::optim::SGD opt(net->parameters(), torch::optim::SGDOptions(0.01));
    torch::Tensor x = torch::randn({64, 784}).to(torch::kCUDA);
    torch::Tensor y = torch::randint(0, 10, {64}).to(torch::kCUDA);
    auto step = [&] {
      opt.zero_grad();
      torch::nn::functional::cross_entropy(net->forward(x), y).backward();
      opt.step();
    };
    step();
    step();
    const int64_t before = brasa::cuda::memory_stats()["num_device_alloc"];
    const double s = best_seconds(5, 50, step);
    const int64_t after = brasa::cuda::memory_stats()["num_device_alloc"];
    result("mlp_step_ms", s * 1e3, "ms");
    result("cudamalloc_after_step_2", double(after - before), "calls");
  }
  return 0;
}
