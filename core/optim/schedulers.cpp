#include <brasa/ops/factory.h>
#include <brasa/optim/schedulers.h>

#include <algorithm>
#include <cmath>

namespace brasa::optim {

// Base rates are the groups' lrs when the first scheduler attached (PyTorch's
// initial_lr), so chained schedulers all start from the same values.
LRScheduler::LRScheduler(Optimizer& optimizer) : optimizer_(optimizer) {
  auto& initial = optimizer_.initial_lrs();
  if (initial.size() != optimizer_.param_groups().size()) {
    initial.clear();
    for (const auto& g : optimizer_.param_groups()) initial.push_back(g.options().get_lr());
  }
  base_lrs_ = initial;
}

void LRScheduler::set_epoch(int64_t epoch) {
  last_epoch_ = epoch;
  auto& groups = optimizer_.param_groups();
  for (size_t g = 0; g < groups.size(); ++g) groups[g].options().set_lr(lr_at(g, epoch));
  apply_extra(epoch);
}

void LRScheduler::step() { set_epoch(last_epoch_ + 1); }

namespace {
const Tensor& required(const OrderedDict<std::string, Tensor>& state, const char* who,
                       const std::string& key, int64_t numel) {
  const Tensor* t = state.find(key);
  BRASA_CHECK(t, who, "::load_state_dict: missing key '", key, "'");
  BRASA_CHECK(t->numel() == numel, who, "::load_state_dict: '", key, "' has ", t->numel(),
              " values, expected ", numel);
  return *t;
}
void no_other_keys(const OrderedDict<std::string, Tensor>& state, const char* who,
                   std::initializer_list<const char*> keys) {
  for (const auto& item : state)
    BRASA_CHECK(std::find(keys.begin(), keys.end(), item.key()) != keys.end(), who,
                "::load_state_dict: unexpected key '", item.key(), "'");
}
}  // namespace

OrderedDict<std::string, Tensor> LRScheduler::state_dict() const {
  OrderedDict<std::string, Tensor> out;
  out.insert("last_epoch", scalar_tensor(last_epoch_, TensorOptions().dtype(kLong)));
  out.insert("base_lrs", tensor(base_lrs_, TensorOptions().dtype(kDouble)));
  return out;
}

void LRScheduler::load_state_dict(const OrderedDict<std::string, Tensor>& state) {
  const int64_t groups = static_cast<int64_t>(optimizer_.param_groups().size());
  const Tensor& epoch = required(state, "LRScheduler", "last_epoch", 1);
  const Tensor lrs = required(state, "LRScheduler", "base_lrs", groups).to(kDouble).contiguous();
  no_other_keys(state, "LRScheduler", {"last_epoch", "base_lrs"});
  last_epoch_ = epoch.item<int64_t>();
  base_lrs_.assign(lrs.data_ptr<double>(), lrs.data_ptr<double>() + groups);
}

std::vector<double> LRScheduler::get_last_lr() const {
  std::vector<double> lrs;
  for (const auto& g : optimizer_.param_groups()) lrs.push_back(g.options().get_lr());
  return lrs;
}

StepLR::StepLR(Optimizer& o, int64_t step_size, double gamma)
    : LRScheduler(o), step_size_(step_size), gamma_(gamma) {
  BRASA_CHECK(step_size > 0, "StepLR: step_size must be positive, got ", step_size);
}
double StepLR::lr_at(size_t g, int64_t e) const {
  return base_lrs_[g] * std::pow(gamma_, static_cast<double>(e / step_size_));
}

MultiStepLR::MultiStepLR(Optimizer& o, std::vector<int64_t> milestones, double gamma)
    : LRScheduler(o), milestones_(std::move(milestones)), gamma_(gamma) {
  BRASA_CHECK(std::is_sorted(milestones_.begin(), milestones_.end()),
              "MultiStepLR: milestones must be increasing");
}
double MultiStepLR::lr_at(size_t g, int64_t e) const {
  auto passed = std::upper_bound(milestones_.begin(), milestones_.end(), e) - milestones_.begin();
  return base_lrs_[g] * std::pow(gamma_, static_cast<double>(passed));
}

ExponentialLR::ExponentialLR(Optimizer& o, double gamma) : LRScheduler(o), gamma_(gamma) {}
double ExponentialLR::lr_at(size_t g, int64_t e) const {
  return base_lrs_[g] * std::pow(gamma_, static_cast<double>(e));
}

CosineAnnealingLR::CosineAnnealingLR(Optimizer& o, int64_t T_max, double eta_min)
    : LRScheduler(o), T_max_(T_max), eta_min_(eta_min) {
  BRASA_CHECK(T_max > 0, "CosineAnnealingLR: T_max must be positive, got ", T_max);
}
double CosineAnnealingLR::lr_at(size_t g, int64_t e) const {
  return eta_min_ +
         (base_lrs_[g] - eta_min_) * (1 + std::cos(M_PI * static_cast<double>(e) / T_max_)) / 2;
}

LinearLR::LinearLR(Optimizer& o, double start_factor, double end_factor, int64_t total_iters)
    : LRScheduler(o), start_(start_factor), end_(end_factor), total_(total_iters) {
  BRASA_CHECK(start_factor > 0 && start_factor <= 1 && end_factor >= 0 && end_factor <= 1 &&
                  total_iters > 0,
              "LinearLR: factors must be in (0, 1] / [0, 1] and total_iters positive");
  set_epoch(0);
}
double LinearLR::lr_at(size_t g, int64_t e) const {
  double t = static_cast<double>(std::min(e, total_)) / static_cast<double>(total_);
  return base_lrs_[g] * (start_ + (end_ - start_) * t);
}

OneCycleLR::OneCycleLR(Optimizer& o, double max_lr, int64_t total_steps, double pct_start,
                       double div_factor, double final_div_factor, bool cycle_momentum,
                       double base_momentum, double max_momentum)
    : LRScheduler(o),
      max_lr_(max_lr),
      initial_lr_(max_lr / div_factor),
      min_lr_(max_lr / div_factor / final_div_factor),
      total_steps_(total_steps),
      pct_start_(pct_start),
      cycle_momentum_(cycle_momentum),
      base_momentum_(base_momentum),
      max_momentum_(max_momentum) {
  BRASA_CHECK(total_steps > 0 && pct_start > 0 && pct_start < 1,
              "OneCycleLR: need total_steps > 0 and 0 < pct_start < 1");
  if (cycle_momentum) {
    for (auto& g : o.param_groups()) {
      auto& opts = g.options();
      BRASA_CHECK(dynamic_cast<SGDOptions*>(&opts) || dynamic_cast<RMSpropOptions*>(&opts) ||
                      dynamic_cast<AdamOptions*>(&opts),  // AdamW's options are Adam's
                  "OneCycleLR: cycle_momentum needs an optimizer with momentum or beta1 (SGD, "
                  "RMSprop, Adam, AdamW); "
                  "pass cycle_momentum=false");
    }
  }
  set_epoch(0);
}

std::pair<int, double> OneCycleLR::phase(int64_t e) const {
  BRASA_CHECK(e <= total_steps_, "OneCycleLR: tried to step ", e,
              " times, more than total_steps=", total_steps_);
  const double up_end = pct_start_ * static_cast<double>(total_steps_) - 1;
  const double down_end = static_cast<double>(total_steps_) - 1;
  const double s = static_cast<double>(e);
  if (s <= up_end) return {0, s / up_end};
  return {1, (s - up_end) / (down_end - up_end)};
}

static double cos_anneal(double start, double end, double pct) {
  return end + (start - end) / 2 * (std::cos(M_PI * pct) + 1);
}

double OneCycleLR::lr_at(size_t, int64_t e) const {
  auto [ph, pct] = phase(e);
  return ph == 0 ? cos_anneal(initial_lr_, max_lr_, pct) : cos_anneal(max_lr_, min_lr_, pct);
}

void OneCycleLR::apply_extra(int64_t e) {
  if (!cycle_momentum_) return;
  auto [ph, pct] = phase(e);
  const double m = ph == 0 ? cos_anneal(max_momentum_, base_momentum_, pct)
                           : cos_anneal(base_momentum_, max_momentum_, pct);
  for (auto& g : optimizer_.param_groups()) {
    auto& opts = g.options();
    if (auto* sgd = dynamic_cast<SGDOptions*>(&opts)) sgd->momentum_ = m;
    if (auto* rms = dynamic_cast<RMSpropOptions*>(&opts)) rms->momentum_ = m;
    if (auto* adam = dynamic_cast<AdamOptions*>(&opts)) std::get<0>(adam->betas_) = m;
  }
}

SequentialLR::SequentialLR(Optimizer& o, std::vector<std::shared_ptr<LRScheduler>> schedulers,
                           std::vector<int64_t> milestones)
    : LRScheduler(o), schedulers_(std::move(schedulers)), milestones_(std::move(milestones)) {
  BRASA_CHECK(!schedulers_.empty() && milestones_.size() + 1 == schedulers_.size(),
              "SequentialLR: expected ", schedulers_.size() - 1, " milestones for ",
              schedulers_.size(), " schedulers, got ", milestones_.size());
  set_epoch(0);
}
double SequentialLR::lr_at(size_t g, int64_t e) const {
  size_t i = std::upper_bound(milestones_.begin(), milestones_.end(), e) - milestones_.begin();
  int64_t local = i == 0 ? e : e - milestones_[i - 1];
  return schedulers_[i]->lr_at(g, local);
}

ReduceLROnPlateau::ReduceLROnPlateau(Optimizer& o, Mode mode, double factor, int64_t patience,
                                     double threshold, int64_t cooldown, double min_lr, double eps)
    : optimizer_(o),
      mode_(mode),
      factor_(factor),
      threshold_(threshold),
      min_lr_(min_lr),
      eps_(eps),
      patience_(patience),
      cooldown_(cooldown),
      best_(mode == Mode::kMin ? std::numeric_limits<double>::infinity()
                               : -std::numeric_limits<double>::infinity()) {
  BRASA_CHECK(factor < 1.0, "ReduceLROnPlateau: factor should be < 1.0, got ", factor);
}

void ReduceLROnPlateau::step(double metric) {
  // Relative threshold, as PyTorch's default threshold_mode='rel'.
  bool better =
      mode_ == Mode::kMin ? metric < best_ * (1 - threshold_) : metric > best_ * (1 + threshold_);
  if (better) {
    best_ = metric;
    bad_epochs_ = 0;
  } else {
    ++bad_epochs_;
  }
  if (cooldown_counter_ > 0) {
    --cooldown_counter_;
    bad_epochs_ = 0;
  }
  if (bad_epochs_ > patience_) {
    for (auto& g : optimizer_.param_groups()) {
      double old_lr = g.options().get_lr();
      double new_lr = std::max(old_lr * factor_, min_lr_);
      if (old_lr - new_lr > eps_) g.options().set_lr(new_lr);
    }
    cooldown_counter_ = cooldown_;
    bad_epochs_ = 0;
  }
}

OrderedDict<std::string, Tensor> ReduceLROnPlateau::state_dict() const {
  OrderedDict<std::string, Tensor> out;
  out.insert("best", scalar_tensor(best_, TensorOptions().dtype(kDouble)));
  out.insert("num_bad_epochs", scalar_tensor(bad_epochs_, TensorOptions().dtype(kLong)));
  out.insert("cooldown_counter", scalar_tensor(cooldown_counter_, TensorOptions().dtype(kLong)));
  return out;
}

void ReduceLROnPlateau::load_state_dict(const OrderedDict<std::string, Tensor>& state) {
  const Tensor& best = required(state, "ReduceLROnPlateau", "best", 1);
  const Tensor& bad = required(state, "ReduceLROnPlateau", "num_bad_epochs", 1);
  const Tensor& cooldown = required(state, "ReduceLROnPlateau", "cooldown_counter", 1);
  no_other_keys(state, "ReduceLROnPlateau", {"best", "num_bad_epochs", "cooldown_counter"});
  best_ = best.item<double>();
  bad_epochs_ = bad.item<int64_t>();
  cooldown_counter_ = cooldown.item<int64_t>();
}

std::vector<double> ReduceLROnPlateau::get_last_lr() const {
  std::vector<double> lrs;
  for (const auto& g : optimizer_.param_groups()) lrs.push_back(g.options().get_lr());
  return lrs;
}

}  // namespace brasa::optim
