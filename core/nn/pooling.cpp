// nn::functional pooling in 1, 2 and 3 dims (the modules print in
// module_printing.cpp). 1-d pooling runs the 2-d kernels on [..., 1, L]; 3-d pooling is
// composite (windows as unfold views, reduced), so autograd differentiates it.
#include <brasa/nn/pooling_modules.h>
#include <brasa/ops/factory.h>
#include <brasa/ops/pooling.h>
#include <brasa/ops/shape.h>

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

Tensor max_pool_nd(const char* op, const Tensor& x, const std::vector<int64_t>& k,
                   const std::vector<int64_t>& s, const std::vector<int64_t>& p,
                   const std::vector<int64_t>& d, bool ceil_mode) {
  const int64_t n = static_cast<int64_t>(k.size());
  check_pool_input(op, x, n);
  BRASA_CHECK(x.is_floating_point(), op, ": expected a floating input, got ", x.dtype());
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
  Tensor sums = window_view(pad(x, IntArrayRef(w.pad), 0.0), w, k, s, d).sum(last_dims(n));
  if (divisor) return sums / static_cast<double>(*divisor);
  // Cells counted: the input's, plus the padding's with count_include_pad,
  // never the ceil_mode overhang beyond the padding.
  Tensor cells = ones(DimVector(x.sizes().end() - n, x.sizes().end()), x.options());
  if (count_include_pad) {
    std::vector<int64_t> symmetric;
    for (int64_t i = n - 1; i >= 0; --i) symmetric.insert(symmetric.end(), {p[i], p[i]});
    cells = pad(cells, symmetric, 1.0);
    std::vector<int64_t> rest;
    for (size_t i = 0; i < w.pad.size(); i += 2)
      rest.insert(rest.end(), {0, std::max<int64_t>(w.pad[i + 1] - w.pad[i], 0)});
    cells = pad(cells, IntArrayRef(rest), 0.0);
  } else {
    cells = pad(cells, IntArrayRef(w.pad), 0.0);
  }
  Tensor counts = window_view(cells, w, k, s, d).sum(last_dims(n));
  return sums / counts;
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
  Tensor y = x;
  for (int64_t i = 0; i < n; ++i) y = adaptive_pool_dim(y, x.dim() - n + i, size[i], is_max);
  return y;
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
Tensor adaptive_max_pool1d(const Tensor& x, const AdaptiveMaxPool1dFuncOptions& o) {
  return adaptive_pool("adaptive_max_pool1d", x, o.output_size_, true);
}
Tensor adaptive_max_pool2d(const Tensor& x, const AdaptiveMaxPool2dFuncOptions& o) {
  return adaptive_pool("adaptive_max_pool2d", x, o.output_size_, true);
}
Tensor adaptive_max_pool3d(const Tensor& x, const AdaptiveMaxPool3dFuncOptions& o) {
  return adaptive_pool("adaptive_max_pool3d", x, o.output_size_, true);
}

}  // namespace functional

}  // namespace brasa::nn
