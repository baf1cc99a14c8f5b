#pragma once
// The zip container of PyTorch's .pt files: uncompressed ("stored") entries,
// read from memory and written with each entry's data 64-byte aligned.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace brasa::serialize {

// A zip archive held in memory; entries are views into it.
class ZipReader {
 public:
  // `what` names the archive in errors (a path). Validates the directory.
  ZipReader(std::string bytes, std::string what);
  const std::vector<std::string>& names() const { return names_; }
  bool has(const std::string& name) const;
  std::string_view read(const std::string& name) const;

 private:
  std::string bytes_, what_;
  std::vector<std::string> names_;
  std::vector<std::string_view> data_;
};

class ZipWriter {
 public:
  void add(const std::string& name, std::string_view data);
  // The whole archive (entries, central directory, end record).
  std::string finish();

 private:
  struct Entry {
    std::string name;
    uint32_t crc;
    uint64_t size, offset;
  };
  std::string out_;
  std::vector<Entry> entries_;
};

// Whether `bytes` starts like a zip archive.
bool looks_like_zip(std::string_view bytes);

}  // namespace brasa::serialize
