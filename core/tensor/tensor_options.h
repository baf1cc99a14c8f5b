#pragma once
// TensorOptions: the dtype/device/requires_grad builder of libtorch.
#include <brasa/tensor/device.h>
#include <brasa/tensor/scalar_type.h>

#include <optional>
#include <ostream>

namespace brasa {

enum class Layout : int8_t { Strided };
constexpr Layout kStrided = Layout::Strided;

// How a tensor's elements are laid out in memory (libtorch's MemoryFormat):
// row-major (Contiguous), channels last ([N, C, H, W] stored as NHWC, or
// NDHWC for ChannelsLast3d), or whichever the input has (Preserve).
enum class MemoryFormat : int8_t { Contiguous, Preserve, ChannelsLast, ChannelsLast3d };

// The dtype factories use when none is given (float32, as in PyTorch).
ScalarType get_default_dtype();
void set_default_dtype(ScalarType t);

struct TensorOptions {
  TensorOptions() = default;
  TensorOptions(ScalarType t) { dtype_ = t; }
  TensorOptions(Device d) { device_ = d; }
  TensorOptions(DeviceType d) { device_ = Device(d); }
  TensorOptions(Layout) {}

  TensorOptions dtype(ScalarType t) const {
    auto o = *this;
    o.dtype_ = t;
    return o;
  }
  TensorOptions device(Device d) const {
    auto o = *this;
    o.device_ = d;
    return o;
  }
  TensorOptions requires_grad(bool r) const {
    auto o = *this;
    o.requires_grad_ = r;
    return o;
  }
  TensorOptions layout(Layout) const { return *this; }
  TensorOptions pinned_memory(bool p) const {
    auto o = *this;
    o.pinned_ = p;
    return o;
  }

  ScalarType dtype() const { return dtype_.value_or(get_default_dtype()); }
  bool has_dtype() const { return dtype_.has_value(); }
  Device device() const { return device_.value_or(Device(kCPU)); }
  bool has_device() const { return device_.has_value(); }
  bool requires_grad() const { return requires_grad_; }
  bool pinned_memory() const { return pinned_; }
  Layout layout() const { return kStrided; }

 private:
  std::optional<ScalarType> dtype_;
  std::optional<Device> device_;
  bool requires_grad_ = false;
  bool pinned_ = false;
};

// As libtorch prints them.
inline std::ostream& operator<<(std::ostream& os, const TensorOptions& o) {
  return os << "TensorOptions(dtype=" << o.dtype() << (o.has_dtype() ? "" : " (default)")
            << ", device=" << o.device() << (o.has_device() ? "" : " (default)")
            << ", layout=Strided, requires_grad=" << (o.requires_grad() ? "true" : "false")
            << ", pinned_memory=" << (o.pinned_memory() ? "true" : "false") << ")";
}

inline TensorOptions dtype(ScalarType t) { return TensorOptions().dtype(t); }
inline TensorOptions device(Device d) { return TensorOptions().device(d); }
inline TensorOptions requires_grad(bool r = true) { return TensorOptions().requires_grad(r); }
inline TensorOptions layout(Layout l) { return TensorOptions().layout(l); }

}  // namespace brasa
