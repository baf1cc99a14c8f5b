#pragma once
// safetensors files: 8-byte little-endian header length, a JSON header
// ({"name": {"dtype": "F32", "shape": [...], "data_offsets": [b, e]}, ...,
// "__metadata__": {string: string}}), then the raw little-endian data.
// Writes are atomic: a temp file is written, fsynced and renamed.
#include <brasa/nn/ordered_dict.h>
#include <brasa/tensor/tensor.h>

#include <map>
#include <string>

namespace brasa::serialize {

using TensorDict = OrderedDict<std::string, Tensor>;
using Metadata = std::map<std::string, std::string>;

void save_safetensors(const std::string& path, const TensorDict& tensors,
                      const Metadata& metadata = {});
// Errors name the path and what is wrong (truncated, bad header, bad offsets).
TensorDict load_safetensors(const std::string& path, Metadata* metadata = nullptr);

// Writes `bytes` to `path` atomically (temp file in the same directory,
// fsync, rename, fsync of the directory).
void write_file_atomically(const std::string& path, const std::string& bytes);

}  // namespace brasa::serialize
