// The vectorized CPU kernels exist in a base x86-64, an AVX2 and an AVX-512
// variant (ops/cpu/variant.h): every variant the processor runs gives the
// base variant's results, the switch really changes the registered kernels,
// and BRASA_CPU_CAPABILITY is checked.
#include <brasa/device/cpu_capability.h>
#include <brasa/ops/kernel_table.h>
#include <brasa/ops/kernels/copy.h>
#include <brasa/ops/kernels/elementwise.h>
#include <brasa/ops/kernels/pooling.h>
#include <brasa/ops/kernels/reduction.h>
#include <brasa/torch.h>

#include <cmath>
#include <cstdlib>
#include <utility>

#include "../test_util.h"

namespace brasa {
namespace {

namespace F = nn::functional;

// Puts back the variant the process started with.
struct CapabilityGuard {
  CpuCapability saved = cpu_capability();
  ~CapabilityGuard() { detail::use_cpu_capability(saved); }
};

// The ops whose kernels are vectorized, on inputs that reach the vector
// paths (long contiguous runs, several threads' worth of work), tails, broadcasts,
// strided views and every dtype class.
std::vector<Tensor> run_ops() {
  manual_seed(7);
  Tensor a = randn({301, 257}), b = randn({257}), c = rand({301, 257}) + 0.1;
  Tensor big = randn({1 << 20}), t = randn({64, 96}).t();
  Tensor d = randn({1000, 13}, TensorOptions().dtype(kDouble));
  Tensor i = randint(-1000, 1000, {4099}, TensorOptions().dtype(kInt));
  Tensor l = randint(1, 50, {4099}, TensorOptions().dtype(kLong));
  Tensor img = randn({4, 3, 29, 31});
  std::vector<Tensor> out = {a + b,
                             a * b,
                             a - 2.5,
                             a / c,
                             a.pow(2),
                             c.pow(0.5),
                             a.maximum(c),
                             a.minimum(b),
                             a > b,
                             a.eq(a.round()),
                             where(a > 0, a, c),
                             a.clamp(-0.5, 0.7),
                             a.lerp(c, 0.3),
                             addcmul(a, b, c, 0.5),
                             isclose(a, a + 1e-7),
                             nan_to_num(a.log()),
                             a.exp(),
                             c.log(),
                             a.tanh(),
                             a.sigmoid(),
                             c.sqrt(),
                             a.abs(),
                             a.neg(),
                             F::gelu(a),
                             a.erf(),
                             a.sin(),
                             big.exp(),
                             big.relu(),
                             big * 3 + 1,
                             (big > 0).to(kFloat),
                             big.to(kDouble),
                             big.to(kHalf).to(kFloat),
                             big.to(kBFloat16).to(kFloat),
                             i.to(kFloat),
                             i + i,
                             i * 3,
                             l * l,
                             floor_divide(l, full_like(l, 7)),
                             l.remainder(7),
                             d.exp(),
                             d + d.t().contiguous().t(),
                             a.softmax(-1),
                             a.log_softmax(-1),
                             a.softmax(0),
                             randn({9, 7}).softmax(1),
                             big.sum(),
                             a.sum(1),
                             a.sum(0),
                             a.mean(1),
                             a.max(),
                             std::get<0>(a.max(1)),
                             a.argmax(0),
                             std::get<1>(a.min(0, true)),
                             a.prod(1),
                             a.var(1),
                             a.norm(),
                             d.sum(0),
                             i.sum(),
                             l.sum(0),
                             big.abs().max(),
                             a.cumsum(1),
                             t.contiguous(),
                             a.t().contiguous(),
                             a.flip({1}),
                             img.permute({0, 2, 3, 1}).contiguous(),
                             full({1000, 3}, 2.5),
                             a.relu_().clone(),
                             F::max_pool2d(img, F::MaxPool2dFuncOptions(3).stride(2)),
                             F::avg_pool2d(img, F::AvgPool2dFuncOptions(2)),
                             F::adaptive_avg_pool2d(img, {5, 7})};
  // Backward kernels too (threshold_backward, pooling and softmax gradients).
  Tensor x = img.clone().requires_grad_(true);
  Tensor y = F::max_pool2d(F::relu(x), F::MaxPool2dFuncOptions(2)).log_softmax(-1).sum();
  y.backward();
  out.push_back(x.grad());
  return out;
}

void expect_same(const std::vector<Tensor>& got, const std::vector<Tensor>& want,
                 const char* variant) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t k = 0; k < got.size(); ++k) {
    SCOPED_TRACE(::testing::Message() << variant << ", result " << k);
    ASSERT_EQ(got[k].sizes(), want[k].sizes());
    ASSERT_EQ(got[k].dtype(), want[k].dtype());
    if (got[k].is_floating_point()) {
      // Summation order and fused multiply-adds may differ between variants.
      Tensor g = got[k].to(kDouble), w = want[k].to(kDouble);
      EXPECT_TRUE(allclose(g, w, 1e-5, 1e-6, /*equal_nan=*/true))
          << "largest difference " << (g - w).abs().nan_to_num(0).max().item<double>();
    } else {
      EXPECT_TRUE(got[k].equal(want[k]));
    }
  }
}

TEST(CpuCapability, EveryVariantTheProcessorRunsMatchesTheBaseOne) {
  CapabilityGuard guard;
  detail::use_cpu_capability(CpuCapability::kDefault);
  const std::vector<Tensor> base = run_ops();
  for (CpuCapability c : {CpuCapability::kAvx2, CpuCapability::kAvx512}) {
    if (static_cast<int>(c) > static_cast<int>(best_cpu_capability())) {
      std::printf("%s: not run, this processor supports at most %s\n", cpu_capability_name(c),
                  cpu_capability_name(best_cpu_capability()));
      continue;
    }
    detail::use_cpu_capability(c);
    EXPECT_EQ(get_cpu_capability(), cpu_capability_name(c));
    expect_same(run_ops(), base, cpu_capability_name(c));
  }
}

// max_pool2d(x, 2) window by window: greater wins, a NaN wins and the first
// NaN stays, ties keep the first position in window order.
std::pair<std::vector<double>, std::vector<int64_t>> pool_2x2_reference(const Tensor& x) {
  const int64_t planes = x.numel() / (x.size(-2) * x.size(-1)), H = x.size(-2), W = x.size(-1);
  const int64_t OH = H / 2, OW = W / 2;
  Tensor xd = x.to(kDouble).contiguous();
  const double* p = xd.data_ptr<double>();
  std::vector<double> values;
  std::vector<int64_t> where;
  for (int64_t q = 0; q < planes; ++q)
    for (int64_t oh = 0; oh < OH; ++oh)
      for (int64_t ow = 0; ow < OW; ++ow) {
        int64_t best = 2 * oh * W + 2 * ow;
        for (int64_t pos : {best + 1, best + W, best + W + 1}) {
          const double v = p[q * H * W + pos], b = p[q * H * W + best];
          if (v > b || (std::isnan(v) && !std::isnan(b))) best = pos;
        }
        values.push_back(p[q * H * W + best]);
        where.push_back(best);
      }
  return {values, where};
}

TEST(CpuCapability, MaxPool2x2MatchesAWindowByWindowReferenceInEveryVariant) {
  CapabilityGuard guard;
  manual_seed(3);
  for (CpuCapability c : {CpuCapability::kDefault, CpuCapability::kAvx2, CpuCapability::kAvx512}) {
    if (static_cast<int>(c) > static_cast<int>(best_cpu_capability())) continue;
    detail::use_cpu_capability(c);
    // Short rows (OW 4, 12), long ones with a tail (OW 35), odd sizes, ties
    // (rounded values), NaNs and infinities, float and double.
    for (std::vector<int64_t> shape : {std::vector<int64_t>{64, 20, 8, 8},
                                       {3, 5, 24, 24},
                                       {2, 3, 9, 71},
                                       {1, 2, 70, 33},
                                       {5, 1, 2, 2}}) {
      for (ScalarType t : {kFloat, kDouble}) {
        SCOPED_TRACE(::testing::Message()
                     << cpu_capability_name(c) << " " << t << " " << IntArrayRef(shape));
        Tensor x = (randn(shape) * 2).round().to(t);
        Tensor flat = x.view({-1});
        for (int64_t k = 0; k < flat.numel(); k += 7) flat[k] = NAN;
        for (int64_t k = 3; k < flat.numel(); k += 11) flat[k] = -INFINITY;
        auto [values, indices] = max_pool2d_with_indices(x, {2, 2});
        auto [want_values, want_indices] = pool_2x2_reference(x);
        Tensor got_values = values.to(kDouble).contiguous().view({-1});
        Tensor got_indices = indices.contiguous().view({-1});
        ASSERT_EQ(got_values.numel(), static_cast<int64_t>(want_values.size()));
        for (size_t k = 0; k < want_values.size(); ++k) {
          const double v = got_values[k].item<double>();
          ASSERT_TRUE(v == want_values[k] || (std::isnan(v) && std::isnan(want_values[k])))
              << "value " << k;
          ASSERT_EQ(got_indices[k].item<int64_t>(), want_indices[k]) << "index " << k;
        }
        // The gradient lands on the argmax of each window.
        Tensor leaf = x.clone().requires_grad_(true);
        Tensor weights = randn(values.sizes()).to(t);
        (max_pool2d(leaf, {2, 2}) * weights).sum().backward();
        Tensor want_grad = zeros_like(x).view({-1, x.size(-2) * x.size(-1)});
        want_grad.scatter_add_(1, indices.reshape({want_grad.size(0), -1}),
                               weights.reshape({want_grad.size(0), -1}));
        EXPECT_TRUE(leaf.grad().equal(want_grad.view(x.sizes())));
      }
    }
  }
}

TEST(CpuCapability, SwitchingChangesTheRegisteredKernels) {
  if (best_cpu_capability() == CpuCapability::kDefault) GTEST_SKIP() << "no AVX2 on this CPU";
  CapabilityGuard guard;
  detail::use_cpu_capability(CpuCapability::kDefault);
  auto binary = KernelTable<BinaryKernel>::fns[0];
  auto unary = KernelTable<UnaryKernel>::fns[0];
  auto copy = KernelTable<CopyKernel>::fns[0];
  auto sum = KernelTable<ReduceRowsKernel>::fns[0];
  auto pool = KernelTable<MaxPool2dKernel>::fns[0];
  detail::use_cpu_capability(CpuCapability::kAvx2);
  EXPECT_NE(KernelTable<BinaryKernel>::fns[0], binary);
  EXPECT_NE(KernelTable<UnaryKernel>::fns[0], unary);
  EXPECT_NE(KernelTable<CopyKernel>::fns[0], copy);
  EXPECT_NE(KernelTable<ReduceRowsKernel>::fns[0], sum);
  EXPECT_NE(KernelTable<MaxPool2dKernel>::fns[0], pool);
}

TEST(CpuCapability, TheBestVariantIsTheDefaultChoice) {
  const char* env = std::getenv("BRASA_CPU_CAPABILITY");
  if (env != nullptr && *env != '\0') GTEST_SKIP() << "BRASA_CPU_CAPABILITY is set";
  EXPECT_EQ(detail::cpu_capability_from_env(), best_cpu_capability());
  EXPECT_EQ(cpu_capability(), best_cpu_capability());
}

// SumArraysKernel (the shm collectives' reduction) against a double
// reference in every variant: 1, 2 and 3 inputs, the output being each of
// them or none, averages, lengths off the vector width and the block.
template <class T>
void check_sum_arrays(const char* variant) {
  const auto sum = kernel<SumArraysKernel>(kCPU);
  const ScalarType t = std::is_same_v<T, float> ? kFloat : kDouble;
  for (int64_t n : {int64_t{1}, int64_t{37}, int64_t{2500}}) {
    for (int count : {1, 2, 3}) {
      for (int out_is = -1; out_is < count; ++out_is) {
        for (bool average : {false, true}) {
          SCOPED_TRACE(::testing::Message()
                       << variant << " n " << n << " count " << count << " out is input " << out_is
                       << " average " << average);
          std::vector<std::vector<T>> in(static_cast<size_t>(count));
          std::vector<double> want(static_cast<size_t>(n), 0.0);
          for (int k = 0; k < count; ++k)
            for (int64_t i = 0; i < n; ++i) {
              const T v = static_cast<T>(0.25 * (k + 1) + 0.5 * static_cast<double>(i % 17));
              in[static_cast<size_t>(k)].push_back(v);
              want[static_cast<size_t>(i)] += v;
            }
          std::vector<T> separate(static_cast<size_t>(n), T(-1));
          std::vector<const void*> ptrs;
          for (const auto& v : in) ptrs.push_back(v.data());
          T* out = out_is < 0 ? separate.data() : in[static_cast<size_t>(out_is)].data();
          sum(out, ptrs.data(), count, n, t, average);
          for (int64_t i = 0; i < n; ++i) {
            const double w =
                average ? want[static_cast<size_t>(i)] / count : want[static_cast<size_t>(i)];
            ASSERT_NEAR(static_cast<double>(out[i]), w, 1e-5 * std::abs(w)) << "element " << i;
          }
        }
      }
    }
  }
}

TEST(CpuCapability, SumArraysMatchesAReferenceInEveryVariant) {
  CapabilityGuard guard;
  for (CpuCapability c : {CpuCapability::kDefault, CpuCapability::kAvx2, CpuCapability::kAvx512}) {
    if (static_cast<int>(c) > static_cast<int>(best_cpu_capability())) continue;
    detail::use_cpu_capability(c);
    check_sum_arrays<float>(cpu_capability_name(c));
    check_sum_arrays<double>(cpu_capability_name(c));
  }
  float x = 1;
  const void* in[] = {&x};
  EXPECT_ERROR("sum of arrays: expected float or double elements, got Int",
               kernel<SumArraysKernel>(kCPU)(&x, in, 1, 1, kInt, false));
}

TEST(CpuCapability, TheEnvironmentSwitchIsChecked) {
  const char* env = std::getenv("BRASA_CPU_CAPABILITY");
  const std::string saved = env ? env : "";
  auto with = [](const char* value) {
    setenv("BRASA_CPU_CAPABILITY", value, 1);
    return detail::cpu_capability_from_env();
  };
  EXPECT_EQ(with("default"), CpuCapability::kDefault);
  EXPECT_EQ(with("auto"), best_cpu_capability());
  EXPECT_ERROR(
      "BRASA_CPU_CAPABILITY='avx3' is not a CPU capability: expected default, avx2, "
      "avx512 or auto",
      with("avx3"));
  if (best_cpu_capability() != CpuCapability::kAvx512) {
    EXPECT_ERROR("BRASA_CPU_CAPABILITY=avx512: this processor supports at most", with("avx512"));
    EXPECT_ERROR("use_cpu_capability: this processor does not run AVX512 kernels",
                 detail::use_cpu_capability(CpuCapability::kAvx512));
  } else {
    EXPECT_EQ(with("avx512"), CpuCapability::kAvx512);
  }
  if (saved.empty())
    unsetenv("BRASA_CPU_CAPABILITY");
  else
    setenv("BRASA_CPU_CAPABILITY", saved.c_str(), 1);
}

}  // namespace
}  // namespace brasa
