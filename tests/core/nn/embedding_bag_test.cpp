// F::embedding_bag's fused CPU kernel against a row-by-row reference on
// tables large enough that the backward splits the table between threads:
// every mode, padding, per-sample weights, empty bags; its error paths.
// Values against PyTorch are in module_test.cpp, gradients in the gradcheck
// table.
#include <brasa/torch.h>

#include <random>
#include <vector>

#include "../test_util.h"

namespace {

using namespace brasa;
namespace F = torch::nn::functional;

struct Case {
  std::vector<int64_t> ids, starts;
  std::vector<double> psw;
};

// 600 ids into 10000 rows, in bags of 0 to 12 ids (some empty); id 7 is padding.
Case random_case() {
  std::mt19937 gen(5);
  Case c;
  std::uniform_int_distribution<int64_t> row(0, 9999), len(0, 12), small(0, 20);
  std::uniform_real_distribution<double> w(-1.0, 1.0);
  while (c.ids.size() < 600) {
    c.starts.push_back(static_cast<int64_t>(c.ids.size()));
    for (int64_t k = len(gen); k > 0; --k) {
      // Repeated rows and padding, often.
      const int64_t s = small(gen);
      c.ids.push_back(s == 0 ? 7 : s < 5 ? s * 1000 : row(gen));
      c.psw.push_back(w(gen));
    }
  }
  return c;
}

// out[b] and, for the loss sum(out * G), the table's and the weights' gradients.
struct Reference {
  std::vector<double> out, grad_weight, grad_psw;
};
Reference reference(const Case& c, const Tensor& weight, const Tensor& G, EmbeddingBagMode mode,
                    bool with_psw, int64_t pad) {
  const int64_t width = weight.size(1), bags = static_cast<int64_t>(c.starts.size());
  Tensor wd = weight.to(kDouble).contiguous(), gd = G.to(kDouble).contiguous();
  const double* w = wd.data_ptr<double>();
  const double* g = gd.data_ptr<double>();
  Reference r;
  r.out.assign(static_cast<size_t>(bags * width), 0.0);
  r.grad_weight.assign(static_cast<size_t>(weight.numel()), 0.0);
  r.grad_psw.assign(c.ids.size(), 0.0);
  for (int64_t b = 0; b < bags; ++b) {
    const int64_t end = b + 1 < bags ? c.starts[b + 1] : static_cast<int64_t>(c.ids.size());
    std::vector<int64_t> kept;
    for (int64_t i = c.starts[b]; i < end; ++i)
      if (c.ids[i] != pad) kept.push_back(i);
    for (int64_t d = 0; d < width; ++d) {
      double acc = 0;
      int64_t best = -1;
      for (int64_t i : kept) {
        const double v = w[c.ids[i] * width + d] * (with_psw ? c.psw[i] : 1.0);
        if (mode == EmbeddingBagMode::Max) {
          if (best < 0 || v > acc) acc = v, best = c.ids[i];
        } else {
          acc += v;
        }
      }
      const double n = static_cast<double>(kept.size());
      if (mode == EmbeddingBagMode::Mean && n > 0) acc /= n;
      r.out[b * width + d] = acc;
      const double gb = g[b * width + d];
      if (mode == EmbeddingBagMode::Max) {
        if (best >= 0) r.grad_weight[best * width + d] += gb;
        continue;
      }
      for (int64_t i : kept) {
        const double s = with_psw ? c.psw[i] : mode == EmbeddingBagMode::Mean ? 1.0 / n : 1.0;
        r.grad_weight[c.ids[i] * width + d] += s * gb;
        if (with_psw) r.grad_psw[i] += gb * w[c.ids[i] * width + d];
      }
    }
  }
  return r;
}

void expect_near_all(const Tensor& t, const std::vector<double>& want, double tol,
                     const char* what) {
  Tensor d = t.to(kDouble).contiguous().view({-1});
  ASSERT_EQ(d.numel(), static_cast<int64_t>(want.size())) << what;
  const double* p = d.data_ptr<double>();
  int bad = 0;
  for (size_t i = 0; i < want.size() && bad < 5; ++i)
    if (std::abs(p[i] - want[i]) > tol) {
      ADD_FAILURE() << what << " [" << i << "]: " << p[i] << " != " << want[i];
      ++bad;
    }
}

class EmbeddingBagFused : public ::testing::TestWithParam<int> {};

TEST_P(EmbeddingBagFused, MatchesRowByRowReferenceInEveryMode) {
  const int threads_before = get_num_threads();
  set_num_threads(GetParam());
  const Case c = random_case();
  const auto longs = TensorOptions().dtype(kLong);
  Tensor ids = torch::tensor(c.ids, longs), starts = torch::tensor(c.starts, longs);
  // Widths around the forward's 64-value register tiles: a tail only, one
  // whole tile, a tile and a tail, two tiles and a tail.
  for (int64_t width : {5, 64, 100, 130})
    for (ScalarType type : {kFloat, kDouble}) {
      const double tol = type == kFloat ? 2e-5 : 1e-12;
      manual_seed(11);
      Tensor table = randn({10000, width}, TensorOptions().dtype(type));
      Tensor psw = torch::tensor(c.psw, TensorOptions().dtype(type));
      for (EmbeddingBagMode mode :
           {EmbeddingBagMode::Sum, EmbeddingBagMode::Mean, EmbeddingBagMode::Max})
        for (bool with_psw : {false, true}) {
          if (with_psw && mode != EmbeddingBagMode::Sum) continue;
          SCOPED_TRACE("width " + std::to_string(width) + " " +
                       std::string(type == kFloat ? "float" : "double") + " mode " +
                       std::to_string(mode.kind) + (with_psw ? " with weights" : ""));
          Tensor w = table.clone().requires_grad_();
          Tensor p = psw.clone().requires_grad_(with_psw);
          Tensor out = F::embedding_bag(ids, w, starts, mode, with_psw ? p : Tensor(), false, 7);
          Tensor G = randn(out.sizes(), out.options());
          (out * G).sum().backward();
          Reference r = reference(c, table, G, mode, with_psw, 7);
          expect_near_all(out, r.out, tol, "out");
          expect_near_all(w.grad(), r.grad_weight, tol, "weight grad");
          if (with_psw) expect_near_all(p.grad(), r.grad_psw, tol, "per-sample weights grad");
          EXPECT_EQ(out.grad_fn()->name(), "EmbeddingBagBackward0");
        }
    }
  set_num_threads(threads_before);
}

INSTANTIATE_TEST_SUITE_P(Threads, EmbeddingBagFused, ::testing::Values(1, 2));

TEST(EmbeddingBag, BadIdsAndWeightsAreNamed) {
  const auto longs = TensorOptions().dtype(kLong);
  Tensor w = randn({5, 3});
  EXPECT_ERROR(
      "embedding_bag: index out of range in self: indices must be in [0, 5) for a weight "
      "of [5, 3], got 5",
      F::embedding_bag(torch::tensor({1, 5}, longs), w, torch::tensor({0}, longs)));
  EXPECT_ERROR("got -1",
               F::embedding_bag(torch::tensor({-1, 2}, longs), w, torch::tensor({0}, longs)));
  EXPECT_ERROR(
      "embedding_bag: expected a 2-D weight [rows, width], got [15]",
      F::embedding_bag(torch::tensor({1, 2}, longs), w.view({-1}), torch::tensor({0}, longs)));
}

// A second-order gradient through the fused kernel's backward (the composite
// formulas): d/dpsw of the table's gradient's norm.
TEST(EmbeddingBag, DoubleBackwardThroughTheFusedKernel) {
  const auto longs = TensorOptions().dtype(kLong), f64 = TensorOptions().dtype(kDouble);
  Tensor w = torch::tensor({{1.0, 2.0}, {3.0, 4.0}, {5.0, 6.0}}, f64).requires_grad_();
  Tensor p = torch::tensor({0.5, 2.0, 1.0}, f64).requires_grad_();
  Tensor out = F::embedding_bag(torch::tensor({0, 2, 2}, longs), w, torch::tensor({0, 1}, longs),
                                EmbeddingBagMode::Sum, p);
  // out = [[0.5, 1], [15, 18]]; d out.sum() / dw: row 0 gets 0.5, row 2 gets 2 + 1 = 3.
  auto gw = torch::autograd::grad({out.sum()}, {w}, {}, true, true)[0];
  EXPECT_VALUES(gw.flatten(), {0.5, 0.5, 0, 0, 3, 3});
  // sum(gw^2) = 2 * 0.25 + 2 * 9 = 18.5; d/dp: 2 * 0.5 * 2 for p0, 2 * 3 * 2 for p1 and p2.
  auto gp = torch::autograd::grad({(gw * gw).sum()}, {p})[0];
  EXPECT_VALUES(gp, {2, 12, 12});
}

}  // namespace
