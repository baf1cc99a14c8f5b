#pragma once
// NumPy .npy files (format versions 1.0-3.0), little-endian, C or Fortran order.
#include <brasa/tensor/tensor.h>

#include <string>

namespace brasa {

// Writes atomically: a temporary file in the same folder, fsync, rename.
void save_npy(const std::string& path, const Tensor& t);
Tensor load_npy(const std::string& path);

}  // namespace brasa
