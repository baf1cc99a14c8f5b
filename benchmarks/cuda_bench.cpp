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
//   cnn_step     the main job's CNN training step (batch 64, SGD with momentum)
//   resnet_stack a ResNet-50-like stem and three bottlenecks, batch 32 at 224x224
//                (also with cuDNN's benchmark mode)
//   randn, dropout, sort, index, index_put_ (accumulate), masked_select: ms each
#include <brasa/cuda/cudnn.h>
#include <brasa/cuda/memory.h>
#include <brasa/cuda/stream.h>
#include <brasa/torch.h>
#include <cublas_v2.h>
#include <cudnn.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <functional>
#include <vector>

void launch_empty_kernel(cudaStream_t s);  // cuda_empty_kernel.cu

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

// The best time of a classifier's training step (SGD with momentum, on
// fixed data of `classes` classes, after two warm-up steps), in ms.
double step_ms(torch::nn::Sequential& net, torch::IntArrayRef input_shape, int64_t classes,
               int reps, int iters) {
  net->to(torch::kCUDA);
  torch::optim::SGD opt(net->parameters(), torch::optim::SGDOptions(0.01).momentum(0.9));
  torch::Tensor x = torch::randn(input_shape).to(torch::kCUDA);
  torch::Tensor y = torch::randint(0, classes, {input_shape[0]}).to(torch::kCUDA);
  auto step = [&] {
    opt.zero_grad();
    torch::nn::functional::cross_entropy(net->forward(x), y).backward();
    opt.step();
  };
  step();
  step();
  return best_seconds(reps, iters, step) * 1e3;
}

// The same step cut into its phases (zero_grad + forward + loss, backward,
// optimizer step), each timed to a device synchronisation; the best of
// `iters` steps for each, printed as <what>_<phase>_ms.
void phase_ms(const char* what, torch::nn::Sequential& net, torch::IntArrayRef input_shape,
              int64_t classes, int iters) {
  net->to(torch::kCUDA);
  torch::optim::SGD opt(net->parameters(), torch::optim::SGDOptions(0.01).momentum(0.9));
  torch::Tensor x = torch::randn(input_shape).to(torch::kCUDA);
  torch::Tensor y = torch::randint(0, classes, {input_shape[0]}).to(torch::kCUDA);
  double best[4] = {1e30, 1e30, 1e30, 1e30};
  for (int i = 0; i < iters + 2; ++i) {
    device_sync();
    auto t0 = Clock::now();
    opt.zero_grad();
    torch::Tensor loss = torch::nn::functional::cross_entropy(net->forward(x), y);
    device_sync();
    auto t1 = Clock::now();
    loss.backward();
    device_sync();
    auto t2 = Clock::now();
    opt.step();
    device_sync();
    auto t3 = Clock::now();
    if (i < 2) continue;  // warm-up
    best[0] = std::min(best[0], std::chrono::duration<double>(t1 - t0).count());
    best[1] = std::min(best[1], std::chrono::duration<double>(t2 - t1).count());
    best[2] = std::min(best[2], std::chrono::duration<double>(t3 - t2).count());
  }
  // The host's time to issue a whole step, and each phase, the device
  // drained before: near the step's time, the step is bound by the host (or
  // something in it waits for the device). And the cudaMallocs per step.
  double issue[3] = {1e30, 1e30, 1e30};
  const int64_t mallocs_before = brasa::cuda::memory_stats()["num_device_alloc"];
  for (int i = 0; i < iters; ++i) {
    device_sync();
    auto t0 = Clock::now();
    opt.zero_grad();
    torch::Tensor loss = torch::nn::functional::cross_entropy(net->forward(x), y);
    auto t1 = Clock::now();
    device_sync();
    auto t2 = Clock::now();
    loss.backward();
    auto t3 = Clock::now();
    device_sync();
    auto t4 = Clock::now();
    opt.step();
    auto t5 = Clock::now();
    issue[0] = std::min(issue[0], std::chrono::duration<double>(t1 - t0).count());
    issue[1] = std::min(issue[1], std::chrono::duration<double>(t3 - t2).count());
    issue[2] = std::min(issue[2], std::chrono::duration<double>(t5 - t4).count());
    device_sync();
    auto t6 = Clock::now();
    opt.zero_grad();
    torch::nn::functional::cross_entropy(net->forward(x), y).backward();
    opt.step();
    best[3] = std::min(best[3], std::chrono::duration<double>(Clock::now() - t6).count());
  }
  const int64_t mallocs = brasa::cuda::memory_stats()["num_device_alloc"] - mallocs_before;
  std::printf("result brasa %s_cudamalloc_per_step %.4f calls\n", what,
              double(mallocs) / (2 * iters));
  const char* issue_names[3] = {"forward_issue", "backward_issue", "optimizer_issue"};
  for (int k = 0; k < 3; ++k)
    std::printf("result brasa %s_%s_ms %.4f ms\n", what, issue_names[k], issue[k] * 1e3);
  const char* names[4] = {"forward", "backward", "optimizer", "host_issue"};
  for (int k = 0; k < 4; ++k)
    std::printf("result brasa %s_%s_ms %.4f ms\n", what, names[k], best[k] * 1e3);
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
    // The same with a tensor operand, and the runtime's own floor: an
    // asynchronous 4-byte memset on the same stream.
    torch::Tensor one = torch::ones({1}, on_gpu);
    const double t = best_seconds(
        5, 10000, [&] { x.add_(one); }, false);
    cudaStream_t stream = brasa::cuda::getCurrentCUDAStream().stream();
    const double m = best_seconds(
        5, 10000, [&] { cudaMemsetAsync(x.data_ptr(), 0, 4, stream); }, false);
    const double k = best_seconds(
        5, 10000, [&] { launch_empty_kernel(stream); }, false);
    device_sync();
    result("tiny_op_tensor_host_us", t * 1e6, "us");
    result("cuda_memset_async_host_us", m * 1e6, "us");
    result("empty_kernel_launch_host_us", k * 1e6, "us");
    // Host time of the ops of a small training step, on 64x256 operands, in
    // bursts short enough that the launch queue never fills.
    torch::Tensor a = torch::randn({64, 256}, on_gpu), w = torch::randn({10, 256}, on_gpu);
    torch::Tensor bias = torch::randn({10}, on_gpu);
    auto host_us = [&](const char* what, const std::function<void()>& f) {
      double best = 1e30;
      for (int r = 0; r < 20; ++r) {
        device_sync();
        auto t0 = Clock::now();
        for (int i = 0; i < 100; ++i) f();
        best = std::min(best, std::chrono::duration<double>(Clock::now() - t0).count() / 100);
      }
      result(what, best * 1e6, "us");
    };
    host_us("host_us_add", [&] { torch::add(a, a); });
    host_us("host_us_relu", [&] { torch::relu(a); });
    host_us("host_us_mm", [&] { torch::mm(a, w.t()); });
    host_us("host_us_linear", [&] { torch::nn::functional::linear(a, w, bias); });
    host_us("host_us_sum", [&] { a.sum(); });
    host_us("host_us_log_softmax", [&] { torch::log_softmax(a, 1); });
    host_us("host_us_zeros_like", [&] { torch::zeros_like(a); });
    host_us("host_us_add_scaled_", [&] { a.add_(a, 0.5); });
    // and of the CNN's layers (cuDNN and the loss included).
    torch::Tensor img = torch::randn({64, 1, 28, 28}, on_gpu),
                  k5 = torch::randn({10, 1, 5, 5}, on_gpu);
    torch::Tensor maps = torch::randn({64, 10, 24, 24}, on_gpu),
                  logits = torch::randn({64, 10}, on_gpu);
    torch::Tensor labels = torch::randint(0, 10, {64}, on_gpu.dtype(torch::kLong));
    torch::Tensor g10 = torch::ones({10}, on_gpu), b10 = torch::zeros({10}, on_gpu);
    torch::Tensor rm10 = torch::zeros({10}, on_gpu), rv10 = torch::ones({10}, on_gpu);
    host_us("host_us_conv2d", [&] { torch::conv2d(img, k5); });
    host_us("host_us_max_pool2d", [&] { torch::max_pool2d(maps, {2}); });
    host_us("host_us_batch_norm", [&] {
      torch::nn::functional::batch_norm(maps, rm10, rv10, g10, b10, /*training=*/true);
    });
    host_us("host_us_cross_entropy", [&] { torch::nn::functional::cross_entropy(logits, labels); });
    // cuDNN's own host time for that convolution through its legacy API,
    // descriptors and algorithm made once: the floor of Brasa's conv2d.
    {
      cudnnHandle_t h;
      cudnnCreate(&h);
      cudnnSetStream(h, stream);
      cudnnTensorDescriptor_t xd, yd;
      cudnnFilterDescriptor_t wd;
      cudnnConvolutionDescriptor_t cd;
      cudnnCreateTensorDescriptor(&xd);
      cudnnCreateTensorDescriptor(&yd);
      cudnnCreateFilterDescriptor(&wd);
      cudnnCreateConvolutionDescriptor(&cd);
      cudnnSetTensor4dDescriptor(xd, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 64, 1, 28, 28);
      cudnnSetTensor4dDescriptor(yd, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 64, 10, 24, 24);
      cudnnSetFilter4dDescriptor(wd, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, 10, 1, 5, 5);
      cudnnSetConvolution2dDescriptor(cd, 0, 0, 1, 1, 1, 1, CUDNN_CROSS_CORRELATION,
                                      CUDNN_DATA_FLOAT);
      cudnnSetConvolutionMathType(cd, CUDNN_FMA_MATH);
      cudnnConvolutionFwdAlgoPerf_t perf[8];
      int n = 0;
      cudnnGetConvolutionForwardAlgorithm_v7(h, xd, wd, cd, yd, 8, &n, perf);
      torch::Tensor out = torch::empty({64, 10, 24, 24}, on_gpu);
      torch::Tensor ws = torch::empty({int64_t(perf[0].memory) + 1}, on_gpu.dtype(torch::kByte));
      const float one = 1, zero = 0;
      host_us("host_us_cudnn_conv_raw", [&] {
        cudnnConvolutionForward(h, &one, xd, img.data_ptr(), wd, k5.data_ptr(), cd, perf[0].algo,
                                ws.data_ptr(), perf[0].memory, &zero, yd, out.data_ptr());
      });
      device_sync();
      cudnnDestroyConvolutionDescriptor(cd);
      cudnnDestroyFilterDescriptor(wd);
      cudnnDestroyTensorDescriptor(yd);
      cudnnDestroyTensorDescriptor(xd);
      cudnnDestroy(h);
    }
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
    phase_ms("mlp", net, {64, 784}, 10, 20);
  }

  // The main job's CNN (conv 1-10 5x5, pool, conv 10-20 5x5, pool, 320-50-10), batch 64, SGD.
  {
    torch::manual_seed(0);
    auto pool_relu = [](const torch::Tensor& t) { return torch::relu(torch::max_pool2d(t, {2})); };
    auto net = torch::nn::Sequential(torch::nn::Conv2d(1, 10, 5), torch::nn::Functional(pool_relu),
                                     torch::nn::Conv2d(10, 20, 5), torch::nn::Functional(pool_relu),
                                     torch::nn::Flatten(), torch::nn::Linear(320, 50),
                                     torch::nn::ReLU(), torch::nn::Linear(50, 10));
    result("cnn_step_ms", step_ms(net, {64, 1, 28, 28}, 10, 5, 50), "ms");
    phase_ms("cnn", net, {64, 1, 28, 28}, 10, 20);
  }

  // A ResNet-50-like conv stack: the stem (7x7/2 conv, BN, ReLU, 3x3/2 max
  // pool) and three bottlenecks (1x1, 3x3, 1x1 with BN and ReLU) at 56x56,
  // global mean, fc to 1000; batch 32, SGD.
  {
    namespace nn = torch::nn;
    auto conv_bn_relu = [](int64_t in, int64_t out, int64_t k, int64_t stride) {
      return nn::Sequential(
          nn::Conv2d(nn::Conv2dOptions(in, out, k).stride(stride).padding(k / 2).bias(false)),
          nn::BatchNorm2d(out), nn::ReLU());
    };
    torch::manual_seed(0);
    auto net = nn::Sequential(conv_bn_relu(3, 64, 7, 2), nn::Functional([](const torch::Tensor& t) {
                                return torch::max_pool2d(t, {3}, {2}, {1});
                              }));
    int64_t width = 64;
    for (int b = 0; b < 3; ++b) {
      net->push_back(conv_bn_relu(width, 64, 1, 1));
      net->push_back(conv_bn_relu(64, 64, 3, 1));
      net->push_back(conv_bn_relu(64, 256, 1, 1));
      width = 256;
    }
    net->push_back(nn::Functional([](const torch::Tensor& t) { return t.mean({2, 3}); }));
    net->push_back(nn::Linear(256, 1000));
    result("resnet_stack_step_ms", step_ms(net, {32, 3, 224, 224}, 1000, 3, 10), "ms");
    // The same with cuDNN's algorithms timed once per shape (benchmark mode)
    // instead of taken from its heuristics.
    brasa::cuda::set_cudnn_benchmark(true);
    result("resnet_stack_benchmark_mode_step_ms", step_ms(net, {32, 3, 224, 224}, 1000, 3, 10),
           "ms");
    brasa::cuda::set_cudnn_benchmark(false);
    phase_ms("resnet_stack", net, {32, 3, 224, 224}, 1000, 10);
  }

  // The stack's parts one by one (forward and backward), to see where time goes.
  {
    namespace F = torch::nn::functional;
    auto part = [&](const char* what, torch::Tensor x,
                    const std::function<torch::Tensor(const torch::Tensor&)>& f) {
      x.requires_grad_(true);
      auto run = [&] { f(x).sum().backward(); };
      run();
      result(what, best_seconds(3, 10, run) * 1e3, "ms");
      // The forward alone, as name_fwd_ms.
      std::string fwd = std::string(what).substr(0, std::strlen(what) - 3) + "_fwd_ms";
      result(fwd.c_str(), best_seconds(3, 10, [&] { f(x); }) * 1e3, "ms");
    };
    auto big = [] { return torch::randn({32, 64, 112, 112}).to(torch::kCUDA); };
    torch::Tensor w7 = torch::randn({64, 3, 7, 7}).to(torch::kCUDA).requires_grad_();
    torch::Tensor w3 = torch::randn({64, 64, 3, 3}).to(torch::kCUDA).requires_grad_();
    torch::Tensor gamma = torch::ones({64}).to(torch::kCUDA).requires_grad_();
    torch::Tensor beta = torch::zeros({64}).to(torch::kCUDA).requires_grad_();
    torch::Tensor rm = torch::zeros({64}).to(torch::kCUDA), rv = torch::ones({64}).to(torch::kCUDA);
    part("part_conv7x7_ms", torch::randn({32, 3, 224, 224}).to(torch::kCUDA),
         [&](const torch::Tensor& t) { return torch::conv2d(t, w7, {}, {2}, {3}); });
    part("part_conv3x3_56_ms", torch::randn({32, 64, 56, 56}).to(torch::kCUDA),
         [&](const torch::Tensor& t) { return torch::conv2d(t, w3, {}, {1}, {1}); });
    part("part_batchnorm_112_ms", big(), [&](const torch::Tensor& t) {
      return F::batch_norm(t, rm, rv, gamma, beta, /*training=*/true);
    });
    part("part_relu_112_ms", big(), [](const torch::Tensor& t) { return torch::relu(t); });
    part("part_maxpool_112_ms", big(),
         [](const torch::Tensor& t) { return torch::max_pool2d(t, {3}, {2}, {1}); });
    // The bottlenecks' other layers at 56x56: 1x1 convolutions both ways and
    // batch norm over 256 channels.
    torch::Tensor w_up = torch::randn({256, 64, 1, 1}).to(torch::kCUDA).requires_grad_();
    torch::Tensor w_down = torch::randn({64, 256, 1, 1}).to(torch::kCUDA).requires_grad_();
    torch::Tensor g256 = torch::ones({256}).to(torch::kCUDA).requires_grad_();
    torch::Tensor b256 = torch::zeros({256}).to(torch::kCUDA).requires_grad_();
    torch::Tensor rm256 = torch::zeros({256}).to(torch::kCUDA),
                  rv256 = torch::ones({256}).to(torch::kCUDA);
    part("part_conv1x1_up_56_ms", torch::randn({32, 64, 56, 56}).to(torch::kCUDA),
         [&](const torch::Tensor& t) { return torch::conv2d(t, w_up); });
    part("part_conv1x1_down_56_ms", torch::randn({32, 256, 56, 56}).to(torch::kCUDA),
         [&](const torch::Tensor& t) { return torch::conv2d(t, w_down); });
    part("part_batchnorm256_56_ms", torch::randn({32, 256, 56, 56}).to(torch::kCUDA),
         [&](const torch::Tensor& t) {
           return F::batch_norm(t, rm256, rv256, g256, b256, /*training=*/true);
         });
    part("part_relu256_56_ms", torch::randn({32, 256, 56, 56}).to(torch::kCUDA),
         [](const torch::Tensor& t) { return torch::relu(t); });
    part("part_global_mean_56_ms", torch::randn({32, 256, 56, 56}).to(torch::kCUDA),
         [](const torch::Tensor& t) {
           return t.mean({2, 3});
         });
    // relu's pieces: the forward alone, and the sum that the parts end with.
    {
      torch::Tensor x = big();
      result("part_relu_fwd_112_ms", best_seconds(3, 10, [&] { torch::relu(x); }) * 1e3, "ms");
      result("part_sum_112_ms", best_seconds(3, 10, [&] { x.sum(); }) * 1e3, "ms");
      result("part_channel_sum_fwd_112_ms",
             best_seconds(3, 10,
                          [&] {
                            x.sum({0, 2, 3});
                          }) *
                 1e3,
             "ms");
    }
    part("part_channel_mean_112_ms", big(), [](const torch::Tensor& t) {
      return t.mean({0, 2, 3});
    });
  }

  // Indexing, sorting and numbers drawn on the device (each in ms).
  {
    torch::manual_seed(0);
    const int64_t n = int64_t(16) << 20;
    torch::Tensor v = torch::randn({n}, on_gpu);
    torch::Tensor rows = torch::randn({4096, 1024}, on_gpu);
    torch::Tensor table = torch::randn({1 << 20, 64}, on_gpu);
    torch::Tensor idx = torch::randint(0, 1 << 20, {1 << 20}, on_gpu);
    torch::Tensor mask = v > 0;
    torch::Tensor acc = torch::zeros({1 << 20, 64}, on_gpu);
    result("randn_16M_ms", best_seconds(3, 10, [&] { torch::randn({n}, on_gpu); }) * 1e3, "ms");
    result("dropout_16M_ms",
           best_seconds(3, 10, [&] { torch::nn::functional::dropout(v, 0.5, true); }) * 1e3, "ms");
    result("sort_16M_ms", best_seconds(3, 5, [&] { torch::sort(v); }) * 1e3, "ms");
    result("sort_rows_4096x1024_ms", best_seconds(3, 5, [&] { torch::sort(rows, -1); }) * 1e3,
           "ms");
    result("index_rows_1M_ms", best_seconds(3, 10, [&] { table.index({idx}); }) * 1e3, "ms");
    result("index_put_acc_1M_ms",
           best_seconds(3, 10, [&] { torch::index_put_(acc, {idx}, table, /*accumulate=*/true); }) *
               1e3,
           "ms");
    result("masked_select_16M_ms", best_seconds(3, 10, [&] { v.masked_select(mask); }) * 1e3, "ms");
  }
  return 0;
}
