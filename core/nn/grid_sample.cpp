#include <brasa/autograd/engine.h>
#include <brasa/autograd/grad_mode.h>
#include <brasa/autograd/record.h>
#include <brasa/nn/grid_sample.h>
#include <brasa/ops/binary.h>
#include <brasa/ops/factory.h>
#include <brasa/ops/kernel_table.h>
#include <brasa/ops/kernels/sampling.h>
#include <brasa/ops/linalg.h>
#include <brasa/ops/shape.h>

#include <cmath>
#include <limits>
#include <vector>

namespace brasa {

namespace {

enum class Interp { Bilinear, Nearest, Bicubic };

// The source position along a dim of `size` elements of normalized g in [-1, 1].
Tensor unnormalize(const Tensor& g, int64_t size, bool align_corners) {
  if (align_corners) return (g + 1) * ((size - 1) / 2.0);
  return ((g + 1) * static_cast<double>(size) - 1) / 2.0;
}

// x reflected into [low, high] (given doubled, so that half-integer bounds
// stay exact) as often as needed.
Tensor reflect(const Tensor& x, int64_t twice_low, int64_t twice_high) {
  if (twice_low == twice_high) return zeros_like(x);
  const double low = twice_low / 2.0, span = (twice_high - twice_low) / 2.0;
  Tensor distance = (x - low).abs();
  Tensor flips = (distance / span).floor();
  Tensor extra = distance - flips * span;
  return where(fmod(flips, 2.0) == 0, extra + low, (span + low) - extra);
}

// A coordinate brought inside [0, size - 1] by the padding mode (kZeros leaves it).
Tensor padded_coordinate(const Tensor& x, int64_t size, PaddingMode mode, bool align_corners) {
  if (mode == PaddingMode::Border) return x.clamp(0.0, static_cast<double>(size - 1));
  if (mode == PaddingMode::Reflection) {
    Tensor r = align_corners ? reflect(x, 0, 2 * (size - 1)) : reflect(x, -1, 2 * size - 1);
    return r.clamp(0.0, static_cast<double>(size - 1));
  }
  return x;
}

// Samples of input [N, C, S...] (flattened to [N, C, prod S]) at integer
// positions (one [N, P] tensor per spatial dim, outermost first), times
// weight [N, P]; positions outside the input contribute 0.
Tensor gather_taps(const Tensor& flat, const std::vector<int64_t>& sizes,
                   const std::vector<Tensor>& at, const Tensor& weight) {
  Tensor inside = ones_like(weight, TensorOptions().dtype(kBool));
  Tensor linear = zeros_like(weight, TensorOptions().dtype(kLong));
  for (size_t d = 0; d < sizes.size(); ++d) {
    inside = inside.logical_and(at[d] >= 0).logical_and(at[d] < sizes[d]);
    linear = linear * sizes[d] + at[d].clamp(0, sizes[d] - 1);
  }
  const int64_t n = flat.size(0), c = flat.size(1), p = weight.size(1);
  Tensor values = flat.gather(2, linear.unsqueeze(1).expand({n, c, p}));
  return values * (weight * inside.to(weight.scalar_type())).unsqueeze(1);
}

// Keys' cubic convolution weights (A = -0.75) of the four taps around t in [0, 1).
std::vector<Tensor> cubic_weights(const Tensor& t) {
  const double a = -0.75;
  auto near = [a](const Tensor& x) { return ((x * (a + 2) - (a + 3)) * x * x) + 1; };
  auto far = [a](const Tensor& x) { return ((x * a - 5 * a) * x + 8 * a) * x - 4 * a; };
  return {far(t + 1), near(t), near(1 - t), far(2 - t)};
}

void check_sample_arguments(const Tensor& input, const Tensor& grid, Interp mode,
                            PaddingMode padding) {
  const char* op = "grid_sampler()";
  BRASA_CHECK(input.defined() && grid.defined(), op, ": expected defined input and grid");
  BRASA_CHECK(input.device() == grid.device(), op,
              ": expected input and grid to be on same device, but input is on ", input.device(),
              " and grid is on ", grid.device());
  BRASA_CHECK(input.scalar_type() == grid.scalar_type(), op,
              ": expected input and grid to have same dtype, but input has ", input.scalar_type(),
              " and grid has ", grid.scalar_type());
  BRASA_CHECK(input.is_floating_point(), op, ": expected a floating-point input, got ",
              input.scalar_type());
  BRASA_CHECK((input.dim() == 4 || input.dim() == 5) && grid.dim() == input.dim(), op,
              ": expected 4D or 5D input and grid with same number of dimensions, but got input "
              "with sizes ",
              input.sizes(), " and grid with sizes ", grid.sizes());
  BRASA_CHECK(input.size(0) == grid.size(0), op,
              ": expected grid and input to have same batch size, but got input with sizes ",
              input.sizes(), " and grid with sizes ", grid.sizes());
  const int64_t dims = input.dim() - 2;
  BRASA_CHECK(grid.size(-1) == dims, op, ": expected grid to have size ", dims,
              " in last dimension, but got grid with sizes ", grid.sizes());
  for (int64_t d = 2; d < input.dim(); ++d)
    BRASA_CHECK(input.size(d) > 0, op,
                ": expected input to have non-empty spatial dimensions, but input has sizes ",
                input.sizes(), " with dimension ", d, " being empty");
  BRASA_CHECK(mode != Interp::Bicubic || dims == 2, op,
              ": bicubic interpolation only supports 4D input");
  BRASA_CHECK(padding == PaddingMode::Zeros || padding == PaddingMode::Border ||
                  padding == PaddingMode::Reflection,
              op, ": padding_mode must be kZeros, kBorder or kReflection");
}

// The composite of gathers: every mode, dimension and device.
Tensor sample_composite(const Tensor& input, const Tensor& grid, Interp mode, PaddingMode padding,
                        bool align_corners) {
  const int64_t dims = input.dim() - 2;
  const int64_t n = input.size(0), c = input.size(1);
  std::vector<int64_t> sizes(input.sizes().begin() + 2, input.sizes().end());
  std::vector<int64_t> out_shape{n, c};
  out_shape.insert(out_shape.end(), grid.sizes().begin() + 1, grid.sizes().end() - 1);
  Tensor flat = input.reshape({n, c, -1});
  Tensor points = grid.reshape({n, -1, dims});
  // Source coordinates, outermost spatial dim first (the grid lists x first).
  std::vector<Tensor> coords(dims);
  for (int64_t d = 0; d < dims; ++d) {
    const int64_t size = sizes[d];
    Tensor g = points.select(2, dims - 1 - d);
    coords[d] = unnormalize(g, size, align_corners);
    if (mode != Interp::Bicubic)
      coords[d] = padded_coordinate(coords[d], size, padding, align_corners);
  }
  Tensor out;
  if (mode == Interp::Nearest) {
    std::vector<Tensor> at;
    for (const Tensor& x : coords) at.push_back(x.round().to(kLong));
    out = gather_taps(flat, sizes, at, ones_like(coords[0]));
  } else if (mode == Interp::Bilinear) {
    // Each of the 2^dims corners, weighted by the opposite sub-box's volume.
    std::vector<Tensor> low, frac;
    for (const Tensor& x : coords) {
      Tensor f = x.floor();
      low.push_back(f.to(kLong));
      frac.push_back(x - f);
    }
    for (int64_t corner = 0; corner < (int64_t(1) << dims); ++corner) {
      std::vector<Tensor> at;
      Tensor weight = ones_like(coords[0]);
      for (int64_t d = 0; d < dims; ++d) {
        const bool high = (corner >> d) & 1;
        at.push_back(high ? low[d] + 1 : low[d]);
        weight = weight * (high ? frac[d] : 1 - frac[d]);
      }
      Tensor part = gather_taps(flat, sizes, at, weight);
      out = out.defined() ? out + part : part;
    }
  } else {
    // 4 x 4 taps; each tap's position goes through the padding mode itself.
    Tensor fy = coords[0].floor(), fx = coords[1].floor();
    std::vector<Tensor> wy = cubic_weights(coords[0] - fy), wx = cubic_weights(coords[1] - fx);
    for (int i = 0; i < 4; ++i)
      for (int j = 0; j < 4; ++j) {
        Tensor y = padded_coordinate(fy + (i - 1), sizes[0], padding, align_corners).detach();
        Tensor x = padded_coordinate(fx + (j - 1), sizes[1], padding, align_corners).detach();
        Tensor part = gather_taps(flat, sizes, {y.to(kLong), x.to(kLong)}, wy[i] * wx[j]);
        out = out.defined() ? out + part : part;
      }
  }
  return out.view(out_shape);
}

const autograd::BackwardName kGridSampler2dBackward("GridSampler2DBackward0");

GridPadding grid_padding(PaddingMode padding) {
  return padding == PaddingMode::Border       ? GridPadding::Border
         : padding == PaddingMode::Reflection ? GridPadding::Reflection
                                              : GridPadding::Zeros;
}

// Bilinear 2-d sampling through the device's fused kernels. The backward
// is the fused one too, unless it must itself be differentiable
// (create_graph): then it is the composite's, taken by a nested backward.
Tensor sample_bilinear_2d(const Tensor& input, const Tensor& grid, PaddingMode padding,
                          bool align_corners) {
  autograd::Recorder r(kGridSampler2dBackward, input, grid);
  Tensor out = empty({input.size(0), input.size(1), grid.size(1), grid.size(2)}, input.options());
  {
    NoGradGuard no_grad;
    kernel<GridSampler2dKernel>(input.device())(input.contiguous(), grid.contiguous(), out,
                                                grid_padding(padding), align_corners);
  }
  if (r)
    r.save(input, grid)
        .finish(out, [padding, align_corners](autograd::FormulaNode& n,
                                              const autograd::variable_list& g) {
          Tensor x = n.saved(0), gr = n.saved(1);
          if (is_grad_enabled()) {
            Tensor again = sample_composite(x, gr, Interp::Bilinear, padding, align_corners);
            autograd::variable_list wrt;
            for (const Tensor& t : {x, gr})
              if (t.requires_grad()) wrt.push_back(t);
            autograd::variable_list got = autograd::grad({again}, wrt, {g[0]}, true, true, true);
            Tensor gx = x.requires_grad() ? got[0] : Tensor();
            Tensor gg = gr.requires_grad() ? got.back() : Tensor();
            return autograd::variable_list{gx, gg};
          }
          Tensor gx = n.needs(0) ? zeros(x.sizes(), x.options()) : Tensor();
          Tensor gg = n.needs(1) ? empty(gr.sizes(), gr.options()) : Tensor();
          kernel<GridSampler2dBackwardKernel>(x.device())(g[0].contiguous(), x.contiguous(),
                                                          gr.contiguous(), gx, gg,
                                                          grid_padding(padding), align_corners);
          return autograd::variable_list{gx, gg};
        });
  return out;
}

Tensor sample(const Tensor& input, const Tensor& grid, Interp mode, PaddingMode padding,
              bool align_corners) {
  check_sample_arguments(input, grid, mode, padding);
  const bool fused = mode == Interp::Bilinear && input.dim() == 4 &&
                     (input.dtype() == kFloat || input.dtype() == kDouble) &&
                     input.size(2) * input.size(3) <= std::numeric_limits<int32_t>::max() &&
                     has_kernel<GridSampler2dKernel>(input.device()) &&
                     has_kernel<GridSampler2dBackwardKernel>(input.device());
  if (fused) return sample_bilinear_2d(input, grid, padding, align_corners);
  return sample_composite(input, grid, mode, padding, align_corners);
}

Interp interp_of(int64_t mode) {
  BRASA_CHECK(mode >= 0 && mode <= 2,
              "grid_sampler(): interpolation_mode must be 0 (bilinear), 1 (nearest) or 2 "
              "(bicubic), got ",
              mode);
  return mode == 0 ? Interp::Bilinear : mode == 1 ? Interp::Nearest : Interp::Bicubic;
}
PaddingMode padding_of(int64_t mode) {
  BRASA_CHECK(mode >= 0 && mode <= 2,
              "grid_sampler(): padding_mode must be 0 (zeros), 1 (border) or 2 (reflection), got ",
              mode);
  return mode == 0 ? PaddingMode::Zeros : mode == 1 ? PaddingMode::Border : PaddingMode::Reflection;
}

// Positions -1 ... 1 over n steps (the centres of n cells without align_corners).
Tensor base_positions(int64_t n, bool align_corners, const TensorOptions& options) {
  if (n <= 1) return zeros({n}, options);
  Tensor steps = linspace(-1.0, 1.0, n, options);
  return align_corners ? steps : steps * ((n - 1) / static_cast<double>(n));
}

}  // namespace

Tensor grid_sampler(const Tensor& input, const Tensor& grid, int64_t interpolation_mode,
                    int64_t padding_mode, bool align_corners) {
  return sample(input, grid, interp_of(interpolation_mode), padding_of(padding_mode),
                align_corners);
}
Tensor grid_sampler_2d(const Tensor& input, const Tensor& grid, int64_t interpolation_mode,
                       int64_t padding_mode, bool align_corners) {
  BRASA_CHECK(input.defined() && input.dim() == 4, "grid_sampler_2d: expected a 4-D input, got ",
              input.defined() ? input.sizes() : IntArrayRef{});
  return grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners);
}
Tensor grid_sampler_3d(const Tensor& input, const Tensor& grid, int64_t interpolation_mode,
                       int64_t padding_mode, bool align_corners) {
  BRASA_CHECK(input.defined() && input.dim() == 5, "grid_sampler_3d: expected a 5-D input, got ",
              input.defined() ? input.sizes() : IntArrayRef{});
  return grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners);
}

Tensor affine_grid_generator(const Tensor& theta, IntArrayRef size, bool align_corners) {
  BRASA_CHECK(theta.defined() && theta.is_floating_point(),
              "affine_grid: expected theta to be a floating point tensor");
  BRASA_CHECK(size.size() == 4 || size.size() == 5,
              "affine_grid only supports 4D and 5D sizes, for 2D and 3D affine transforms, "
              "respectively. Got size ",
              size, ".");
  const int64_t dims = static_cast<int64_t>(size.size()) - 2;
  BRASA_CHECK(theta.dim() == 3 && theta.size(0) == size[0] && theta.size(1) == dims &&
                  theta.size(2) == dims + 1,
              "Expected a batch of ", dims, "D affine matrices of shape Nx", dims, "x", dims + 1,
              " for size ", size, ". Got ", theta.sizes(), ".");
  for (int64_t s : size) BRASA_CHECK(s > 0, "Expected non-zero, positive output size. Got ", size);
  const TensorOptions options = theta.options().requires_grad(false);
  // The base grid [spatial..., dims + 1]: (x, y[, z], 1) at each output position.
  std::vector<Tensor> axes;
  for (int64_t d = dims - 1; d >= 0; --d)
    axes.push_back(base_positions(size[2 + d], align_corners, options));
  std::vector<int64_t> spatial(size.begin() + 2, size.end());
  std::vector<Tensor> columns;
  for (int64_t k = 0; k < dims; ++k) {
    std::vector<int64_t> view(dims, 1);
    view[dims - 1 - k] = -1;  // x runs along the last dim
    columns.push_back(axes[k].view(view).expand(spatial));
  }
  columns.push_back(ones(spatial, options));
  Tensor base = stack(columns, -1).reshape({1, -1, dims + 1});
  std::vector<int64_t> grid_shape{size[0]};
  grid_shape.insert(grid_shape.end(), spatial.begin(), spatial.end());
  grid_shape.push_back(dims);
  return matmul(base, theta.transpose(1, 2)).view(grid_shape);
}

namespace nn::functional {

Tensor grid_sample(const Tensor& input, const Tensor& grid, const GridSampleFuncOptions& options) {
  Interp mode = Interp::Bilinear;
  if (options.mode_ == InterpolateMode::Nearest)
    mode = Interp::Nearest;
  else if (options.mode_ == InterpolateMode::Bicubic)
    mode = Interp::Bicubic;
  else
    BRASA_CHECK(options.mode_ == InterpolateMode::Bilinear,
                "grid_sample: mode must be kBilinear, kNearest or kBicubic");
  return sample(input, grid, mode, options.padding_mode_, options.align_corners_.value_or(false));
}

Tensor affine_grid(const Tensor& theta, IntArrayRef size, bool align_corners) {
  return affine_grid_generator(theta, size, align_corners);
}

}  // namespace nn::functional

}  // namespace brasa
