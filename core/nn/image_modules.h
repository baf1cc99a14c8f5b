#pragma once
// Padding, pixel shuffle and upsampling modules of libtorch (ZeroPad2d,
// ConstantPad1d/2d/3d, ReflectionPad1d/2d/3d, ReplicationPad1d/2d/3d, PixelShuffle,
// PixelUnshuffle, Upsample) with their options, and F::pixel_shuffle /
// F::pixel_unshuffle.
#include <brasa/nn/functional.h>
#include <brasa/nn/module.h>
#include <brasa/nn/module_options.h>
#include <brasa/util/libtorch_names.h>

#include <optional>
#include <ostream>
#include <vector>

namespace brasa::nn {

// Padding of D dims: one value for every side, or (left, right, top, bottom, ...).
template <size_t D>
struct PadOptions {
  PadOptions(ExpandingArray<2 * D> padding) : padding_(padding) {}  // NOLINT: implicit
  BRASA_ARG(ExpandingArray<2 * D>, padding);
  double value_ = 0.0;  // what constant padding fills in
};
template <size_t D>
struct ConstantPadOptions : PadOptions<D> {
  ConstantPadOptions(ExpandingArray<2 * D> padding, double value) : PadOptions<D>(padding) {
    this->value_ = value;
  }
  ConstantPadOptions& value(double v) {
    this->value_ = v;
    return *this;
  }
  const double& value() const noexcept { return this->value_; }
};
using ZeroPad2dOptions = PadOptions<2>;
using ConstantPad1dOptions = ConstantPadOptions<1>;
using ConstantPad2dOptions = ConstantPadOptions<2>;
using ConstantPad3dOptions = ConstantPadOptions<3>;
using ReflectionPad1dOptions = PadOptions<1>;
using ReflectionPad2dOptions = PadOptions<2>;
using ReplicationPad1dOptions = PadOptions<1>;
using ReplicationPad2dOptions = PadOptions<2>;
template <size_t D>
using ReflectionPadOptions = PadOptions<D>;
template <size_t D>
using ReplicationPadOptions = PadOptions<D>;
using ReflectionPad3dOptions = PadOptions<3>;
using ReplicationPad3dOptions = PadOptions<3>;

template <size_t D>
class PadImpl : public Cloneable<PadImpl<D>> {
 public:
  PadImpl(const PadOptions<D>& options_, PaddingMode mode, const char* name)
      : Cloneable<PadImpl<D>>(name), options(options_), mode_(mode) {}
  void reset() override {}
  Tensor forward(const Tensor& x) {
    functional::PadFuncOptions o(
        std::vector<int64_t>(options.padding_->begin(), options.padding_->end()));
    return functional::pad(x, o.mode(mode_).value(options.value_));
  }
  void pretty_print(std::ostream& os) const override {
    os << "torch::nn::" << this->name() << "(padding=" << IntArrayRef(options.padding_);
    if (this->name().starts_with("ConstantPad")) os << ", value=" << options.value_;
    os << ")";
  }
  PadOptions<D> options;

 private:
  PaddingMode mode_;
};

// One padding module: its mode, and constructors from options or (padding[, value]).
#define BRASA_PAD_MODULE(Name, D, mode)                                                         \
  class Name##Impl : public PadImpl<D> {                                                        \
   public:                                                                                      \
    Name##Impl(const PadOptions<D>& o) : PadImpl<D>(o, mode, #Name) {} /* NOLINT */             \
    Name##Impl(ExpandingArray<2 * D> padding, double value = 0.0)                               \
        : Name##Impl(ConstantPadOptions<D>(padding, value)) {}                                  \
    std::shared_ptr<Module> clone(const std::optional<Device>& = std::nullopt) const override { \
      return std::make_shared<Name##Impl>(*this);                                               \
    }                                                                                           \
  };                                                                                            \
  BRASA_MODULE(Name)
BRASA_PAD_MODULE(ZeroPad2d, 2, kConstant);
BRASA_PAD_MODULE(ConstantPad1d, 1, kConstant);
BRASA_PAD_MODULE(ConstantPad2d, 2, kConstant);
BRASA_PAD_MODULE(ConstantPad3d, 3, kConstant);
BRASA_PAD_MODULE(ReflectionPad1d, 1, kReflect);
BRASA_PAD_MODULE(ReflectionPad2d, 2, kReflect);
BRASA_PAD_MODULE(ReplicationPad1d, 1, kReplicate);
BRASA_PAD_MODULE(ReplicationPad2d, 2, kReplicate);
BRASA_PAD_MODULE(ReflectionPad3d, 3, kReflect);
BRASA_PAD_MODULE(ReplicationPad3d, 3, kReplicate);
#undef BRASA_PAD_MODULE

struct PixelShuffleOptions {
  PixelShuffleOptions(int64_t upscale_factor) : upscale_factor_(upscale_factor) {}  // NOLINT
  BRASA_ARG(int64_t, upscale_factor);
};
struct PixelUnshuffleOptions {
  PixelUnshuffleOptions(int64_t downscale_factor)
      : downscale_factor_(downscale_factor) {}  // NOLINT
  BRASA_ARG(int64_t, downscale_factor);
};
struct UpsampleOptions {
  BRASA_ARG(std::optional<std::vector<int64_t>>, size);
  BRASA_ARG(std::optional<std::vector<double>>, scale_factor);
  // Braced lists: .size({8, 8}), .scale_factor({2, 2}).
  UpsampleOptions& size(std::vector<int64_t> v) {
    size_ = std::move(v);
    return *this;
  }
  UpsampleOptions& scale_factor(std::vector<double> v) {
    scale_factor_ = std::move(v);
    return *this;
  }
  BRASA_ARG(InterpolateMode, mode, kNearest);
  BRASA_ARG(std::optional<bool>, align_corners);
};

namespace functional {
using PixelShuffleFuncOptions = PixelShuffleOptions;
using PixelUnshuffleFuncOptions = PixelUnshuffleOptions;
// [..., C * r * r, H, W] -> [..., C, H * r, W * r]
Tensor pixel_shuffle(const Tensor& x, const PixelShuffleFuncOptions& options);
// [..., C, H * r, W * r] -> [..., C * r * r, H, W]
Tensor pixel_unshuffle(const Tensor& x, const PixelUnshuffleFuncOptions& options);
}  // namespace functional

class PixelShuffleImpl : public Cloneable<PixelShuffleImpl> {
 public:
  explicit PixelShuffleImpl(const PixelShuffleOptions& o) : Cloneable("PixelShuffle"), options(o) {}
  void reset() override {}
  Tensor forward(const Tensor& x) { return functional::pixel_shuffle(x, options); }
  void pretty_print(std::ostream& os) const override {
    os << "torch::nn::PixelShuffle(upscale_factor=" << options.upscale_factor_ << ")";
  }
  PixelShuffleOptions options;
};
BRASA_MODULE(PixelShuffle);

class PixelUnshuffleImpl : public Cloneable<PixelUnshuffleImpl> {
 public:
  explicit PixelUnshuffleImpl(const PixelUnshuffleOptions& o)
      : Cloneable("PixelUnshuffle"), options(o) {}
  void reset() override {}
  Tensor forward(const Tensor& x) { return functional::pixel_unshuffle(x, options); }
  void pretty_print(std::ostream& os) const override {
    os << "torch::nn::PixelUnshuffle(downscale_factor=" << options.downscale_factor_ << ")";
  }
  PixelUnshuffleOptions options;
};
BRASA_MODULE(PixelUnshuffle);

// F::interpolate as a module.
class UpsampleImpl : public Cloneable<UpsampleImpl> {
 public:
  explicit UpsampleImpl(const UpsampleOptions& o = {}) : Cloneable("Upsample"), options(o) {}
  void reset() override {}
  Tensor forward(const Tensor& x);
  void pretty_print(std::ostream& os) const override;
  UpsampleOptions options;
};
BRASA_MODULE(Upsample);

}  // namespace brasa::nn
