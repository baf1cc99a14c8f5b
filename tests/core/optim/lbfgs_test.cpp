// L-BFGS (optim/lbfgs.h): the Rosenbrock function minimized as PyTorch's
// LBFGS does (its iterates, with and without the strong-Wolfe line search),
// a least-squares fit solved to the closed form, and the error paths.
#include <brasa/torch.h>

#include "../ops/golden_util.h"
#include "../test_util.h"

namespace {

using namespace brasa;
using golden::expect_golden;

Tensor rosenbrock_minimize(int steps, const torch::optim::LBFGSOptions& options,
                           int64_t* evals = nullptr) {
  Tensor x = torch::tensor(std::vector<double>{-1.5, 2.0}, torch::kDouble).requires_grad_();
  torch::optim::LBFGS opt({x}, options);
  auto closure = [&] {
    opt.zero_grad();
    Tensor loss = (1 - x[0]).pow(2) + 100 * (x[1] - x[0].pow(2)).pow(2);
    loss.backward();
    return loss;
  };
  for (int i = 0; i < steps; ++i) opt.step(closure);
  if (evals) *evals = opt.func_evals();
  return x.detach();
}

TEST(LBFGS, FollowsPyTorchOnRosenbrock) {
  int64_t evals = 0;
  expect_golden("lbfgs_strong_wolfe",
                rosenbrock_minimize(
                    2, torch::optim::LBFGSOptions(1.0).line_search_fn("strong_wolfe"), &evals),
                1e-9);
  EXPECT_GT(evals, 2);
  expect_golden("lbfgs_fixed_step",
                rosenbrock_minimize(3, torch::optim::LBFGSOptions(0.05).max_iter(6)), 1e-9);
}

TEST(LBFGS, SolvesLeastSquares) {
  torch::manual_seed(0);
  Tensor A = torch::randn({30, 4}, kDouble), b = torch::randn({30}, kDouble);
  Tensor w = torch::zeros({4}, kDouble).requires_grad_();
  torch::optim::LBFGS opt({w}, torch::optim::LBFGSOptions(1).line_search_fn("strong_wolfe"));
  auto closure = [&] {
    opt.zero_grad();
    Tensor loss = (torch::mv(A, w) - b).pow(2).sum();
    loss.backward();
    return loss;
  };
  opt.step(closure);
  // The normal equations' solution: (A^T A)^-1 A^T b.
  Tensor exact = torch::mv(torch::inverse(torch::mm(A.t(), A)), torch::mv(A.t(), b));
  EXPECT_TRUE(w.detach().allclose(exact, 1e-6, 1e-8));
}

TEST(LBFGS, BadInputGetsClearErrors) {
  Tensor x = torch::zeros({2}).requires_grad_();
  EXPECT_ERROR(
      "only 'strong_wolfe' is supported",
      torch::optim::LBFGS({x}, torch::optim::LBFGSOptions().line_search_fn("backtracking")));
  EXPECT_ERROR("invalid learning rate", torch::optim::LBFGS({x}, torch::optim::LBFGSOptions(0)));
  torch::optim::LBFGS opt({x});
  EXPECT_ERROR("needs a closure", opt.step(nullptr));
}

}  // namespace
