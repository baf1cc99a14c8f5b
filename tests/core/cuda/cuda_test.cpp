// The CUDA runtime, allocator and kernels (CUDA builds). Without a device
// only the first group runs: it checks that every entry point says why CUDA
// is unavailable; the others skip with "no CUDA device".
#include <brasa/cuda/event.h>
#include <brasa/cuda/memory.h>
#include <brasa/cuda/stream.h>

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

TEST(CudaAllocator, CachesBlocksAndCountsThem) {
  REQUIRE_CUDA();
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
