// GELU, leaky ReLU, layer norm and clamp's (hardtanh's, relu6's) gradient
// run fused kernels on the CPU; their values and gradients match the
// composites of elementwise ops and reductions they replace, computed in
// float64 with autograd, in float32 and float64, on contiguous and
// non-contiguous inputs. (The gradcheck table gradchecks and gradgradchecks
// them too.)
#include <brasa/autograd/autograd.h>
#include <brasa/nn/aten_functions.h>
#include <brasa/nn/functional.h>

#include <cmath>
#include <functional>
#include <vector>

#include "../test_util.h"

namespace brasa {
namespace {

namespace F = nn::functional;

Tensor gelu_reference(const Tensor& x, bool tanh_approximation) {
  if (tanh_approximation)
    return 0.5 * x * (1 + tanh(std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x)));
  return 0.5 * x * (1 + erf(x * M_SQRT1_2));
}

TEST(FusedGelu, MatchesTheFormulaWithItsGradient) {
  for (ScalarType dtype : {kFloat, kDouble})
    for (const char* approximate : {"none", "tanh"})
      for (bool transposed : {false, true}) {
        SCOPED_TRACE(::testing::Message()
                     << dtype << " " << approximate << " transposed " << transposed);
        // Values across the whole range, tails included.
        Tensor base = (linspace(-12, 12, 4001, TensorOptions().dtype(kDouble))).view({4001, 1});
        base = cat({base, base * 0.37, base * 0.01}, 1);  // [4001, 3]
        Tensor x0 = transposed ? base.t().contiguous().t() : base;
        Tensor x = x0.to(dtype).detach().clone().requires_grad_(true);
        Tensor y = F::gelu(x, approximate);
        EXPECT_EQ(y.grad_fn()->name(), "GeluBackward0");
        Tensor gy = cos(x0 * 3).to(dtype);
        y.backward(gy);
        Tensor xr = x0.detach().clone().requires_grad_(true);
        Tensor yr = gelu_reference(xr, std::string(approximate) == "tanh");
        yr.backward(cos(x0 * 3));
        const double tol = dtype == kFloat ? 1e-6 : 1e-12;
        EXPECT_LT((y.to(kDouble) - yr).abs().max().item<double>(), tol * 12);
        EXPECT_LT((x.grad().to(kDouble) - xr.grad()).abs().max().item<double>(), tol * 12);
      }
}

TEST(FusedGelu, SecondDerivativeIsTheFormulas) {
  Tensor x = linspace(-3, 3, 25, TensorOptions().dtype(kDouble)).requires_grad_(true);
  for (const char* approximate : {"none", "tanh"}) {
    auto g = autograd::grad({F::gelu(x, approximate).sum()}, {x}, {}, true, true);
    auto gg = autograd::grad({g[0].sum()}, {x});
    Tensor xr = x.detach().clone().requires_grad_(true);
    auto r = autograd::grad({gelu_reference(xr, std::string(approximate) == "tanh").sum()}, {xr},
                            {}, true, true);
    auto rr = autograd::grad({r[0].sum()}, {xr});
    EXPECT_TRUE(g[0].allclose(r[0], 1e-10, 1e-12)) << approximate;
    EXPECT_TRUE(gg[0].allclose(rr[0], 1e-10, 1e-12)) << approximate;
  }
}

Tensor layer_norm_reference(const Tensor& x, int64_t k, const Tensor& w, const Tensor& b,
                            double eps) {
  std::vector<int64_t> dims;
  for (int64_t d = x.dim() - k; d < x.dim(); ++d) dims.push_back(d);
  Tensor mean = x.mean(dims, true), var = (x - mean).pow(2).mean(dims, true);
  Tensor y = (x - mean) / sqrt(var + eps);
  if (w.defined()) y = y * w;
  if (b.defined()) y = y + b;
  return y;
}

struct NormCase {
  std::vector<int64_t> shape;
  int64_t k;  // normalized dims
  bool weight, bias, transposed;
};

TEST(FusedLayerNorm, MatchesTheFormulasWithAllGradients) {
  for (ScalarType dtype : {kFloat, kDouble})
    for (const NormCase& c : std::vector<NormCase>{{{6, 7, 32}, 1, true, true, false},
                                                   {{6, 7, 32}, 2, true, true, true},
                                                   {{5, 300}, 1, false, false, false},
                                                   {{5, 300}, 1, true, false, false},
                                                   {{5, 300}, 1, false, true, false},
                                                   {{64}, 1, true, true, false},
                                                   {{3, 2, 4097}, 1, true, true, false},
                                                   // Short rows in vector registers: under
                                                   // one vector, odd tails, the longest.
                                                   {{4, 5}, 1, true, true, false},
                                                   {{3, 17}, 1, true, false, false},
                                                   {{3, 48}, 1, false, true, false},
                                                   {{2, 4096}, 1, true, true, false},
                                                   // Chunks of over 64 rows: the weight's
                                                   // sums leave T for double on the way.
                                                   {{1000, 24}, 1, true, true, false},
                                                   // Few long rows: the weight and bias
                                                   // gradients by strips of columns.
                                                   {{9, 8, 1200}, 2, true, true, false}}) {
      SCOPED_TRACE(::testing::Message()
                   << dtype << " shape " << IntArrayRef(c.shape) << " k " << c.k << " weight "
                   << c.weight << " bias " << c.bias << " transposed " << c.transposed);
      manual_seed(5);
      Tensor x0 = randn(c.shape, TensorOptions().dtype(kDouble)) * 2 + 0.7;
      if (c.transposed) x0 = x0.transpose(0, 1).contiguous().transpose(0, 1);
      std::vector<int64_t> norm(c.shape.end() - c.k, c.shape.end());
      Tensor w0 = c.weight ? randn(norm, TensorOptions().dtype(kDouble)) : Tensor();
      Tensor b0 = c.bias ? randn(norm, TensorOptions().dtype(kDouble)) : Tensor();
      Tensor gy = randn(c.shape, TensorOptions().dtype(kDouble));
      auto leaf = [&](const Tensor& t, ScalarType s) {
        return t.defined() ? t.to(s).detach().requires_grad_(true) : Tensor();
      };
      Tensor x = leaf(x0, dtype), w = leaf(w0, dtype), b = leaf(b0, dtype);
      Tensor y = F::layer_norm(x, norm, w, b, 1e-5);
      EXPECT_EQ(y.grad_fn()->name(), "NativeLayerNormBackward0");
      y.backward(gy.to(dtype));
      Tensor xr = leaf(x0, kDouble), wr = leaf(w0, kDouble), br = leaf(b0, kDouble);
      layer_norm_reference(xr, c.k, wr, br, 1e-5).backward(gy);
      const double tol = dtype == kFloat ? 2e-4 : 1e-10;
      auto close = [&](const Tensor& a, const Tensor& r, const char* what) {
        EXPECT_LT((a.to(kDouble) - r).abs().max().item<double>(), tol) << what;
      };
      close(y, layer_norm_reference(x0, c.k, w0, b0, 1e-5), "y");
      close(x.grad(), xr.grad(), "x.grad");
      if (c.weight) close(w.grad(), wr.grad(), "weight.grad");
      if (c.bias) close(b.grad(), br.grad(), "bias.grad");
    }
}

TEST(FusedLayerNorm, DoubleBackwardAndErrors) {
  manual_seed(2);
  Tensor x = randn({4, 6}, TensorOptions().dtype(kDouble)).requires_grad_(true);
  Tensor w = randn({6}, TensorOptions().dtype(kDouble)).requires_grad_(true);
  auto g = autograd::grad({(F::layer_norm(x, {6}, w, Tensor(), 1e-5) * x).sum()}, {x, w}, {}, true,
                          true);
  auto gg = autograd::grad({g[0].pow(2).sum() + g[1].sum()}, {x, w});
  Tensor xr = x.detach().clone().requires_grad_(true), wr = w.detach().clone().requires_grad_(true);
  auto r = autograd::grad({(layer_norm_reference(xr, 1, wr, Tensor(), 1e-5) * xr).sum()}, {xr, wr},
                          {}, true, true);
  auto rr = autograd::grad({r[0].pow(2).sum() + r[1].sum()}, {xr, wr});
  EXPECT_TRUE(gg[0].allclose(rr[0], 1e-8, 1e-10));
  EXPECT_TRUE(gg[1].allclose(rr[1], 1e-8, 1e-10));
  EXPECT_ERROR("layer_norm: expected weight and bias of shape [6], got [5]",
               F::layer_norm(x, {6}, randn({5}, TensorOptions().dtype(kDouble)), Tensor(), 1e-5));
}

TEST(FusedLeakyRelu, MatchesTheFormulaWithItsGradient) {
  const double nan = std::nan("");
  for (ScalarType dtype : {kFloat, kDouble, kBFloat16})
    for (double slope : {0.2, 1.5, -0.3})
      for (bool transposed : {false, true}) {
        SCOPED_TRACE(::testing::Message() << dtype << " slope " << slope << " " << transposed);
        Tensor base = tensor({-3.0, -0.5, -0.0, 0.0, 0.25, 7.0, -1e30, 1e30, nan},
                             TensorOptions().dtype(kDouble));
        base = stack({base, -base, base * 2}, 1);  // [9, 3]
        Tensor x0 = (transposed ? base.t().contiguous().t() : base).to(dtype);
        Tensor x = x0.detach().clone().requires_grad_(true);
        Tensor y = F::leaky_relu(x, slope);
        EXPECT_EQ(y.grad_fn()->name(), "LeakyReluBackward0");
        Tensor xd = x0.to(kDouble);
        Tensor want = where(xd > 0, xd, xd * slope).to(dtype);
        const double tol = dtype == kBFloat16 ? 1e-2 : dtype == kFloat ? 1e-6 : 0;
        EXPECT_TRUE(y.detach().allclose(want, tol, 0, true));
        EXPECT_TRUE(isnan(y.detach()).equal(isnan(xd)));  // NaN stays NaN
        Tensor gy = arange(27, TensorOptions().dtype(kDouble)).view({9, 3}) - 13;
        y.backward(gy.to(dtype));
        Tensor gwant = where(xd > 0, gy, gy * slope).to(dtype);
        EXPECT_TRUE(x.grad().allclose(gwant, tol, 0, true));
      }
}

TEST(FusedLeakyRelu, SecondDerivativeAndOtherDtypes) {
  manual_seed(4);
  Tensor x = randn({5, 4}, TensorOptions().dtype(kDouble)).requires_grad_(true);
  // d/dg of the backward is the same scaling; d/dx is zero.
  auto g = autograd::grad({(F::leaky_relu(x, 0.1) * x).sum()}, {x}, {}, true, true);
  EXPECT_EQ(g[0].grad_fn() != nullptr, true);
  auto gg = autograd::grad({g[0].sum()}, {x});
  Tensor xd = x.detach();
  Tensor slope_or_one = where(xd > 0, ones_like(xd), full_like(xd, 0.1));
  EXPECT_TRUE(g[0].allclose(xd * slope_or_one + where(xd > 0, xd, xd * 0.1), 1e-12, 1e-12));
  EXPECT_TRUE(gg[0].allclose(2 * slope_or_one, 1e-12, 1e-12));
  // Integers keep the composite (a float result), as before the kernel.
  Tensor i = tensor(std::vector<int64_t>{-2, 3});
  EXPECT_TRUE(F::leaky_relu(i, 0.5).equal(tensor({-1.0f, 3.0f})));
}

// clamp's gradient passes g where lo <= x <= hi (both bounds included, as
// PyTorch's clamp); hardtanh's and relu6's only strictly inside (zero at the
// bounds, as PyTorch's hardtanh_backward); NaN inputs get zero; one-sided
// clamps; one fused pass whose own gradient is the same masking.
TEST(FusedClampBackward, BoundsNaNAndSecondDerivative) {
  const double nan = std::nan("");
  for (ScalarType dtype : {kFloat, kDouble})
    for (bool transposed : {false, true}) {
      SCOPED_TRACE(::testing::Message() << dtype << " " << transposed);
      Tensor base = tensor({-3.0, -0.5, -0.25, 0.0, 0.25, 0.5, 6.0, 7.0, nan},
                           TensorOptions().dtype(kDouble));
      base = stack({base, base * 2, -base}, 1);  // [9, 3]
      Tensor x0 = (transposed ? base.t().contiguous().t() : base).to(dtype);
      Tensor gy = (arange(27, TensorOptions().dtype(kDouble)).view({9, 3}) - 13).to(dtype);
      Tensor xd = x0.to(kDouble);
      auto grad_of = [&](const std::function<Tensor(const Tensor&)>& f) {
        Tensor x = x0.detach().clone().requires_grad_(true);
        f(x).backward(gy);
        return x.grad().to(kDouble);
      };
      Tensor g = gy.to(kDouble), zero = zeros_like(g);
      EXPECT_TRUE(grad_of([](const Tensor& x) {
                    return clamp(x, -0.5, 0.5);
                  }).equal(where((xd >= -0.5).logical_and(xd <= 0.5), g, zero)));
      EXPECT_TRUE(grad_of([](const Tensor& x) {
                    return F::hardtanh(x, -0.5, 0.5);
                  }).equal(where((xd > -0.5).logical_and(xd < 0.5), g, zero)));
      EXPECT_TRUE(grad_of([](const Tensor& x) {
                    return F::relu6(x);
                  }).equal(where((xd > 0).logical_and(xd < 6), g, zero)));
      EXPECT_TRUE(grad_of([](const Tensor& x) {
                    return clamp_min(x, 0.25);
                  }).equal(where(xd >= 0.25, g, zero)));
      EXPECT_TRUE(grad_of([](const Tensor& x) {
                    return clamp_max(x, 0.25);
                  }).equal(where(xd <= 0.25, g, zero)));
    }
  Tensor x = tensor({-1.0, 0.2, 0.7, 3.0}, TensorOptions().dtype(kDouble)).requires_grad_(true);
  Tensor y = F::relu6(x * 4);
  EXPECT_EQ(y.grad_fn()->name(), "HardtanhBackward0");
  auto g = autograd::grad({(y * x).sum()}, {x}, {}, true, true);
  auto gg = autograd::grad({g[0].sum()}, {x});
  // d/dx of (relu6(4x) * x) = 4 x [0 < 4x < 6] + relu6(4x); its derivative 8 [0 < 4x < 6].
  EXPECT_VALUES(g[0].detach(), {0.0, 1.6, 5.6, 6.0});
  EXPECT_VALUES(gg[0], {0.0, 8.0, 8.0, 0.0});
}

// hardsigmoid and hardswish (MobileNetV3) against PyTorch's formulas, with
// their gradients at and around the bounds -3 and 3.
TEST(Hardswish, ValuesAndGradientsAsPyTorch) {
  Tensor x = tensor({-4.0, -3.0, -1.5, 0.0, 2.0, 3.0, 5.0}, TensorOptions().dtype(kDouble))
                 .requires_grad_(true);
  Tensor hs = F::hardsigmoid(x);
  auto near = [](const Tensor& got, std::vector<double> want) {
    return got.detach().allclose(tensor(want, TensorOptions().dtype(kDouble)), 1e-12, 1e-12);
  };
  EXPECT_TRUE(near(hs, {0.0, 0.0, 0.25, 0.5, 5.0 / 6, 1.0, 1.0}));
  hs.sum().backward();
  EXPECT_TRUE(near(x.grad(), {0.0, 0.0, 1.0 / 6, 1.0 / 6, 1.0 / 6, 0.0, 0.0}));  // zero at +-3
  x.mutable_grad() = Tensor();
  Tensor hw = hardswish(x);  // the torch:: spelling
  EXPECT_TRUE(near(hw, {0.0, 0.0, -0.375, 0.0, 10.0 / 6, 3.0, 5.0}));
  hw.sum().backward();
  // 0 below -3, x / 3 + 1/2 on [-3, 3], 1 above.
  EXPECT_TRUE(near(x.grad(), {0.0, -0.5, 0.0, 0.5, 2.0 / 3 + 0.5, 1.5, 1.0}));
}

// ELU/SELU, SiLU, Mish, hardswish and softplus run one fused pass each way: values and
// gradients against the formulas in float64 (libm), over a range with the
// tails, the kinks and NaN, in float and double; the backward's name is
// PyTorch's, and create_graph differentiates the composite.
TEST(FusedActivations, MatchTheFormulasWithTheirGradients) {
  const double nan = std::nan("");
  Tensor base = cat({linspace(-30, 30, 241, TensorOptions().dtype(kDouble)),
                     tensor({-3.0, 3.0, 0.0, -0.0, 1e-6, -1e-6, 50.0, -100.0, nan},
                            TensorOptions().dtype(kDouble))});
  const double sa = 1.6732632423543772848170429916717, ss = 1.0507009873554804934193349852946;
  auto softplus_ref = [](const Tensor& x) { return where(x > 20, x, log1p(exp(x.clamp_max(20)))); };
  struct Case {
    const char* grad_fn;
    std::function<Tensor(const Tensor&)> f, want, dwant;
  };
  std::vector<Case> cases = {
      {"EluBackward0", [](const Tensor& x) { return F::elu(x, 0.7); },
       [](const Tensor& x) { return where(x > 0, x, (exp(x) - 1) * 0.7); },
       [](const Tensor& x) { return where(x > 0, ones_like(x), exp(x) * 0.7); }},
      {"EluBackward0", [](const Tensor& x) { return F::selu(x); },
       [&](const Tensor& x) { return where(x > 0, x, (exp(x) - 1) * sa) * ss; },
       [&](const Tensor& x) { return where(x > 0, ones_like(x), exp(x) * sa) * ss; }},
      {"SiluBackward0", [](const Tensor& x) { return F::silu(x); },
       [](const Tensor& x) { return x / (1 + exp(-x)); },
       [](const Tensor& x) {
         Tensor s = 1 / (1 + exp(-x));
         return s * (1 + x * (1 - s));
       }},
      {"MishBackward0", [](const Tensor& x) { return F::mish(x); },
       [&](const Tensor& x) { return x * tanh(softplus_ref(x)); },
       [&](const Tensor& x) {
         Tensor t = tanh(softplus_ref(x));
         return t + x / (1 + exp(-x)) * (1 - t * t);
       }},
      {"SoftplusBackward0", [](const Tensor& x) { return F::softplus(x); },
       [&](const Tensor& x) { return softplus_ref(x); },
       [](const Tensor& x) { return where(x > 20, ones_like(x), 1 / (1 + exp(-x))); }},
      {"SoftplusBackward0", [](const Tensor& x) { return F::softplus(x, 2.0, 1.0); },
       [&](const Tensor& x) { return where(x * 2 > 1, x, softplus_ref(x * 2) / 2); },
       [](const Tensor& x) { return where(x * 2 > 1, ones_like(x), 1 / (1 + exp(-2 * x))); }},
      {"HardswishBackward0", [](const Tensor& x) { return F::hardswish(x); },
       [](const Tensor& x) { return x * (x + 3).clamp(0, 6) / 6; },
       [](const Tensor& x) {
         return where(x < -3, zeros_like(x), where(x <= 3, x / 3 + 0.5, ones_like(x)));
       }},
  };
  for (const Case& c : cases)
    for (ScalarType dtype : {kFloat, kDouble}) {
      SCOPED_TRACE(::testing::Message() << c.grad_fn << " " << dtype);
      Tensor x = base.to(dtype).detach().clone().requires_grad_(true);
      Tensor y = c.f(x);
      EXPECT_EQ(y.grad_fn()->name(), c.grad_fn);
      const double tol = dtype == kFloat ? 2e-6 : 1e-12;
      EXPECT_TRUE(y.detach().to(kDouble).allclose(c.want(base), tol, tol, true))
          << (y.detach().to(kDouble) - c.want(base)).abs().nan_to_num(0).max().item<double>();
      Tensor gy = linspace(-2, 2, base.numel(), TensorOptions().dtype(kDouble));
      y.backward(gy.to(dtype));
      EXPECT_TRUE(x.grad().to(kDouble).allclose(gy * c.dwant(base), tol, tol, true))
          << (x.grad().to(kDouble) - gy * c.dwant(base)).abs().nan_to_num(0).max().item<double>();
    }
  // create_graph: the second derivative of silu at 0.5 (s = sigmoid(0.5)):
  // s (1 - s) (2 + x (1 - 2 s)).
  Tensor x = tensor({0.5}, TensorOptions().dtype(kDouble)).requires_grad_(true);
  auto g = autograd::grad({F::silu(x).sum()}, {x}, {}, true, true);
  auto gg = autograd::grad({g[0].sum()}, {x});
  const double s = 1 / (1 + std::exp(-0.5));
  EXPECT_NEAR(gg[0].item<double>(), s * (1 - s) * (2 + 0.5 * (1 - 2 * s)), 1e-12);
}

// ELU's negative side is alpha * expm1(x): small inputs keep their relative
// precision in float (e^x - 1 gave -1.013e-6 at -1e-6), and the polynomial
// meets e^x - 1 at |x| = 1/2.
TEST(FusedActivations, EluKeepsSmallNegativeInputsPrecise) {
  const std::vector<double> xs = {-1e-7, -1e-6, -3e-4, -0.1, -0.4999, -0.5, -0.5001, -3, -20};
  Tensor x = tensor(xs, TensorOptions().dtype(kFloat));
  Tensor y = F::elu(x, F::ELUFuncOptions().alpha(1.5)).to(kDouble);
  for (size_t i = 0; i < xs.size(); ++i) {
    const double xf = static_cast<double>(static_cast<float>(xs[i]));
    const double want = 1.5 * std::expm1(xf);
    EXPECT_NEAR(y[static_cast<int64_t>(i)].item<double>(), want, 3e-7 * std::abs(want)) << xs[i];
  }
}

// smooth_l1_loss and huber_loss run one fused pass each way: values and the
// gradients of both input and target against the formulas in float64, with
// differences inside, at and beyond beta (delta), zero and NaN; the
// target's gradient is minus the input's; create_graph gives the second
// derivative of the quadratic part.
TEST(FusedPointwiseLoss, SmoothL1AndHuberWithBothGradients) {
  const double nan = std::nan("");
  Tensor xb =
      tensor({-2.0, -0.5, -0.3, 0.0, 0.1, 0.5, 0.7, 3.0, nan}, TensorOptions().dtype(kDouble));
  Tensor yb = tensor({0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.2, 1.0, 0.0}, TensorOptions().dtype(kDouble));
  for (bool huber : {false, true})
    for (ScalarType dtype : {kFloat, kDouble}) {
      SCOPED_TRACE(::testing::Message() << (huber ? "huber " : "smooth_l1 ") << dtype);
      const double p = 0.5;
      Tensor x = xb.to(dtype).clone().requires_grad_(true),
             y = yb.to(dtype).clone().requires_grad_(true);
      Tensor l = huber ? F::huber_loss(x, y, Reduction::None, p)
                       : F::smooth_l1_loss(x, y, Reduction::None, p);
      EXPECT_EQ(l.grad_fn()->name(), huber ? "HuberLossBackward0" : "SmoothL1LossBackward0");
      Tensor d = xb - yb, a = d.abs();
      Tensor want = huber ? where(a < p, 0.5 * d * d, p * (a - 0.5 * p))
                          : where(a < p, 0.5 * d * d / p, a - 0.5 * p);
      const double tol = dtype == kFloat ? 1e-6 : 1e-14;
      EXPECT_TRUE(l.detach().to(kDouble).allclose(want, tol, tol, true));
      Tensor gy = arange(9, TensorOptions().dtype(kDouble)) - 4;
      l.backward(gy.to(dtype));
      Tensor dwant = where(a < p, huber ? d : d / p, sign(d) * (huber ? p : 1.0));
      EXPECT_TRUE(x.grad().to(kDouble).allclose(gy * dwant, tol, tol, true));
      EXPECT_TRUE(y.grad().to(kDouble).allclose(-gy * dwant, tol, tol, true));
    }
  Tensor x = tensor({0.2, 2.0}, TensorOptions().dtype(kDouble)).requires_grad_(true);
  auto g = autograd::grad({F::smooth_l1_loss(x, zeros_like(x), Reduction::Sum, 0.5)}, {x}, {}, true,
                          true);
  EXPECT_VALUES(g[0].detach(), {0.4, 1.0});
  EXPECT_VALUES(autograd::grad({g[0].sum()}, {x})[0], {2.0, 0.0});
}

TEST(WhereKernel, FlatAndStridedOperandsAgree) {
  manual_seed(5);
  for (ScalarType dtype : {kFloat, kDouble, kLong, kBool, kHalf}) {
    SCOPED_TRACE(::testing::Message() << dtype);
    Tensor a = (randn({33, 17}) * 4).to(dtype), b = (randn({33, 17}) * 4).to(dtype);
    Tensor c = randn({33, 17}) > 0;
    Tensor flat = where(c, a, b);
    Tensor strided = where(c.t().contiguous().t(), a.t().contiguous().t(), b);
    Tensor scalar_b = where(c, a, zeros({}, TensorOptions().dtype(dtype)));
    for (int64_t i = 0; i < 33; i += 8)
      for (int64_t j = 0; j < 17; j += 4) {
        Tensor want = c[i][j].item<bool>() ? a[i][j] : b[i][j];
        EXPECT_TRUE(flat[i][j].equal(want));
        EXPECT_TRUE(strided[i][j].equal(want));
        EXPECT_TRUE(scalar_b[i][j].equal(c[i][j].item<bool>() ? a[i][j] : zeros_like(a[i][j])));
      }
    EXPECT_TRUE(flat.equal(strided));
  }
}

}  // namespace
}  // namespace brasa
