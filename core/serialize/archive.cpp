#include <brasa/autograd/grad_mode.h>
#include <brasa/nn/module.h>
#include <brasa/ops/factory.h>
#include <brasa/serialize/archive.h>
#include <brasa/serialize/pt_format.h>
#include <brasa/serialize/safetensors.h>
#include <brasa/serialize/zip_archive.h>

#include <algorithm>
#include <istream>
#include <iterator>
#include <ostream>

namespace brasa::serialize {

void OutputArchive::write(const std::string& key, const Tensor& tensor, bool /*is_buffer*/) {
  BRASA_CHECK(!key.empty(), "OutputArchive::write: the key must not be empty");
  BRASA_CHECK(tensor.defined(), "OutputArchive::write: '", key, "' is an undefined tensor");
  entries_.insert(key, tensor.detach());
}

void OutputArchive::write(const std::string& key, const IValue& value) {
  if (value.isTensor())
    write(key, value.toTensor());
  else if (value.isInt())
    write(key, scalar_tensor(value.toInt(), TensorOptions().dtype(kLong)));
  else if (value.isDouble())
    write(key, scalar_tensor(value.toDouble(), TensorOptions().dtype(kDouble)));
  else if (value.isBool())
    write(key, scalar_tensor(value.toBool(), TensorOptions().dtype(kBool)));
  else
    BRASA_ERROR("OutputArchive::write: '", key, "' holds a ", value.tagKind(),
                "; an archive stores tensors, ints, doubles, bools and nested archives");
}

void OutputArchive::write(const std::string& key, const OutputArchive& nested) {
  BRASA_CHECK(!key.empty(), "OutputArchive::write: the key must not be empty");
  for (const auto& e : nested.entries_) entries_.insert(key + "." + e.key(), e.value());
}

void OutputArchive::save_to(const std::string& filename) const {
  save_pt(filename, IValue(entries_));
}

void OutputArchive::save_to(std::ostream& stream) const {
  std::vector<char> bytes = pickle_save(IValue(entries_));
  stream.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  BRASA_CHECK(stream.good(), "OutputArchive::save_to: writing ", bytes.size(),
              " bytes to the stream failed");
}

void OutputArchive::save_to(const std::function<size_t(const void*, size_t)>& writer) const {
  std::vector<char> bytes = pickle_save(IValue(entries_));
  const size_t taken = writer(bytes.data(), bytes.size());
  BRASA_CHECK(taken == bytes.size(), "OutputArchive::save_to: the writer took ", taken, " of ",
              bytes.size(), " bytes");
}

namespace {
OrderedDict<std::string, Tensor> entries_of(const IValue& v, const std::string& source) {
  BRASA_CHECK(v.isGenericDict(), "InputArchive::load_from: ", source,
              " holds no archive (a dict of tensors), but a ", v.tagKind());
  OrderedDict<std::string, Tensor> out{"Archive entry"};
  for (const auto& [k, t] : v.toTensorItems()) out.insert(k, t);
  return out;
}
}  // namespace

void InputArchive::set_entries(OrderedDict<std::string, Tensor> entries,
                               std::optional<Device> device, const std::string& source) {
  if (device)
    for (auto& e : entries) e.value() = e.value().to(*device);
  entries_ = std::move(entries);
  source_ = source;
}

void InputArchive::load_from(const std::string& filename, std::optional<Device> device) {
  std::string bytes = read_whole_file(filename);
  const std::string source = "'" + filename + "'";
  if (looks_like_zip(bytes)) {
    set_entries(entries_of(load_pt(bytes, filename), source), device, source);
    return;
  }
  OrderedDict<std::string, Tensor> entries{"Archive entry"};
  for (const auto& e : load_safetensors(filename)) entries.insert(e.key(), e.value());
  set_entries(std::move(entries), device, source);
}

void InputArchive::load_from(std::istream& stream, std::optional<Device> device) {
  std::string bytes((std::istreambuf_iterator<char>(stream)), std::istreambuf_iterator<char>());
  load_from(bytes.data(), bytes.size(), device);
}

void InputArchive::load_from(const char* data, size_t size, std::optional<Device> device) {
  std::string_view bytes(data, size);
  BRASA_CHECK(looks_like_zip(bytes), "InputArchive::load_from: the ", size,
              " bytes given are not an archive (PyTorch's .pt zip format)");
  set_entries(entries_of(load_pt(bytes, "the bytes given"), "the bytes given"), device,
              "the bytes given");
}

bool InputArchive::try_read(const std::string& key, Tensor& tensor, bool /*is_buffer*/) {
  const Tensor* stored = entries_.find(key);
  if (!stored) return false;
  if (!tensor.defined()) {
    tensor = *stored;
    return true;
  }
  BRASA_CHECK(tensor.sizes() == stored->sizes(), "InputArchive::read: '", key, "' in ", source_,
              " has shape ", stored->sizes(), ", the tensor read into has shape ", tensor.sizes());
  NoGradGuard no_grad;
  tensor.copy_(*stored);
  return true;
}

void InputArchive::read(const std::string& key, Tensor& tensor, bool is_buffer) {
  BRASA_CHECK(try_read(key, tensor, is_buffer), "InputArchive::read: no entry '", key, "' in ",
              source_);
}

bool InputArchive::try_read(const std::string& key, InputArchive& nested) {
  const std::string prefix = key + ".";
  OrderedDict<std::string, Tensor> inner{"Archive entry"};
  for (const auto& e : entries_)
    if (e.key().starts_with(prefix)) inner.insert(e.key().substr(prefix.size()), e.value());
  if (inner.is_empty()) return false;
  nested.set_entries(std::move(inner), std::nullopt, "'" + key + "' of " + source_);
  return true;
}

void InputArchive::read(const std::string& key, InputArchive& nested) {
  BRASA_CHECK(try_read(key, nested), "InputArchive::read: no archive '", key, "' in ", source_);
}

bool InputArchive::try_read(const std::string& key, IValue& value) {
  const Tensor* stored = entries_.find(key);
  if (!stored) return false;
  const Tensor& t = *stored;
  if (t.dim() == 0 && t.scalar_type() == kLong)
    value = IValue(t.item().to<int64_t>());
  else if (t.dim() == 0 && t.scalar_type() == kDouble)
    value = IValue(t.item().to<double>());
  else if (t.dim() == 0 && t.scalar_type() == kBool)
    value = IValue(t.item().to<bool>());
  else
    value = IValue(t);
  return true;
}

void InputArchive::read(const std::string& key, IValue& value) {
  BRASA_CHECK(try_read(key, value), "InputArchive::read: no entry '", key, "' in ", source_);
}

std::vector<std::string> InputArchive::keys() const {
  std::vector<std::string> out;
  for (const auto& e : entries_) {
    std::string first = e.key().substr(0, e.key().find('.'));
    if (std::find(out.begin(), out.end(), first) == out.end()) out.push_back(first);
  }
  return out;
}

}  // namespace brasa::serialize

namespace brasa::nn {

void Module::save(serialize::OutputArchive& archive) const {
  for (const auto& p : parameters_)
    if (p.value().defined()) archive.write(p.key(), p.value());
  for (const auto& b : buffers_)
    if (b.value().defined()) archive.write(b.key(), b.value(), /*is_buffer=*/true);
  for (const auto& c : children_) {
    serialize::OutputArchive child;
    c.value()->save(child);
    archive.write(c.key(), child);
  }
}

void Module::load(serialize::InputArchive& archive) {
  for (auto& p : parameters_)
    if (p.value().defined()) archive.read(p.key(), p.value());
  for (auto& b : buffers_)
    if (b.value().defined()) archive.read(b.key(), b.value(), /*is_buffer=*/true);
  for (const auto& c : children_) {
    // A child without state (ReLU, Dropout) writes nothing, so it has no archive.
    if (c.value()->named_parameters().is_empty() && c.value()->named_buffers().is_empty()) continue;
    serialize::InputArchive child;
    archive.read(c.key(), child);
    c.value()->load(child);
  }
}

}  // namespace brasa::nn
