// MNIST's IDX files, plain (datasets::MNIST): the input is the image file;
// the label file is the same bytes, so that either reader meets them.
#include <brasa/data/data.h>
#include <sys/stat.h>

#include "fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string dir = "/dev/shm/brasa-fuzz-idx-" + std::to_string(::getpid());
  ::mkdir(dir.c_str(), 0700);
  for (const char* name : {"t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"}) {
    std::FILE* f = std::fopen((dir + "/" + name).c_str(), "wb");
    if (size) std::fwrite(data, 1, size, f);
    std::fclose(f);
  }
  brasa::fuzz::value_or_error([&] {
    brasa::data::datasets::MNIST mnist(dir, brasa::data::datasets::MNIST::Mode::kTest);
    (void)mnist.size();
  });
  return 0;
}
