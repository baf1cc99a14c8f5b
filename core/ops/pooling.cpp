#include <brasa/autograd/grad_mode.h>
#include <brasa/autograd/record.h>
#include <brasa/ops/factory.h>
#include <brasa/ops/indexing.h>
#include <brasa/ops/kernel_table.h>
#include <brasa/ops/kernels/indexing.h>
#include <brasa/ops/kernels/pooling.h>
#include <brasa/ops/pooling.h>
#include <brasa/ops/resample.h>
#include <brasa/ops/shape.h>

#include <limits>

namespace brasa {

int64_t pool_output_size(int64_t in, int64_t k, int64_t s, int64_t p, int64_t d, bool ceil_mode) {
  int64_t span = in + 2 * p - d * (k - 1) - 1;
  if (span < 0) return 0;  // the window is larger than the padded input
  int64_t out = (ceil_mode ? (span + s - 1) / s : span / s) + 1;
  // The last window must start inside the input or the left padding.
  if (ceil_mode && (out - 1) * s >= in + p) --out;
  return out;
}

namespace {

int64_t at(IntArrayRef v, size_t i, int64_t fallback) {
  return v.empty() ? fallback : (v.size() == 1 ? v[0] : v[i]);
}

PoolGeometry pool_geometry(const char* op, const Tensor& x, IntArrayRef kernel, IntArrayRef stride,
                           IntArrayRef padding, IntArrayRef dilation, bool ceil_mode) {
  BRASA_CHECK(x.dim() == 3 || x.dim() == 4, op, ": expected a 3-D or 4-D input, got shape ",
              x.sizes());
  BRASA_CHECK(kernel.size() == 1 || kernel.size() == 2, op,
              ": kernel_size must have 1 or 2 values, got ", kernel);
  PoolGeometry g{};
  g.H = x.size(-2);
  g.W = x.size(-1);
  g.planes = x.numel() / std::max<int64_t>(g.H * g.W, 1);
  g.kh = at(kernel, 0, 1), g.kw = at(kernel, 1, 1);
  g.sh = at(stride, 0, g.kh), g.sw = at(stride, 1, g.kw);
  g.ph = at(padding, 0, 0), g.pw = at(padding, 1, 0);
  g.dh = at(dilation, 0, 1), g.dw = at(dilation, 1, 1);
  BRASA_CHECK(g.kh > 0 && g.kw > 0 && g.sh > 0 && g.sw > 0 && g.dh > 0 && g.dw > 0, op,
              ": kernel, stride and dilation must be positive");
  BRASA_CHECK(g.ph <= g.kh / 2 && g.pw <= g.kw / 2, op,
              ": pad should be at most half of kernel size, but got pad=", padding,
              " and kernel_size=", kernel);
  g.OH = pool_output_size(g.H, g.kh, g.sh, g.ph, g.dh, ceil_mode);
  g.OW = pool_output_size(g.W, g.kw, g.sw, g.pw, g.dw, ceil_mode);
  BRASA_CHECK(g.OH > 0 && g.OW > 0, op, ": output size is too small for input ", x.sizes());
  return g;
}

DimVector out_shape(const Tensor& x, const PoolGeometry& g) {
  DimVector s(x.sizes().begin(), x.sizes().end());
  s[s.size() - 2] = g.OH;
  s[s.size() - 1] = g.OW;
  return s;
}

const autograd::BackwardName kMaxPoolBackward("MaxPool2DWithIndicesBackward0");

// Scatters pooled gradients back to the positions in `idx` (per plane),
// which the max-pool kernel made, so in range.
Tensor unpool_grad(const Tensor& g, const Tensor& idx, IntArrayRef in_shape, int64_t planes,
                   int64_t HW) {
  if (planes == 0) return zeros(in_shape, g.options());  // an empty batch
  IndicesInRangeGuard made_by_the_kernel;
  Tensor z = zeros({planes, HW}, g.options());
  if (!(is_grad_enabled() && g.requires_grad()) &&
      has_kernel<MaxPool2dBackwardKernel>(g.device())) {
    // No graph to record (the usual backward): add into the zeros in place,
    // planes in parallel, rather than scatter into a copy of them.
    brasa::kernel<MaxPool2dBackwardKernel>(g.device())(z, g.reshape({planes, -1}).contiguous(),
                                                       idx.reshape({planes, -1}).contiguous());
    return z.view(in_shape);
  }
  return z.scatter_add(1, idx.reshape({planes, -1}), g.reshape({planes, -1})).view(in_shape);
}

// The node of a max pooling: its gradient goes to the saved argmaxes.
void finish_unpool(autograd::Recorder& r, const Tensor& input, const Tensor& out, const Tensor& idx,
                   int64_t planes, int64_t in_plane) {
  DimVector in(input.sizes().begin(), input.sizes().end());
  r.save(idx).finish(
      std::vector<Tensor>{out, idx},
      [in, planes, in_plane](autograd::FormulaNode& n, const autograd::variable_list& gr) {
        return autograd::variable_list{unpool_grad(gr[0], n.saved(0), in, planes, in_plane)};
      });
}

std::tuple<Tensor, Tensor> max_pool(const Tensor& input, IntArrayRef kernel, IntArrayRef stride,
                                    IntArrayRef padding, IntArrayRef dilation, bool ceil_mode,
                                    bool want_indices) {
  PoolGeometry g = pool_geometry("max_pool2d", input, kernel, stride, padding, dilation, ceil_mode);
  BRASA_CHECK(input.is_floating_point(), "max_pool2d: expected a floating input, got ",
              input.dtype());
  autograd::Recorder r(kMaxPoolBackward, input);
  want_indices = want_indices || static_cast<bool>(r);
  Tensor x = input.contiguous();
  DimVector shape = out_shape(input, g);
  Tensor out = empty(shape, input.options());
  Tensor idx = want_indices ? empty(shape, input.options().dtype(kLong)) : Tensor();
  if (out.numel()) brasa::kernel<MaxPool2dKernel>(x.device())(x, out, idx, g);
  if (r) finish_unpool(r, input, out, idx, g.planes, g.H * g.W);
  return {out, idx};
}

}  // namespace

std::tuple<Tensor, Tensor> max_pool2d_with_indices(const Tensor& input, IntArrayRef kernel,
                                                   IntArrayRef stride, IntArrayRef padding,
                                                   IntArrayRef dilation, bool ceil_mode) {
  return max_pool(input, kernel, stride, padding, dilation, ceil_mode, true);
}

// Without a gradient to compute, the argmax indices are not produced at all.
Tensor max_pool2d(const Tensor& input, IntArrayRef kernel, IntArrayRef stride, IntArrayRef padding,
                  IntArrayRef dilation, bool ceil_mode) {
  return std::get<0>(max_pool(input, kernel, stride, padding, dilation, ceil_mode, false));
}

namespace detail {

std::tuple<Tensor, Tensor> max_pool3d_windows(const Tensor& input, const Pool3dGeometry& g,
                                              bool want_indices) {
  static const autograd::BackwardName name("MaxPool3DWithIndicesBackward0");
  autograd::Recorder r(name, input);
  want_indices = want_indices || static_cast<bool>(r);
  Tensor x = input.contiguous();
  DimVector shape(input.sizes().begin(), input.sizes().end());
  shape[shape.size() - 3] = g.OD;
  shape[shape.size() - 2] = g.plane.OH;
  shape[shape.size() - 1] = g.plane.OW;
  Tensor out = empty(shape, input.options());
  Tensor idx = want_indices ? empty(shape, input.options().dtype(kLong)) : Tensor();
  if (out.numel()) brasa::kernel<MaxPool3dKernel>(x.device())(x, out, idx, g);
  if (r) finish_unpool(r, input, out, idx, g.plane.planes, g.D * g.plane.H * g.plane.W);
  return {out, idx};
}

}  // namespace detail

Tensor avg_pool2d(const Tensor& input, IntArrayRef kernel, IntArrayRef stride, IntArrayRef padding,
                  bool ceil_mode, bool count_include_pad) {
  PoolGeometry g = pool_geometry("avg_pool2d", input, kernel, stride, padding, {1}, ceil_mode);
  BRASA_CHECK(input.is_floating_point(), "avg_pool2d: expected a floating input, got ",
              input.dtype());
  // Separable: the window averages of each dim in turn (ops/resample.h).
  static const autograd::BackwardName op("AvgPool2DBackward0"),
      backward("AvgPool2DBackwardBackward0");
  auto plan = std::make_shared<detail::ResamplePlan>();
  plan->in_sizes = {g.H, g.W};
  plan->axes = {detail::window_average_taps(g.H, g.OH, g.kh, g.sh, g.ph, count_include_pad),
                detail::window_average_taps(g.W, g.OW, g.kw, g.sw, g.pw, count_include_pad)};
  return detail::resample(input, plan, {op, backward});
}

}  // namespace brasa
