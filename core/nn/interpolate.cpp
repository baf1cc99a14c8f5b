// F::interpolate: nearest, nearest-exact, (bi/tri)linear, bicubic (with or
// without antialias) and area resizing of 1 to 3 spatial dims, with PyTorch's
// sampling positions. Each mode resizes one axis at a time: every output index
// reads K input indices (taps) with weights. On the CPU (float, double) one
// recorded op runs every axis through a row kernel, and its backward is the
// same kernel transposed (scatter-adding the taps); elsewhere the axes are
// index_select, a multiply and a sum, which autograd differentiates.
#include <brasa/autograd/record.h>
#include <brasa/nn/functional.h>
#include <brasa/nn/functional_conv.h>
#include <brasa/ops/factory.h>
#include <brasa/ops/indexing.h>
#include <brasa/ops/reduction.h>
#include <brasa/util/error.h>
#include <brasa/util/parallel.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace brasa::nn::functional {
namespace {

// For each output index o: input indices index[o * k + j] with weights weight[o * k + j].
struct Taps {
  int64_t out = 0, k = 1;
  std::vector<int64_t> index;
  std::vector<double> weight;
};

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

// Resamples dim `d` of x through the taps.
Tensor apply_taps(const Tensor& x, int64_t d, const Taps& t) {
  Tensor picked = x.index_select(d, tensor(t.index, TensorOptions().device(x.device())));
  if (t.k == 1 && std::all_of(t.weight.begin(), t.weight.end(), [](double w) { return w == 1; }))
    return picked;
  std::vector<int64_t> split(x.sizes().begin(), x.sizes().end());
  split[d] = t.out;
  split.insert(split.begin() + d + 1, t.k);
  std::vector<int64_t> wshape(split.size(), 1);
  wshape[d] = t.out;
  wshape[d + 1] = t.k;
  Tensor w = tensor(t.weight, TensorOptions().dtype(x.dtype()).device(x.device())).view(wshape);
  return (picked.view(split) * w).sum(d + 1);
}

// ---- the CPU path: one recorded op over all axes ----

// The taps of every spatial axis (dim 2 + i), and the order to run them in.
struct Plan {
  std::vector<Taps> axes;
  std::vector<int64_t> in_sizes;  // of the spatial dims
  std::vector<int64_t> order;
};

// The cheapest order of the passes (at most 3! to try): each pass costs its
// outputs times its taps, and the innermost axis, which gathers element by
// element instead of moving whole rows, counts 4 times as much. So shrinking
// passes go first and the gathering pass runs where the data is smallest.
std::vector<int64_t> pass_order(const std::vector<Taps>& axes, const std::vector<int64_t>& in) {
  const int64_t n = static_cast<int64_t>(axes.size());
  std::vector<int64_t> order(n), best;
  for (int64_t a = 0; a < n; ++a) order[a] = a;
  double best_cost = 0;
  do {
    std::vector<int64_t> sizes = in;
    double cost = 0;
    for (int64_t a : order) {
      sizes[a] = axes[a].out;
      double outputs = 1;
      for (int64_t v : sizes) outputs *= static_cast<double>(v);
      cost += outputs * static_cast<double>(axes[a].k) * (a == n - 1 ? 4.0 : 1.0);
    }
    if (best.empty() || cost < best_cost) best = order, best_cost = cost;
  } while (std::next_permutation(order.begin(), order.end()));
  return best;
}

// y[p, o, :] = sum_j w[o, j] x[p, index[o, j], :] for x viewed as [outer, in, inner]
// (transposed: gx[p, index[o, j], :] += w[o, j] gy[p, o, :]).
template <class T>
void resample_rows(const T* x, T* y, int64_t outer, int64_t in, int64_t inner, const Taps& t,
                   bool transposed) {
  const int64_t out = t.out, k = t.k;
  const std::vector<T> w(t.weight.begin(), t.weight.end());
  const int64_t from = transposed ? out : in, to = transposed ? in : out;
  const int64_t grain = std::max<int64_t>(1, 65536 / std::max<int64_t>(1, to * inner * k));
  parallel_for(0, outer, grain, [&](int64_t b, int64_t e) {
    for (int64_t p = b; p < e; ++p) {
      const T* src = x + p * from * inner;
      T* dst = y + p * to * inner;
      if (transposed) {
        std::fill(dst, dst + to * inner, T(0));
        for (int64_t o = 0; o < out; ++o)
          for (int64_t j = 0; j < k; ++j) {
            const T wj = w[o * k + j];
            if (wj == T(0)) continue;
            T* d = dst + t.index[o * k + j] * inner;
            const T* g = src + o * inner;
            for (int64_t i = 0; i < inner; ++i) d[i] += wj * g[i];
          }
      } else if (k == 1 && inner == 1) {  // nearest: a gather
        for (int64_t o = 0; o < out; ++o) dst[o] = w[o] * src[t.index[o]];
      } else if (inner == 1) {
        for (int64_t o = 0; o < out; ++o) {
          T acc = 0;
          for (int64_t j = 0; j < k; ++j) acc += w[o * k + j] * src[t.index[o * k + j]];
          dst[o] = acc;
        }
      } else {
        for (int64_t o = 0; o < out; ++o) {
          T* d = dst + o * inner;
          const T* s0 = src + t.index[o * k] * inner;
          const T w0 = w[o * k];
          for (int64_t i = 0; i < inner; ++i) d[i] = w0 * s0[i];
          for (int64_t j = 1; j < k; ++j) {
            const T wj = w[o * k + j];
            if (wj == T(0)) continue;
            const T* sj = src + t.index[o * k + j] * inner;
            for (int64_t i = 0; i < inner; ++i) d[i] += wj * sj[i];
          }
        }
      }
    }
  });
}

// Every axis resampled (transposed: from the output sizes back to the input's).
Tensor run_plan(const Tensor& x, const Plan& plan, bool transposed) {
  Tensor y = x.contiguous();
  for (int64_t a : plan.order) {
    const int64_t d = 2 + a;
    const Taps& t = plan.axes[a];
    const int64_t in = plan.in_sizes[a], to = transposed ? in : t.out;
    std::vector<int64_t> sizes(y.sizes().begin(), y.sizes().end());
    int64_t outer = 1, inner = 1;
    for (int64_t i = 0; i < d; ++i) outer *= sizes[i];
    for (int64_t i = d + 1; i < y.dim(); ++i) inner *= sizes[i];
    sizes[d] = to;
    Tensor z = empty(sizes, y.options());
    if (y.dtype() == kDouble)
      resample_rows(y.data_ptr<double>(), z.data_ptr<double>(), outer, in, inner, t, transposed);
    else
      resample_rows(y.data_ptr<float>(), z.data_ptr<float>(), outer, in, inner, t, transposed);
    y = z;
  }
  return y;
}

// PyTorch's node names, per mode and rank, for the op and for its backward.
struct NodeNames {
  const autograd::BackwardName& op;
  const autograd::BackwardName& backward;
};
#define BRASA_UPSAMPLE_NAMES(var, stem)                                                        \
  const autograd::BackwardName var##_op(stem "Backward1"), var##_bw(stem "BackwardBackward1"); \
  const NodeNames var { var##_op, var##_bw }
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

const NodeNames& names_of(InterpolateMode mode, int64_t spatial, bool antialias) {
  if (mode == kNearest) return spatial == 1 ? kNearest1d : spatial == 2 ? kNearest2d : kNearest3d;
  if (mode == kNearestExact)
    return spatial == 1 ? kNearestExact1d : spatial == 2 ? kNearestExact2d : kNearestExact3d;
  if (mode == kLinear) return kLinear1d;
  if (mode == kTrilinear) return kTrilinear3d;
  if (mode == kBicubic) return antialias ? kBicubic2dAa : kBicubic2d;
  return antialias ? kBilinear2dAa : kBilinear2d;
}

Tensor resample(const Tensor& x, const std::shared_ptr<const Plan>& plan, const NodeNames& names);

// The adjoint of resample (its gradient), itself differentiable (by resample).
Tensor resample_transposed(const Tensor& g, const std::shared_ptr<const Plan>& plan,
                           const NodeNames& names) {
  autograd::Recorder r(names.backward, g);
  Tensor gx = run_plan(g, *plan, true);
  if (r)
    r.finish(gx, [plan, &names](autograd::FormulaNode&, const autograd::variable_list& gg) {
      return autograd::variable_list{resample(gg[0], plan, names)};
    });
  return gx;
}

Tensor resample(const Tensor& x, const std::shared_ptr<const Plan>& plan, const NodeNames& names) {
  autograd::Recorder r(names.op, x);
  Tensor y = run_plan(x, *plan, false);
  if (r)
    r.finish(y, [plan, &names](autograd::FormulaNode&, const autograd::variable_list& g) {
      return autograd::variable_list{resample_transposed(g[0], plan, names)};
    });
  return y;
}

std::string dims_of(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
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
                dims_of(in_sizes), " and output size of ", dims_of(size),
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
                dims_of(in_sizes), " output ", dims_of(size));
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
  BRASA_CHECK(mode == kNearest || mode == kNearestExact || x.is_floating_point(),
              "interpolate: mode ", mode_name(mode), " needs a floating-point input, got ",
              x.dtype());
  const bool align = o.align_corners_.value_or(false);
  auto plan = std::make_shared<Plan>();
  plan->in_sizes = in_sizes;
  for (int64_t d = 0; d < spatial; ++d) {
    const int64_t in = in_sizes[d], out = size[d];
    if (mode == kNearest || mode == kNearestExact)
      plan->axes.push_back(nearest_taps(in, out, factors[d], mode == kNearestExact));
    else if (mode == kBicubic && !o.antialias_)
      plan->axes.push_back(cubic_taps(in, out, align, factors[d]));
    else if (o.antialias_)
      plan->axes.push_back(antialias_taps(in, out, align, factors[d], mode == kBicubic));
    else
      plan->axes.push_back(linear_taps(in, out, align, factors[d]));
  }
  plan->order = pass_order(plan->axes, in_sizes);
  if (x.is_cpu() && (x.dtype() == kFloat || x.dtype() == kDouble))
    return resample(x, plan, names_of(mode, spatial, o.antialias_));
  Tensor y = x;  // other devices and dtypes: composed of differentiable ops
  for (int64_t d = 0; d < spatial; ++d) y = apply_taps(y, 2 + d, plan->axes[d]);
  return y;
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

}  // namespace brasa::nn::functional
