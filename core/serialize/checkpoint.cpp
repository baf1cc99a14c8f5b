#include <brasa/serialize/checkpoint.h>

namespace brasa::serialize {
namespace {
const std::string kUser = "user.";

void add_with_prefix(TensorDict& out, const std::string& prefix,
                     const OrderedDict<std::string, Tensor>& state) {
  for (const auto& item : state) out.insert(prefix + item.key(), item.value());
}

// The entries under `prefix`, with the prefix taken off.
TensorDict part(const TensorDict& all, const std::string& prefix) {
  TensorDict out;
  for (const auto& item : all)
    if (item.key().rfind(prefix, 0) == 0)
      out.insert(item.key().substr(prefix.size()), item.value());
  return out;
}

// Deep copies (state_dict()s alias the live tensors).
TensorDict copy_of(const OrderedDict<std::string, Tensor>& state) {
  TensorDict out;
  for (const auto& item : state)
    out.insert(item.key(), item.value().defined() ? item.value().detach().clone() : Tensor());
  return out;
}

// Runs load(state) with errors prefixed by the file and the part.
template <class Load>
void load_part(const std::string& path, const char* what, const TensorDict& state, Load&& load) {
  try {
    load(state);
  } catch (const Error& e) {
    BRASA_ERROR("load_checkpoint: '", path, "' does not match the ", what, ": ", e.message());
  }
}
}  // namespace

void save_checkpoint(const std::string& path, const nn::Module& model,
                     const optim::Optimizer* optimizer, const Metadata& user,
                     const optim::SchedulerState* scheduler) {
  TensorDict tensors;
  add_with_prefix(tensors, "model.", model.state_dict());
  if (optimizer) add_with_prefix(tensors, "optim.", optimizer->state_dict());
  if (scheduler) add_with_prefix(tensors, "sched.", scheduler->state_dict());
  Metadata meta;
  for (const auto& [k, v] : user) meta[kUser + k] = v;
  save_safetensors(path, tensors, meta);
}

// The caller's metadata, without its prefix.
static Metadata user_part(const Metadata& meta) {
  Metadata user;
  for (const auto& [k, v] : meta)
    if (k.rfind(kUser, 0) == 0) user[k.substr(kUser.size())] = v;
  return user;
}

Metadata load_checkpoint(const std::string& path, nn::Module& model, optim::Optimizer* optimizer,
                         optim::SchedulerState* scheduler) {
  Metadata meta;
  TensorDict tensors = load_safetensors(path, &meta);
  // Check the optional parts' presence first, so that nothing is half restored.
  TensorDict optim_state = part(tensors, "optim."), sched_state = part(tensors, "sched.");
  if (optimizer)
    BRASA_CHECK(!optim_state.is_empty(), "load_checkpoint: '", path, "' holds no optimizer state");
  if (scheduler)
    BRASA_CHECK(!sched_state.is_empty(), "load_checkpoint: '", path, "' holds no scheduler state");
  TensorDict model_state = part(tensors, "model.");
  // Each part checks everything before it changes anything, but a later part
  // can still fail after an earlier one was applied: what was there before is
  // put back then, so that a failed load leaves model, optimizer and
  // scheduler exactly as they were.
  const TensorDict model_before = copy_of(model.state_dict());
  const TensorDict optim_before = optimizer ? copy_of(optimizer->state_dict()) : TensorDict();
  const TensorDict sched_before = scheduler ? copy_of(scheduler->state_dict()) : TensorDict();
  try {
    load_part(path, "model", model_state,
              [&](const TensorDict& s) { model.load_state_dict(s, /*strict=*/true); });
    if (optimizer)
      load_part(path, "optimizer", optim_state,
                [&](const TensorDict& s) { optimizer->load_state_dict(s); });
    if (scheduler)
      load_part(path, "scheduler", sched_state,
                [&](const TensorDict& s) { scheduler->load_state_dict(s); });
  } catch (...) {
    model.load_state_dict(model_before, /*strict=*/true);
    if (optimizer) optimizer->load_state_dict(optim_before);
    if (scheduler) scheduler->load_state_dict(sched_before);
    throw;
  }
  return user_part(meta);
}

Metadata read_checkpoint_metadata(const std::string& path) {
  Metadata meta;
  load_safetensors(path, &meta);
  return user_part(meta);
}

}  // namespace brasa::serialize
