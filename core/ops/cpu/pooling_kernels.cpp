// CPU kernel of max pooling: windows inside the plane as branch-free
// vectorized maxima, edge windows one by one.
#include <brasa/ops/cpu/variant.h>
#include <brasa/ops/cpu/register.h>
#include <brasa/ops/cpu/scratch.h>
#include <brasa/ops/kernels/pooling.h>
#include <brasa/util/parallel.h>

#include <cstdint>
#include <limits>
#include <vector>

namespace brasa::cpu {
inline namespace BRASA_CPU_VARIANT {
namespace {

// Whether `second` beats `first` in window order: greater wins, a NaN beats
// a number, and of two NaNs the first stays.
template <class T>
inline bool takes_second(T first, T second) {
  return (second > first) | ((second != second) & (first == first));
}

// Max over each window of one plane; writes the flat argmax when idx != null.
// NaN wins and stays (PyTorch propagates NaN).
// Windows entirely inside the plane (no padding): loop over the window
// offsets outside and the output columns inside, so the inner loop is a
// branch-free elementwise max that the compiler vectorizes.
// kSW: the column stride when known at compile time (1 or 2, the common
// ones), 0 to read it from g. A known stride lets the compiler load the
// window columns of 16 outputs as whole vectors (a stride-2 pair of vectors
// deinterleaved) rather than element by element; the geometry is copied into
// locals because the stores into out and idx could otherwise alias it, which
// reloaded g.sw on every element (the argmax pass ran scalar and took most
// of a 3x3 stride-2 pool's time).
template <class T, int kSW>
void max_pool_rows_interior(const T* plane, T* out, int64_t* idx, const PoolGeometry& g) {
  const int64_t OH = g.OH, OW = g.OW, W = g.W, kh = g.kh, kw = g.kw, sh = g.sh, dh = g.dh,
                dw = g.dw;
  const int64_t sw = kSW ? kSW : g.sw;
  for (int64_t oh = 0; oh < OH; ++oh) {
    T* __restrict o = out + oh * OW;
    for (int64_t i = 0; i < kh; ++i)
      for (int64_t j = 0; j < kw; ++j) {
        const T* __restrict r = plane + (oh * sh + i * dh) * W + j * dw;
        if (i == 0 && j == 0) {
          for (int64_t ow = 0; ow < OW; ++ow) o[ow] = r[ow * sw];
          continue;
        }
        // Greater wins; a NaN wins over a number and the first NaN stays.
        for (int64_t ow = 0; ow < OW; ++ow) {
          const T v = r[ow * sw], cur = o[ow];
          o[ow] = takes_second(cur, v) ? v : cur;
        }
      }
    if (!idx) continue;
    // Second pass for the argmax: window positions in reverse order, each
    // overwriting where it equals the max, leaves the first match; branch-free
    // over the output row. NaN maxima (rare) are fixed up afterwards.
    int64_t* __restrict ix = idx + oh * OW;
    bool any_nan = false;
    for (int64_t ow = 0; ow < OW; ++ow) any_nan |= o[ow] != o[ow];
    for (int64_t i = kh - 1; i >= 0; --i)
      for (int64_t j = kw - 1; j >= 0; --j) {
        const int64_t base = (oh * sh + i * dh) * W + j * dw;
        const T* __restrict r = plane + base;
        if (i == kh - 1 && j == kw - 1) {
          for (int64_t ow = 0; ow < OW; ++ow) ix[ow] = base + ow * sw;
          continue;
        }
        for (int64_t ow = 0; ow < OW; ++ow) ix[ow] = r[ow * sw] == o[ow] ? base + ow * sw : ix[ow];
      }
    if (any_nan)
      for (int64_t ow = 0; ow < OW; ++ow) {
        if (o[ow] == o[ow]) continue;
        for (int64_t i = kh - 1; i >= 0; --i)
          for (int64_t j = kw - 1; j >= 0; --j) {
            const int64_t pos = (oh * sh + i * dh) * W + j * dw + ow * sw;
            if (plane[pos] != plane[pos]) ix[ow] = pos;
          }
      }
  }
}

template <class T>
void max_pool_plane_interior(const T* plane, T* out, int64_t* idx, const PoolGeometry& g) {
  if (g.OW >= 16 && g.sw == 1) return max_pool_rows_interior<T, 1>(plane, out, idx, g);
  if (g.OW >= 16 && g.sw == 2) return max_pool_rows_interior<T, 2>(plane, out, idx, g);
  max_pool_rows_interior<T, 0>(plane, out, idx, g);
}

// take ? b : a through bit masks: compilers turn the ternary into a branch,
// which mispredicts half the time on data.
template <class T>
inline T select_by_mask(bool take, T a, T b) {
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
    using Bits = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;
    const Bits mask = Bits(0) - Bits(take);
    return std::bit_cast<T>((std::bit_cast<Bits>(a) & ~mask) | (std::bit_cast<Bits>(b) & mask));
  } else {
    return take ? b : a;
  }
}

bool is_2x2_stride_2(const PoolGeometry& g) {
  return g.kh == 2 && g.kw == 2 && g.sh == 2 && g.sw == 2 && g.dh == 1 && g.dw == 1 && g.ph == 0 &&
         g.pw == 0 && 2 * g.OH <= g.H && 2 * g.OW <= g.W;
}

// max_pool2d(x, 2), the common case, for planes [p0, p1): first the max of
// each horizontal pair of every row (one stream over the planes when W is
// even, as pairs then never straddle rows), then the max of each window's
// two row pairs. The per-window loop of max_pool_plane_interior ran 1.4 ns
// per input element on [64, 10, 24, 24] (its inner loops are as short as
// OW); this runs both passes vectorized or branch-free.
template <class T>
void max_pool_2x2_block(const T* x, T* out, int64_t* idx, const PoolGeometry& g, int64_t p0,
                        int64_t p1) {
  const int64_t rows = (p1 - p0) * g.H, OW = g.OW;
  thread_local std::vector<T> pair_max_buf;
  thread_local std::vector<uint8_t> pair_col_buf;
  pair_max_buf.resize(static_cast<size_t>(rows * OW));
  if (idx) pair_col_buf.resize(static_cast<size_t>(rows * OW));
  T* pair_max = pair_max_buf.data();
  uint8_t* pair_col = idx ? pair_col_buf.data() : nullptr;
  const T* in = x + p0 * g.H * g.W;
  const auto pairs = [&](const T* row, T* m, uint8_t* col, int64_t n) {
    if (col) {
      for (int64_t i = 0; i < n; ++i) {
        const bool second = takes_second(row[2 * i], row[2 * i + 1]);
        m[i] = select_by_mask(second, row[2 * i], row[2 * i + 1]);
        col[i] = second;
      }
    } else {
      for (int64_t i = 0; i < n; ++i)
        m[i] = select_by_mask(takes_second(row[2 * i], row[2 * i + 1]), row[2 * i], row[2 * i + 1]);
    }
  };
  if (g.W == 2 * OW) {
    pairs(in, pair_max, pair_col, rows * OW);
  } else {
    for (int64_t r = 0; r < rows; ++r)
      pairs(in + r * g.W, pair_max + r * OW, pair_col ? pair_col + r * OW : nullptr, OW);
  }
  for (int64_t p = p0; p < p1; ++p)
    for (int64_t oh = 0; oh < g.OH; ++oh) {
      const int64_t top = ((p - p0) * g.H + 2 * oh) * OW;
      const T* a = pair_max + top;
      const T* b = a + OW;
      T* o = out + (p * g.OH + oh) * OW;
      if (!idx) {
        for (int64_t ow = 0; ow < OW; ++ow)
          o[ow] = select_by_mask(takes_second(a[ow], b[ow]), a[ow], b[ow]);
        continue;
      }
      int64_t* ix = idx + (p * g.OH + oh) * OW;
      const uint8_t* ca = pair_col + top;
      const uint8_t* cb = ca + OW;
      const int64_t W = g.W, row_a = 2 * oh * W;
      for (int64_t ow = 0; ow < OW; ++ow) {
        const bool second_row = takes_second(a[ow], b[ow]);
        const int64_t lower = second_row;
        o[ow] = select_by_mask(second_row, a[ow], b[ow]);
        ix[ow] = row_a + (W & -lower) + 2 * ow + (ca[ow] ^ ((ca[ow] ^ cb[ow]) & lower));
      }
    }
}

#if BRASA_CPU_HAS_AVX512
// The first k lanes of 16.
inline __mmask16 first_lanes(int64_t k) {
  return k >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << std::max<int64_t>(k, 0)) - 1);
}

// Lanes where v beats best in window order (as takes_second).
inline __mmask16 beats(__m512 best, __m512 v) {
  return _mm512_cmp_ps_mask(v, best, _CMP_GT_OQ) |
         (_mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q) & _mm512_cmp_ps_mask(best, best, _CMP_ORD_Q));
}

// One output row of max_pool2d(x, 2) in float from its two input rows, 16
// outputs per step: the even and odd columns of each row are separated by
// permutes, the four window positions compared in window order, and the
// short rows of small planes (OW of 4 or 12) cost one masked step.
void max_pool_2x2_row(const float* top, const float* bottom, float* out, int64_t* idx, int64_t OW,
                      int64_t row_base, int64_t W) {
  const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  const __m512i odd = _mm512_add_epi32(even, _mm512_set1_epi32(1));
  const __m512i lane2 = _mm512_add_epi32(even, _mm512_set1_epi32(static_cast<int>(row_base)));
  for (int64_t ow = 0; ow < OW; ow += 16) {
    const int64_t n = std::min<int64_t>(16, OW - ow);
    const __mmask16 lo = first_lanes(2 * n), hi = first_lanes(2 * n - 16);
    const __m512 t0 = _mm512_maskz_loadu_ps(lo, top + 2 * ow);
    const __m512 t1 = _mm512_maskz_loadu_ps(hi, top + 2 * ow + 16);
    const __m512 b0 = _mm512_maskz_loadu_ps(lo, bottom + 2 * ow);
    const __m512 b1 = _mm512_maskz_loadu_ps(hi, bottom + 2 * ow + 16);
    __m512 best = _mm512_permutex2var_ps(t0, even, t1);
    __m512i offset = _mm512_setzero_si512();
    const __m512 candidates[3] = {_mm512_permutex2var_ps(t0, odd, t1),
                                  _mm512_permutex2var_ps(b0, even, b1),
                                  _mm512_permutex2var_ps(b0, odd, b1)};
    const int offsets[3] = {1, static_cast<int>(W), static_cast<int>(W) + 1};
    for (int c = 0; c < 3; ++c) {
      const __mmask16 m = beats(best, candidates[c]);
      best = _mm512_mask_blend_ps(m, best, candidates[c]);
      offset = _mm512_mask_blend_epi32(m, offset, _mm512_set1_epi32(offsets[c]));
    }
    _mm512_mask_storeu_ps(out + ow, first_lanes(n), best);
    if (!idx) continue;
    // Flat indices within the plane: row_base + 2 * ow + offset, widened.
    const __m512i flat = _mm512_add_epi32(
        _mm512_add_epi32(lane2, _mm512_set1_epi32(static_cast<int>(2 * ow))), offset);
    _mm512_mask_storeu_epi64(idx + ow, static_cast<__mmask8>(first_lanes(n)),
                             _mm512_cvtepi32_epi64(_mm512_castsi512_si256(flat)));
    _mm512_mask_storeu_epi64(idx + ow + 8, static_cast<__mmask8>(first_lanes(n - 8)),
                             _mm512_cvtepi32_epi64(_mm512_extracti64x4_epi64(flat, 1)));
  }
}
#endif

// In blocks of planes whose pair maxima stay in the L2 cache.
template <class T>
void max_pool_2x2_planes(const T* x, T* out, int64_t* idx, const PoolGeometry& g, int64_t p0,
                         int64_t p1) {
#if BRASA_CPU_HAS_AVX512
  // (int32 lane arithmetic: planes below 2^31 elements)
  if (std::is_same_v<T, float> && g.H * g.W < (int64_t(1) << 31)) {
    for (int64_t p = p0; p < p1; ++p)
      for (int64_t oh = 0; oh < g.OH; ++oh) {
        const float* top = reinterpret_cast<const float*>(x) + (p * g.H + 2 * oh) * g.W;
        const int64_t o = (p * g.OH + oh) * g.OW;
        max_pool_2x2_row(top, top + g.W, reinterpret_cast<float*>(out) + o, idx ? idx + o : nullptr,
                         g.OW, 2 * oh * g.W, g.W);
      }
    return;
  }
#endif
  const int64_t per_block = std::max<int64_t>(1, 32768 / std::max<int64_t>(1, g.H * g.OW));
  for (int64_t b = p0; b < p1; b += per_block)
    max_pool_2x2_block(x, out, idx, g, b, std::min(p1, b + per_block));
}

// A padded plane (or windows reaching past its end): the plane copied into
// `scratch` inside -inf borders, then the interior loops (a per-window loop
// with bounds checks ran 1.25x libtorch's time on 3x3, stride 2, padding 1).
// The argmaxes are mapped back to the plane; a window whose maximum is -inf
// may have matched the border first, and takes its first element in the
// plane instead.
template <class T>
void max_pool_plane_padded(const T* plane, T* out, int64_t* idx, const PoolGeometry& g,
                           std::vector<T>& scratch) {
  PoolGeometry p = g;
  p.H = (g.OH - 1) * g.sh + (g.kh - 1) * g.dh + 1;
  p.W = (g.OW - 1) * g.sw + (g.kw - 1) * g.dw + 1;
  p.ph = p.pw = 0;
  T* padded = cache_aligned_scratch(scratch, static_cast<size_t>(p.H * p.W));
  std::fill(padded, padded + p.H * p.W, -std::numeric_limits<T>::infinity());
  for (int64_t r = 0; r < g.H && r + g.ph < p.H; ++r) {
    const int64_t c0 = std::max<int64_t>(0, -g.pw), c1 = std::min(g.W, p.W - g.pw);
    if (c1 > c0)
      std::copy(plane + r * g.W + c0, plane + r * g.W + c1, padded + (r + g.ph) * p.W + c0 + g.pw);
  }
  max_pool_plane_interior(padded, out, idx, p);
  if (!idx) return;
  for (int64_t oh = 0; oh < g.OH; ++oh)
    for (int64_t ow = 0; ow < g.OW; ++ow) {
      const int64_t o = oh * g.OW + ow;
      const int64_t ih = idx[o] / p.W - g.ph, iw = idx[o] % p.W - g.pw;
      if (ih >= 0 && ih < g.H && iw >= 0 && iw < g.W) {
        idx[o] = ih * g.W + iw;
        continue;
      }
      int64_t first = -1;
      for (int64_t i = 0; i < g.kh && first < 0; ++i)
        for (int64_t j = 0; j < g.kw && first < 0; ++j) {
          const int64_t h = oh * g.sh - g.ph + i * g.dh, w = ow * g.sw - g.pw + j * g.dw;
          if (h >= 0 && h < g.H && w >= 0 && w < g.W) first = h * g.W + w;
        }
      idx[o] = first;
    }
}

template <class T>
void max_pool_plane(const T* plane, T* out, int64_t* idx, const PoolGeometry& g,
                    std::vector<T>& scratch) {
  using M = opmath_t<T>;
  const bool interior = g.ph == 0 && g.pw == 0 && (g.OH - 1) * g.sh + (g.kh - 1) * g.dh < g.H &&
                        (g.OW - 1) * g.sw + (g.kw - 1) * g.dw < g.W;
  if constexpr (std::is_same_v<T, M>) {
    if (interior) return max_pool_plane_interior(plane, out, idx, g);
    return max_pool_plane_padded(plane, out, idx, g, scratch);
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
    if constexpr (std::is_same_v<scalar_t, opmath_t<scalar_t>>) {
      if (is_2x2_stride_2(g)) {
        parallel_for(0, g.planes, std::max<int64_t>(1, 16384 / std::max<int64_t>(in_plane, 1)),
                     [&](int64_t b, int64_t e) { max_pool_2x2_planes(xp, op, ip, g, b, e); });
        return;
      }
    }
    parallel_for(0, g.planes, std::max<int64_t>(1, 4096 / std::max<int64_t>(in_plane, 1)),
                 [&](int64_t b, int64_t e) {
                   std::vector<scalar_t> scratch;
                   for (int64_t p = b; p < e; ++p)
                     max_pool_plane(xp + p * in_plane, op + p * out_plane,
                                    ip ? ip + p * out_plane : nullptr, g, scratch);
                 });
  });
}

// The 2-d windows of one depth slice, by the same paths as max_pool2d.
template <class T>
void max_pool_slice(const T* slice, T* out, int64_t* idx, const PoolGeometry& g,
                    std::vector<T>& scratch) {
  if constexpr (std::is_same_v<T, opmath_t<T>>) {
    if (is_2x2_stride_2(g)) return max_pool_2x2_planes(slice, out, idx, g, 0, 1);
  }
  max_pool_plane(slice, out, idx, g, scratch);
}

// Merges one depth slice's pooled values (and argmaxes, already shifted to
// the volume) into an output slice: strictly greater (or a first NaN)
// replaces, so ties keep the earlier depth, as window order asks.
template <class T>
void merge_depth(T* o, int64_t* ix, const T* v, const int64_t* vi, int64_t n, bool first) {
  if (first) {
    std::copy(v, v + n, o);
    if (ix) std::copy(vi, vi + n, ix);
    return;
  }
  for (int64_t j = 0; j < n; ++j) {
    const bool take = takes_second(static_cast<opmath_t<T>>(o[j]), static_cast<opmath_t<T>>(v[j]));
    o[j] = select_by_mask(take, o[j], v[j]);
    if (ix) ix[j] = take ? vi[j] : ix[j];
  }
}

// One depth slice d of volume v pooled in 2-d into pv (and pi, its argmaxes
// shifted to the volume).
template <class T>
void pool_depth_slice(const T* xp, int64_t v, int64_t d, const Pool3dGeometry& g, T* pv,
                      int64_t* pi, std::vector<T>& scratch) {
  const int64_t in_slice = g.plane.H * g.plane.W, out_slice = g.plane.OH * g.plane.OW;
  max_pool_slice(xp + (v * g.D + d) * in_slice, pv, pi, g.plane, scratch);
  if (pi)
    for (int64_t j = 0; j < out_slice; ++j) pi[j] += d * in_slice;
}

// max_pool3d as the 2-d windows of each depth slice a window covers, merged
// in depth order (max is separable, and the first maximum in (d, h, w)
// window order is the first depth's first). When depth windows overlap
// (kernel 3, stride 2), a volume's slices are pooled once each and then
// merged per output depth (pooling per window redid 1.5x the 2-d work);
// otherwise one output slice (volume, od) at a time, in parallel.
void max_pool3d_cpu(const Tensor& x, const Tensor& out, const Tensor& idx,
                    const Pool3dGeometry& g) {
  const PoolGeometry& s = g.plane;
  const int64_t in_slice = s.H * s.W, out_slice = s.OH * s.OW;
  const bool overlap = g.sd < (g.kd - 1) * g.dd + 1;
  const bool by_volume = overlap && s.planes >= 2 * get_num_threads();
  BRASA_DISPATCH_FLOATING_TYPES(x.dtype(), "max_pool3d", [&] {
    const scalar_t* xp = x.data_ptr<scalar_t>();
    scalar_t* op = out.data_ptr<scalar_t>();
    int64_t* ip = idx.defined() ? idx.data_ptr<int64_t>() : nullptr;
    if (by_volume) {
      parallel_for(0, s.planes, 1, [&](int64_t b, int64_t e) {
        std::vector<scalar_t> scratch, pooled(static_cast<size_t>(g.D * out_slice));
        std::vector<int64_t> pooled_idx(ip ? pooled.size() : 0);
        for (int64_t v = b; v < e; ++v) {
          for (int64_t d = 0; d < g.D; ++d)
            pool_depth_slice(xp, v, d, g, pooled.data() + d * out_slice,
                             ip ? pooled_idx.data() + d * out_slice : nullptr, scratch);
          for (int64_t od = 0; od < g.OD; ++od) {
            const int64_t item = v * g.OD + od;
            bool first = true;
            for (int64_t k = 0; k < g.kd; ++k) {
              const int64_t d = od * g.sd - g.pd + k * g.dd;
              if (d < 0 || d >= g.D) continue;
              merge_depth(op + item * out_slice, ip ? ip + item * out_slice : nullptr,
                          pooled.data() + d * out_slice,
                          ip ? pooled_idx.data() + d * out_slice : nullptr, out_slice, first);
              first = false;
            }
          }
        }
      });
      return;
    }
    const int64_t work = std::max<int64_t>(1, in_slice * g.kd);
    parallel_for(0, s.planes * g.OD, std::max<int64_t>(1, 16384 / work), [&](int64_t b, int64_t e) {
      std::vector<scalar_t> scratch, tmp(static_cast<size_t>(out_slice));
      std::vector<int64_t> tmp_idx(ip ? static_cast<size_t>(out_slice) : 0);
      for (int64_t item = b; item < e; ++item) {
        const int64_t v = item / g.OD, od = item % g.OD;
        scalar_t* o = op + item * out_slice;
        int64_t* ix = ip ? ip + item * out_slice : nullptr;
        bool first = true;
        for (int64_t k = 0; k < g.kd; ++k) {
          const int64_t d = od * g.sd - g.pd + k * g.dd;
          if (d < 0 || d >= g.D) continue;
          if (first) {  // straight into the output
            pool_depth_slice(xp, v, d, g, o, ix, scratch);
            first = false;
            continue;
          }
          pool_depth_slice(xp, v, d, g, tmp.data(), ix ? tmp_idx.data() : nullptr, scratch);
          merge_depth(o, ix, tmp.data(), tmp_idx.data(), out_slice, false);
        }
      }
    });
  });
}

// Planes in parallel: a plane's argmaxes point into the plane.
void max_pool2d_backward_cpu(const Tensor& grad_x, const Tensor& g, const Tensor& idx) {
  const int64_t planes = grad_x.size(0), in_plane = grad_x.size(1), out_plane = g.size(1);
  BRASA_DISPATCH_FLOATING_TYPES(g.dtype(), "max_pool2d_backward", [&] {
    using M = opmath_t<scalar_t>;
    scalar_t* gx = grad_x.data_ptr<scalar_t>();
    const scalar_t* gp = g.data_ptr<scalar_t>();
    const int64_t* ip = idx.data_ptr<int64_t>();
    parallel_for(0, planes, std::max<int64_t>(1, 16384 / std::max<int64_t>(out_plane, 1)),
                 [&](int64_t b, int64_t e) {
                   for (int64_t p = b; p < e; ++p) {
                     scalar_t* dst = gx + p * in_plane;
                     const scalar_t* src = gp + p * out_plane;
                     const int64_t* at = ip + p * out_plane;
                     for (int64_t j = 0; j < out_plane; ++j)
                       dst[at[j]] = static_cast<scalar_t>(static_cast<M>(dst[at[j]]) +
                                                          static_cast<M>(src[j]));
                   }
                 });
  });
}

// Adaptive max pooling, plane by plane; each window row scanned left to
// right (windows are small: a few input elements per output).
void adaptive_max_pool2d_cpu(const Tensor& x, const Tensor& out, const Tensor& idx, int64_t H,
                             int64_t W, int64_t OH, int64_t OW) {
  const int64_t planes = H * W == 0 ? 0 : x.numel() / (H * W);
  BRASA_DISPATCH_FLOATING_TYPES(x.dtype(), "adaptive_max_pool2d", [&] {
    using M = opmath_t<scalar_t>;
    const scalar_t* xp = x.data_ptr<scalar_t>();
    scalar_t* op = out.data_ptr<scalar_t>();
    int64_t* ip = idx.data_ptr<int64_t>();
    parallel_for(0, planes, std::max<int64_t>(1, 16384 / std::max<int64_t>(H * W, 1)),
                 [&](int64_t b, int64_t e) {
                   for (int64_t p = b; p < e; ++p) {
                     const scalar_t* plane = xp + p * H * W;
                     for (int64_t oh = 0; oh < OH; ++oh) {
                       const int64_t h0 = oh * H / OH, h1 = ((oh + 1) * H + OH - 1) / OH;
                       for (int64_t ow = 0; ow < OW; ++ow) {
                         const int64_t w0 = ow * W / OW, w1 = ((ow + 1) * W + OW - 1) / OW;
                         M best = static_cast<M>(plane[h0 * W + w0]);
                         int64_t at = h0 * W + w0;
                         for (int64_t h = h0; h < h1; ++h)
                           for (int64_t w = w0; w < w1; ++w) {
                             const M v = static_cast<M>(plane[h * W + w]);
                             if (takes_second(best, v)) {
                               best = v;
                               at = h * W + w;
                             }
                           }
                         op[(p * OH + oh) * OW + ow] = static_cast<scalar_t>(best);
                         ip[(p * OH + oh) * OW + ow] = at;
                       }
                     }
                   }
                 });
  });
}

}  // namespace

void register_pooling_kernels() {
  register_kernel<MaxPool2dKernel>(kCPU, max_pool2d_cpu);
  register_kernel<MaxPool2dBackwardKernel>(kCPU, max_pool2d_backward_cpu);
  register_kernel<MaxPool3dKernel>(kCPU, max_pool3d_cpu);
  register_kernel<AdaptiveMaxPool2dKernel>(kCPU, adaptive_max_pool2d_cpu);
}

}  // namespace BRASA_CPU_VARIANT
}  // namespace brasa::cpu
