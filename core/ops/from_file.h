#pragma once
// torch::from_file: a 1-D tensor of `size` elements of the options' dtype
// read from the start of a file. With shared = true the tensor is the file
// itself (a shared mapping: writes reach the file); otherwise a private
// copy-on-write mapping (the file is never written).
#include <brasa/tensor/tensor.h>

#include <optional>
#include <string>

namespace brasa {

Tensor from_file(const std::string& filename, std::optional<bool> shared = std::nullopt,
                 std::optional<int64_t> size = 0, const TensorOptions& options = {});

}  // namespace brasa
