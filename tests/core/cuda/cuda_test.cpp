// The CUDA runtime, allocator and kernels (CUDA builds). Without a device
// only the first group runs: it checks that every entry point says why CUDA
// is unavailable; the others skip with "no CUDA device".
#include <brasa/cuda/cudnn.h>
#include <brasa/cuda/event.h>
#include <brasa/cuda/memory.h>
#include <brasa/cuda/pinned_memory.h>
#include <brasa/cuda/stream.h>

#include <cmath>
#include <limits>

#include "../test_util.h"

namespace brasa {
namespace {

#define REQUIRE_CUDA() \
  if (!cuda::is_available()) GTEST_SKIP() << "no CUDA device"

TEST(CudaWithoutDevice, EveryEntryPointSaysWhy) {
  if (cuda::is_available()) GTEST_SKIP() << "a CUDA device is present";
  EXPECT_EQ(cuda::device_count(), 0);
  EXPECT_FALSE(cuda::cudnn_is_available());
  EXPECT_ERROR("empty: device cuda:0 is not available: no cuda device is present (",
               empty({2}, TensorOptions().device(Device("cuda:0"))));
  EXPECT_ERROR("to: device cuda is not available", ones({2}).cuda());
  EXPECT_ERROR("memory_allocated: no CUDA device is available (", cuda::memory_allocated());
  EXPECT_ERROR("memory_stats: no CUDA device is available", cuda::memory_stats(0));
  EXPECT_ERROR("getStreamFromPool: no CUDA device is available", cuda::getStreamFromPool());
  EXPECT_ERROR("set_per_process_memory_fraction: no CUDA device is available",
               cuda::set_per_process_memory_fraction(0.5));
  EXPECT_ERROR("pin_memory: pinned memory needs a CUDA device and none is available (",
               ones({2}).pin_memory());
  EXPECT_FALSE(ones({2}).is_pinned());
  cuda::empty_cache();  // nothing was allocated: nothing to do, no error
  cuda::CUDAEvent never_recorded;
  EXPECT_TRUE(never_recorded.query()) << "an event never recorded is complete, as in PyTorch";
  EXPECT_ERROR("enable_timing must be false", cuda::CUDAEvent(true, false, true));
}

// Random values made on the CPU (the CUDA generator is not there yet).
Tensor cpu_values(IntArrayRef shape, ScalarType t, double lo = -3, double hi = 3) {
  return (rand(shape) * (hi - lo) + lo).to(t);
}

void expect_same(const Tensor& cuda_result, const Tensor& cpu_result, double tol) {
  ASSERT_TRUE(cuda_result.is_cuda());
  ASSERT_EQ(cuda_result.dtype(), cpu_result.dtype());
  EXPECT_SHAPE(cuda_result, (cpu_result.sizes().vec()));
  EXPECT_CLOSE(cuda_result.cpu(), testing::values(cpu_result), tol);
}

TEST(CudaTensors, RoundTripEveryDtypeAndConvert) {
  REQUIRE_CUDA();
  for (ScalarType t :
       {kByte, kChar, kShort, kInt, kLong, kHalf, kFloat, kDouble, kBool, kBFloat16}) {
    Tensor x = cpu_values({3, 5}, t, 0, 5);
    Tensor g = x.cuda();
    EXPECT_TRUE(g.is_cuda());
    EXPECT_TRUE(equal(g.cpu(), x)) << t;
    for (ScalarType u : {kInt, kFloat, kHalf, kBool})
      EXPECT_TRUE(equal(g.to(u).cpu(), x.to(u))) << t << " -> " << u;
  }
  Tensor z = zeros({4, 4}, TensorOptions().device(kCUDA));
  EXPECT_TRUE(equal(z.cpu(), zeros({4, 4})));
}

TEST(CudaTensors, StridedAndBroadcastCopies) {
  REQUIRE_CUDA();
  Tensor x = cpu_values({4, 6}, kFloat);
  Tensor g = x.cuda();
  expect_same(g.t().contiguous(), x.t().contiguous(), 0);
  expect_same(g.slice(1, 1, 5, 2).contiguous(), x.slice(1, 1, 5, 2).contiguous(), 0);
  expect_same(g.flip({0, 1}), x.flip({0, 1}), 0);
  expect_same(g.t().flip({1}), x.t().flip({1}), 0);
  expect_same(g.slice(1, 0, 6, 2).flip({1}), x.slice(1, 0, 6, 2).flip({1}), 0);
  Tensor out = empty({3, 4, 6}, TensorOptions().device(kCUDA));
  out.copy_(g);
  expect_same(out, x.expand({3, 4, 6}).contiguous(), 0);
}

TEST(CudaTensors, BinaryOpsMatchTheCpu) {
  REQUIRE_CUDA();
  for (ScalarType t : {kFloat, kDouble, kHalf, kInt, kLong}) {
    const double tol = t == kHalf ? 1e-2 : 1e-6;
    Tensor a = cpu_values({5, 7}, t), b = cpu_values({7}, t, 1, 4);
    Tensor ga = a.cuda(), gb = b.cuda();
    expect_same(ga + gb, a + b, tol);
    expect_same(ga - gb, a - b, tol);
    expect_same(ga * gb, a * b, tol);
    expect_same(ga.add(gb, 2), a.add(b, 2), tol);
    expect_same(maximum(ga, gb), maximum(a, b), tol);
    expect_same(ga.t().contiguous().t() * gb, a * b, tol);
    expect_same(ga > gb, a > b, 0);
    expect_same(ga.eq(ga), a.eq(a), 0);
    if (isFloatingType(t)) {
      expect_same(ga / gb, a / b, tol);
      expect_same(pow(gb, ga), pow(b, a), t == kHalf ? 5e-1 : 1e-4);
    } else {
      expect_same(floor_divide(ga, gb), floor_divide(a, b), 0);
      expect_same(remainder(ga, gb), remainder(a, b), 0);
      expect_same(ga & gb, a & b, 0);
    }
    expect_same(ga + 2, a + 2, tol);
  }
}

TEST(CudaTensors, UnaryOpsMatchTheCpu) {
  REQUIRE_CUDA();
  Tensor x = cpu_values({64}, kFloat, 0.1, 0.9);
  Tensor g = x.cuda();
  expect_same(g.exp(), x.exp(), 1e-5);
  expect_same(g.log(), x.log(), 1e-5);
  expect_same(g.sqrt(), x.sqrt(), 1e-6);
  expect_same(g.sigmoid(), x.sigmoid(), 1e-6);
  expect_same(g.tanh(), x.tanh(), 1e-6);
  expect_same(g.neg().relu(), x.neg().relu(), 0);
  expect_same(g.erfinv(), x.erfinv(), 1e-5);
  expect_same(g.isnan(), x.isnan(), 0);
  Tensor i = cpu_values({16}, kInt, -5, 5);
  expect_same(i.cuda().abs(), i.abs(), 0);
  expect_same(i.cuda().bitwise_not(), i.bitwise_not(), 0);
  expect_same(where(g > 0.5, g, -g), where(x > 0.5, x, -x), 0);
}

TEST(CudaTensors, LerpAddcClampIscloseAndNanToNumMatchTheCpu) {
  REQUIRE_CUDA();
  for (ScalarType t : {kFloat, kDouble, kHalf}) {
    const double tol = t == kHalf ? 2e-2 : 1e-6;
    Tensor a = cpu_values({4, 6}, t), b = cpu_values({6}, t, 1, 3),
           w = cpu_values({4, 6}, t, -1, 2);
    Tensor ga = a.cuda(), gb = b.cuda(), gw = w.cuda();
    expect_same(lerp(ga, gb, gw), lerp(a, b, w), tol);
    expect_same(lerp(ga, gb, 0.25), lerp(a, b, 0.25), tol);
    expect_same(addcmul(ga, ga, gb, 0.5), addcmul(a, a, b, 0.5), tol);
    expect_same(addcdiv(ga, ga, gb, -2), addcdiv(a, a, b, -2), tol);
    expect_same(clamp(ga, -1, 1), clamp(a, -1, 1), 0);
    expect_same(clamp(ga, std::nullopt, 0.5), clamp(a, std::nullopt, 0.5), 0);
    expect_same(isclose(ga, gb), isclose(a, b), 0);
    expect_same(isclose(ga, ga + 1e-3, 0, 1e-2), isclose(a, a + 1e-3, 0, 1e-2), 0);
  }
  const double inf = std::numeric_limits<double>::infinity();
  Tensor n = tensor({std::nan(""), inf, -inf, 1.5});
  expect_same(nan_to_num(n.cuda(), 0.0, 9.0, -9.0), nan_to_num(n, 0.0, 9.0, -9.0), 0);
  expect_same(n.cuda().clamp(-1, 1).isnan(), n.clamp(-1, 1).isnan(), 0);
  Tensor i = cpu_values({10}, kLong, -20, 20);
  expect_same(clamp(i.cuda(), -5, 5), clamp(i, -5, 5), 0);
}

// Adam (addcmul_, addcdiv_, sqrt) steps on CUDA as on the CPU.
TEST(CudaTensors, AdamStepsMatchTheCpu) {
  REQUIRE_CUDA();
  manual_seed(3);
  nn::Linear cpu_layer(5, 3), gpu_layer(5, 3);
  {
    NoGradGuard ng;
    gpu_layer->weight.copy_(cpu_layer->weight);
    gpu_layer->bias.copy_(cpu_layer->bias);
  }
  gpu_layer->to(kCUDA);
  optim::Adam cpu_opt(cpu_layer->parameters(), optim::AdamOptions(0.01).weight_decay(0.1));
  optim::Adam gpu_opt(gpu_layer->parameters(), optim::AdamOptions(0.01).weight_decay(0.1));
  for (int step = 0; step < 4; ++step) {
    Tensor x = randn({8, 5});
    cpu_opt.zero_grad();
    gpu_opt.zero_grad();
    cpu_layer->forward(x).pow(2).mean().backward();
    gpu_layer->forward(x.cuda()).pow(2).mean().backward();
    cpu_opt.step();
    gpu_opt.step();
  }
  expect_same(gpu_layer->weight.detach(), cpu_layer->weight.detach(), 1e-5);
  expect_same(gpu_layer->bias.detach(), cpu_layer->bias.detach(), 1e-5);
}

// The fused optimizer steps (a few launches for all parameters) against the
// CPU's per-parameter ops: 40 parameters (more than one launch's list), one
// of 13M elements (more chunks than one launch takes), every option.
std::vector<Tensor> many_params() {
  std::vector<Tensor> ps;
  for (int i = 0; i < 39; ++i) ps.push_back(cpu_values({i + 1, 3}, kFloat));
  ps.push_back(cpu_values({13 << 20}, kFloat));
  return ps;
}

template <class MakeOptimizer>
void expect_same_steps(MakeOptimizer make, int steps) {
  std::vector<Tensor> cpu = many_params(), gpu;
  for (Tensor& t : cpu) {
    t.requires_grad_();
    gpu.push_back(t.detach().cuda().requires_grad_());
  }
  auto cpu_opt = make(cpu), gpu_opt = make(gpu);
  for (int s = 0; s < steps; ++s) {
    for (size_t i = 0; i < cpu.size(); ++i) {
      Tensor g = cpu_values(cpu[i].sizes(), kFloat);
      cpu[i].mutable_grad() = g;
      gpu[i].mutable_grad() = g.cuda();
    }
    cpu_opt->step();
    gpu_opt->step();
  }
  for (size_t i = 0; i < cpu.size(); ++i)
    EXPECT_TRUE(allclose(gpu[i].detach().cpu(), cpu[i].detach(), 1e-5, 1e-5)) << "parameter " << i;
}

TEST(CudaTensors, FusedOptimizerStepsMatchTheCpu) {
  REQUIRE_CUDA();
  expect_same_steps(
      [](const std::vector<Tensor>& ps) {
        return std::make_unique<optim::SGD>(
            ps, optim::SGDOptions(0.1).momentum(0.9).dampening(0.1).weight_decay(0.01));
      },
      3);
  expect_same_steps(
      [](const std::vector<Tensor>& ps) {
        return std::make_unique<optim::SGD>(
            ps, optim::SGDOptions(0.1).momentum(0.9).nesterov(true).maximize(true));
      },
      3);
  expect_same_steps(
      [](const std::vector<Tensor>& ps) {
        return std::make_unique<optim::SGD>(ps, optim::SGDOptions(0.05));
      },
      2);
  expect_same_steps(
      [](const std::vector<Tensor>& ps) {
        return std::make_unique<optim::AdamW>(
            ps, optim::AdamWOptions(0.01).weight_decay(0.1).amsgrad(true));
      },
      3);
  expect_same_steps(
      [](const std::vector<Tensor>& ps) {
        return std::make_unique<optim::Adam>(ps, optim::AdamOptions(0.01).maximize(true));
      },
      3);
}

TEST(CudaTensors, ReductionsAndSoftmaxMatchTheCpu) {
  REQUIRE_CUDA();
  for (ScalarType t : {kFloat, kDouble, kHalf}) {
    const double tol = t == kHalf ? 2e-2 : 1e-5;
    Tensor x = cpu_values({6, 33, 5}, t);
    Tensor g = x.cuda();
    expect_same(g.sum(), x.sum(), tol * 10);
    expect_same(g.sum(1), x.sum(1), tol * 10);
    expect_same(g.sum(0), x.sum(0), tol * 10);  // the reduced dims lead: the "outer" plan
    expect_same(g.mean({0, 2}), x.mean({0, 2}), tol);
    expect_same(g.amax(1), x.amax(1), 0);
    expect_same(g.var(1), x.var(1), tol);
    expect_same(g.logsumexp(2), x.logsumexp(2), tol);
    expect_same(g.norm(), x.norm(), tol * 10);
    expect_same(g.softmax(1), x.softmax(1), tol);
    expect_same(g.log_softmax(2), x.log_softmax(2), tol);
    expect_same(g.cumsum(1), x.cumsum(1), tol * 10);
    auto [v, i] = g.max(1);
    auto [cv, ci] = x.max(1);
    expect_same(v, cv, 0);
    expect_same(i, ci, 0);
  }
  // Few long rows: each is split over many blocks, then the partials combined.
  Tensor big = cpu_values({3, 200003}, kFloat).to(kDouble);
  Tensor gbig = big.cuda();
  expect_same(gbig.sum(1), big.sum(1), 1e-7);
  expect_same(gbig.sum(), big.sum(), 1e-7);
  expect_same(gbig.var(1), big.var(1), 1e-10);
  expect_same(gbig.std(1, /*unbiased=*/false), big.std(1, false), 1e-10);
  expect_same(gbig.amax(1), big.amax(1), 0);
  expect_same(gbig.amin(), big.amin(), 0);
  expect_same((gbig > 2.9).any(1), (big > 2.9).any(1), 0);
  expect_same((gbig > -2.9).all(1), (big > -2.9).all(1), 0);
  Tensor b = cpu_values({4, 9}, kFloat) > 0;
  expect_same(b.cuda().all(1), b.all(1), 0);
  expect_same(b.cuda().any(0), b.any(0), 0);
  Tensor i = cpu_values({3, 7}, kLong, -9, 9);
  expect_same(i.cuda().sum(1), i.sum(1), 0);
  expect_same(i.cuda().prod(0), i.prod(0), 0);
}

TEST(CudaTensors, GatherScatterIndexSelectAndALossMatchTheCpu) {
  REQUIRE_CUDA();
  Tensor x = cpu_values({5, 4}, kFloat);
  Tensor idx = tensor({int64_t(3), 0, 2, 2, 1}).view({5, 1});
  expect_same(x.cuda().gather(1, idx.cuda()), x.gather(1, idx), 0);
  expect_same(x.cuda().index_select(0, tensor({int64_t(4), 0, 4}).cuda()),
              x.index_select(0, tensor({int64_t(4), 0, 4})), 0);
  Tensor z = zeros({5, 4});
  expect_same(z.cuda().scatter_add(1, idx.cuda(), ones({5, 1}).cuda()),
              z.scatter_add(1, idx, ones({5, 1})), 0);
  EXPECT_ERROR("gather: index 7 is out of bounds for dimension 1 with size 4",
               x.cuda().gather(1, full({5, 1}, 7, kLong).cuda()));
  EXPECT_ERROR("gather: index on cpu for a tensor on cuda:0 (expected the same device)",
               x.cuda().gather(1, idx));
  EXPECT_ERROR("scatter_add_: index on cpu for a tensor on cuda:0",
               z.cuda().scatter_add(1, idx, ones({5, 1}).cuda()));
  EXPECT_ERROR("conv2d: expected the input (cuda:0), weight (cpu) and bias (cuda:0) on the same",
               conv2d(ones({1, 1, 4, 4}).cuda(), ones({1, 1, 2, 2}), ones({1}).cuda()));
  // cross_entropy = log_softmax + nll_loss, forward and backward.
  Tensor logits0 = cpu_values({6, 10}, kFloat);
  Tensor target = tensor({int64_t(1), 0, 9, 3, 3, 7});
  Tensor logits = logits0.cuda().requires_grad_();
  Tensor loss = nn::functional::cross_entropy(logits, target.cuda());
  loss.backward();
  Tensor cpu_logits = logits0.clone().requires_grad_();
  Tensor cpu_loss = nn::functional::cross_entropy(cpu_logits, target);
  cpu_loss.backward();
  expect_same(loss, cpu_loss, 1e-5);
  expect_same(logits.grad(), cpu_logits.grad(), 1e-6);
}

// nll_loss checks its targets on the device: a bad one is an error at the
// next synchronisation (here item()), raised once, and the device stays usable.
TEST(CudaTensors, ABadClassTargetIsRaisedAtTheNextSynchronisation) {
  REQUIRE_CUDA();
  namespace F = nn::functional;
  Tensor logits = cpu_values({4, 3}, kFloat);
  Tensor bad = tensor({int64_t(0), 7, 1, 2}).cuda();
  Tensor loss = F::cross_entropy(logits.cuda(), bad);
  EXPECT_ERROR("nll_loss: target 7 is out of bounds for 3 classes (found on the device",
               loss.item<float>());
  EXPECT_NO_THROW(cuda::synchronize());
  // ignore_index is not out of range; weights as on the CPU.
  Tensor target = tensor({int64_t(2), -100, 1, 0});
  Tensor weight = tensor({0.5f, 2.0f, 1.5f});
  auto o = F::CrossEntropyFuncOptions().weight(weight.cuda());
  expect_same(F::cross_entropy(logits.cuda(), target.cuda(), o),
              F::cross_entropy(logits, target, F::CrossEntropyFuncOptions().weight(weight)), 1e-6);
  F::cross_entropy(logits.cuda(), tensor({int64_t(0), 1, -1, 0}).cuda());
  EXPECT_ERROR("nll_loss: target -1 is out of bounds for 3 classes", cuda::synchronize());
  EXPECT_ERROR(
      "nll_loss: expected weight on cuda:0 (the input's device), got it on cpu",
      F::cross_entropy(logits.cuda(), target.cuda(), F::CrossEntropyFuncOptions().weight(weight)));
}

TEST(CudaTensors, MatrixProductsMatchTheCpu) {
  REQUIRE_CUDA();
  for (ScalarType t : {kFloat, kDouble, kHalf}) {
    const double tol = t == kHalf ? 5e-2 : 1e-4;
    Tensor a = cpu_values({33, 17}, t), b = cpu_values({17, 9}, t);
    Tensor ga = a.cuda(), gb = b.cuda();
    expect_same(mm(ga, gb), mm(a.to(kFloat), b.to(kFloat)).to(t), tol);
    expect_same(mm(gb.t(), ga.t()), mm(b.t().to(kFloat), a.t().to(kFloat)).to(t), tol);
    Tensor ba = cpu_values({4, 5, 6}, t), bb = cpu_values({4, 6, 3}, t);
    expect_same(bmm(ba.cuda(), bb.cuda()), bmm(ba.to(kFloat), bb.to(kFloat)).to(t), tol);
  }
  EXPECT_ERROR("not implemented for 'Long' on CUDA",
               mm(ones({2, 2}, kLong).cuda(), ones({2, 2}, kLong).cuda()));
}

TEST(CudaTensors, AutogradRunsOnCudaTensors) {
  REQUIRE_CUDA();
  Tensor x0 = cpu_values({3, 4}, kFloat);
  Tensor x = x0.cuda().requires_grad_();
  Tensor y = (x * x + x).relu();
  y.backward(ones_like(y));
  ASSERT_TRUE(x.grad().is_cuda());
  Tensor expected = where(x0 * x0 + x0 > 0, 2 * x0 + 1, zeros_like(x0));
  expect_same(x.grad(), expected, 1e-5);
}

// Without TF32 (cuDNN's float32 convolutions may use it by default, as in
// PyTorch), so that float32 results match the CPU's closely.
struct NoTf32 {
  NoTf32() { cuda::set_cudnn_allow_tf32(false); }
  ~NoTf32() { cuda::set_cudnn_allow_tf32(true); }
};

TEST(CudaTensors, ConvAndMaxPoolMatchTheCpuForwardAndBackward) {
  REQUIRE_CUDA();
  NoTf32 exact;
  for (ScalarType t : {kFloat, kDouble}) {
    const double tol = t == kFloat ? 1e-4 : 1e-10;
    Tensor x0 = cpu_values({3, 4, 11, 9}, t), w0 = cpu_values({6, 2, 3, 2}, t),
           b0 = cpu_values({6}, t);
    Tensor x = x0.clone().requires_grad_(), w = w0.clone().requires_grad_(),
           b = b0.clone().requires_grad_();
    Tensor gx = x0.cuda().requires_grad_(), gw = w0.cuda().requires_grad_(),
           gb = b0.cuda().requires_grad_();
    // Stride, padding, dilation and groups all off their defaults.
    Tensor y = conv2d(x, w, b, {2, 1}, {1, 2}, {1, 2}, 2);
    Tensor gy = conv2d(gx, gw, gb, {2, 1}, {1, 2}, {1, 2}, 2);
    expect_same(gy, y, tol);
    auto [p, pi] = max_pool2d_with_indices(y, {3, 2}, {2, 2}, {1, 1}, {1, 1}, true);
    auto [gp, gpi] = max_pool2d_with_indices(gy, {3, 2}, {2, 2}, {1, 1}, {1, 1}, true);
    expect_same(gp, p, tol);
    expect_same(gpi, pi, 0);
    Tensor go = cpu_values(p.sizes(), t);
    (p * go).sum().backward();
    (gp * go.cuda()).sum().backward();
    expect_same(gx.grad(), x.grad(), tol);
    expect_same(gw.grad(), w.grad(), tol * 10);
    expect_same(gb.grad(), b.grad(), tol * 10);
  }
  Tensor n = cpu_values({1, 1, 4, 4}, kFloat);
  n[0][0][1][1].fill_(std::numeric_limits<float>::quiet_NaN());
  Tensor pooled = max_pool2d(n.cuda(), {2}).cpu();
  EXPECT_TRUE(std::isnan(pooled[0][0][0][0].item<float>())) << "NaN wins, as on the CPU";
}

TEST(CudaTensors, CudnnSwitchesAndHalfPrecisionConvolutions) {
  REQUIRE_CUDA();
  Tensor x = cpu_values({4, 3, 17, 13}, kFloat), w = cpu_values({8, 3, 3, 3}, kFloat);
  Tensor expected = conv2d(x, w, Tensor(), {1}, {1});
  for (bool benchmark : {false, true})
    for (bool deterministic : {false, true}) {
      cuda::set_cudnn_benchmark(benchmark);
      cuda::set_cudnn_deterministic(deterministic);
      Tensor gx = x.cuda().requires_grad_();
      Tensor y = conv2d(gx, w.cuda(), Tensor(), {1}, {1});
      expect_same(y, expected, 0.15);  // TF32 is allowed here (|y| < 60)
      y.sum().backward();
      EXPECT_TRUE(gx.grad().is_cuda());
    }
  cuda::set_cudnn_benchmark(false);
  cuda::set_cudnn_deterministic(false);
  for (ScalarType t : {kHalf, kBFloat16}) {
    // Against the CPU result of the same rounded inputs: only the output's
    // rounding differs (half of an ulp at 64: 0.03 for half, 0.25 for bfloat16).
    Tensor xr = x.to(t).to(kFloat), wr = w.to(t).to(kFloat);
    Tensor y = conv2d(xr.cuda().to(t), wr.cuda().to(t), Tensor(), {1}, {1});
    EXPECT_EQ(y.dtype(), t);
    expect_same(y.to(kFloat), conv2d(xr, wr, Tensor(), {1}, {1}), t == kHalf ? 0.1 : 0.6);
  }
}

// Training-mode batch norm runs fused through cuDNN on CUDA and as a
// composite on the CPU: outputs, running statistics and gradients agree.
TEST(CudaTensors, FusedBatchNormMatchesTheCpuComposite) {
  REQUIRE_CUDA();
  const std::vector<std::vector<int64_t>> shapes{{4, 3, 5, 6}, {8, 3}, {2, 3, 7}};
  for (const auto& shape : shapes) {
    for (ScalarType t : {kDouble, kFloat}) {
      const double tol = t == kDouble ? 1e-9 : 1e-4;
      Tensor x0 = cpu_values(shape, t), w0 = cpu_values({3}, t, 0.5, 2), b0 = cpu_values({3}, t);
      Tensor rm = zeros({3}, t), rv = ones({3}, t);
      Tensor grm = rm.cuda(), grv = rv.cuda();
      Tensor x = x0.clone().requires_grad_(), w = w0.clone().requires_grad_(),
             b = b0.clone().requires_grad_();
      Tensor gx = x0.cuda().requires_grad_(), gw = w0.cuda().requires_grad_(),
             gb = b0.cuda().requires_grad_();
      Tensor y = nn::functional::batch_norm(x, rm, rv, w, b, true, 0.1, 1e-5);
      Tensor gy = nn::functional::batch_norm(gx, grm, grv, gw, gb, true, 0.1, 1e-5);
      expect_same(gy, y, tol);
      expect_same(grm, rm, tol);
      expect_same(grv, rv, tol);  // the unbiased variance, as on the CPU
      Tensor go = cpu_values(y.sizes(), t);
      (y * go).sum().backward();
      (gy * go.cuda()).sum().backward();
      expect_same(gx.grad(), x.grad(), tol * 10);
      expect_same(gw.grad(), w.grad(), tol * 10);
      expect_same(gb.grad(), b.grad(), tol * 10);
    }
  }
  EXPECT_ERROR("batch_norm: expected running_mean on cuda:0 (the input's device), got it on cpu",
               nn::functional::batch_norm(ones({4, 3}).cuda(), zeros({3}), ones({3}).cuda(),
                                          Tensor(), Tensor(), true));
  // Without affine parameters or running statistics.
  Tensor x0 = cpu_values({4, 2, 3, 3}, kFloat);
  expect_same(nn::functional::batch_norm(x0.cuda(), Tensor(), Tensor(), Tensor(), Tensor(), true),
              nn::functional::batch_norm(x0, Tensor(), Tensor(), Tensor(), Tensor(), true), 1e-4);
}

// The main job's CNN trained on CUDA follows the CPU run step by step.
TEST(CudaTensors, ACnnTrainsAsOnTheCpu) {
  REQUIRE_CUDA();
  NoTf32 exact;
  auto make = [] {
    manual_seed(11);
    return nn::Sequential(nn::Conv2d(1, 10, 5),
                          nn::Functional([](const Tensor& t) { return relu(max_pool2d(t, {2})); }),
                          nn::Conv2d(10, 20, 5), nn::Functional([](const Tensor& t) {
                            return relu(max_pool2d(t, {2})).flatten(1);
                          }),
                          nn::Linear(320, 50), nn::ReLU(), nn::Linear(50, 10));
  };
  auto cpu_net = make(), gpu_net = make();
  gpu_net->to(kCUDA);
  optim::SGD cpu_opt(cpu_net->parameters(), optim::SGDOptions(0.05).momentum(0.9));
  optim::SGD gpu_opt(gpu_net->parameters(), optim::SGDOptions(0.05).momentum(0.9));
  for (int step = 0; step < 5; ++step) {
    Tensor x = randn({32, 1, 28, 28}), y = randint(0, 10, {32});
    cpu_opt.zero_grad();
    gpu_opt.zero_grad();
    Tensor cpu_loss = nn::functional::cross_entropy(cpu_net->forward(x), y);
    Tensor gpu_loss = nn::functional::cross_entropy(gpu_net->forward(x.cuda()), y.cuda());
    cpu_loss.backward();
    gpu_loss.backward();
    EXPECT_NEAR(gpu_loss.item<double>(), cpu_loss.item<double>(), 1e-3) << "step " << step;
    cpu_opt.step();
    gpu_opt.step();
  }
}

TEST(CudaTensors, PinnedMemoryAndNonBlockingCopies) {
  REQUIRE_CUDA();
  Tensor x = cpu_values({1000}, kFloat);
  EXPECT_FALSE(x.is_pinned());
  Tensor p = x.pin_memory();
  EXPECT_TRUE(p.is_pinned());
  EXPECT_TRUE(equal(p, x));
  EXPECT_TRUE(p.pin_memory().is_same(p)) << "pinning a pinned tensor returns it";
  EXPECT_ERROR("pin_memory: only CPU tensors can be pinned, got one on cuda:0",
               x.cuda().pin_memory());
  // Host to device and back without waiting; the stream's synchronize makes
  // the result readable.
  Tensor g = p.to(kCUDA, /*non_blocking=*/true);
  Tensor back = empty({1000}).pin_memory();
  back.copy_(g * 2, /*non_blocking=*/true);
  cuda::getCurrentCUDAStream().synchronize();
  EXPECT_TRUE(allclose(back, x * 2));
  // Into a non-contiguous or unpinned destination the copy is a blocking one.
  Tensor unpinned = empty({1000});
  unpinned.copy_(g, /*non_blocking=*/true);
  EXPECT_TRUE(equal(unpinned, x));
  // Freed pinned blocks are reused once their copies are done.
  cuda::synchronize();
  const int64_t before = cuda::pinned_memory_stats().host_allocs;
  for (int i = 0; i < 5; ++i) {
    Tensor t = x.pin_memory();
    Tensor d = t.to(kCUDA, true);
    cuda::synchronize();
  }
  EXPECT_LE(cuda::pinned_memory_stats().host_allocs, before + 1);
  cuda::empty_pinned_cache();
  EXPECT_EQ(cuda::pinned_memory_stats().cached_blocks, 0);
}

TEST(CudaAllocator, CachesBlocksAndCountsThem) {
  REQUIRE_CUDA();
  if (!cuda::caching_allocator().caching())
    GTEST_SKIP() << "BRASA_NO_CUDA_MEMORY_CACHING=1: caching is off (as under compute-sanitizer)";
  cuda::empty_cache();
  const int64_t before = cuda::memory_allocated();
  const int64_t device_allocs = cuda::memory_stats()["num_device_alloc"];
  {
    Tensor a = empty({1000}, TensorOptions().device(kCUDA));  // 4000 bytes -> 4096
    EXPECT_EQ(cuda::memory_allocated() - before, 4096);
    EXPECT_GE(cuda::memory_reserved(), 2 << 20);
  }
  EXPECT_EQ(cuda::memory_allocated(), before);
  Tensor b = empty({1000}, TensorOptions().device(kCUDA));
  EXPECT_EQ(cuda::memory_stats()["num_device_alloc"], device_allocs + 1)
      << "the second tensor reuses the cached block";
  EXPECT_GE(cuda::max_memory_allocated(), before + 4096);
  cuda::reset_peak_memory_stats();
  EXPECT_EQ(cuda::max_memory_allocated(), cuda::memory_allocated());
}

TEST(CudaAllocator, OutOfMemoryIsAnErrorWithTheFigures) {
  REQUIRE_CUDA();
  auto [free_bytes, total] = cuda::mem_get_info();
  try {
    empty({int64_t(total)}, TensorOptions().device(kCUDA));  // 4 × the device
    ADD_FAILURE() << "expected an out-of-memory error";
  } catch (const OutOfMemoryError& e) {
    EXPECT_NE(e.message().find("CUDA out of memory. Tried to allocate"), std::string::npos)
        << e.message();
  }
  EXPECT_GE(cuda::memory_stats()["num_ooms"], 1);
}

TEST(CudaStreams, PoolCurrentStreamGuardAndEvents) {
  REQUIRE_CUDA();
  cuda::CUDAStream def = cuda::getDefaultCUDAStream();
  EXPECT_EQ(cuda::getCurrentCUDAStream(), def);
  cuda::CUDAStream side = cuda::getStreamFromPool();
  cuda::CUDAStream high = cuda::getStreamFromPool(/*isHighPriority=*/true);
  EXPECT_NE(side, def);
  EXPECT_LT(high.priority(), side.priority()) << "lower numbers are higher priorities";
  {
    cuda::CUDAStreamGuard guard(side);
    EXPECT_EQ(cuda::getCurrentCUDAStream(), side);
    Tensor x = ones({1 << 20}, TensorOptions().device(kCUDA));  // enqueued on `side`
    cuda::CUDAEvent done(/*enable_timing=*/true);
    cuda::CUDAEvent start(/*enable_timing=*/true);
    start.record();
    x.mul_(3);
    done.record();
    done.block(def);  // the default stream waits for the side stream's work
    done.synchronize();
    EXPECT_TRUE(done.query());
    EXPECT_GE(start.elapsed_time(done), 0.f);
    EXPECT_VALUES(x.slice(0, 0, 3).cpu(), {3, 3, 3});
  }
  EXPECT_EQ(cuda::getCurrentCUDAStream(), def) << "the guard restores the stream";
}

}  // namespace
}  // namespace brasa
