#pragma once
// brasa::save / brasa::load (torch::save / torch::load) for tensors,
// modules and optimizers. Files are safetensors (modules: their state_dict),
// written atomically.
#include <brasa/serialize/checkpoint.h>

namespace brasa {

void save(const Tensor& tensor, const std::string& path);
void load(Tensor& tensor, const std::string& path);
void save(const std::vector<Tensor>& tensors, const std::string& path);
void load(std::vector<Tensor>& tensors, const std::string& path);
void save(const nn::Module& module, const std::string& path);
void load(nn::Module& module, const std::string& path);
// Loads, then moves the module's parameters and buffers to `device`.
void load(nn::Module& module, const std::string& path, Device device);
void save(const optim::Optimizer& optimizer, const std::string& path);
void load(optim::Optimizer& optimizer, const std::string& path);

template <class M>
void save(const std::shared_ptr<M>& module, const std::string& path) {
  save(static_cast<const nn::Module&>(*module), path);
}
template <class M>
void load(const std::shared_ptr<M>& module, const std::string& path) {
  load(static_cast<nn::Module&>(*module), path);
}
template <class M>
void load(const std::shared_ptr<M>& module, const std::string& path, Device device) {
  load(static_cast<nn::Module&>(*module), path, device);
}
template <class Impl>
void save(const nn::ModuleHolder<Impl>& module, const std::string& path) {
  save(module.ptr(), path);
}
template <class Impl>
void load(nn::ModuleHolder<Impl>& module, const std::string& path) {
  load(module.ptr(), path);
}
template <class Impl>
void load(nn::ModuleHolder<Impl>& module, const std::string& path, Device device) {
  load(module.ptr(), path, device);
}

}  // namespace brasa
