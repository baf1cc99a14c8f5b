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

TEST(Optimizer, RmspropAndAdagradMatchPyTorch) {
  expect_trajectory<optim::RMSprop>(optim_goldens::k_rmsprop, optim::RMSpropOptions(0.01));
  expect_trajectory<optim::RMSprop>(
      optim_goldens::k_rmsprop_centered_momentum_wd,
      optim::RMSpropOptions(0.01).alpha(0.9).eps(1e-6).weight_decay(0.05).momentum(0.5).centered(true));
  expect_trajectory<optim::Adagrad>(
      optim_goldens::k_adagrad,
      optim::AdagradOptions(0.1).lr_decay(0.01).weight_decay(0.02).initial_accumulator_value(0.1));
}

template <class Make>
void expect_schedule(const std::vector<double>& golden, Make make) {
  Tensor p = zeros({1}).requires_grad_();
  optim::SGD opt({p}, optim::SGDOptions(0.1));
  auto sched = make(opt);
  std::vector<double> lrs{opt.param_groups()[0].options().get_lr()};
  for (int i = 0; i < 30; ++i) {
    sched->step();
    lrs.push_back(sched->get_last_lr()[0]);
  }
  ASSERT_EQ(lrs.size(), golden.size());
  for (size_t i = 0; i < lrs.size(); ++i) EXPECT_NEAR(lrs[i], golden[i], 1e-12) << "step " << i;
}

// Values printed by torch.optim.lr_scheduler.OneCycleLR (PyTorch 1.13).
TEST(Schedulers, OneCycleCyclesMomentumLikePyTorch) {
  using namespace optim;
  Tensor p = zeros({1}).requires_grad_();
  SGD sgd({p}, SGDOptions(0.1));  // momentum 0: OneCycleLR sets it, as PyTorch does
  OneCycleLR sched(sgd, 0.1, 10);
  const std::vector<double> momentum = {0.95,           0.9,            0.85,           0.854951556605, 0.868825509907,
                                        0.888873953302, 0.911126046698, 0.931174490093, 0.945048443395, 0.95};
  const std::vector<double> lr = {0.004,          0.052,          0.1,            0.095048463201, 0.081174565395,
                                  0.061126202194, 0.038874197806, 0.018825834605, 0.004951936799, 4e-07};
  for (size_t i = 0; i < momentum.size(); ++i) {
    if (i > 0) sched.step();
    auto& o = static_cast<SGDOptions&>(sgd.param_groups()[0].options());
    EXPECT_NEAR(o.momentum_, momentum[i], 1e-11) << "step " << i;
    EXPECT_NEAR(o.lr_, lr[i], 1e-11) << "step " << i;
  }
  Adam adam({p}, AdamOptions(0.1).betas({0.8, 0.99}));
  OneCycleLR sched2(adam, 0.1, 6, 0.3, 25, 1e4, true, 0.8, 0.9);
  const std::vector<double> beta1 = {0.9, 0.800558458689, 0.818825509907, 0.853736504679, 0.886652593591, 0.9};
  for (size_t i = 0; i < beta1.size(); ++i) {
    if (i > 0) sched2.step();
    auto& o = static_cast<AdamOptions&>(adam.param_groups()[0].options());
    EXPECT_NEAR(std::get<0>(o.betas_), beta1[i], 1e-11) << "step " << i;
    EXPECT_EQ(std::get<1>(o.betas_), 0.99);
  }
  Adagrad adagrad({p}, AdagradOptions(0.1));
  EXPECT_ERROR("cycle_momentum needs an optimizer with momentum or beta1", OneCycleLR(adagrad, 0.1, 10));
  OneCycleLR plain(adagrad, 0.1, 10, 0.3, 25, 1e4, /*cycle_momentum=*/false);
  EXPECT_NEAR(plain.get_last_lr()[0], 0.004, 1e-12);
}

TEST(Schedulers, MatchPyTorch) {
  using namespace optim;
  expect_schedule(optim_goldens::k_step_lr, [](Optimizer& o) { return std::make_shared<StepLR>(o, 7, 0.5); });
  expect_schedule(optim_goldens::k_multistep_lr,
                  [](Optimizer& o) { return std::make_shared<MultiStepLR>(o, std::vector<int64_t>{3, 10, 20}, 0.3); });
  expect_schedule(optim_goldens::k_exponential_lr, [](Optimizer& o) { return std::make_shared<ExponentialLR>(o, 0.9); });
  expect_schedule(optim_goldens::k_cosine_lr,
                  [](Optimizer& o) { return std::make_shared<CosineAnnealingLR>(o, 30, 0.001); });
  expect_schedule(optim_goldens::k_linear_lr, [](Optimizer& o) { return std::make_shared<LinearLR>(o, 0.25, 1.0, 8); });
  expect_schedule(optim_goldens::k_onecycle_lr, [](Optimizer& o) { return std::make_shared<OneCycleLR>(o, 1.0, 31); });
  expect_schedule(optim_goldens::k_sequential_lr, [](Optimizer& o) {
    auto warm = std::make_shared<LinearLR>(o, 0.1, 1.0, 5);
    auto cosine = std::make_shared<CosineAnnealingLR>(o, 25);
    return std::make_shared<SequentialLR>(o, std::vector<std::shared_ptr<LRScheduler>>{warm, cosine},
                                          std::vector<int64_t>{5});
  });
  Tensor p = zeros({1}).requires_grad_();
  SGD opt({p}, SGDOptions(0.1));
  ReduceLROnPlateau plateau(opt, ReduceLROnPlateau::Mode::kMin, 0.5, 2, 1e-4, 1, 0.01);
  for (size_t i = 0; i < optim_goldens::k_plateau_metrics.size(); ++i) {
    plateau.step(optim_goldens::k_plateau_metrics[i]);
    EXPECT_NEAR(plateau.get_last_lr()[0], optim_goldens::k_plateau_lrs[i], 1e-12) << "epoch " << i;
  }
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
