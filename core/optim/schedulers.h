#pragma once
// Learning-rate schedulers (torch.optim.lr_scheduler semantics): each
// step() advances one epoch (or batch) and writes the new learning rate into
// every param group of the optimizer.
#include <brasa/optim/optimizer.h>

#include <limits>
#include <memory>
#include <string>
#include <vector>

namespace brasa::optim {

// What a checkpoint keeps of a scheduler (PyTorch's scheduler.state_dict()).
// Loading restores the counters only: the learning rates themselves come
// back with the optimizer's state, as in PyTorch.
class SchedulerState {
 public:
  virtual ~SchedulerState() = default;
  virtual OrderedDict<std::string, Tensor> state_dict() const = 0;
  virtual void load_state_dict(const OrderedDict<std::string, Tensor>& state) = 0;
};

class LRScheduler : public SchedulerState {
 public:
  explicit LRScheduler(Optimizer& optimizer);
  // "last_epoch" and "base_lrs" (one per param group).
  OrderedDict<std::string, Tensor> state_dict() const override;
  void load_state_dict(const OrderedDict<std::string, Tensor>& state) override;
  void step();
  int64_t last_epoch() const { return last_epoch_; }
  std::vector<double> get_last_lr() const;
  // Sets the counter (for SequentialLR and checkpoint restore) and applies the lr.
  void set_epoch(int64_t epoch);

 protected:
  // The learning rate of group g at last_epoch_ (closed form).
  virtual double lr_at(size_t g, int64_t epoch) const = 0;
  // Anything else the schedule sets at `epoch` (OneCycleLR's momentum).
  virtual void apply_extra(int64_t epoch) {}
  Optimizer& optimizer_;
  std::vector<double> base_lrs_;
  int64_t last_epoch_ = 0;
  friend class SequentialLR;
};

class StepLR : public LRScheduler {
 public:
  StepLR(Optimizer& o, int64_t step_size, double gamma = 0.1);

 protected:
  double lr_at(size_t g, int64_t epoch) const override;
  int64_t step_size_;
  double gamma_;
};

class MultiStepLR : public LRScheduler {
 public:
  MultiStepLR(Optimizer& o, std::vector<int64_t> milestones, double gamma = 0.1);

 protected:
  double lr_at(size_t g, int64_t epoch) const override;
  std::vector<int64_t> milestones_;
  double gamma_;
};

class ExponentialLR : public LRScheduler {
 public:
  ExponentialLR(Optimizer& o, double gamma);

 protected:
  double lr_at(size_t g, int64_t epoch) const override;
  double gamma_;
};

class CosineAnnealingLR : public LRScheduler {
 public:
  CosineAnnealingLR(Optimizer& o, int64_t T_max, double eta_min = 0);

 protected:
  double lr_at(size_t g, int64_t epoch) const override;
  int64_t T_max_;
  double eta_min_;
};

class LinearLR : public LRScheduler {
 public:
  LinearLR(Optimizer& o, double start_factor = 1.0 / 3, double end_factor = 1.0,
           int64_t total_iters = 5);

 protected:
  double lr_at(size_t g, int64_t epoch) const override;
  double start_, end_;
  int64_t total_;
};

// One cycle (per batch): cosine warm-up from max_lr/div_factor to max_lr over
// pct_start of the steps, then cosine annealing to initial/final_div_factor.
class OneCycleLR : public LRScheduler {
 public:
  // With cycle_momentum (PyTorch's default) the momentum (SGD, RMSprop) or
  // beta1 (Adam, AdamW) runs the opposite way: max_momentum down to
  // base_momentum while the lr rises, and back.
  OneCycleLR(Optimizer& o, double max_lr, int64_t total_steps, double pct_start = 0.3,
             double div_factor = 25, double final_div_factor = 1e4, bool cycle_momentum = true,
             double base_momentum = 0.85, double max_momentum = 0.95);

 protected:
  double lr_at(size_t g, int64_t epoch) const override;
  void apply_extra(int64_t epoch) override;
  // cos-annealed position of `epoch` in the schedule: phase 0 (up) or 1 (down) and the fraction
  // done.
  std::pair<int, double> phase(int64_t epoch) const;
  double max_lr_, initial_lr_, min_lr_;
  int64_t total_steps_;
  double pct_start_;
  bool cycle_momentum_;
  double base_momentum_, max_momentum_;
};

// Runs `schedulers[i]` from milestones[i-1] on (warm-up then decay).
class SequentialLR : public LRScheduler {
 public:
  SequentialLR(Optimizer& o, std::vector<std::shared_ptr<LRScheduler>> schedulers,
               std::vector<int64_t> milestones);

 protected:
  double lr_at(size_t g, int64_t epoch) const override;
  std::vector<std::shared_ptr<LRScheduler>> schedulers_;
  std::vector<int64_t> milestones_;
};

// Reduces the lr by `factor` after `patience` epochs without improvement of
// the metric passed to step(metric).
class ReduceLROnPlateau : public SchedulerState {
 public:
  enum class Mode { kMin, kMax };
  ReduceLROnPlateau(Optimizer& o, Mode mode = Mode::kMin, double factor = 0.1,
                    int64_t patience = 10, double threshold = 1e-4, int64_t cooldown = 0,
                    double min_lr = 0, double eps = 1e-8);
  void step(double metric);
  std::vector<double> get_last_lr() const;
  // "best", "num_bad_epochs" and "cooldown_counter".
  OrderedDict<std::string, Tensor> state_dict() const override;
  void load_state_dict(const OrderedDict<std::string, Tensor>& state) override;

 private:
  Optimizer& optimizer_;
  Mode mode_;
  double factor_, threshold_, min_lr_, eps_;
  int64_t patience_, cooldown_, cooldown_counter_ = 0, bad_epochs_ = 0;
  double best_;
};

}  // namespace brasa::optim
