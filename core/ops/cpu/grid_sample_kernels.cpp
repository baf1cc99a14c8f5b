// CPU kernels of bilinear 2-d grid sampling and its gradients: 2x the
// composite of gathers was libtorch's time on a spatial transformer's layer.
//
// Points are taken in blocks. For a block, each point's four taps (offsets
// into a plane, masks for taps outside it, the fractions between them) are
// computed once and then serve every channel: the forward is then a loop of
// four gathers per point and channel, which vectorizes; the input gradient
// a scatter of the same taps (serial within a plane, so no two threads add
// into one plane); the grid's gradient a sum over channels kept per point.
// Positions follow PyTorch's kernel: unnormalized, reflected and clipped
// with the chain rule's factor of each step kept for the grid's gradient.
#include <brasa/ops/cpu/variant.h>
#include <brasa/ops/cpu/register.h>
#include <brasa/ops/kernels/sampling.h>
#include <brasa/util/parallel.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

namespace brasa::cpu {
inline namespace BRASA_CPU_VARIANT {
namespace {

constexpr int64_t kBlock = 256;  // points whose taps are computed at once

// x brought into [0, size - 1]; `mult` (d result / d x) becomes 0 when x was
// moved. A NaN passes through (every comparison fails), as in PyTorch.
template <class T>
T clip(T x, int64_t size, T& mult) {
  if (x <= T(0)) {
    mult = 0;
    return 0;
  }
  const T limit = static_cast<T>(size - 1);
  if (x >= limit) {
    mult = 0;
    return limit;
  }
  return x;
}

// x reflected into [twice_low / 2, twice_high / 2] as often as needed;
// `mult` takes the sign of the last reflection.
template <class T>
T reflect(T x, int64_t twice_low, int64_t twice_high, T& mult) {
  if (twice_low == twice_high) {
    mult = 0;
    return 0;
  }
  const T low = static_cast<T>(twice_low) / 2, span = static_cast<T>(twice_high - twice_low) / 2;
  x -= low;
  T sign = 1;
  if (x < 0) {
    sign = -1;
    x = -x;
  }
  const T extra = std::fmod(x, span);
  const T flips = std::floor(x / span);
  if (std::fmod(flips, T(2)) == 0) {
    mult *= sign;
    return extra + low;
  }
  mult *= -sign;
  return span - extra + low;
}

// The source position along a dim of `size` of normalized g, and in `mult`
// d position / d g.
template <class T>
T source_position(T g, int64_t size, GridPadding padding, bool align_corners, T& mult) {
  T x;
  if (align_corners) {
    mult = static_cast<T>(size - 1) / 2;
    x = (g + 1) * mult;
  } else {
    mult = static_cast<T>(size) / 2;
    x = ((g + 1) * static_cast<T>(size) - 1) / 2;
  }
  if (padding == GridPadding::Border) return clip(x, size, mult);
  if (padding == GridPadding::Reflection) {
    x = align_corners ? reflect(x, 0, 2 * (size - 1), mult) : reflect(x, -1, 2 * size - 1, mult);
    return clip(x, size, mult);
  }
  return x;
}

// One block's taps: nw, ne, sw, se. A tap outside the plane has mask 0 and
// offset 0 (a valid address whose value the mask cancels).
template <class T>
struct Taps {
  int32_t offset[4][kBlock];
  T mask[4][kBlock];
  T weight[4][kBlock];  // bilinear weight times mask
  T tx[kBlock], ty[kBlock];
  T mult_x[kBlock], mult_y[kBlock];  // d position / d grid value
};

template <class T>
void compute_taps(const T* grid, int64_t count, int64_t H, int64_t W, GridPadding padding,
                  bool align_corners, Taps<T>& t) {
  for (int64_t p = 0; p < count; ++p) {
    T mx, my;
    const T ix = source_position(grid[2 * p], W, padding, align_corners, mx);
    const T iy = source_position(grid[2 * p + 1], H, padding, align_corners, my);
    // Far outside (or NaN): every tap is outside; also keeps floor's result
    // in int range.
    const bool near =
        ix > T(-2) && ix < static_cast<T>(W + 1) && iy > T(-2) && iy < static_cast<T>(H + 1);
    if (!near) {
      for (int k = 0; k < 4; ++k) t.offset[k][p] = 0, t.mask[k][p] = 0, t.weight[k][p] = 0;
      t.tx[p] = t.ty[p] = t.mult_x[p] = t.mult_y[p] = 0;
      continue;
    }
    const T fx = std::floor(ix), fy = std::floor(iy);
    const int64_t x0 = static_cast<int64_t>(fx), y0 = static_cast<int64_t>(fy);
    const T tx = ix - fx, ty = iy - fy;
    const T bilinear[4] = {(1 - tx) * (1 - ty), tx * (1 - ty), (1 - tx) * ty, tx * ty};
    for (int k = 0; k < 4; ++k) {
      const int64_t x = x0 + (k & 1), y = y0 + (k >> 1);
      const bool inside = x >= 0 && x < W && y >= 0 && y < H;
      t.offset[k][p] = inside ? static_cast<int32_t>(y * W + x) : 0;
      t.mask[k][p] = inside ? T(1) : T(0);
      t.weight[k][p] = inside ? bilinear[k] : T(0);
    }
    t.tx[p] = tx, t.ty[p] = ty, t.mult_x[p] = mx, t.mult_y[p] = my;
  }
}

// out[p] = the four taps of plane, weighted.
template <class T>
void sample_plane(const T* plane, const Taps<T>& t, int64_t count, T* out) {
  const int32_t *o0 = t.offset[0], *o1 = t.offset[1], *o2 = t.offset[2], *o3 = t.offset[3];
  const T *w0 = t.weight[0], *w1 = t.weight[1], *w2 = t.weight[2], *w3 = t.weight[3];
  for (int64_t p = 0; p < count; ++p)
    out[p] =
        w0[p] * plane[o0[p]] + w1[p] * plane[o1[p]] + w2[p] * plane[o2[p]] + w3[p] * plane[o3[p]];
}

template <class T>
void grid_sampler_2d_typed(const Tensor& input, const Tensor& grid, const Tensor& out,
                           GridPadding padding, bool align_corners) {
  const int64_t N = input.size(0), C = input.size(1), H = input.size(2), W = input.size(3);
  const int64_t P = grid.size(1) * grid.size(2), blocks = (P + kBlock - 1) / kBlock;
  const T* in = input.data_ptr<T>();
  const T* g = grid.data_ptr<T>();
  T* o = out.data_ptr<T>();
  parallel_for(0, N * blocks, 1, [&](int64_t begin, int64_t end) {
    std::vector<Taps<T>> scratch(1);
    Taps<T>& taps = scratch[0];
    for (int64_t task = begin; task < end; ++task) {
      const int64_t n = task / blocks, p0 = (task % blocks) * kBlock;
      const int64_t count = std::min(kBlock, P - p0);
      compute_taps(g + (n * P + p0) * 2, count, H, W, padding, align_corners, taps);
      for (int64_t c = 0; c < C; ++c)
        sample_plane(in + (n * C + c) * H * W, taps, count, o + (n * C + c) * P + p0);
    }
  });
}

// A block's share of the gradients for one channel: the input plane's
// gradient by scattering, and (when wanted) d out / d position summed into
// gx, gy.
template <class T>
void plane_gradients(const T* plane, const T* go, const Taps<T>& t, int64_t count, T* grad_plane,
                     T* gx, T* gy) {
  if (grad_plane)
    for (int64_t p = 0; p < count; ++p)
      for (int k = 0; k < 4; ++k) grad_plane[t.offset[k][p]] += t.weight[k][p] * go[p];
  if (!gx) return;
  const int32_t *o0 = t.offset[0], *o1 = t.offset[1], *o2 = t.offset[2], *o3 = t.offset[3];
  const T *m0 = t.mask[0], *m1 = t.mask[1], *m2 = t.mask[2], *m3 = t.mask[3];
  for (int64_t p = 0; p < count; ++p) {
    const T v0 = m0[p] * plane[o0[p]], v1 = m1[p] * plane[o1[p]];
    const T v2 = m2[p] * plane[o2[p]], v3 = m3[p] * plane[o3[p]];
    const T tx = t.tx[p], ty = t.ty[p];
    gx[p] += go[p] * ((v1 - v0) * (1 - ty) + (v3 - v2) * ty);
    gy[p] += go[p] * ((v2 - v0) * (1 - tx) + (v3 - v1) * tx);
  }
}

template <class T>
void grid_sampler_2d_backward_typed(const Tensor& grad_out, const Tensor& input, const Tensor& grid,
                                    const Tensor& grad_input, const Tensor& grad_grid,
                                    GridPadding padding, bool align_corners) {
  const int64_t N = input.size(0), C = input.size(1), H = input.size(2), W = input.size(3);
  const int64_t P = grid.size(1) * grid.size(2), blocks = (P + kBlock - 1) / kBlock;
  const T* in = input.data_ptr<T>();
  const T* g = grid.data_ptr<T>();
  const T* go = grad_out.data_ptr<T>();
  T* gi = grad_input.defined() ? grad_input.data_ptr<T>() : nullptr;
  T* gg = grad_grid.defined() ? grad_grid.data_ptr<T>() : nullptr;
  // Threads take samples and groups of kChannels channels when input's
  // gradient is wanted (each plane is scattered into by one thread), else
  // samples and blocks of points. With several channel groups, each writes
  // its share of the grid's gradient apart and the shares are summed in
  // group order: the grouping depends on C alone, so the result does not
  // depend on the thread count.
  constexpr int64_t kChannels = 32;
  const int64_t groups = gi ? std::max<int64_t>(1, (C + kChannels - 1) / kChannels) : 1;
  std::vector<T> shares(gg && groups > 1 ? static_cast<size_t>(N * groups * P * 2) : 0);
  T* grid_out = groups > 1 ? shares.data() : gg;
  const int64_t tasks = gi ? N * groups : N * blocks;
  parallel_for(0, tasks, 1, [&](int64_t begin, int64_t end) {
    std::vector<Taps<T>> scratch(1);
    Taps<T>& taps = scratch[0];
    T gx[kBlock], gy[kBlock];
    for (int64_t task = begin; task < end; ++task) {
      const int64_t n = gi ? task / groups : task / blocks, group = gi ? task % groups : 0;
      const int64_t c0 = group * kChannels, c1 = gi ? std::min(C, c0 + kChannels) : C;
      const int64_t first = gi ? 0 : task % blocks, last = gi ? blocks : first + 1;
      T* out = gg ? grid_out + (n * groups + group) * P * 2 : nullptr;
      for (int64_t b = first; b < last; ++b) {
        const int64_t p0 = b * kBlock, count = std::min(kBlock, P - p0);
        compute_taps(g + (n * P + p0) * 2, count, H, W, padding, align_corners, taps);
        std::fill(gx, gx + count, T(0));
        std::fill(gy, gy + count, T(0));
        for (int64_t c = c0; c < c1; ++c) {
          const int64_t plane = (n * C + c) * H * W;
          plane_gradients(in + plane, go + (n * C + c) * P + p0, taps, count,
                          gi ? gi + plane : nullptr, gg ? gx : nullptr, gy);
        }
        if (out)
          for (int64_t p = 0; p < count; ++p) {
            out[(p0 + p) * 2] = gx[p] * taps.mult_x[p];
            out[(p0 + p) * 2 + 1] = gy[p] * taps.mult_y[p];
          }
      }
    }
  });
  if (gg && groups > 1)
    parallel_for(0, N, 1, [&](int64_t begin, int64_t end) {
      for (int64_t n = begin; n < end; ++n)
        for (int64_t q = 0; q < P * 2; ++q) {
          T sum = 0;
          for (int64_t group = 0; group < groups; ++group)
            sum += shares[(n * groups + group) * P * 2 + q];
          gg[n * P * 2 + q] = sum;
        }
    });
}

void grid_sampler_2d_cpu(const Tensor& input, const Tensor& grid, const Tensor& out,
                         GridPadding padding, bool align_corners) {
  if (input.dtype() == kFloat)
    grid_sampler_2d_typed<float>(input, grid, out, padding, align_corners);
  else
    grid_sampler_2d_typed<double>(input, grid, out, padding, align_corners);
}

void grid_sampler_2d_backward_cpu(const Tensor& grad_out, const Tensor& input, const Tensor& grid,
                                  const Tensor& grad_input, const Tensor& grad_grid,
                                  GridPadding padding, bool align_corners) {
  if (input.dtype() == kFloat)
    grid_sampler_2d_backward_typed<float>(grad_out, input, grid, grad_input, grad_grid, padding,
                                          align_corners);
  else
    grid_sampler_2d_backward_typed<double>(grad_out, input, grid, grad_input, grad_grid, padding,
                                           align_corners);
}

}  // namespace

void register_grid_sample_kernels() {
  register_kernel<GridSampler2dKernel>(kCPU, grid_sampler_2d_cpu);
  register_kernel<GridSampler2dBackwardKernel>(kCPU, grid_sampler_2d_backward_cpu);
}

}  // namespace BRASA_CPU_VARIANT
}  // namespace brasa::cpu
