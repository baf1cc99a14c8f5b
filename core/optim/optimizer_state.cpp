// Optimizer::state_dict / load_state_dict and the options' visitors.
#include <brasa/autograd/grad_mode.h>
#include <brasa/ops/copy.h>
#include <brasa/ops/factory.h>
#include <brasa/optim/optimizer.h>

#include <algorithm>
#include <unordered_set>

namespace brasa::optim {
namespace {

using Visitor = std::function<void(const char*, double&)>;

void visit_flag(const Visitor& fn, const char* name, bool& flag) {
  double v = flag ? 1.0 : 0.0;
  fn(name, v);
  flag = v != 0.0;
}

std::string group_key(size_t g, const std::string& what) {
  return "param_groups." + std::to_string(g) + "." + what;
}
std::string state_key(int64_t i, const std::string& what) {
  return "state." + std::to_string(i) + "." + what;
}

}  // namespace

void SGDOptions::visit(const Visitor& fn) {
  fn("lr", lr_);
  fn("momentum", momentum_);
  fn("dampening", dampening_);
  fn("weight_decay", weight_decay_);
  visit_flag(fn, "nesterov", nesterov_);
  visit_flag(fn, "maximize", maximize_);
}

void AdamOptions::visit(const Visitor& fn) {
  fn("lr", lr_);
  fn("betas.0", std::get<0>(betas_));
  fn("betas.1", std::get<1>(betas_));
  fn("eps", eps_);
  fn("weight_decay", weight_decay_);
  visit_flag(fn, "amsgrad", amsgrad_);
  visit_flag(fn, "maximize", maximize_);
}

void RMSpropOptions::visit(const Visitor& fn) {
  fn("lr", lr_);
  fn("alpha", alpha_);
  fn("eps", eps_);
  fn("weight_decay", weight_decay_);
  fn("momentum", momentum_);
  visit_flag(fn, "centered", centered_);
}

void AdagradOptions::visit(const Visitor& fn) {
  fn("lr", lr_);
  fn("lr_decay", lr_decay_);
  fn("weight_decay", weight_decay_);
  fn("initial_accumulator_value", initial_accumulator_value_);
  fn("eps", eps_);
}

OrderedDict<std::string, Tensor> Optimizer::state_dict() const {
  OrderedDict<std::string, Tensor> out;
  int64_t index = 0;
  for (size_t g = 0; g < groups_.size(); ++g) {
    const auto& params = groups_[g].params();
    auto options = groups_[g].options().clone();  // visit() takes its values by reference
    options->visit([&](const char* name, double& v) {
      out.insert(group_key(g, name), scalar_tensor(v, kDouble));
    });
    std::vector<int64_t> ids(params.size());
    for (size_t i = 0; i < params.size(); ++i) ids[i] = index + static_cast<int64_t>(i);
    out.insert(group_key(g, "params"), tensor(ids, TensorOptions().dtype(kLong)));
    for (const Tensor& p : params) {
      auto it = state_.find(p.unsafeGetTensorImpl());
      if (it != state_.end()) {
        out.insert(state_key(index, "step"),
                   scalar_tensor(it->second.step, TensorOptions().dtype(kLong)));
        std::vector<std::string> names;
        for (const auto& b : it->second.buffers) names.push_back(b.first);
        std::sort(names.begin(), names.end());  // a stable order in files
        for (const auto& name : names)
          out.insert(state_key(index, name), it->second.buffers.at(name));
      }
      ++index;
    }
  }
  return out;
}

void Optimizer::load_state_dict(const OrderedDict<std::string, Tensor>& state) {
  const char* op = "Optimizer::load_state_dict: ";
  // Check everything before changing anything: every key this optimizer
  // reads must be there with the right shape, and no other key may be.
  std::unordered_set<std::string> known;
  int64_t index = 0;
  for (size_t g = 0; g < groups_.size(); ++g) {
    const Tensor* ids = state.find(group_key(g, "params"));
    BRASA_CHECK(ids, op, "loaded state dict has no parameter group ", g, " (the optimizer has ",
                groups_.size(), ")");
    BRASA_CHECK(ids->numel() == static_cast<int64_t>(groups_[g].params().size()), op,
                "loaded state dict contains a parameter group that doesn't match the size of "
                "optimizer's group: "
                "group ",
                g, " has ", ids->numel(), " parameters in the state dict and ",
                groups_[g].params().size(), " in the optimizer");
    known.insert(group_key(g, "params"));
    groups_[g].options().clone()->visit([&](const char* name, double&) {
      const Tensor* v = state.find(group_key(g, name));
      BRASA_CHECK(v, op, "missing key '", group_key(g, name), "'");
      BRASA_CHECK(v->numel() == 1, op, "'", group_key(g, name),
                  "' must hold one number, but has shape ", v->sizes());
      known.insert(group_key(g, name));
    });
    for (const Tensor& p : groups_[g].params()) {
      const std::string prefix = "state." + std::to_string(index++) + ".";
      const Tensor* step = state.find(prefix + "step");
      if (!step) continue;
      BRASA_CHECK(step->numel() == 1, op, "'", prefix, "step' must hold one number, but has shape ",
                  step->sizes());
      for (const auto& item : state) {
        if (item.key().rfind(prefix, 0) != 0) continue;
        known.insert(item.key());
        if (item.key() == prefix + "step") continue;
        BRASA_CHECK(item.value().sizes() == p.sizes(), op, "'", item.key(), "' has shape ",
                    item.value().sizes(), " but parameter ", index - 1, " has shape ", p.sizes());
      }
    }
  }
  for (const auto& item : state)
    BRASA_CHECK(known.count(item.key()), op, "unexpected key '", item.key(),
                "' (another optimizer type, more parameter groups or state without a step?)");

  NoGradGuard ng;
  index = 0;
  for (size_t g = 0; g < groups_.size(); ++g) {
    groups_[g].options().visit(
        [&](const char* name, double& v) { v = state[group_key(g, name)].item<double>(); });
    for (const Tensor& p : groups_[g].params()) {
      const std::string prefix = "state." + std::to_string(index++) + ".";
      const Tensor* step = state.find(prefix + "step");
      if (!step) {
        state_.erase(p.unsafeGetTensorImpl());
        continue;
      }
      ParamState& st = state_of(p);
      st.step = step->item<int64_t>();
      st.buffers.clear();
      for (const auto& item : state)
        if (item.key().rfind(prefix, 0) == 0 && item.key() != prefix + "step")
          // A copy: two optimizers must never update one buffer.
          st.buffers[item.key().substr(prefix.size())] =
              item.value().detach().to(p.dtype()).clone();
    }
  }
}

}  // namespace brasa::optim
