#pragma once
// A training checkpoint in one safetensors file, written atomically: the
// model's state_dict ("model.<name>"), the optimizer's per-parameter state
// ("optim.<group>.<index>.<buffer>", step counts and learning rates in the
// metadata) and the caller's metadata (epoch, ...).
#include <brasa/nn/module.h>
#include <brasa/optim/optimizer.h>
#include <brasa/serialize/safetensors.h>

namespace brasa::serialize {

void save_checkpoint(const std::string& path, const nn::Module& model, const optim::Optimizer* optimizer,
                     const Metadata& user = {});
// Restores model and optimizer in place; returns the user metadata. A file
// that does not match the model (missing key, other shape) is an error
// naming the key.
Metadata load_checkpoint(const std::string& path, nn::Module& model, optim::Optimizer* optimizer);

}  // namespace brasa::serialize
