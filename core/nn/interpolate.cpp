// F::interpolate: nearest, nearest-exact, (bi/tri)linear, bicubic (with or
// without antialias) and area resizing of 1 to 3 spatial dims, with PyTorch's
// sampling positions. Each mode resizes one axis at a time: every output index
// reads K input indices (taps) with weights, run by detail::resample
// (ops/resample.h).
#include <brasa/autograd/record.h>
#include <brasa/nn/functional.h>
#include <brasa/nn/functional_conv.h>
#include <brasa/ops/resample.h>
#include <brasa/util/error.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace brasa::nn::functional {
namespace {

using brasa::detail::ResampleNames;
using brasa::detail::Taps;

const char* mode_name(InterpolateMode m) {
  switch (m) {
    case kNearest:
      return "kNearest";
    case kLinear:
      return "kLinear";
    case kBilinear:
      return "kBilinear";
    case kBicubic:
      return "kBicubic";
    case kTrilinear:
      return "kTrilinear";
    case kArea:
      return "kArea";
    case kNearestExact:
      return "kNearestExact";
  }
  return "?";
}

// PyTorch's scale from output to input positions: 1 / scale_factor when one was
// given (and not recomputed), the size ratio otherwise.
double axis_scale(int64_t in, int64_t out, bool align_corners, std::optional<double> factor) {
  if (align_corners)
    return out > 1 ? static_cast<double>(in - 1) / static_cast<double>(out - 1) : 0;
  return factor && *factor > 0 ? 1.0 / *factor : static_cast<double>(in) / static_cast<double>(out);
}

// Nearest neighbour, in float arithmetic as PyTorch computes it (so that the
// chosen index agrees where o * scale lands next to an integer).
Taps nearest_taps(int64_t in, int64_t out, std::optional<double> factor, bool exact) {
  Taps t;
  t.out = out;
  const float scale = factor && *factor > 0 ? static_cast<float>(1.0 / *factor)
                                            : static_cast<float>(in) / static_cast<float>(out);
  for (int64_t o = 0; o < out; ++o) {
    int64_t i;
    if (exact)  // (o + 0.5) is a double there, the product rounded to float before the floor
      i = static_cast<int64_t>(std::floor(
          static_cast<float>((static_cast<double>(o) + 0.5) * static_cast<double>(scale))));
    else if (out == in)
      i = o;
    else if (out == 2 * in)
      i = o >> 1;
    else
      i = static_cast<int64_t>(std::floor(static_cast<float>(o) * scale));
    t.index.push_back(std::min(i, in - 1));
    t.weight.push_back(1.0);
  }
  return t;
}

Taps linear_taps(int64_t in, int64_t out, bool align_corners, std::optional<double> factor) {
  Taps t;
  t.out = out;
  t.k = 2;
  const double scale = axis_scale(in, out, align_corners, factor);
  for (int64_t o = 0; o < out; ++o) {
    int64_t i0 = o;
    double w1 = 0;
    if (in != out) {
      const double real = align_corners
                              ? scale * static_cast<double>(o)
                              : std::max(scale * (static_cast<double>(o) + 0.5) - 0.5, 0.0);
      i0 = std::min(static_cast<int64_t>(real), in - 1);
      w1 = std::clamp(real - static_cast<double>(i0), 0.0, 1.0);
    }
    t.index.insert(t.index.end(), {i0, std::min(i0 + 1, in - 1)});
    t.weight.insert(t.weight.end(), {1.0 - w1, w1});
  }
  return t;
}

// Keys' cubic convolution kernel with parameter a (PyTorch: -0.75, and -0.5
// for antialiasing).
double cubic_kernel(double x, double a) {
  x = std::abs(x);
  if (x <= 1) return ((a + 2) * x - (a + 3)) * x * x + 1;
  if (x < 2) return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a;
  return 0;
}

Taps cubic_taps(int64_t in, int64_t out, bool align_corners, std::optional<double> factor) {
  Taps t;
  t.out = out;
  t.k = 4;
  const double scale = axis_scale(in, out, align_corners, factor);
  for (int64_t o = 0; o < out; ++o) {
    // Not clamped at 0, unlike the linear modes.
    const double real = align_corners ? scale * static_cast<double>(o)
                                      : scale * (static_cast<double>(o) + 0.5) - 0.5;
    const double first = std::floor(real), frac = real - first;
    for (int64_t j = 0; j < 4; ++j) {
      t.index.push_back(std::clamp(static_cast<int64_t>(first) - 1 + j, int64_t{0}, in - 1));
      t.weight.push_back(cubic_kernel(frac + 1 - static_cast<double>(j), -0.75));
    }
  }
  return t;
}

// Antialiased resampling (PyTorch's _upsample_{bilinear,bicubic}2d_aa): when
// shrinking, the filter is widened by the scale so that every input pixel
// contributes; the weights of each output are normalised to sum to 1.
Taps antialias_taps(int64_t in, int64_t out, bool align_corners, std::optional<double> factor,
                    bool cubic) {
  const double scale = axis_scale(in, out, align_corners, factor);
  const double half_width = cubic ? 2.0 : 1.0;
  const double support = scale >= 1.0 ? half_width * scale : half_width;
  const double inv = scale >= 1.0 ? 1.0 / scale : 1.0;
  const auto filter = [&](double x) {
    return cubic ? cubic_kernel(x, -0.5) : std::max(0.0, 1.0 - std::abs(x));
  };
  std::vector<int64_t> first(out), count(out);
  for (int64_t o = 0; o < out; ++o) {
    const double center = scale * (static_cast<double>(o) + 0.5);
    first[o] = std::max<int64_t>(static_cast<int64_t>(center - support + 0.5), 0);
    count[o] = std::min<int64_t>(static_cast<int64_t>(center + support + 0.5), in) - first[o];
  }
  Taps t;
  t.out = out;
  t.k = std::max<int64_t>(1, *std::max_element(count.begin(), count.end()));
  for (int64_t o = 0; o < out; ++o) {
    const double center = scale * (static_cast<double>(o) + 0.5);
    std::vector<double> w(t.k, 0.0);
    double total = 0;
    for (int64_t j = 0; j < count[o]; ++j) {
      w[j] = filter((static_cast<double>(j + first[o]) - center + 0.5) * inv);
      total += w[j];
    }
    for (int64_t j = 0; j < t.k; ++j) {
      t.index.push_back(j < count[o] ? first[o] + j : std::min(first[o], in - 1));
      t.weight.push_back(j < count[o] && total != 0 ? w[j] / total : 0.0);
    }
  }
  return t;
}

// PyTorch's node names, per mode and rank, for the op and for its backward.
#define BRASA_UPSAMPLE_NAMES(var, stem)                                                        \
  const autograd::BackwardName var##_op(stem "Backward1"), var##_bw(stem "BackwardBackward1"); \
  const ResampleNames var { var##_op, var##_bw }
BRASA_UPSAMPLE_NAMES(kNearest1d, "UpsampleNearest1D");
BRASA_UPSAMPLE_NAMES(kNearest2d, "UpsampleNearest2D");
BRASA_UPSAMPLE_NAMES(kNearest3d, "UpsampleNearest3D");
BRASA_UPSAMPLE_NAMES(kNearestExact1d, "UpsampleNearestExact1D");
BRASA_UPSAMPLE_NAMES(kNearestExact2d, "UpsampleNearestExact2D");
BRASA_UPSAMPLE_NAMES(kNearestExact3d, "UpsampleNearestExact3D");
BRASA_UPSAMPLE_NAMES(kLinear1d, "UpsampleLinear1D");
BRASA_UPSAMPLE_NAMES(kBilinear2d, "UpsampleBilinear2D");
BRASA_UPSAMPLE_NAMES(kBicubic2d, "UpsampleBicubic2D");
BRASA_UPSAMPLE_NAMES(kTrilinear3d, "UpsampleTrilinear3D");
BRASA_UPSAMPLE_NAMES(kBilinear2dAa, "UpsampleBilinear2DAa");
BRASA_UPSAMPLE_NAMES(kBicubic2dAa, "UpsampleBicubic2DAa");
#undef BRASA_UPSAMPLE_NAMES

const ResampleNames& names_of(InterpolateMode mode, int64_t spatial, bool antialias) {
  if (mode == kNearest) return spatial == 1 ? kNearest1d : spatial == 2 ? kNearest2d : kNearest3d;
  if (mode == kNearestExact)
    return spatial == 1 ? kNearestExact1d : spatial == 2 ? kNearestExact2d : kNearestExact3d;
  if (mode == kLinear) return kLinear1d;
  if (mode == kTrilinear) return kTrilinear3d;
  if (mode == kBicubic) return antialias ? kBicubic2dAa : kBicubic2d;
  return antialias ? kBilinear2dAa : kBilinear2d;
}

// Resizes x's trailing spatial dims to `size`, with each axis's scale from
// factors[d] where given (the sizes' ratio otherwise): the taps of `mode`
// run by detail::resample. Arguments already checked.
Tensor resize(const Tensor& x, InterpolateMode mode, const std::vector<int64_t>& size,
              const std::vector<std::optional<double>>& factors, bool align, bool antialias) {
  const int64_t spatial = x.dim() - 2;
  const std::vector<int64_t> in_sizes(x.sizes().begin() + 2, x.sizes().end());
  BRASA_CHECK(mode == kNearest || mode == kNearestExact || x.is_floating_point(),
              "interpolate: mode ", mode_name(mode), " needs a floating-point input, got ",
              x.dtype());
  auto plan = std::make_shared<brasa::detail::ResamplePlan>();
  plan->in_sizes = in_sizes;
  for (int64_t d = 0; d < spatial; ++d) {
    const int64_t in = in_sizes[d], out = size[d];
    if (mode == kNearest || mode == kNearestExact)
      plan->axes.push_back(nearest_taps(in, out, factors[d], mode == kNearestExact));
    else if (mode == kBicubic && !antialias)
      plan->axes.push_back(cubic_taps(in, out, align, factors[d]));
    else if (antialias)
      plan->axes.push_back(antialias_taps(in, out, align, factors[d], mode == kBicubic));
    else
      plan->axes.push_back(linear_taps(in, out, align, factors[d]));
  }
  return brasa::detail::resample(x, plan, names_of(mode, spatial, antialias));
}

}  // namespace

Tensor interpolate(const Tensor& x, const InterpolateFuncOptions& o) {
  const InterpolateMode mode = o.mode_;
  const bool interpolating =
      mode == kLinear || mode == kBilinear || mode == kBicubic || mode == kTrilinear;
  BRASA_CHECK(interpolating || !o.align_corners_.has_value(),
              "interpolate: align_corners option can only be set with the interpolating modes: "
              "linear | bilinear | bicubic | trilinear");
  BRASA_CHECK(x.dim() >= 3 && x.dim() <= 5,
              "interpolate: Input Error: Only 3D, 4D and 5D input Tensors supported (got ", x.dim(),
              "D) for the modes: nearest | linear | bilinear | bicubic | trilinear (got ",
              mode_name(mode), ")");
  BRASA_CHECK(o.size_.has_value() || o.scale_factor_.has_value(),
              "interpolate: either size or scale_factor should be defined");
  BRASA_CHECK(!(o.size_.has_value() && o.scale_factor_.has_value()),
              "interpolate: only one of size or scale_factor should be defined");
  const int64_t spatial = x.dim() - 2;
  const std::vector<int64_t> in_sizes(x.sizes().begin() + 2, x.sizes().end());
  std::vector<int64_t> size;
  std::vector<std::optional<double>> factors(spatial);
  if (o.size_) {
    size = *o.size_;
    BRASA_CHECK(static_cast<int64_t>(size.size()) == spatial,
                "interpolate: Input and output must have the same number of spatial dimensions, "
                "but got input with spatial dimensions of ",
                IntArrayRef(in_sizes), " and output size of ", IntArrayRef(size),
                ". Please provide input tensor in (N, C, d1, d2, ...,dK) format and output size in "
                "(o1, o2, ...,oK) format.");
  } else {
    const auto& f = *o.scale_factor_;
    BRASA_CHECK(static_cast<int64_t>(f.size()) == spatial,
                "interpolate: scale_factor shape must match input shape. Input is ", x.dim(),
                "D, scale_factor size is ", f.size());
    for (int64_t d = 0; d < spatial; ++d) {
      BRASA_CHECK(f[d] > 0, "interpolate: scale_factor must be positive, got ", f[d]);
      size.push_back(static_cast<int64_t>(std::floor(static_cast<double>(in_sizes[d]) * f[d])));
      if (!o.recompute_scale_factor_.value_or(false)) factors[d] = f[d];
    }
  }
  for (int64_t d = 0; d < spatial; ++d)
    BRASA_CHECK(in_sizes[d] > 0 && size[d] > 0,
                "interpolate: Input and output sizes should be greater than 0, but got input ",
                IntArrayRef(in_sizes), " output ", IntArrayRef(size));
  BRASA_CHECK(!o.antialias_ || (x.dim() == 4 && (mode == kBilinear || mode == kBicubic)),
              "interpolate: Anti-alias option is only supported for bilinear and bicubic modes");
  // The interpolating modes each belong to one rank.
  const int64_t needs = mode == kLinear                         ? 3
                        : mode == kBilinear || mode == kBicubic ? 4
                        : mode == kTrilinear                    ? 5
                                                                : x.dim();
  BRASA_CHECK(needs == x.dim(), "interpolate: Got ", x.dim(), "D input, but ",
              mode == kLinear     ? "linear"
              : mode == kBilinear ? "bilinear"
              : mode == kBicubic  ? "bicubic"
                                  : "trilinear",
              " mode needs ", needs, "D input");
  if (mode == kArea) {
    if (spatial == 1) return adaptive_avg_pool1d(x, size);
    if (spatial == 2) return adaptive_avg_pool2d(x, size);
    return adaptive_avg_pool3d(x, size);
  }
  return resize(x, mode, size, factors, o.align_corners_.value_or(false), o.antialias_);
}

Tensor interpolate(const Tensor& x, IntArrayRef size, const std::string& mode, bool align_corners) {
  static const std::vector<std::pair<std::string, InterpolateMode>> modes = {
      {"nearest", kNearest}, {"nearest-exact", kNearestExact},
      {"linear", kLinear},   {"bilinear", kBilinear},
      {"bicubic", kBicubic}, {"trilinear", kTrilinear},
      {"area", kArea}};
  auto it =
      std::find_if(modes.begin(), modes.end(), [&](const auto& m) { return m.first == mode; });
  BRASA_CHECK(it != modes.end(),
              "interpolate: mode must be 'nearest', 'nearest-exact', 'linear', 'bilinear', "
              "'bicubic', 'trilinear' or 'area', got '",
              mode, "'");
  InterpolateFuncOptions o;
  o.size(std::vector<int64_t>(size.begin(), size.end())).mode(it->second);
  const bool interpolating =
      it->second != kNearest && it->second != kNearestExact && it->second != kArea;
  if (interpolating) o.align_corners(align_corners);
  BRASA_CHECK(interpolating || !align_corners,
              "interpolate: align_corners option can only be set with the interpolating modes: "
              "linear | bilinear | bicubic | trilinear");
  return interpolate(x, o);
}

namespace {

// The at::upsample_* spellings: a given output size, and per axis an
// optional scale factor (output over input) that, as in interpolate, sets
// the positions the output samples.
Tensor upsample(const char* op, const Tensor& x, IntArrayRef output_size, InterpolateMode mode,
                bool align_corners, const std::vector<std::optional<double>>& scales) {
  const int64_t spatial = static_cast<int64_t>(scales.size());
  BRASA_CHECK(static_cast<int64_t>(output_size.size()) == spatial, op,
              ": It is expected output_size equals to ", spatial, ", but got size ",
              output_size.size());
  BRASA_CHECK(x.defined() && x.dim() == spatial + 2 && x.numel() > 0, op, ": Non-empty ",
              spatial + 2, "D data tensor expected but got a tensor with sizes ",
              x.defined() ? x.sizes() : IntArrayRef{});
  for (int64_t s : output_size)
    BRASA_CHECK(s > 0, op, ": Input and output sizes should be greater than 0, but got output ",
                output_size);
  BRASA_CHECK(mode == kNearest || x.is_floating_point(), op,
              ": expected a floating-point input, got ", x.dtype());
  return resize(x, mode, std::vector<int64_t>(output_size.begin(), output_size.end()), scales,
                align_corners, false);
}

}  // namespace
}  // namespace brasa::nn::functional

namespace brasa {

using nn::functional::upsample;

Tensor upsample_nearest1d(const Tensor& self, IntArrayRef output_size,
                          std::optional<double> scales) {
  return upsample("upsample_nearest1d", self, output_size, kNearest, false, {scales});
}
Tensor upsample_nearest2d(const Tensor& self, IntArrayRef output_size,
                          std::optional<double> scales_h, std::optional<double> scales_w) {
  return upsample("upsample_nearest2d", self, output_size, kNearest, false, {scales_h, scales_w});
}
Tensor upsample_nearest3d(const Tensor& self, IntArrayRef output_size,
                          std::optional<double> scales_d, std::optional<double> scales_h,
                          std::optional<double> scales_w) {
  return upsample("upsample_nearest3d", self, output_size, kNearest, false,
                  {scales_d, scales_h, scales_w});
}
Tensor upsample_linear1d(const Tensor& self, IntArrayRef output_size, bool align_corners,
                         std::optional<double> scales) {
  return upsample("upsample_linear1d", self, output_size, kLinear, align_corners, {scales});
}
Tensor upsample_bilinear2d(const Tensor& self, IntArrayRef output_size, bool align_corners,
                           std::optional<double> scales_h, std::optional<double> scales_w) {
  return upsample("upsample_bilinear2d", self, output_size, kBilinear, align_corners,
                  {scales_h, scales_w});
}
Tensor upsample_bicubic2d(const Tensor& self, IntArrayRef output_size, bool align_corners,
                          std::optional<double> scales_h, std::optional<double> scales_w) {
  return upsample("upsample_bicubic2d", self, output_size, kBicubic, align_corners,
                  {scales_h, scales_w});
}
Tensor upsample_trilinear3d(const Tensor& self, IntArrayRef output_size, bool align_corners,
                            std::optional<double> scales_d, std::optional<double> scales_h,
                            std::optional<double> scales_w) {
  return upsample("upsample_trilinear3d", self, output_size, kTrilinear, align_corners,
                  {scales_d, scales_h, scales_w});
}

}  // namespace brasa
