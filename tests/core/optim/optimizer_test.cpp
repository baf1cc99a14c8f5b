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
  expect_trajectory<optim::SGD>(
      optim_goldens::k_sgd_momentum_dampening_wd,
      optim::SGDOptions(0.05).momentum(0.9).dampening(0.1).weight_decay(0.01));
  expect_trajectory<optim::SGD>(
      optim_goldens::k_sgd_nesterov_maximize,
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
      optim::RMSpropOptions(0.01).alpha(0.9).eps(1e-6).weight_decay(0.05).momentum(0.5).centered(
          true));
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
  const std::vector<double> momentum = {0.95,           0.9,
                                        0.85,           0.854951556605,
                                        0.868825509907, 0.888873953302,
                                        0.911126046698, 0.931174490093,
                                        0.945048443395, 0.95};
  const std::vector<double> lr = {0.004,          0.052,          0.1,
                                  0.095048463201, 0.081174565395, 0.061126202194,
                                  0.038874197806, 0.018825834605, 0.004951936799,
                                  4e-07};
  for (size_t i = 0; i < momentum.size(); ++i) {
    if (i > 0) sched.step();
    auto& o = static_cast<SGDOptions&>(sgd.param_groups()[0].options());
    EXPECT_NEAR(o.momentum_, momentum[i], 1e-11) << "step " << i;
    EXPECT_NEAR(o.lr_, lr[i], 1e-11) << "step " << i;
  }
  Adam adam({p}, AdamOptions(0.1).betas({0.8, 0.99}));
  OneCycleLR sched2(adam, 0.1, 6, 0.3, 25, 1e4, true, 0.8, 0.9);
  const std::vector<double> beta1 = {
      0.9, 0.800558458689, 0.818825509907, 0.853736504679, 0.886652593591, 0.9};
  for (size_t i = 0; i < beta1.size(); ++i) {
    if (i > 0) sched2.step();
    auto& o = static_cast<AdamOptions&>(adam.param_groups()[0].options());
    EXPECT_NEAR(std::get<0>(o.betas_), beta1[i], 1e-11) << "step " << i;
    EXPECT_EQ(std::get<1>(o.betas_), 0.99);
  }
  Adagrad adagrad({p}, AdagradOptions(0.1));
  EXPECT_ERROR("cycle_momentum needs an optimizer with momentum or beta1",
               OneCycleLR(adagrad, 0.1, 10));
  OneCycleLR plain(adagrad, 0.1, 10, 0.3, 25, 1e4, /*cycle_momentum=*/false);
  EXPECT_NEAR(plain.get_last_lr()[0], 0.004, 1e-12);
}

TEST(Schedulers, MatchPyTorch) {
  using namespace optim;
  expect_schedule(optim_goldens::k_step_lr,
                  [](Optimizer& o) { return std::make_shared<StepLR>(o, 7, 0.5); });
  expect_schedule(optim_goldens::k_multistep_lr, [](Optimizer& o) {
    return std::make_shared<MultiStepLR>(o, std::vector<int64_t>{3, 10, 20}, 0.3);
  });
  expect_schedule(optim_goldens::k_exponential_lr,
                  [](Optimizer& o) { return std::make_shared<ExponentialLR>(o, 0.9); });
  expect_schedule(optim_goldens::k_cosine_lr,
                  [](Optimizer& o) { return std::make_shared<CosineAnnealingLR>(o, 30, 0.001); });
  expect_schedule(optim_goldens::k_linear_lr,
                  [](Optimizer& o) { return std::make_shared<LinearLR>(o, 0.25, 1.0, 8); });
  expect_schedule(optim_goldens::k_onecycle_lr,
                  [](Optimizer& o) { return std::make_shared<OneCycleLR>(o, 1.0, 31); });
  expect_schedule(optim_goldens::k_sequential_lr, [](Optimizer& o) {
    auto warm = std::make_shared<LinearLR>(o, 0.1, 1.0, 5);
    auto cosine = std::make_shared<CosineAnnealingLR>(o, 25);
    return std::make_shared<SequentialLR>(
        o, std::vector<std::shared_ptr<LRScheduler>>{warm, cosine}, std::vector<int64_t>{5});
  });
  Tensor p = zeros({1}).requires_grad_();
  SGD opt({p}, SGDOptions(0.1));
  ReduceLROnPlateau plateau(opt, ReduceLROnPlateau::Mode::kMin, 0.5, 2, 1e-4, 1, 0.01);
  for (size_t i = 0; i < optim_goldens::k_plateau_metrics.size(); ++i) {
    plateau.step(optim_goldens::k_plateau_metrics[i]);
    EXPECT_NEAR(plateau.get_last_lr()[0], optim_goldens::k_plateau_lrs[i], 1e-12) << "epoch " << i;
  }
}

TEST(Optimizer, StateDictHasPyTorchsLayoutAndRoundTrips) {
  manual_seed(5);
  Tensor w = randn({3, 2}).requires_grad_(), b = randn({2}).requires_grad_(),
         u = randn({4}).requires_grad_();
  std::vector<optim::OptimizerParamGroup> groups{
      optim::OptimizerParamGroup({w, b}),
      optim::OptimizerParamGroup({u}, std::make_unique<optim::SGDOptions>(
                                          optim::SGDOptions(0.5).nesterov(true).momentum(0.8)))};
  optim::SGD opt(groups, optim::SGDOptions(0.1).momentum(0.9));
  auto loss = [&] { return (w.sum(0) * b).sum() + u.pow(2).sum(); };
  loss().backward();
  opt.step();
  auto sd = opt.state_dict();
  EXPECT_EQ(sd.keys(), (std::vector<std::string>{"param_groups.0.lr",
                                                 "param_groups.0.momentum",
                                                 "param_groups.0.dampening",
                                                 "param_groups.0.weight_decay",
                                                 "param_groups.0.nesterov",
                                                 "param_groups.0.maximize",
                                                 "param_groups.0.params",
                                                 "state.0.step",
                                                 "state.0.momentum_buffer",
                                                 "state.1.step",
                                                 "state.1.momentum_buffer",
                                                 "param_groups.1.lr",
                                                 "param_groups.1.momentum",
                                                 "param_groups.1.dampening",
                                                 "param_groups.1.weight_decay",
                                                 "param_groups.1.nesterov",
                                                 "param_groups.1.maximize",
                                                 "param_groups.1.params",
                                                 "state.2.step",
                                                 "state.2.momentum_buffer"}));
  EXPECT_VALUES(sd["param_groups.1.params"], {2});
  EXPECT_EQ(sd["param_groups.1.nesterov"].item<double>(), 1.0);
  EXPECT_EQ(sd["state.2.step"].item<int64_t>(), 0);  // SGD counts no steps (PyTorch keeps none)

  // A second optimizer over copies of the parameters continues identically.
  Tensor w2 = w.detach().clone().requires_grad_(), b2 = b.detach().clone().requires_grad_(),
         u2 = u.detach().clone().requires_grad_();
  std::vector<optim::OptimizerParamGroup> groups2{optim::OptimizerParamGroup({w2, b2}),
                                                  optim::OptimizerParamGroup({u2})};
  optim::SGD opt2(groups2, optim::SGDOptions(0.3));
  opt2.load_state_dict(sd);
  EXPECT_EQ(opt2.param_groups()[1].options().get_lr(), 0.5);
  EXPECT_FALSE(
      opt2.state_of(w2).buffers.at("momentum_buffer").is_same(sd["state.0.momentum_buffer"]));
  for (int i = 0; i < 3; ++i) {
    opt.zero_grad();
    loss().backward();
    opt.step();
    opt2.zero_grad();
    ((w2.sum(0) * b2).sum() + u2.pow(2).sum()).backward();
    opt2.step();
  }
  EXPECT_TRUE(w2.equal(w));
  EXPECT_TRUE(u2.equal(u));

  // Mismatches are errors that change nothing.
  optim::SGD one_group({w2, b2, u2}, optim::SGDOptions(0.3));
  EXPECT_ERROR(
      "loaded state dict contains a parameter group that doesn't match the size of optimizer's "
      "group: "
      "group 0 has 2 parameters in the state dict and 3 in the optimizer",
      one_group.load_state_dict(sd));
  EXPECT_EQ(one_group.param_groups()[0].options().get_lr(), 0.3);
  optim::Adam adam(groups2, optim::AdamOptions(0.3));
  EXPECT_ERROR("missing key 'param_groups.0.betas.0'", adam.load_state_dict(sd));
  auto bad = opt.state_dict();
  bad["state.1.momentum_buffer"] = zeros({5});
  EXPECT_ERROR("'state.1.momentum_buffer' has shape [5] but parameter 1 has shape [2]",
               opt2.load_state_dict(bad));
  auto extra = opt.state_dict();
  extra.insert("state.7.momentum_buffer", zeros({2}));
  EXPECT_ERROR("unexpected key 'state.7.momentum_buffer'", opt2.load_state_dict(extra));

  // Schedulers: the counters round trip; mismatches are clear.
  optim::StepLR step(opt, 2, 0.5);
  step.step();
  step.step();
  step.step();
  optim::StepLR step2(opt2, 2, 0.5);
  step2.load_state_dict(step.state_dict());
  EXPECT_EQ(step2.last_epoch(), 3);
  step.step();
  step2.step();
  EXPECT_EQ(step2.get_last_lr(), step.get_last_lr());
  optim::ReduceLROnPlateau plateau(opt, optim::ReduceLROnPlateau::Mode::kMin, 0.5, 1);
  plateau.step(1.0);
  plateau.step(2.0);
  optim::ReduceLROnPlateau plateau2(opt2, optim::ReduceLROnPlateau::Mode::kMin, 0.5, 1);
  plateau2.load_state_dict(plateau.state_dict());
  EXPECT_EQ(plateau2.state_dict()["best"].item<double>(), 1.0);
  EXPECT_EQ(plateau2.state_dict()["num_bad_epochs"].item<int64_t>(), 1);
  EXPECT_ERROR("ReduceLROnPlateau::load_state_dict: missing key 'best'",
               plateau2.load_state_dict(step.state_dict()));
  auto wrong = step.state_dict();
  wrong["base_lrs"] = ones({3}, kDouble);
  EXPECT_ERROR("LRScheduler::load_state_dict: 'base_lrs' has 3 values, expected 2",
               step2.load_state_dict(wrong));
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
