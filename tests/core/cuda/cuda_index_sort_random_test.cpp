// Advanced indexing, index_put_, masked_select, nonzero, sort and the device
// random generator on CUDA, against the CPU (skipped without a device).
#include <brasa/cuda/stream.h>

#include <cmath>
#include <limits>

#include "../test_util.h"

namespace brasa {
namespace {

#define REQUIRE_CUDA() \
  if (!cuda::is_available()) GTEST_SKIP() << "no CUDA device"

using IndexList = std::vector<std::optional<Tensor>>;

IndexList on_cuda(const IndexList& in) {
  IndexList out;
  for (const auto& i : in) out.push_back(i ? std::optional<Tensor>(i->cuda()) : std::nullopt);
  return out;
}

void expect_equal_on_cpu(const Tensor& cuda_result, const Tensor& cpu_result) {
  ASSERT_TRUE(cuda_result.is_cuda());
  ASSERT_EQ(cuda_result.dtype(), cpu_result.dtype());
  ASSERT_EQ(cuda_result.sizes().vec(), cpu_result.sizes().vec());
  EXPECT_TRUE(equal(cuda_result.cpu(), cpu_result));
}

TEST(CudaIndexing, AdvancedIndexingMatchesTheCpu) {
  REQUIRE_CUDA();
  manual_seed(3);
  Tensor x = randn({5, 6, 7});
  Tensor rows = tensor({4, 0, -1, 2}, kLong), cols = tensor({1, 5, 5, -6}, kLong);
  Tensor cols32 = cols.to(kInt);
  const std::vector<IndexList> cases = {
      {rows},                                              // leading dim
      {std::nullopt, cols},                                // a middle dim
      {rows, cols},                                        // adjacent dims
      {rows, std::nullopt, tensor({0, 6, -7, 3}, kLong)},  // split: index dims go first
      {std::nullopt, cols32},                              // int32 indices
      {rows.view({2, 2}), cols.view({2, 2})},
      {tensor({true, false, true, true, false})},  // a mask
  };
  for (size_t c = 0; c < cases.size(); ++c) {
    SCOPED_TRACE("case " + std::to_string(c));
    expect_equal_on_cpu(index(x.cuda(), on_cuda(cases[c])), index(x, cases[c]));
    // A non-contiguous self and other dtypes take the same path.
    expect_equal_on_cpu(
        index(x.transpose(0, 1).contiguous().transpose(0, 1).cuda(), on_cuda(cases[c])),
        index(x, cases[c]));
    for (ScalarType t : {kHalf, kLong, kBool, kByte})
      expect_equal_on_cpu(index(x.to(t).cuda(), on_cuda(cases[c])), index(x.to(t), cases[c]));
  }
  EXPECT_ERROR("index: index 5 is out of bounds for dimension 0 with size 5",
               index(x.cuda(), {tensor({1, 5}, kLong).cuda()}));
  EXPECT_ERROR("index: index -8 is out of bounds for dimension 1 with size 6",
               index(x.cuda(), {std::nullopt, tensor({-8}, kLong).cuda()}));
  EXPECT_ERROR("indices on cpu for a tensor on cuda:0", index(x.cuda(), {rows}));
}

TEST(CudaIndexing, IndexPutMatchesTheCpuAndAccumulatesRepeats) {
  REQUIRE_CUDA();
  manual_seed(4);
  Tensor x = randn({6, 4});
  Tensor rows = tensor({1, 3, 1, -1, 1}, kLong);  // 1 three times
  Tensor v = randn({5, 4});
  for (ScalarType t : {kFloat, kDouble, kHalf, kInt, kLong}) {
    SCOPED_TRACE(toString(t));
    Tensor cpu = x.to(t).clone(), gpu = x.to(t).cuda();
    index_put_(cpu, {rows}, v.to(t), /*accumulate=*/true);
    index_put_(gpu, {rows.cuda()}, v.to(t).cuda(), true);
    EXPECT_CLOSE(gpu.cpu().to(kDouble), testing::values(cpu.to(kDouble)), t == kHalf ? 1e-2 : 1e-5);
  }
  // Distinct indices without accumulate: the same as the CPU, broadcast value too.
  Tensor cpu = x.clone(), gpu = x.cuda();
  Tensor distinct = tensor({0, 2, 5}, kLong);
  index_put_(cpu, {distinct}, v.slice(0, 0, 3), false);
  index_put_(gpu, {distinct.cuda()}, v.slice(0, 0, 3).cuda(), false);
  expect_equal_on_cpu(gpu, cpu);
  index_put_(cpu, {std::nullopt, tensor({3, 0}, kLong)}, tensor(7.5f), false);
  index_put_(gpu, {std::nullopt, tensor({3, 0}, kLong).cuda()}, tensor(7.5f).cuda(), false);
  expect_equal_on_cpu(gpu, cpu);
  // A bool mask assigns, as x[mask] = value does.
  Tensor mask = x > 0;
  index_put_(cpu, {mask}, tensor(-1.f), false);
  index_put_(gpu, {mask.cuda()}, tensor(-1.f).cuda(), false);
  expect_equal_on_cpu(gpu, cpu);
  // A CPU number as the value goes to the device; CPU values of more elements are an error.
  index_put_(cpu, {distinct}, tensor(2.f), false);
  index_put_(gpu, {distinct.cuda()}, tensor(2.f), false);
  expect_equal_on_cpu(gpu, cpu);
  cpu.index_put_({distinct}, 3.5);
  gpu.index_put_({distinct.cuda()}, 3.5);
  expect_equal_on_cpu(gpu, cpu);
  EXPECT_ERROR("index_put_: values on cpu for a tensor on cuda:0 (expected the same device)",
               index_put_(gpu, {distinct.cuda()}, ones({3, 4}), false));
  Tensor chars = gpu.to(kChar);
  EXPECT_ERROR("index_put_: accumulate is not implemented for 'Char' on CUDA",
               index_put_(chars, {distinct.cuda()}, ones({3, 4}, kChar).cuda(), true));
  EXPECT_ERROR("index_put_: index 6 is out of bounds for dimension 0 with size 6",
               index_put_(gpu, {tensor({6}, kLong).cuda()}, tensor(1.f).cuda(), false));
}

TEST(CudaIndexing, IndexBackwardAccumulatesOnTheDevice) {
  REQUIRE_CUDA();
  Tensor x = randn({4, 3}).cuda().requires_grad_(true);
  Tensor y = index(x, {tensor({0, 2, 0, 0}, kLong).cuda()});
  (y * 2).sum().backward();
  ASSERT_TRUE(x.grad().is_cuda());
  EXPECT_CLOSE(x.grad().cpu(), std::vector<double>({6, 6, 6, 0, 0, 0, 2, 2, 2, 0, 0, 0}), 0);
}

TEST(CudaIndexing, MaskedSelectAndNonzeroMatchTheCpu) {
  REQUIRE_CUDA();
  manual_seed(5);
  for (int64_t n : {int64_t{1}, int64_t{37}, int64_t{100003}}) {
    Tensor x = randn({n});
    Tensor mask = x > 0.3;
    expect_equal_on_cpu(masked_select(x.cuda(), mask.cuda()), masked_select(x, mask));
    expect_equal_on_cpu(nonzero(mask.cuda()), nonzero(mask));
  }
  Tensor x = randn({3, 5, 4});
  for (ScalarType t : {kFloat, kHalf, kInt, kBool, kByte, kDouble}) {
    Tensor xt = (x * 2).to(t);
    expect_equal_on_cpu(nonzero(xt.cuda()), nonzero(xt));
    expect_equal_on_cpu(masked_select(xt.cuda(), (x < 0).cuda()), masked_select(xt, x < 0));
  }
  EXPECT_ERROR("masked_select: mask on cpu for a tensor on cuda:0", masked_select(x.cuda(), x > 0));
  // index_fill and masked_scatter (which index_put_ a number and nonzero's
  // positions) on the device.
  Tensor xs = x.reshape({12, 5});
  expect_equal_on_cpu(index_fill(xs.cuda(), 0, tensor({1, 7}, kLong).cuda(), 9.0),
                      index_fill(xs, 0, tensor({1, 7}, kLong), 9.0));
  Tensor src = randn({60});
  expect_equal_on_cpu(masked_scatter(xs.cuda(), (xs > 0).cuda(), src.cuda()),
                      masked_scatter(xs, xs > 0, src));
  // Broadcast mask, empty results, a 0-dim tensor.
  Tensor row_mask = tensor({true, false, false, true});
  expect_equal_on_cpu(masked_select(x.cuda(), row_mask.cuda()), masked_select(x, row_mask));
  expect_equal_on_cpu(nonzero(zeros({4, 2}).cuda()), nonzero(zeros({4, 2})));
  expect_equal_on_cpu(masked_select(x.cuda(), (x > 100).cuda()), masked_select(x, x > 100));
  expect_equal_on_cpu(nonzero(tensor(3.f).cuda()), nonzero(tensor(3.f)));
  // masked_select's gradient goes back through masked_scatter/index_put_ on the device.
  Tensor leaf = x.cuda().requires_grad_(true);
  masked_select(leaf, (x > 0).cuda()).sum().backward();
  EXPECT_TRUE(equal(leaf.grad().cpu(), (x > 0).to(kFloat)));
}

TEST(CudaSort, SortMatchesTheCpuWithNanZerosAndTies) {
  REQUIRE_CUDA();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  Tensor x = tensor({3.f, -0.f, nan, 1.f, 0.f, -inf, 1.f, -nan, inf, -2.f, 1.f, 0.f});
  for (bool descending : {false, true}) {
    SCOPED_TRACE(descending ? "descending" : "ascending");
    auto [cv, ci] = sort(x, /*stable=*/true, 0, descending);
    auto [gv, gi] = sort(x.cuda(), true, 0, descending);
    EXPECT_TRUE(equal(gi.cpu(), ci)) << gi.cpu() << " vs " << ci;
    EXPECT_TRUE(allclose(gv.cpu(), cv, 0, 0, /*equal_nan=*/true));
    Tensor g = gv.cpu();
    for (int64_t i = 0; i < x.numel(); ++i)
      EXPECT_EQ(std::signbit(g[i].item<float>()), std::signbit(cv[i].item<float>()))
          << "the values are the input's (-0 kept) at " << i;
  }
  manual_seed(6);
  for (ScalarType t : {kFloat, kDouble, kHalf, kBFloat16, kInt, kLong, kShort, kChar, kByte, kBool})
    for (bool descending : {false, true}) {
      SCOPED_TRACE(std::string(toString(t)) + (descending ? " descending" : ""));
      // Ties galore (values from a small set), rows along a middle dim.
      Tensor v = (rand({6, 50, 3}) * 9).floor().to(t);
      auto [cv, ci] = sort(v, true, 1, descending);
      auto [gv, gi] = sort(v.cuda(), true, 1, descending);
      expect_equal_on_cpu(gv, cv);
      expect_equal_on_cpu(gi, ci);
    }
  Tensor big = randn({3, 70000});
  auto [cv, ci] = sort(big, -1);
  auto [gv, gi] = sort(big.cuda(), -1);
  expect_equal_on_cpu(gv, cv);
  expect_equal_on_cpu(argsort(big.cuda(), -1, true), argsort(big, -1, true));
  auto [tv, ti] = topk(big.cuda(), 5, -1);
  auto [ctv, cti] = topk(big, 5, -1);
  expect_equal_on_cpu(tv, ctv);
  expect_equal_on_cpu(ti, cti);
  // The gradient of sort scatters back on the device.
  Tensor leaf = big.slice(0, 0, 1).cuda().requires_grad_(true);
  std::get<0>(sort(leaf, -1)).slice(1, 0, 3).sum().backward();
  EXPECT_DOUBLE_EQ(leaf.grad().sum().item<double>(), 3);
}

TEST(CudaReductions, PerChannelSumsInTwoPassesMatchTheCpu) {
  REQUIRE_CUDA();
  manual_seed(9);
  Tensor x = randn({6, 5, 7, 9}, TensorOptions().dtype(kDouble));
  for (bool keepdim : {false, true}) {
    SCOPED_TRACE(keepdim ? "keepdim" : "");
    Tensor g = sum(x.cuda(), {0, 2, 3}, keepdim), c = sum(x, {0, 2, 3}, keepdim);
    ASSERT_EQ(g.sizes().vec(), c.sizes().vec());
    EXPECT_TRUE(allclose(g.cpu(), c, 1e-12, 1e-12));
    EXPECT_TRUE(
        allclose(mean(x.cuda(), {0, 3}, keepdim).cpu(), mean(x, {0, 3}, keepdim), 1e-12, 1e-12));
    EXPECT_TRUE(allclose(sum(x.cuda(), {0, 1, 3}, keepdim).cpu(), sum(x, {0, 1, 3}, keepdim), 1e-12,
                         1e-12));
  }
  // Few long rows are split over many blocks and their partials combined.
  Tensor y = randn({3, 200000}, TensorOptions().dtype(kDouble));
  y[1][777] = std::numeric_limits<double>::quiet_NaN();
  Tensor gy = y.cuda();
  EXPECT_TRUE(allclose(gy.sum(1).cpu(), y.sum(1), 1e-12, 1e-9, true));
  EXPECT_TRUE(allclose(gy.var(1).cpu(), y.var(1), 1e-12, 1e-12, true));
  EXPECT_TRUE(allclose(gy.slice(0, 0, 1).sum().cpu(), y.slice(0, 0, 1).sum(), 1e-12, 1e-9));
  EXPECT_TRUE(allclose(gy.amax(1).cpu(), y.amax(1), 0, 0, true));
  EXPECT_TRUE(allclose(gy.to(kFloat).std(1).cpu(), y.to(kFloat).std(1), 1e-5, 1e-6, true));
  Tensor leaf = x.cuda().requires_grad_(true);
  (mean(leaf, {0, 2, 3}) * tensor({1., 2., 3., 4., 5.}, kDouble).cuda()).sum().backward();
  EXPECT_TRUE(
      allclose(leaf.grad().select(1, 4).cpu(), full({6, 7, 9}, 5.0 / (6 * 7 * 9), kDouble)));
}

// Training-mode batch norm through cuDNN, differentiated twice (the second
// order goes through the composite formula), against the CPU.
TEST(CudaBatchNorm, DoubleBackwardMatchesTheCpu) {
  REQUIRE_CUDA();
  manual_seed(10);
  const auto f64 = TensorOptions().dtype(kDouble);
  Tensor x = randn({4, 3, 5, 2}, f64), w = randn({3}, f64), b = randn({3}, f64);
  Tensor probe = randn({4, 3, 5, 2}, f64);
  auto second_order = [&](Device d) {
    Tensor xd = x.to(d).requires_grad_(true), wd = w.to(d).requires_grad_(true),
           bd = b.to(d).requires_grad_(true);
    Tensor rm = zeros({3}, f64.device(d)), rv = ones({3}, f64.device(d));
    Tensor y = nn::functional::batch_norm(xd, rm, rv, wd, bd, /*training=*/true);
    auto g = autograd::grad({(y * probe.to(d)).sum()}, {xd, wd}, {}, true, true);
    Tensor gg = (g[0] * g[0]).sum() + (g[1] * g[1]).sum();
    auto h = autograd::grad({gg}, {xd, wd, bd}, {}, false, false, true);
    return std::vector<Tensor>{g[0], g[1], h[0], h[1]};
  };
  auto cpu = second_order(Device(kCPU)), gpu = second_order(Device(kCUDA));
  for (size_t i = 0; i < cpu.size(); ++i) {
    ASSERT_TRUE(gpu[i].defined()) << i;
    ASSERT_TRUE(gpu[i].is_cuda()) << i;
    EXPECT_TRUE(allclose(gpu[i].cpu(), cpu[i], 1e-9, 1e-9)) << "result " << i;
  }
}

TEST(CudaRandom, DeviceDrawsAreReproducibleAndDistributedRight) {
  REQUIRE_CUDA();
  const auto cuda = TensorOptions().device(kCUDA);
  manual_seed(7);
  Tensor a = rand({1 << 20}, cuda);
  Tensor b = rand({1 << 20}, cuda);
  manual_seed(7);
  Tensor a2 = rand({1 << 20}, cuda);
  EXPECT_TRUE(equal(a.cpu(), a2.cpu())) << "one seed, one stream";
  EXPECT_FALSE(equal(a.cpu(), b.cpu())) << "successive draws differ";
  EXPECT_GE(a.min().item<float>(), 0.f);
  EXPECT_LT(a.max().item<float>(), 1.f);
  EXPECT_NEAR(a.mean().item<double>(), 0.5, 2e-3);
  EXPECT_NEAR(a.var().item<double>(), 1.0 / 12, 1e-3);
  // Draw sizes that are not multiples of a Philox block do not shift the stream's values.
  manual_seed(8);
  Tensor odd = rand({5}, cuda);
  Tensor after = rand({8}, cuda);
  manual_seed(8);
  Tensor whole = rand({16}, cuda);
  EXPECT_TRUE(equal(odd.cpu(), whole.slice(0, 0, 5).cpu()));
  EXPECT_TRUE(equal(after.cpu(), whole.slice(0, 8, 16).cpu())) << "the next draw starts a block";
  for (ScalarType t : {kFloat, kDouble, kHalf, kBFloat16}) {
    SCOPED_TRACE(toString(t));
    Tensor n = randn({1 << 20}, cuda.dtype(t)).to(kDouble);
    EXPECT_NEAR(n.mean().item<double>(), 0, 5e-3);
    EXPECT_NEAR(n.std().item<double>(), 1, 5e-3);
    EXPECT_FALSE(n.isnan().any().item<bool>());
    Tensor u = empty({1000, 3}, cuda.dtype(t)).t();  // non-contiguous
    u.uniform_(-2, 5);
    EXPECT_GE(u.min().item<double>(), -2);
    EXPECT_LE(u.max().item<double>(), 5);
    EXPECT_NEAR(u.to(kDouble).mean().item<double>(), 1.5, 0.15);
  }
  Tensor coin = empty({1 << 20}, cuda).bernoulli_(0.3);
  EXPECT_NEAR(coin.mean().item<double>(), 0.3, 2e-3);
  EXPECT_TRUE(((coin == 0) | (coin == 1)).all().item<bool>());
  Tensor p = rand({1 << 16}).cuda();
  Tensor draws = bernoulli(p);
  EXPECT_TRUE(draws.is_cuda());
  EXPECT_NEAR(draws.mean().item<double>(), p.mean().item<double>(), 1e-2);
  EXPECT_ERROR("bernoulli: expected all probabilities in [0, 1]", bernoulli(p + 1));
  Tensor ints = randint(-3, 4, {1 << 16}, cuda);
  EXPECT_EQ(ints.dtype(), kLong);
  EXPECT_EQ(ints.min().item<int64_t>(), -3);
  EXPECT_EQ(ints.max().item<int64_t>(), 3);
  EXPECT_TRUE(rand_like(a).is_cuda()) << "*_like keeps the device";
  EXPECT_TRUE(randn_like(a).is_cuda());
  // Dropout draws its mask on the device: about p of the values are zero.
  Tensor kept = nn::functional::dropout(ones({1 << 18}, cuda), 0.25, /*training=*/true);
  EXPECT_NEAR((kept == 0).to(kFloat).mean().item<double>(), 0.25, 5e-3);
  EXPECT_NEAR(kept.mean().item<double>(), 1, 1e-2);
}

}  // namespace
}  // namespace brasa
