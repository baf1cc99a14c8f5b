#pragma once
// Option structs of the activation, dropout and normalization modules, as
// libtorch spells them (LeakyReLUOptions().negative_slope(0.2).inplace(true),
// DropoutOptions(0.5), LayerNormOptions({4}).eps(1e-6), ...). The modules take
// these or their plain arguments.
#include <cstdint>
#include <string>
#include <vector>

namespace brasa::nn {

// A setter of `type name_` returning the options (for chaining).
#define BRASA_OPTION(Options, type, name) \
  Options& name(type v) {                 \
    name##_ = std::move(v);               \
    return *this;                         \
  }

struct ReLUOptions {
  ReLUOptions(bool inplace = false) : inplace_(inplace) {}  // NOLINT: implicit, as libtorch's
  BRASA_OPTION(ReLUOptions, bool, inplace)
  bool inplace_;
};
struct LeakyReLUOptions {
  BRASA_OPTION(LeakyReLUOptions, double, negative_slope)
  BRASA_OPTION(LeakyReLUOptions, bool, inplace)
  double negative_slope_ = 0.01;
  bool inplace_ = false;
};
struct ELUOptions {
  BRASA_OPTION(ELUOptions, double, alpha)
  BRASA_OPTION(ELUOptions, bool, inplace)
  double alpha_ = 1.0;
  bool inplace_ = false;
};
struct GELUOptions {
  BRASA_OPTION(GELUOptions, std::string, approximate)
  std::string approximate_ = "none";
};
struct SoftplusOptions {
  BRASA_OPTION(SoftplusOptions, double, beta)
  BRASA_OPTION(SoftplusOptions, double, threshold)
  double beta_ = 1.0, threshold_ = 20.0;
};
struct HardtanhOptions {
  BRASA_OPTION(HardtanhOptions, double, min_val)
  BRASA_OPTION(HardtanhOptions, double, max_val)
  BRASA_OPTION(HardtanhOptions, bool, inplace)
  double min_val_ = -1.0, max_val_ = 1.0;
  bool inplace_ = false;
};
struct SoftmaxOptions {
  SoftmaxOptions(int64_t dim) : dim_(dim) {}  // NOLINT
  BRASA_OPTION(SoftmaxOptions, int64_t, dim)
  int64_t dim_;
};
using LogSoftmaxOptions = SoftmaxOptions;
struct DropoutOptions {
  DropoutOptions(double p = 0.5) : p_(p) {}  // NOLINT
  BRASA_OPTION(DropoutOptions, double, p)
  BRASA_OPTION(DropoutOptions, bool, inplace)
  double p_;
  bool inplace_ = false;
};
using Dropout2dOptions = DropoutOptions;
struct FlattenOptions {
  BRASA_OPTION(FlattenOptions, int64_t, start_dim)
  BRASA_OPTION(FlattenOptions, int64_t, end_dim)
  int64_t start_dim_ = 1, end_dim_ = -1;
};
struct LayerNormOptions {
  LayerNormOptions(std::vector<int64_t> normalized_shape)  // NOLINT
      : normalized_shape_(std::move(normalized_shape)) {}
  BRASA_OPTION(LayerNormOptions, std::vector<int64_t>, normalized_shape)
  BRASA_OPTION(LayerNormOptions, double, eps)
  BRASA_OPTION(LayerNormOptions, bool, elementwise_affine)
  std::vector<int64_t> normalized_shape_;
  double eps_ = 1e-5;
  bool elementwise_affine_ = true;
};
struct GroupNormOptions {
  GroupNormOptions(int64_t num_groups, int64_t num_channels)
      : num_groups_(num_groups), num_channels_(num_channels) {}
  BRASA_OPTION(GroupNormOptions, double, eps)
  BRASA_OPTION(GroupNormOptions, bool, affine)
  int64_t num_groups_, num_channels_;
  double eps_ = 1e-5;
  bool affine_ = true;
};

#undef BRASA_OPTION

}  // namespace brasa::nn
