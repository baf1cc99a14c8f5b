#include <brasa/autograd/grad_mode.h>
#include <brasa/ops/copy.h>
#include <brasa/serialize/checkpoint.h>

namespace brasa::serialize {
namespace {
const std::string kUser = "user.";
}

void save_checkpoint(const std::string& path, const nn::Module& model, const optim::Optimizer* optimizer,
                     const Metadata& user) {
  TensorDict tensors;
  Metadata meta;
  for (const auto& item : model.state_dict()) tensors.insert("model." + item.key(), item.value());
  if (optimizer) {
    auto& opt = const_cast<optim::Optimizer&>(*optimizer);
    const auto& groups = opt.param_groups();
    meta["optim.groups"] = std::to_string(groups.size());
    for (size_t g = 0; g < groups.size(); ++g) {
      meta["optim." + std::to_string(g) + ".lr"] = std::to_string(groups[g].options().get_lr());
      const auto& params = groups[g].params();
      for (size_t i = 0; i < params.size(); ++i) {
        auto it = opt.state().find(params[i].unsafeGetTensorImpl());
        if (it == opt.state().end()) continue;
        std::string key = "optim." + std::to_string(g) + "." + std::to_string(i);
        meta[key + ".step"] = std::to_string(it->second.step);
        for (const auto& [name, t] : it->second.buffers) tensors.insert(key + "." + name, t);
      }
    }
  }
  for (const auto& [k, v] : user) meta[kUser + k] = v;
  save_safetensors(path, tensors, meta);
}

Metadata load_checkpoint(const std::string& path, nn::Module& model, optim::Optimizer* optimizer) {
  Metadata meta;
  TensorDict tensors = load_safetensors(path, &meta);
  TensorDict model_state;
  for (const auto& item : tensors)
    if (item.key().rfind("model.", 0) == 0) model_state.insert(item.key().substr(6), item.value());
  try {
    model.load_state_dict(model_state, /*strict=*/true);
  } catch (const Error& e) {
    BRASA_ERROR("load_checkpoint: '", path, "' does not match the model: ", e.message());
  }
  if (optimizer) {
    auto& groups = optimizer->param_groups();
    auto n = meta.find("optim.groups");
    BRASA_CHECK(n != meta.end() && std::stoul(n->second) == groups.size(), "load_checkpoint: '", path,
                "' holds optimizer state for ", n == meta.end() ? std::string("no") : n->second,
                " parameter groups but the optimizer has ", groups.size());
    NoGradGuard ng;
    for (size_t g = 0; g < groups.size(); ++g) {
      groups[g].options().set_lr(std::stod(meta.at("optim." + std::to_string(g) + ".lr")));
      auto& params = groups[g].params();
      for (size_t i = 0; i < params.size(); ++i) {
        std::string key = "optim." + std::to_string(g) + "." + std::to_string(i);
        auto step = meta.find(key + ".step");
        if (step == meta.end()) continue;
        optim::ParamState& st = optimizer->state_of(params[i]);
        st.step = std::stoll(step->second);
        st.buffers.clear();
        for (const auto& item : tensors) {
          if (item.key().rfind(key + ".", 0) != 0) continue;
          std::string name = item.key().substr(key.size() + 1);
          BRASA_CHECK(item.value().sizes() == params[i].sizes(), "load_checkpoint: '", path, "': optimizer state '",
                      item.key(), "' has shape ", item.value().sizes(), " but the parameter has shape ",
                      params[i].sizes());
          st.buffers[name] = item.value().to(params[i].dtype());
        }
      }
    }
  }
  Metadata user;
  for (const auto& [k, v] : meta)
    if (k.rfind(kUser, 0) == 0) user[k.substr(kUser.size())] = v;
  return user;
}

}  // namespace brasa::serialize
