// .npy files (load_npy).
#include <brasa/serialize/npy.h>

#include "fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = brasa::fuzz::as_file(data, size);
  brasa::fuzz::value_or_error([&] {
    brasa::Tensor t = brasa::load_npy(path);
    if (t.numel() > 0 && t.dtype() != brasa::kBool) (void)t.sum();
  });
  return 0;
}
