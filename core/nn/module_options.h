#pragma once
// Option structs of the activation, dropout and normalization modules, as
// libtorch spells them (LeakyReLUOptions().negative_slope(0.2).inplace(true),
// DropoutOptions(0.5), LayerNormOptions({4}).eps(1e-6), ...). The modules take
// these or their plain arguments.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace brasa::nn {

// One option: the field `name_` (initialized with the arguments after the
// name), its setter, which returns the options for chaining, and its getter
// (options.name(), as libtorch's TORCH_ARG gives).
#define BRASA_ARG(T, name, ...)                      \
  auto& name(T v) {                                  \
    name##_ = std::move(v);                          \
    return *this;                                    \
  }                                                  \
  const T& name() const noexcept { return name##_; } \
  T& name() noexcept { return name##_; }             \
  T name##_ { __VA_ARGS__ }

struct ReLUOptions {
  ReLUOptions(bool inplace = false) : inplace_(inplace) {}  // NOLINT: implicit, as libtorch's
  BRASA_ARG(bool, inplace);
};
struct LeakyReLUOptions {
  BRASA_ARG(double, negative_slope, 0.01);
  BRASA_ARG(bool, inplace, false);
};
struct ELUOptions {
  BRASA_ARG(double, alpha, 1.0);
  BRASA_ARG(bool, inplace, false);
};
struct GELUOptions {
  BRASA_ARG(std::string, approximate, "none");
};
struct SoftplusOptions {
  BRASA_ARG(double, beta, 1.0);
  BRASA_ARG(double, threshold, 20.0);
};
struct HardtanhOptions {
  BRASA_ARG(double, min_val, -1.0);
  BRASA_ARG(double, max_val, 1.0);
  BRASA_ARG(bool, inplace, false);
};
struct SoftmaxOptions {
  SoftmaxOptions(int64_t dim) : dim_(dim) {}  // NOLINT
  BRASA_ARG(int64_t, dim);
};
using LogSoftmaxOptions = SoftmaxOptions;
struct DropoutOptions {
  DropoutOptions(double p = 0.5) : p_(p) {}  // NOLINT
  BRASA_ARG(double, p);
  BRASA_ARG(bool, inplace, false);
};
using Dropout2dOptions = DropoutOptions;
struct FlattenOptions {
  BRASA_ARG(int64_t, start_dim, 1);
  BRASA_ARG(int64_t, end_dim, -1);
};
struct LayerNormOptions {
  LayerNormOptions(std::vector<int64_t> normalized_shape)  // NOLINT
      : normalized_shape_(std::move(normalized_shape)) {}
  BRASA_ARG(std::vector<int64_t>, normalized_shape);
  BRASA_ARG(double, eps, 1e-5);
  BRASA_ARG(bool, elementwise_affine, true);
};
struct GroupNormOptions {
  GroupNormOptions(int64_t num_groups, int64_t num_channels)
      : num_groups_(num_groups), num_channels_(num_channels) {}
  BRASA_ARG(int64_t, num_groups);
  BRASA_ARG(int64_t, num_channels);
  BRASA_ARG(double, eps, 1e-5);
  BRASA_ARG(bool, affine, true);
};

struct PReLUOptions {
  BRASA_ARG(int64_t, num_parameters, 1);
  BRASA_ARG(double, init, 0.25);
};
struct BilinearOptions {
  BilinearOptions(int64_t in1_features, int64_t in2_features, int64_t out_features)
      : in1_features_(in1_features), in2_features_(in2_features), out_features_(out_features) {}
  BRASA_ARG(int64_t, in1_features);
  BRASA_ARG(int64_t, in2_features);
  BRASA_ARG(int64_t, out_features);
  BRASA_ARG(bool, bias, true);
};
// The dimname/namedshape form is libtorch's for named tensors, which Brasa
// does not have: an Unflatten made with it is an error that says so.
struct UnflattenOptions {
  using namedshape_t = std::vector<std::pair<std::string, int64_t>>;
  UnflattenOptions(int64_t dim, std::vector<int64_t> sizes) : dim_(dim), sizes_(std::move(sizes)) {}
  UnflattenOptions(std::string dimname, namedshape_t namedshape)
      : dimname_(std::move(dimname)), namedshape_(std::move(namedshape)) {}
  UnflattenOptions(const char* dimname, namedshape_t namedshape)
      : UnflattenOptions(std::string(dimname), std::move(namedshape)) {}
  BRASA_ARG(int64_t, dim, 0);
  BRASA_ARG(std::string, dimname);
  BRASA_ARG(std::vector<int64_t>, sizes);
  BRASA_ARG(namedshape_t, namedshape);
};
struct MultiheadAttentionOptions {
  MultiheadAttentionOptions(int64_t embed_dim, int64_t num_heads)
      : embed_dim_(embed_dim), num_heads_(num_heads), kdim_(embed_dim), vdim_(embed_dim) {}
  BRASA_ARG(int64_t, embed_dim);
  BRASA_ARG(int64_t, num_heads);
  BRASA_ARG(double, dropout, 0.0);
  BRASA_ARG(bool, bias, true);
  // Learned key and value rows appended to every sequence (bias_k, bias_v).
  BRASA_ARG(bool, add_bias_kv, false);
  // A zero key and value appended after the projections.
  BRASA_ARG(bool, add_zero_attn, false);
  // Feature sizes of key and value when they differ from embed_dim (separate
  // q/k/v projection weights then).
  BRASA_ARG(int64_t, kdim);
  BRASA_ARG(int64_t, vdim);
};

}  // namespace brasa::nn
