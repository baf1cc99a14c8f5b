// nn::functional pooling in 1, 2 and 3 dims (the modules print in
// module_printing.cpp). 1-d pooling runs the 2-d kernels on [..., 1, L]; 3-d max pooling
// runs the device's 3-d kernel, and where it has none (and for the other 3-d
// poolings) is composite (windows as unfold views, reduced), so autograd
// differentiates it.
#include <brasa/nn/pooling_modules.h>
#include <brasa/ops/factory.h>
#include <brasa/autograd/grad_mode.h>
#include <brasa/ops/kernels/pooling.h>
#include <brasa/ops/kernel_table.h>
#include <brasa/ops/random.h>
#include <brasa/ops/resample.h>
#include <brasa/ops/pooling.h>
#include <brasa/ops/shape.h>

#include <algorithm>
#include <limits>

namespace brasa::nn {
namespace functional {
namespace {

void check_pool_input(const char* op, const Tensor& x, int64_t spatial) {
  BRASA_CHECK(x.dim() == spatial + 1 || x.dim() == spatial + 2, op, ": expected a ", spatial + 1,
              "-D or ", spatial + 2, "-D input, got shape ", x.sizes());
}

struct Windows {
  std::vector<int64_t> out;  // windows per spatial dim
  std::vector<int64_t> pad;  // F::pad's list: last dim first, (before, after) each
};

// The output size of each spatial dim and the padding that makes every
// window (the last ceil_mode window included) lie inside the padded input.
Windows plan_windows(const char* op, const Tensor& x, const std::vector<int64_t>& k,
                     const std::vector<int64_t>& s, const std::vector<int64_t>& p,
                     const std::vector<int64_t>& d, bool ceil_mode) {
  const int64_t n = static_cast<int64_t>(k.size());
  Windows w;
  w.out.resize(n);
  for (int64_t i = 0; i < n; ++i) {
    BRASA_CHECK(k[i] > 0 && s[i] > 0 && d[i] > 0 && p[i] >= 0, op,
                ": kernel_size, stride and dilation must be positive and padding non-negative, got "
                "kernel_size=",
                IntArrayRef(k), ", stride=", IntArrayRef(s), ", padding=", IntArrayRef(p),
                ", dilation=", IntArrayRef(d));
    BRASA_CHECK(p[i] <= k[i] / 2, op,
                ": pad should be at most half of kernel size, but got pad=", IntArrayRef(p),
                " and kernel_size=", IntArrayRef(k));
    const int64_t in = x.size(x.dim() - n + i);
    w.out[i] = pool_output_size(in, k[i], s[i], p[i], d[i], ceil_mode);
    BRASA_CHECK(w.out[i] > 0, op, ": output size is too small for input ", x.sizes(),
                " with kernel_size=", IntArrayRef(k));
  }
  for (int64_t i = n - 1; i >= 0; --i) {
    const int64_t in = x.size(x.dim() - n + i);
    const int64_t needed = (w.out[i] - 1) * s[i] + (k[i] - 1) * d[i] + 1;
    w.pad.push_back(p[i]);
    w.pad.push_back(std::max<int64_t>(needed - in - p[i], 0));
  }
  return w;
}

// The windows of the (padded) input over its last n dims, as a view
// [..., out_1, ..., out_n, k_1, ..., k_n].
Tensor window_view(Tensor t, const Windows& w, const std::vector<int64_t>& k,
                   const std::vector<int64_t>& s, const std::vector<int64_t>& d) {
  const int64_t n = static_cast<int64_t>(k.size());
  // Spatial dim i of the input sits at (ndim_in - n + i) throughout: unfold
  // keeps the dims before the appended window dims in place.
  const int64_t first = t.dim() - n;
  for (int64_t i = 0; i < n; ++i) {
    t = t.unfold(first + i, (k[i] - 1) * d[i] + 1, s[i]).narrow(first + i, 0, w.out[i]);
    if (d[i] > 1) t = t.slice(-1, 0, std::nullopt, d[i]);
  }
  return t;
}

std::vector<int64_t> last_dims(int64_t n) {
  std::vector<int64_t> dims;
  for (int64_t i = -n; i < 0; ++i) dims.push_back(i);
  return dims;
}

// The windows of a 3-d pooling as the kernels' geometry.
Pool3dGeometry volume_geometry(const Tensor& x, const Windows& w, const std::vector<int64_t>& k,
                               const std::vector<int64_t>& s, const std::vector<int64_t>& p,
                               const std::vector<int64_t>& d) {
  Pool3dGeometry g{};
  const int64_t D = x.size(-3), H = x.size(-2), W = x.size(-1);
  g.plane = PoolGeometry{D * H * W == 0 ? 0 : x.numel() / (D * H * W),
                         H,
                         W,
                         k[1],
                         k[2],
                         s[1],
                         s[2],
                         p[1],
                         p[2],
                         d[1],
                         d[2],
                         w.out[1],
                         w.out[2]};
  g.D = D, g.kd = k[0], g.sd = s[0], g.pd = p[0], g.dd = d[0], g.OD = w.out[0];
  return g;
}

// Max pooling in n dims: 3-d by the device's kernel when it has one (the
// composite window views below reduced and differentiated through compares
// ran 10x libtorch's time), else the max over window views of the padded
// input.
std::tuple<Tensor, Tensor> max_pool_any(const char* op, const Tensor& x,
                                        const std::vector<int64_t>& k,
                                        const std::vector<int64_t>& s,
                                        const std::vector<int64_t>& p,
                                        const std::vector<int64_t>& d, bool ceil_mode,
                                        bool want_indices);

Tensor max_pool_nd(const char* op, const Tensor& x, const std::vector<int64_t>& k,
                   const std::vector<int64_t>& s, const std::vector<int64_t>& p,
                   const std::vector<int64_t>& d, bool ceil_mode) {
  return std::get<0>(max_pool_any(op, x, k, s, p, d, ceil_mode, false));
}

Tensor max_pool_by_views(const char* op, const Tensor& x, const std::vector<int64_t>& k,
                         const std::vector<int64_t>& s, const std::vector<int64_t>& p,
                         const std::vector<int64_t>& d, bool ceil_mode) {
  const int64_t n = static_cast<int64_t>(k.size());
  Windows w = plan_windows(op, x, k, s, p, d, ceil_mode);
  Tensor padded = pad(x, w.pad, -std::numeric_limits<double>::infinity());
  return window_view(padded, w, k, s, d).amax(last_dims(n));
}

Tensor avg_pool_nd(const char* op, const Tensor& x, const std::vector<int64_t>& k,
                   const std::vector<int64_t>& s, const std::vector<int64_t>& p, bool ceil_mode,
                   bool count_include_pad, std::optional<int64_t> divisor) {
  const int64_t n = static_cast<int64_t>(k.size());
  check_pool_input(op, x, n);
  BRASA_CHECK(x.is_floating_point(), op, ": expected a floating input, got ", x.dtype());
  BRASA_CHECK(!divisor || *divisor != 0, op, ": divisor must be not zero");
  const std::vector<int64_t> d(k.size(), 1);
  Windows w = plan_windows(op, x, k, s, p, d, ceil_mode);
  // Separable: the window averages of each dim in turn (ops/resample.h); a
  // divisor_override divides once, on the first dim.
  auto plan = std::make_shared<brasa::detail::ResamplePlan>();
  for (int64_t i = 0; i < n; ++i) {
    const int64_t in = x.size(x.dim() - n + i);
    const double divide_by = divisor ? (i == 0 ? static_cast<double>(*divisor) : 1.0) : 0.0;
    plan->in_sizes.push_back(in);
    plan->axes.push_back(brasa::detail::window_average_taps(in, w.out[i], k[i], s[i], p[i],
                                                            count_include_pad, divide_by));
  }
  static const autograd::BackwardName op2("AvgPool2DBackward0"),
      back2("AvgPool2DBackwardBackward0"), op3("AvgPool3DBackward0"),
      back3("AvgPool3DBackwardBackward0");
  return brasa::detail::resample(
      x, plan,
      n == 3 ? brasa::detail::ResampleNames{op3, back3} : brasa::detail::ResampleNames{op2, back2});
}

// Adaptive pooling along one dim: window i spans [i*in/out, ceil((i+1)*in/out)).
// Pooling a box is pooling each of its dims in turn (for max and for mean).
Tensor adaptive_pool_dim(const Tensor& x, int64_t dim, int64_t out, bool is_max) {
  const int64_t in = x.size(dim);
  std::vector<Tensor> parts;
  for (int64_t i = 0; i < out; ++i) {
    const int64_t lo = i * in / out, hi = ((i + 1) * in + out - 1) / out;
    Tensor win = x.narrow(dim, lo, hi - lo);
    parts.push_back(is_max ? win.amax({dim}, true) : win.mean({dim}, true));
  }
  return cat(parts, dim);
}

Tensor adaptive_pool(const char* op, const Tensor& x, const std::vector<int64_t>& size,
                     bool is_max) {
  const int64_t n = static_cast<int64_t>(size.size());
  check_pool_input(op, x, n);
  BRASA_CHECK(x.is_floating_point(), op, ": expected a floating input, got ", x.dtype());
  for (int64_t i = 0; i < n; ++i) {
    BRASA_CHECK(size[i] > 0, op, ": output_size must be positive, got ", IntArrayRef(size));
    BRASA_CHECK(x.size(x.dim() - n + i) > 0, op, ": expected non-empty spatial dims, got shape ",
                x.sizes());
  }
  // Global average pooling (every classifier's head): the mean over the
  // spatial dims, as PyTorch computes it; its backward is one broadcast
  // instead of a resampling pass per dim (1.6x libtorch's time before).
  if (!is_max && std::all_of(size.begin(), size.end(), [](int64_t s) { return s == 1; })) {
    DimVector dims;
    for (int64_t d = x.dim() - n; d < x.dim(); ++d) dims.push_back(d);
    return x.mean(dims, true);
  }
  if (!is_max) {  // separable window averages (ops/resample.h)
    auto plan = std::make_shared<brasa::detail::ResamplePlan>();
    for (int64_t i = 0; i < n; ++i) {
      plan->in_sizes.push_back(x.size(x.dim() - n + i));
      plan->axes.push_back(brasa::detail::adaptive_average_taps(plan->in_sizes.back(), size[i]));
    }
    static const autograd::BackwardName op2("AdaptiveAvgPool2DBackward0"),
        back2("AdaptiveAvgPool2DBackwardBackward0"), op3("AdaptiveAvgPool3DBackward0"),
        back3("AdaptiveAvgPool3DBackwardBackward0");
    return brasa::detail::resample(x, plan,
                                   n == 3 ? brasa::detail::ResampleNames{op3, back3}
                                          : brasa::detail::ResampleNames{op2, back2});
  }
  Tensor y = x;
  for (int64_t i = 0; i < n; ++i) y = adaptive_pool_dim(y, x.dim() - n + i, size[i], is_max);
  return y;
}

// Max pooling that also gives, for each output, the position of the chosen
// input element within its channel's flattened spatial dims (the first of
// equal maxima). `cells` are the candidates of each output as a view
// [..., out_1, ..., out_n, K]; `positions` the same view over the input
// positions, without the leading dims. The values are gathered from x at
// those positions, so the gradient goes to the chosen element only, as in
// PyTorch.
std::tuple<Tensor, Tensor> pick_max(const Tensor& x, int64_t n, const Tensor& cells,
                                    const Tensor& positions) {
  Tensor choice = cells.argmax(-1, true);
  Tensor idx = positions.expand(cells.sizes()).gather(-1, choice).squeeze(-1);
  Tensor flat_x = x.flatten(x.dim() - n), flat_idx = idx.flatten(x.dim() - n);
  return {flat_x.gather(-1, flat_idx).view(idx.sizes()), idx};
}

// Each input element's position in its channel's flattened spatial dims, as
// a double tensor of the spatial shape (so that it pads and views like x).
Tensor spatial_positions(const Tensor& x, int64_t n) {
  DimVector spatial(x.sizes().end() - n, x.sizes().end());
  int64_t count = 1;
  for (int64_t s : spatial) count *= s;
  return arange(count, TensorOptions().dtype(kDouble).device(x.device())).view(spatial);
}

std::tuple<Tensor, Tensor> max_pool_nd_with_indices(const char* op, const Tensor& x,
                                                    const std::vector<int64_t>& k,
                                                    const std::vector<int64_t>& s,
                                                    const std::vector<int64_t>& p,
                                                    const std::vector<int64_t>& d, bool ceil_mode) {
  return max_pool_any(op, x, k, s, p, d, ceil_mode, true);
}

std::tuple<Tensor, Tensor> max_pool_by_views_with_indices(
    const char* op, const Tensor& x, const std::vector<int64_t>& k, const std::vector<int64_t>& s,
    const std::vector<int64_t>& p, const std::vector<int64_t>& d, bool ceil_mode) {
  const int64_t n = static_cast<int64_t>(k.size());
  Windows w = plan_windows(op, x, k, s, p, d, ceil_mode);
  const double lowest = -std::numeric_limits<double>::infinity();
  Tensor cells = window_view(pad(x.detach(), w.pad, lowest), w, k, s, d).flatten(-n);
  Tensor positions =
      window_view(pad(spatial_positions(x, n), w.pad, 0.0), w, k, s, d).flatten(-n).to(kLong);
  return pick_max(x, n, cells, positions);
}

std::tuple<Tensor, Tensor> max_pool_any(const char* op, const Tensor& x,
                                        const std::vector<int64_t>& k,
                                        const std::vector<int64_t>& s,
                                        const std::vector<int64_t>& p,
                                        const std::vector<int64_t>& d, bool ceil_mode,
                                        bool want_indices) {
  const int64_t n = static_cast<int64_t>(k.size());
  check_pool_input(op, x, n);
  BRASA_CHECK(x.is_floating_point(), op, ": expected a floating input, got ", x.dtype());
  if (n == 3 && has_kernel<MaxPool3dKernel>(x.device())) {
    Windows w = plan_windows(op, x, k, s, p, d, ceil_mode);
    return brasa::detail::max_pool3d_windows(x, volume_geometry(x, w, k, s, p, d), want_indices);
  }
  if (want_indices) return max_pool_by_views_with_indices(op, x, k, s, p, d, ceil_mode);
  return {max_pool_by_views(op, x, k, s, p, d, ceil_mode), Tensor()};
}

// Adaptive max pooling with positions: along each spatial dim the windows
// are gathered into [out_i, L_i] (L_i the longest window; shorter ones
// repeat their last element, which changes no maximum).
std::tuple<Tensor, Tensor> adaptive_max_pool_with_indices(const char* op, const Tensor& x,
                                                          const std::vector<int64_t>& size) {
  const int64_t n = static_cast<int64_t>(size.size());
  check_pool_input(op, x, n);
  BRASA_CHECK(x.is_floating_point(), op, ": expected a floating input, got ", x.dtype());
  for (int64_t i = 0; i < n; ++i) {
    BRASA_CHECK(size[static_cast<size_t>(i)] > 0, op, ": output_size must be positive, got ",
                IntArrayRef(size));
    BRASA_CHECK(x.size(x.dim() - n + i) > 0, op, ": expected non-empty spatial dims, got shape ",
                x.sizes());
  }
  // 2-d on a device with the kernel: the positions from the kernel, the
  // values gathered at them (so that autograd scatters the gradient back).
  // The composite below gathered every window into a copy first: 3x
  // libtorch's time on [16, 64, 32, 32] -> 7 x 7.
  if (n == 2 && has_kernel<AdaptiveMaxPool2dKernel>(x.device())) {
    const int64_t H = x.size(-2), W = x.size(-1), OH = size[0], OW = size[1];
    DimVector shape(x.sizes().begin(), x.sizes().end() - 2);
    shape.push_back(OH);
    shape.push_back(OW);
    Tensor values = empty(shape, x.options()), idx = empty(shape, x.options().dtype(kLong));
    {
      NoGradGuard no_grad;
      kernel<AdaptiveMaxPool2dKernel>(x.device())(x.detach().contiguous(), values, idx, H, W, OH,
                                                  OW);
    }
    if (!(is_grad_enabled() && x.requires_grad())) return {values, idx};
    return {x.flatten(-2).gather(-1, idx.flatten(-2)).view(shape), idx};
  }
  Tensor cells = x.detach(), positions = spatial_positions(x, n);
  for (int64_t i = 0; i < n; ++i) {
    const int64_t dim = x.dim() - n + i, in = x.size(dim), out = size[i];
    BRASA_CHECK(out > 0, op, ": output_size must be positive, got ", IntArrayRef(size));
    BRASA_CHECK(in > 0, op, ": expected non-empty spatial dims, got shape ", x.sizes());
    int64_t longest = 0;
    for (int64_t j = 0; j < out; ++j)
      longest = std::max(longest, ((j + 1) * in + out - 1) / out - j * in / out);
    std::vector<int64_t> picks;
    for (int64_t j = 0; j < out; ++j) {
      const int64_t lo = j * in / out, hi = ((j + 1) * in + out - 1) / out;
      for (int64_t t = 0; t < longest; ++t) picks.push_back(std::min(lo + t, hi - 1));
    }
    Tensor pick = tensor(picks, TensorOptions().dtype(kLong).device(x.device()));
    // [..., out * L, ...] -> [..., out, L, ...] with L moved to the end.
    auto split = [&](const Tensor& t, int64_t at) {
      std::vector<int64_t> shape = t.sizes().vec();
      shape[at] = out;
      shape.insert(shape.begin() + at + 1, longest);
      return t.index_select(at, pick).view(shape).movedim(at + 1, -1);
    };
    cells = split(cells, dim);
    positions = split(positions, i);
  }
  // The window dims, one per spatial dim, are now last: flatten them.
  cells = cells.flatten(-n);
  positions = positions.flatten(-n).to(kLong);
  return pick_max(x, n, cells, positions);
}

// The window offsets along one dim of one plane for the uniform sample u
// (Graham's fractional max pooling): increasing, the last at in - k.
std::vector<int64_t> fractional_offsets(double u, int64_t in, int64_t out, int64_t k) {
  std::vector<int64_t> offsets(out);
  if (out > 1) {
    const double alpha = static_cast<double>(in - k) / static_cast<double>(out - 1);
    for (int64_t i = 0; i < out - 1; ++i)
      offsets[i] = static_cast<int64_t>((i + u) * alpha) - static_cast<int64_t>(u * alpha);
  }
  offsets[out - 1] = in - k;
  return offsets;
}

template <size_t D>
std::tuple<Tensor, Tensor> fractional_max_pool(const char* op, const Tensor& input,
                                               const FractionalMaxPoolFuncOptions<D>& o) {
  const int64_t n = static_cast<int64_t>(D);
  check_pool_input(op, input, n);
  BRASA_CHECK(input.is_floating_point(), op, ": expected a floating input, got ", input.dtype());
  BRASA_CHECK(o.output_size_ || o.output_ratio_, op,
              ": requires specifying either an output size, or a pooling ratio");
  BRASA_CHECK(!(o.output_size_ && o.output_ratio_), op,
              ": only one of output_size and output_ratio may be specified");
  BRASA_CHECK(o.kernel_size_.size() == D, op, ": kernel_size must have ", n, " values");
  const bool batched = input.dim() == n + 2;
  Tensor x = batched ? input : input.unsqueeze(0);
  const int64_t planes = x.size(0) * x.size(1);
  std::vector<int64_t> in(D), out(D), k(o.kernel_size_);
  for (int64_t d = 0; d < n; ++d) {
    in[d] = x.size(2 + d);
    if (o.output_ratio_) {
      const double r = (*o.output_ratio_)[d];
      BRASA_CHECK(r > 0 && r < 1, op, ": output_ratio must be between 0 and 1 (got ", r, ")");
      out[d] = static_cast<int64_t>(static_cast<double>(in[d]) * r);
    } else {
      out[d] = (*o.output_size_)[d];
    }
  }
  for (int64_t d = 0; d < n; ++d)  // after all of `out` is known, for the message
    BRASA_CHECK(k[d] > 0 && out[d] > 0 && out[d] + k[d] - 1 <= in[d], op, ": output_size ",
                IntArrayRef(out), " + kernel_size ", IntArrayRef(k), " - 1 must fit the input ",
                x.sizes(), " in every pooled dim");
  Tensor samples = o._random_samples_;
  if (!samples.defined())
    samples = rand({x.size(0), x.size(1), n}, TensorOptions().dtype(x.scalar_type()));
  BRASA_CHECK(samples.dim() == 3 && samples.size(0) == x.size(0) && samples.size(1) == x.size(1) &&
                  samples.size(2) == n,
              op, ": _random_samples must have shape [", x.size(0), ", ", x.size(1), ", ", n,
              "], got ", samples.sizes());
  Tensor u = samples.detach().to(kCPU).to(kDouble).contiguous().view({planes, n});
  // Per plane, the input positions of every window cell: [planes, out..., k...].
  std::vector<int64_t> layout{planes};
  layout.insert(layout.end(), out.begin(), out.end());
  layout.insert(layout.end(), k.begin(), k.end());
  Tensor linear = zeros(layout, TensorOptions().dtype(kLong));
  for (int64_t d = 0; d < n; ++d) {
    // PyTorch's order of the sample coordinates: (width, height) in 2-d,
    // (time, height, width) in 3-d.
    const int64_t coordinate = n == 2 ? n - 1 - d : d;
    std::vector<int64_t> at;
    for (int64_t p = 0; p < planes; ++p) {
      const double sample = u.data_ptr<double>()[p * n + coordinate];
      for (int64_t start : fractional_offsets(sample, in[d], out[d], k[d]))
        for (int64_t j = 0; j < k[d]; ++j) at.push_back(start + j);
    }
    std::vector<int64_t> shape(layout.size(), 1);
    shape[0] = planes;
    shape[1 + d] = out[d];
    shape[1 + n + d] = k[d];
    linear = linear * in[d] + tensor(at, TensorOptions().dtype(kLong)).view(shape);
  }
  linear = linear.to(x.device());
  std::vector<int64_t> outer{x.size(0), x.size(1)};
  outer.insert(outer.end(), out.begin(), out.end());
  outer.push_back(-1);
  Tensor positions = linear.reshape(outer);
  Tensor flat = x.detach().flatten(2);
  Tensor cells = flat.gather(2, positions.flatten(2)).view(positions.sizes());
  auto [values, indices] = pick_max(x, n, cells, positions);
  if (batched) return {values, indices};
  return {values.squeeze(0), indices.squeeze(0)};
}

// [N, C, L] as [N, C, 1, L] for the 2-d kernels.
void check_1d_pool(const char* op, const Tensor& x) { check_pool_input(op, x, 1); }

}  // namespace

Tensor max_pool1d(const Tensor& x, const MaxPool1dFuncOptions& o) {
  return std::get<0>(max_pool1d_with_indices(x, o));
}
std::tuple<Tensor, Tensor> max_pool1d_with_indices(const Tensor& x, const MaxPool1dFuncOptions& o) {
  check_1d_pool("max_pool1d", x);
  auto [y, idx] =
      brasa::max_pool2d_with_indices(x.unsqueeze(-2), {1, o.kernel_size_[0]}, {1, o.stride_[0]},
                                     {0, o.padding_[0]}, {1, o.dilation_[0]}, o.ceil_mode_);
  return {y.squeeze(-2), idx.squeeze(-2)};
}
Tensor avg_pool1d(const Tensor& x, const AvgPool1dFuncOptions& o) {
  check_1d_pool("avg_pool1d", x);
  if (o.divisor_override_)
    return avg_pool_nd("avg_pool1d", x, o.kernel_size_, o.stride_, o.padding_, o.ceil_mode_,
                       o.count_include_pad_, o.divisor_override_);
  return brasa::avg_pool2d(x.unsqueeze(-2), {1, o.kernel_size_[0]}, {1, o.stride_[0]},
                           {0, o.padding_[0]}, o.ceil_mode_, o.count_include_pad_)
      .squeeze(-2);
}
Tensor avg_pool2d(const Tensor& x, const AvgPool2dFuncOptions& o) {
  if (o.divisor_override_)
    return avg_pool_nd("avg_pool2d", x, o.kernel_size_, o.stride_, o.padding_, o.ceil_mode_,
                       o.count_include_pad_, o.divisor_override_);
  return brasa::avg_pool2d(x, o.kernel_size_, o.stride_, o.padding_, o.ceil_mode_,
                           o.count_include_pad_);
}
Tensor max_pool3d(const Tensor& x, const MaxPool3dFuncOptions& o) {
  return max_pool_nd("max_pool3d", x, o.kernel_size_, o.stride_, o.padding_, o.dilation_,
                     o.ceil_mode_);
}
Tensor avg_pool3d(const Tensor& x, const AvgPool3dFuncOptions& o) {
  return avg_pool_nd("avg_pool3d", x, o.kernel_size_, o.stride_, o.padding_, o.ceil_mode_,
                     o.count_include_pad_, o.divisor_override_);
}

Tensor adaptive_avg_pool1d(const Tensor& x, const AdaptiveAvgPool1dFuncOptions& o) {
  return adaptive_pool("adaptive_avg_pool1d", x, o.output_size_, false);
}
Tensor adaptive_avg_pool2d(const Tensor& x, const AdaptiveAvgPool2dFuncOptions& o) {
  return adaptive_pool("adaptive_avg_pool2d", x, o.output_size_, false);
}
Tensor adaptive_avg_pool3d(const Tensor& x, const AdaptiveAvgPool3dFuncOptions& o) {
  return adaptive_pool("adaptive_avg_pool3d", x, o.output_size_, false);
}
std::tuple<Tensor, Tensor> max_pool3d_with_indices(const Tensor& x, const MaxPool3dFuncOptions& o) {
  return max_pool_nd_with_indices("max_pool3d_with_indices", x, o.kernel_size_, o.stride_,
                                  o.padding_, o.dilation_, o.ceil_mode_);
}
std::tuple<Tensor, Tensor> adaptive_max_pool1d_with_indices(const Tensor& x,
                                                            const AdaptiveMaxPool1dFuncOptions& o) {
  return adaptive_max_pool_with_indices("adaptive_max_pool1d_with_indices", x, o.output_size_);
}
std::tuple<Tensor, Tensor> adaptive_max_pool2d_with_indices(const Tensor& x,
                                                            const AdaptiveMaxPool2dFuncOptions& o) {
  return adaptive_max_pool_with_indices("adaptive_max_pool2d_with_indices", x, o.output_size_);
}
std::tuple<Tensor, Tensor> adaptive_max_pool3d_with_indices(const Tensor& x,
                                                            const AdaptiveMaxPool3dFuncOptions& o) {
  return adaptive_max_pool_with_indices("adaptive_max_pool3d_with_indices", x, o.output_size_);
}
std::tuple<Tensor, Tensor> fractional_max_pool2d_with_indices(
    const Tensor& x, const FractionalMaxPool2dFuncOptions& o) {
  return fractional_max_pool("fractional_max_pool2d", x, o);
}
std::tuple<Tensor, Tensor> fractional_max_pool3d_with_indices(
    const Tensor& x, const FractionalMaxPool3dFuncOptions& o) {
  return fractional_max_pool("fractional_max_pool3d", x, o);
}
Tensor fractional_max_pool2d(const Tensor& x, const FractionalMaxPool2dFuncOptions& o) {
  return std::get<0>(fractional_max_pool2d_with_indices(x, o));
}
Tensor fractional_max_pool3d(const Tensor& x, const FractionalMaxPool3dFuncOptions& o) {
  return std::get<0>(fractional_max_pool3d_with_indices(x, o));
}
Tensor adaptive_max_pool1d(const Tensor& x, const AdaptiveMaxPool1dFuncOptions& o) {
  return adaptive_pool("adaptive_max_pool1d", x, o.output_size_, true);
}
Tensor adaptive_max_pool2d(const Tensor& x, const AdaptiveMaxPool2dFuncOptions& o) {
  // The positions' path, which has a kernel in 2-d.
  return std::get<0>(adaptive_max_pool_with_indices("adaptive_max_pool2d", x, o.output_size_));
}
Tensor adaptive_max_pool3d(const Tensor& x, const AdaptiveMaxPool3dFuncOptions& o) {
  return adaptive_pool("adaptive_max_pool3d", x, o.output_size_, true);
}

}  // namespace functional

}  // namespace brasa::nn
