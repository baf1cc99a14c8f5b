// CPU kernel of max pooling: windows inside the plane as branch-free
// vectorized maxima, edge windows one by one.
#include <brasa/ops/cpu/variant.h>
#include <brasa/ops/cpu/register.h>
#include <brasa/ops/kernels/pooling.h>
#include <brasa/util/parallel.h>

#include <limits>

namespace brasa::cpu {
inline namespace BRASA_CPU_VARIANT {
namespace {

// Max over each window of one plane; writes the flat argmax when idx != null.
// NaN wins and stays (PyTorch propagates NaN).
// Windows entirely inside the plane (no padding): loop over the window
// offsets outside and the output columns inside, so the inner loop is a
// branch-free elementwise max that the compiler vectorizes.
template <class T>
void max_pool_plane_interior(const T* plane, T* out, int64_t* idx, const PoolGeometry& g) {
  for (int64_t oh = 0; oh < g.OH; ++oh) {
    T* o = out + oh * g.OW;
    for (int64_t i = 0; i < g.kh; ++i)
      for (int64_t j = 0; j < g.kw; ++j) {
        const T* r = plane + (oh * g.sh + i * g.dh) * g.W + j * g.dw;
        if (i == 0 && j == 0) {
          for (int64_t ow = 0; ow < g.OW; ++ow) o[ow] = r[ow * g.sw];
          continue;
        }
        // Greater wins; a NaN wins over a number and the first NaN stays.
        for (int64_t ow = 0; ow < g.OW; ++ow) {
          const T v = r[ow * g.sw], cur = o[ow];
          o[ow] = ((v > cur) | ((v != v) & (cur == cur))) ? v : cur;
        }
      }
    if (!idx) continue;
    // Second pass for the argmax: window positions in reverse order, each
    // overwriting where it equals the max, leaves the first match; branch-free
    // over the output row. NaN maxima (rare) are fixed up afterwards.
    int64_t* ix = idx + oh * g.OW;
    bool any_nan = false;
    for (int64_t ow = 0; ow < g.OW; ++ow) any_nan |= o[ow] != o[ow];
    for (int64_t i = g.kh - 1; i >= 0; --i)
      for (int64_t j = g.kw - 1; j >= 0; --j) {
        const int64_t base = (oh * g.sh + i * g.dh) * g.W + j * g.dw;
        const T* r = plane + base;
        if (i == g.kh - 1 && j == g.kw - 1) {
          for (int64_t ow = 0; ow < g.OW; ++ow) ix[ow] = base + ow * g.sw;
          continue;
        }
        for (int64_t ow = 0; ow < g.OW; ++ow) {
          // Bit masks rather than a conditional: no data-dependent branch.
          const int64_t m = -static_cast<int64_t>(r[ow * g.sw] == o[ow]);
          ix[ow] = (ix[ow] & ~m) | ((base + ow * g.sw) & m);
        }
      }
    if (any_nan)
      for (int64_t ow = 0; ow < g.OW; ++ow) {
        if (o[ow] == o[ow]) continue;
        for (int64_t i = g.kh - 1; i >= 0; --i)
          for (int64_t j = g.kw - 1; j >= 0; --j) {
            const int64_t pos = (oh * g.sh + i * g.dh) * g.W + j * g.dw + ow * g.sw;
            if (plane[pos] != plane[pos]) ix[ow] = pos;
          }
      }
  }
}

template <class T>
void max_pool_plane(const T* plane, T* out, int64_t* idx, const PoolGeometry& g) {
  using M = opmath_t<T>;
  const bool interior = g.ph == 0 && g.pw == 0 && (g.OH - 1) * g.sh + (g.kh - 1) * g.dh < g.H &&
                        (g.OW - 1) * g.sw + (g.kw - 1) * g.dw < g.W;
  if constexpr (std::is_same_v<T, M>) {
    if (interior) return max_pool_plane_interior(plane, out, idx, g);
  }
  for (int64_t oh = 0; oh < g.OH; ++oh) {
    const int64_t h0 = oh * g.sh - g.ph;
    int64_t i_lo = 0, i_hi = g.kh;
    if (!interior) {
      while (i_lo < g.kh && h0 + i_lo * g.dh < 0) ++i_lo;
      while (i_hi > i_lo && h0 + (i_hi - 1) * g.dh >= g.H) --i_hi;
    }
    for (int64_t ow = 0; ow < g.OW; ++ow) {
      const int64_t w0 = ow * g.sw - g.pw;
      // Max and first argmax with selects (no data-dependent branches);
      // NaNs are found in a second pass only when present.
      M best = -std::numeric_limits<M>::infinity();
      int64_t best_i = -1;
      bool any_nan = false;
      for (int64_t i = i_lo; i < i_hi; ++i) {
        const int64_t ih = h0 + i * g.dh;
        const T* row = plane + ih * g.W;
        for (int64_t j = 0; j < g.kw; ++j) {
          const int64_t iw = w0 + j * g.dw;
          if (!interior && (iw < 0 || iw >= g.W)) continue;
          const M v = static_cast<M>(row[iw]);
          const bool gt = v > best || best_i < 0;
          best = gt ? v : best;
          best_i = gt ? ih * g.W + iw : best_i;
          any_nan |= v != v;
        }
      }
      if (any_nan) {
        for (int64_t i = i_lo; i < i_hi && best == best; ++i)
          for (int64_t j = 0; j < g.kw; ++j) {
            const int64_t ih = h0 + i * g.dh, iw = w0 + j * g.dw;
            if (iw < 0 || iw >= g.W) continue;
            const M v = static_cast<M>(plane[ih * g.W + iw]);
            if (v != v) {
              best = v;
              best_i = ih * g.W + iw;
              break;
            }
          }
      }
      const int64_t o = oh * g.OW + ow;
      out[o] = static_cast<T>(best);
      if (idx) idx[o] = best_i;
    }
  }
}

void max_pool2d_cpu(const Tensor& x, const Tensor& out, const Tensor& idx, const PoolGeometry& g) {
  BRASA_DISPATCH_FLOATING_TYPES(x.dtype(), "max_pool2d", [&] {
    const scalar_t* xp = x.data_ptr<scalar_t>();
    scalar_t* op = out.data_ptr<scalar_t>();
    int64_t* ip = idx.defined() ? idx.data_ptr<int64_t>() : nullptr;
    const int64_t in_plane = g.H * g.W, out_plane = g.OH * g.OW;
    parallel_for(0, g.planes, std::max<int64_t>(1, 4096 / std::max<int64_t>(in_plane, 1)),
                 [&](int64_t b, int64_t e) {
                   for (int64_t p = b; p < e; ++p)
                     max_pool_plane(xp + p * in_plane, op + p * out_plane,
                                    ip ? ip + p * out_plane : nullptr, g);
                 });
  });
}

}  // namespace

void register_pooling_kernels() { register_kernel<MaxPool2dKernel>(kCPU, max_pool2d_cpu); }

}  // namespace BRASA_CPU_VARIANT
}  // namespace brasa::cpu
