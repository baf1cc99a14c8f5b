#include <brasa/tensor/device.h>
#include <brasa/tensor/scalar.h>
#include <brasa/tensor/storage.h>
#include <brasa/tensor/tensor_options.h>
#include <brasa/util/error.h>

#include <cstdlib>
#include <cstring>

namespace brasa {
namespace {

void free_cpu(void* p) { std::free(p); }

class CPUAllocator final : public Allocator {
 public:
  DataPtr allocate(size_t nbytes) override {
    if (nbytes == 0) return DataPtr(nullptr, nullptr, nullptr, Device(kCPU));
    size_t rounded = (nbytes + 63) / 64 * 64;
    void* p = std::aligned_alloc(64, rounded);
    BRASA_CHECK(p != nullptr, "CPU allocator: out of memory allocating ", nbytes, " bytes");
    return DataPtr(p, p, free_cpu, Device(kCPU));
  }
};

std::atomic<ScalarType> g_default_dtype{kFloat};

}  // namespace

Allocator* getCPUAllocator() {
  static CPUAllocator a;
  return &a;
}

Storage Storage::allocate(size_t nbytes, Allocator* allocator) {
  return Storage(make_intrusive<StorageImpl>(nbytes, allocator->allocate(nbytes), allocator, true));
}

void StorageImpl::resize(size_t nbytes) {
  BRASA_CHECK(resizable_ && allocator_, "resize: storage is not resizable (from_blob or foreign memory)");
  if (nbytes <= nbytes_) return;
  DataPtr nd = allocator_->allocate(nbytes);
  if (nbytes_ > 0) std::memcpy(nd.get(), data_.get(), nbytes_);
  data_ = std::move(nd);
  nbytes_ = nbytes;
}

Device::Device(const std::string& spec) : type_(kCPU), index_(-1) {
  std::string kind = spec, idx;
  auto colon = spec.find(':');
  if (colon != std::string::npos) kind = spec.substr(0, colon), idx = spec.substr(colon + 1);
  if (kind == "cpu") type_ = kCPU;
  else if (kind == "cuda") type_ = kCUDA;
  else BRASA_ERROR("Device: expected a device string like 'cpu', 'cuda' or 'cuda:1', got '", spec, "'");
  if (!idx.empty()) {
    BRASA_CHECK(idx.find_first_not_of("0123456789") == std::string::npos && idx.size() < 4,
                "Device: invalid device index in '", spec, "'");
    index_ = static_cast<int8_t>(std::stoi(idx));
  }
}

std::string Device::str() const {
  std::string s = type_ == kCPU ? "cpu" : "cuda";
  if (index_ >= 0) s += ":" + std::to_string(index_);
  return s;
}

std::ostream& operator<<(std::ostream& os, const Scalar& s) {
  if (s.isFloatingPoint()) return os << s.toDouble();
  if (s.isBoolean()) return os << (s.toBool() ? "true" : "false");
  return os << s.toLong();
}

ScalarType get_default_dtype() { return g_default_dtype.load(std::memory_order_relaxed); }
void set_default_dtype(ScalarType t) {
  BRASA_CHECK(isFloatingType(t), "set_default_dtype: expected a floating dtype, got ", t);
  g_default_dtype.store(t);
}

}  // namespace brasa
