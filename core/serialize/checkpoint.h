#pragma once
// A training checkpoint in one safetensors file, written atomically: the
// model's state_dict ("model.<name>"), the optimizer's ("optim.<name>", see
// Optimizer::state_dict), a scheduler's ("sched.<name>") and the caller's
// metadata (epoch, ...).
#include <brasa/nn/module.h>
#include <brasa/optim/optimizer.h>
#include <brasa/optim/schedulers.h>
#include <brasa/serialize/safetensors.h>

namespace brasa::serialize {

void save_checkpoint(const std::string& path, const nn::Module& model,
                     const optim::Optimizer* optimizer, const Metadata& user = {},
                     const optim::SchedulerState* scheduler = nullptr);
// Restores model, optimizer and scheduler in place; returns the user
// metadata. A file that does not match them (missing key, other shape, no
// optimizer or scheduler state) is an error naming the file and the key.
Metadata load_checkpoint(const std::string& path, nn::Module& model, optim::Optimizer* optimizer,
                         optim::SchedulerState* scheduler = nullptr);
// The caller's metadata of a checkpoint, without restoring anything.
Metadata read_checkpoint_metadata(const std::string& path);

}  // namespace brasa::serialize
