#pragma once
// What the fuzz targets share: the bytes as a file (the loaders take paths),
// and the rule every target checks — untrusted bytes give a value or a
// brasa::Error, never a crash, a hang or another exception (libFuzzer and
// the sanitizers report those).
#include <brasa/util/error.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <string>

namespace brasa::fuzz {

// A per-process file in memory-backed /dev/shm holding the input.
inline std::string as_file(const uint8_t* data, size_t size, const std::string& name = "input") {
  const std::string path = "/dev/shm/brasa-fuzz-" + std::to_string(::getpid()) + "-" + name;
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (size) std::fwrite(data, 1, size, f);
  std::fclose(f);
  return path;
}

template <class F>
void value_or_error(const F& f) {
  try {
    f();
  } catch (const brasa::Error&) {
  }
}

}  // namespace brasa::fuzz
