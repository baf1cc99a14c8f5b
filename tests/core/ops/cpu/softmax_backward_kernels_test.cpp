// The one-pass gradients of softmax and log_softmax (SoftmaxBackwardKernel)
// and of sigmoid and tanh from their outputs (OutputActivationBackwardKernel),
// and gather's gradient scattered straight into zeros: each against its
// formula evaluated in double from the same output and incoming gradient,
// over the layouts the kernels take apart (last dim, a middle dim wider than
// a column block, one-element rows, non-contiguous and broadcast gradients),
// and against the differentiable formula a double backward uses.
#include <brasa/autograd/grad_mode.h>

#include <string>
#include <vector>

#include "../../test_util.h"

using namespace brasa;

namespace {

double max_abs_difference(const Tensor& a, const Tensor& b) {
  return (a.to(kDouble) - b.to(kDouble)).abs().max().item<double>();
}

// The gradient softmax (log_softmax) sends back along d, by its formula in double.
Tensor softmax_gradient_formula(const Tensor& g, const Tensor& y, int64_t d, bool log) {
  Tensor gd = g.to(kDouble), yd = y.to(kDouble);
  if (log) return gd - yd.exp() * gd.sum({d}, true);
  return yd * (gd - (gd * yd).sum({d}, true));
}

struct Layout {
  std::vector<int64_t> sizes;
  int64_t dim;
};

const std::vector<Layout> kLayouts = {
    {{6, 37}, 1}, {{6, 37}, 0},    {{2, 5, 300}, 1}, {{3, 4, 5, 2}, 2},
    {{4, 1}, 1},  {{1, 1000}, -1}, {{5, 33}, -1},    {{2, 3, 4}, 0},
};

TEST(SoftmaxBackwardKernel, MatchesTheFormulaAlongEveryLayout) {
  for (bool log : {false, true})
    for (ScalarType t : {kFloat, kDouble})
      for (const Layout& l : kLayouts) {
        SCOPED_TRACE(std::string(log ? "log_softmax " : "softmax ") + toString(t) + " dim " +
                     std::to_string(l.dim));
        manual_seed(5);
        Tensor x = (randn(l.sizes) * 3).to(t).requires_grad_(true);
        Tensor y = log ? x.log_softmax(l.dim) : x.softmax(l.dim);
        Tensor g = randn(l.sizes).to(t);
        Tensor got = autograd::grad({y}, {x}, {g})[0];
        Tensor want = softmax_gradient_formula(g, y.detach(), l.dim, log);
        EXPECT_EQ(got.sizes(), x.sizes());
        EXPECT_EQ(got.dtype(), t);
        EXPECT_LT(max_abs_difference(got, want), t == kFloat ? 2e-5 : 1e-12);
      }
}

TEST(SoftmaxBackwardKernel, TakesNonContiguousAndBroadcastGradients) {
  manual_seed(6);
  Tensor x = randn({8, 24}).requires_grad_(true);
  Tensor y = x.log_softmax(1);
  Tensor transposed = randn({24, 8}).t();  // a gradient laid out column-major
  EXPECT_LT(max_abs_difference(autograd::grad({y}, {x}, {transposed}, true)[0],
                               softmax_gradient_formula(transposed, y.detach(), 1, true)),
            2e-5);
  // sum().backward() sends an expanded scalar: every row's sum is 24, so
  // log_softmax's gradient is 1 - 24 softmax(x).
  Tensor s = x.softmax(1);
  Tensor expanded = ones({1}).expand({8, 24});
  EXPECT_LT(max_abs_difference(autograd::grad({s}, {x}, {expanded})[0], zeros({8, 24})), 1e-6);
  Tensor got = autograd::grad({y}, {x}, {expanded})[0];
  EXPECT_LT(max_abs_difference(got, 1 - 24 * x.detach().softmax(1)), 2e-5);
}

TEST(SoftmaxBackwardKernel, HalfPrecisionIsComputedInFloat) {
  manual_seed(7);
  for (ScalarType t : {kHalf, kBFloat16}) {
    Tensor x = randn({4, 50}).to(t).requires_grad_(true);
    Tensor y = x.softmax(1);
    Tensor g = randn({4, 50}).to(t);
    Tensor got = autograd::grad({y}, {x}, {g})[0];
    EXPECT_EQ(got.dtype(), t);
    EXPECT_LT(max_abs_difference(got, softmax_gradient_formula(g, y.detach(), 1, false)),
              t == kHalf ? 2e-3 : 2e-2);
  }
}

TEST(SoftmaxBackwardKernel, AGraphOfTheGradientTakesTheFormula) {
  manual_seed(8);
  Tensor x = randn({5, 7}, TensorOptions().dtype(kDouble)).requires_grad_(true);
  Tensor g = randn({5, 7}, TensorOptions().dtype(kDouble));
  for (bool log : {false, true}) {
    Tensor y = log ? x.log_softmax(1) : x.softmax(1);
    Tensor fused = autograd::grad({y}, {x}, {g}, true)[0];
    Tensor graph = autograd::grad({y}, {x}, {g}, true, /*create_graph=*/true)[0];
    EXPECT_FALSE(fused.requires_grad());
    EXPECT_TRUE(graph.requires_grad());
    EXPECT_LT(max_abs_difference(fused, graph), 1e-12);
  }
}

TEST(OutputActivationBackwardKernel, SigmoidAndTanhMatchTheirFormulas) {
  manual_seed(9);
  for (ScalarType t : {kFloat, kDouble, kHalf, kBFloat16}) {
    SCOPED_TRACE(toString(t));
    Tensor x = (randn({3, 41}) * 4).to(t).requires_grad_(true);
    Tensor g = randn({3, 41}).to(t);
    Tensor s = x.sigmoid(), th = x.tanh();
    Tensor sd = s.detach().to(kDouble), td = th.detach().to(kDouble), gd = g.to(kDouble);
    const double tol = t == kFloat ? 1e-6 : t == kDouble ? 1e-14 : t == kHalf ? 4e-3 : 3e-2;
    Tensor gs = autograd::grad({s}, {x}, {g})[0], gt = autograd::grad({th}, {x}, {g})[0];
    EXPECT_EQ(gs.dtype(), t);
    EXPECT_LT(max_abs_difference(gs, gd * sd * (1 - sd)), tol);
    EXPECT_LT(max_abs_difference(gt, gd * (1 - td * td)), tol);
  }
  // A broadcast gradient (sum().backward()) and a transposed one.
  Tensor x = randn({6, 9}).requires_grad_(true);
  Tensor s = x.sigmoid();
  Tensor sd = s.detach();
  EXPECT_LT(max_abs_difference(autograd::grad({s}, {x}, {ones({1}).expand({6, 9})}, true)[0],
                               sd * (1 - sd)),
            1e-6);
  Tensor gt = randn({9, 6}).t();
  EXPECT_LT(max_abs_difference(autograd::grad({s}, {x}, {gt})[0], gt * sd * (1 - sd)), 1e-6);
  // create_graph: the differentiable formula, the same values.
  Tensor xd = randn({4, 4}, TensorOptions().dtype(kDouble)).requires_grad_(true);
  Tensor gd = randn({4, 4}, TensorOptions().dtype(kDouble));
  for (bool use_tanh : {false, true}) {
    Tensor y = use_tanh ? xd.tanh() : xd.sigmoid();
    Tensor fused = autograd::grad({y}, {xd}, {gd}, true)[0];
    Tensor graph = autograd::grad({y}, {xd}, {gd}, true, true)[0];
    EXPECT_TRUE(graph.requires_grad());
    EXPECT_LT(max_abs_difference(fused, graph), 1e-14);
  }
}

TEST(GatherBackward, ScattersRepeatedPlacesIntoZeros) {
  Tensor x = zeros({2, 4}).requires_grad_(true);
  Tensor index = tensor(std::vector<int64_t>{1, 1, 3, 0, 0, 0}).view({2, 3});
  Tensor g = tensor({1.0f, 2, 4, 8, 16, 32}).view({2, 3});
  Tensor got = autograd::grad({x.gather(1, index)}, {x}, {g})[0];
  EXPECT_VALUES(got.reshape({-1}), {0, 3, 0, 4, 56, 0, 0, 0});
  // With a graph of the gradient, the same values and a gradient of its own.
  Tensor graph = autograd::grad({x.gather(1, index)}, {x}, {g.requires_grad_(true)}, true, true)[0];
  EXPECT_TRUE(graph.requires_grad());
  EXPECT_VALUES(graph.detach().reshape({-1}), {0, 3, 0, 4, 56, 0, 0, 0});
}

}  // namespace
