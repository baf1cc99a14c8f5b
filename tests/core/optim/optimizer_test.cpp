// Update rules against PyTorch: 50-step trajectories generated once with
// torch.optim (gen_optim_goldens.py) on the same objective.
#include "../test_util.h"
#include "optim_goldens.h"

namespace brasa {
namespace {

Tensor objective(const Tensor& p) { return (p - 0.5).pow(2).sum() + 0.1 * (3 * p).sin().sum(); }

template <class Opt, class Options>
void expect_trajectory(const std::vector<double>& golden, Options options) {
  std::vector<double> start = optim_goldens::kStart;  // exact doubles, not via float32
  Tensor p = from_blob(start.data(), {4}, TensorOptions().dtype(kDouble)).clone().requires_grad_();
  Opt opt({p}, options);
  for (int step = 0; step < 50; ++step) {
    opt.zero_grad();
    objective(p).backward();
    opt.step();
    auto v = testing::values(p);
    for (size_t i = 0; i < v.size(); ++i)
      ASSERT_NEAR(v[i], golden[step * 4 + i], 1e-9) << "step " << step << " element " << i;
  }
}

TEST(Optimizer, SgdMatchesPyTorch) {
  expect_trajectory<optim::SGD>(optim_goldens::k_sgd_plain, optim::SGDOptions(0.1));
  expect_trajectory<optim::SGD>(optim_goldens::k_sgd_momentum_dampening_wd,
                                optim::SGDOptions(0.05).momentum(0.9).dampening(0.1).weight_decay(0.01));
  expect_trajectory<optim::SGD>(optim_goldens::k_sgd_nesterov_maximize,
                                optim::SGDOptions(0.05).momentum(0.8).nesterov(true).maximize(true));
}

TEST(Optimizer, AdamAndAdamWMatchPyTorch) {
  expect_trajectory<optim::Adam>(optim_goldens::k_adam, optim::AdamOptions(0.05));
  expect_trajectory<optim::Adam>(
      optim_goldens::k_adam_amsgrad_wd,
      optim::AdamOptions(0.05).betas({0.8, 0.95}).eps(1e-6).weight_decay(0.1).amsgrad(true));
  optim::AdamWOptions w(0.05);
  w.weight_decay(0.1);
  expect_trajectory<optim::AdamW>(optim_goldens::k_adamw, w);
}

TEST(Optimizer, ParamGroupsZeroGradAndErrors) {
  Tensor a = ones({2}, kDouble).requires_grad_(), b = ones({2}, kDouble).requires_grad_();
  std::vector<optim::OptimizerParamGroup> groups;
  groups.emplace_back(std::vector<Tensor>{a});
  groups.emplace_back(std::vector<Tensor>{b}, std::make_unique<optim::SGDOptions>(0.5));
  optim::SGD opt(groups, optim::SGDOptions(0.1));
  (a.sum() + b.sum()).backward();
  opt.step();
  EXPECT_VALUES(a, {0.9, 0.9});
  EXPECT_VALUES(b, {0.5, 0.5});
  opt.zero_grad(/*set_to_none=*/false);
  EXPECT_VALUES(a.grad(), {0, 0});
  opt.zero_grad();
  EXPECT_FALSE(a.grad().defined());
  EXPECT_THROW(optim::SGD({a}, optim::SGDOptions(-1)), Error);
  EXPECT_THROW(optim::SGD({a * 2}, optim::SGDOptions(0.1)), Error);  // non-leaf
  EXPECT_THROW(optim::SGD(std::vector<Tensor>{a, a}, optim::SGDOptions(0.1)), Error);
}

}  // namespace
}  // namespace brasa
