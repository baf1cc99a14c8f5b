#pragma once
#include <cstdint>
#include <ostream>
#include <string>

namespace brasa {

// PrivateUse1 is PyTorch's slot for a device that is not built in (an
// out-of-tree backend, or a test device); its string is "privateuseone".
enum class DeviceType : int8_t { CPU = 0, CUDA = 1, PrivateUse1 = 2 };
constexpr DeviceType kCPU = DeviceType::CPU;
constexpr DeviceType kCUDA = DeviceType::CUDA;
constexpr DeviceType kPrivateUse1 = DeviceType::PrivateUse1;
constexpr int kNumDeviceTypes = 3;
const char* device_type_name(DeviceType t);

struct Device {
  Device(DeviceType type = kCPU, int8_t index = -1) : type_(type), index_(index) {}
  // "cpu", "cuda", "cuda:1"
  Device(const std::string& spec);
  Device(const char* spec) : Device(std::string(spec)) {}
  DeviceType type() const { return type_; }
  int8_t index() const { return index_; }
  bool has_index() const { return index_ >= 0; }
  bool is_cpu() const { return type_ == kCPU; }
  bool is_cuda() const { return type_ == kCUDA; }
  std::string str() const;
  bool operator==(const Device& o) const { return type_ == o.type_ && index_ == o.index_; }
  bool operator!=(const Device& o) const { return !(*this == o); }

 private:
  DeviceType type_;
  int8_t index_;
};

inline std::ostream& operator<<(std::ostream& os, const Device& d) { return os << d.str(); }

}  // namespace brasa
