#include <brasa/autograd/grad_mode.h>
#include <brasa/serialize/pt_format.h>
#include <brasa/serialize/save_load.h>
#include <brasa/serialize/zip_archive.h>

#include <fstream>

namespace brasa {

void save(const Tensor& tensor, const std::string& path) {
  save(std::vector<Tensor>{tensor}, path);
}

void load(Tensor& tensor, const std::string& path) {
  std::vector<Tensor> ts;
  load(ts, path);
  BRASA_CHECK(ts.size() == 1, "load: '", path, "' holds ", ts.size(), " tensors, expected one");
  tensor = ts[0];
}

void save(const std::vector<Tensor>& tensors, const std::string& path) {
  serialize::TensorDict d;
  for (size_t i = 0; i < tensors.size(); ++i) d.insert(std::to_string(i), tensors[i]);
  serialize::save_safetensors(path, d, {{"format", "brasa.tensors"}});
}

namespace {
// PyTorch's .pt files are zip archives; Brasa's are safetensors.
bool is_pt_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  char head[4] = {};
  return in.read(head, 4) && serialize::looks_like_zip(std::string_view(head, 4));
}
IValue load_pt_file(const std::string& path) {
  return serialize::load_pt(serialize::read_whole_file(path), path);
}
}  // namespace

void load(std::vector<Tensor>& tensors, const std::string& path) {
  if (is_pt_file(path)) {
    IValue v = load_pt_file(path);
    if (v.isTensor()) {
      tensors = {v.toTensor()};
    } else {
      BRASA_CHECK(v.isTensorList(), "load: '", path, "' holds no tensor or list of tensors");
      tensors = v.toTensorVector();
    }
    return;
  }
  serialize::Metadata meta;
  auto d = serialize::load_safetensors(path, &meta);
  tensors.clear();
  for (size_t i = 0; i < d.size(); ++i) {
    const Tensor* t = d.find(std::to_string(i));
    BRASA_CHECK(t, "load: '", path, "' is not a tensor list saved by brasa::save (no entry '", i,
                "')");
    tensors.push_back(*t);
  }
}

void save(const nn::Module& module, const std::string& path) {
  serialize::save_safetensors(path, module.state_dict(), {{"format", "pt"}});
}

void load(nn::Module& module, const std::string& path) {
  serialize::TensorDict d;
  if (is_pt_file(path)) {
    IValue v = load_pt_file(path);
    BRASA_CHECK(v.isGenericDict(), "load: '", path,
                "' holds no state_dict (a dict of tensors) to load into ", module.name());
    for (const auto& [k, t] : v.toTensorItems()) d.insert(k, t);
  } else {
    d = serialize::load_safetensors(path);
  }
  try {
    module.load_state_dict(d, /*strict=*/true);
  } catch (const Error& e) {
    BRASA_ERROR("load: '", path, "' does not match ", module.name(), ": ", e.message());
  }
}

// Moves first (an unusable device fails before any reading), then copies the
// stored values into the moved tensors.
void load(nn::Module& module, const std::string& path, Device device) {
  module.to(device);
  load(module, path);
}

// An optimizer alone: a checkpoint without model tensors.
namespace {
struct EmptyModule : nn::Module {
  EmptyModule() : nn::Module("Empty") {}
};
}  // namespace

void save(const optim::Optimizer& optimizer, const std::string& path) {
  EmptyModule none;
  serialize::save_checkpoint(path, none, &optimizer);
}

void load(optim::Optimizer& optimizer, const std::string& path) {
  EmptyModule none;
  serialize::load_checkpoint(path, none, &optimizer);
}

}  // namespace brasa
