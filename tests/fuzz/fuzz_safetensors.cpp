// safetensors files (load_safetensors, and the checkpoint metadata reader).
#include <brasa/serialize/checkpoint.h>
#include <brasa/serialize/safetensors.h>

#include "fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = brasa::fuzz::as_file(data, size);
  brasa::fuzz::value_or_error([&] {
    brasa::serialize::Metadata meta;
    auto tensors = brasa::serialize::load_safetensors(path, &meta);
    for (const auto& item : tensors) (void)item.value().sum();  // the data is readable
  });
  brasa::fuzz::value_or_error([&] { brasa::serialize::read_checkpoint_metadata(path); });
  return 0;
}
