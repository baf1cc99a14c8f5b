#pragma once
// serialize::OutputArchive / InputArchive, as libtorch spells them: named
// tensors, scalars and nested archives, written to and read from a file, a
// stream or a writer function. Modules save into and load from them
// (module->save(archive), module->load(archive)); so do user types that
// libtorch programs serialize by hand.
//
// The bytes are PyTorch's .pt format holding one dict of tensors whose keys
// are the dotted paths ("fc1.weight"), so Python's torch.load reads them.
// Scalars (int, double, bool) are stored as 0-d tensors of Long, Double and
// Bool and read back as such. load_from(path) also reads safetensors files
// (it recognises the format by content).
#include <brasa/nn/ordered_dict.h>
#include <brasa/util/ivalue.h>

#include <functional>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

namespace brasa::serialize {

class OutputArchive {
 public:
  // is_buffer is accepted for libtorch's signature; parameters and buffers
  // are stored alike.
  void write(const std::string& key, const Tensor& tensor, bool is_buffer = false);
  // A tensor, an int, a double or a bool.
  void write(const std::string& key, const IValue& value);
  // Everything in `nested`, under "key.".
  void write(const std::string& key, const OutputArchive& nested);

  // Atomically (a temp file renamed into place).
  void save_to(const std::string& filename) const;
  void save_to(std::ostream& stream) const;
  // Calls `writer(data, size)` with the bytes; it returns how many it took.
  void save_to(const std::function<size_t(const void*, size_t)>& writer) const;

  const OrderedDict<std::string, Tensor>& tensors() const { return entries_; }

 private:
  OrderedDict<std::string, Tensor> entries_{"Archive entry"};
};

class InputArchive {
 public:
  // Tensors are moved to `device` when given.
  void load_from(const std::string& filename, std::optional<Device> device = std::nullopt);
  void load_from(std::istream& stream, std::optional<Device> device = std::nullopt);
  void load_from(const char* data, size_t size, std::optional<Device> device = std::nullopt);

  // Reads `key` into `tensor`: a defined tensor gets the values copied in
  // (shapes must match; autograd does not record it), an undefined one
  // becomes the stored tensor. read() throws when the key is missing.
  bool try_read(const std::string& key, Tensor& tensor, bool is_buffer = false);
  void read(const std::string& key, Tensor& tensor, bool is_buffer = false);
  // The entries under "key." as an archive of their own.
  bool try_read(const std::string& key, InputArchive& nested);
  void read(const std::string& key, InputArchive& nested);
  // A 0-d Long, Double or Bool tensor reads as an int, double or bool; any
  // other entry as a tensor.
  bool try_read(const std::string& key, IValue& value);
  void read(const std::string& key, IValue& value);

  // The keys at this level (nested archives by their own key).
  std::vector<std::string> keys() const;

 private:
  void set_entries(OrderedDict<std::string, Tensor> entries, std::optional<Device> device,
                   const std::string& source);
  OrderedDict<std::string, Tensor> entries_{"Archive entry"};
  std::string source_ = "an empty archive";
};

}  // namespace brasa::serialize
