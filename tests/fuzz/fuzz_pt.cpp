// PyTorch's .pt format (pickle_load: a zip archive and a restricted
// unpickler).
#include <brasa/serialize/pt_format.h>

#include "fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::vector<char> bytes(data, data + size);
  brasa::fuzz::value_or_error([&] { brasa::pickle_load(bytes); });
  return 0;
}
