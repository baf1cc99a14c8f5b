// CPU discrete Fourier transforms (FftKernel): the Stockham autosort
// algorithm, decimation in frequency, over the plan's radices (no bit
// reversal: each pass reads one buffer and writes the other in order).
// Rows are transformed W at a time with their elements interleaved lane by
// lane — element e of rows r..r+W-1 as W real parts then W imaginary parts
// — so that every butterfly is a loop over W lanes the compiler turns into
// vector instructions. Leftover rows, and rows too long for W of them to
// stay in cache, go one at a time (W = 1). Inverse transforms swap the real
// and imaginary parts on the way in and out (the swapped forward transform
// is the inverse); real transforms of even length run as complex ones of
// half the length over the samples taken in pairs.
#include <brasa/ops/cpu/variant.h>
#include <brasa/ops/cpu/register.h>
#include <brasa/ops/cpu/transpose_8x8.h>
#include <brasa/ops/kernels/spectral.h>
#include <brasa/util/parallel.h>

#include <algorithm>
#include <cmath>
#include <vector>

namespace brasa::cpu {
inline namespace BRASA_CPU_VARIANT {
namespace {

// Element e of a lane buffer: W real parts, then W imaginary parts.
template <class T, int W>
inline T* element(T* buf, int64_t e) {
  return buf + e * 2 * W;
}

// y = x * w (complex, w one number for all lanes).
#define BRASA_FFT_TWIDDLE(yr, yi, xr, xi, wr, wi) \
  do {                                            \
    const T tr_ = (xr), ti_ = (xi);               \
    (yr) = tr_ * (wr)-ti_ * (wi);                 \
    (yi) = tr_ * (wi) + ti_ * (wr);               \
  } while (0)

// One pass of radix P (2, 3, 4 or 5): blocks j < m of the current length
// m * P, sub-transforms q < s interleaved.
template <class T, int W, int P>
void pass(const T* __restrict src, T* __restrict dst, int64_t m, int64_t s,
          const T* __restrict twiddles) {
  for (int64_t j = 0; j < m; ++j) {
    const T* tw = twiddles + 2 * j * (P - 1);
    for (int64_t q = 0; q < s; ++q) {
      const T* x[P];
      T* y[P];
      for (int r = 0; r < P; ++r) {
        x[r] = element<const T, W>(src, q + s * (j + r * m));
        y[r] = element<T, W>(dst, q + s * (P * j + r));
      }
#pragma GCC ivdep  // x and y are in different buffers
      for (int v = 0; v < W; ++v) {
        T br[P], bi[P];  // the P-point transform of the block's inputs
        if constexpr (P == 2) {
          br[0] = x[0][v] + x[1][v];
          bi[0] = x[0][W + v] + x[1][W + v];
          br[1] = x[0][v] - x[1][v];
          bi[1] = x[0][W + v] - x[1][W + v];
        } else if constexpr (P == 4) {
          const T t0r = x[0][v] + x[2][v], t0i = x[0][W + v] + x[2][W + v];
          const T t1r = x[0][v] - x[2][v], t1i = x[0][W + v] - x[2][W + v];
          const T t2r = x[1][v] + x[3][v], t2i = x[1][W + v] + x[3][W + v];
          // (x1 - x3) * -i
          const T t3r = x[1][W + v] - x[3][W + v], t3i = x[3][v] - x[1][v];
          br[0] = t0r + t2r;
          bi[0] = t0i + t2i;
          br[1] = t1r + t3r;
          bi[1] = t1i + t3i;
          br[2] = t0r - t2r;
          bi[2] = t0i - t2i;
          br[3] = t1r - t3r;
          bi[3] = t1i - t3i;
        } else if constexpr (P == 3) {
          constexpr T h = static_cast<T>(0.86602540378443864676);  // sin(2 pi / 3)
          const T ar = x[1][v] + x[2][v], ai = x[1][W + v] + x[2][W + v];
          const T dr = x[1][v] - x[2][v], di = x[1][W + v] - x[2][W + v];
          const T mr = x[0][v] - T(0.5) * ar, mi = x[0][W + v] - T(0.5) * ai;
          br[0] = x[0][v] + ar;
          bi[0] = x[0][W + v] + ai;
          // m -+ i h d
          br[1] = mr + h * di;
          bi[1] = mi - h * dr;
          br[2] = mr - h * di;
          bi[2] = mi + h * dr;
        } else {
          static_assert(P == 5);
          constexpr T c1 = static_cast<T>(0.30901699437494742410);   // cos(2 pi / 5)
          constexpr T c2 = static_cast<T>(-0.80901699437494742410);  // cos(4 pi / 5)
          constexpr T s1 = static_cast<T>(0.95105651629515357212);   // sin(2 pi / 5)
          constexpr T s2 = static_cast<T>(0.58778525229247312917);   // sin(4 pi / 5)
          const T a1r = x[1][v] + x[4][v], a1i = x[1][W + v] + x[4][W + v];
          const T b1r = x[1][v] - x[4][v], b1i = x[1][W + v] - x[4][W + v];
          const T a2r = x[2][v] + x[3][v], a2i = x[2][W + v] + x[3][W + v];
          const T b2r = x[2][v] - x[3][v], b2i = x[2][W + v] - x[3][W + v];
          const T x0r = x[0][v], x0i = x[0][W + v];
          br[0] = x0r + a1r + a2r;
          bi[0] = x0i + a1i + a2i;
          const T r1r = x0r + c1 * a1r + c2 * a2r, r1i = x0i + c1 * a1i + c2 * a2i;
          const T r2r = x0r + c2 * a1r + c1 * a2r, r2i = x0i + c2 * a1i + c1 * a2i;
          const T i1r = s1 * b1r + s2 * b2r, i1i = s1 * b1i + s2 * b2i;
          const T i2r = s2 * b1r - s1 * b2r, i2i = s2 * b1i - s1 * b2i;
          // r -+ i * i_k
          br[1] = r1r + i1i;
          bi[1] = r1i - i1r;
          br[4] = r1r - i1i;
          bi[4] = r1i + i1r;
          br[2] = r2r + i2i;
          bi[2] = r2i - i2r;
          br[3] = r2r - i2i;
          bi[3] = r2i + i2r;
        }
        y[0][v] = br[0];
        y[0][W + v] = bi[0];
        for (int t = 1; t < P; ++t)
          BRASA_FFT_TWIDDLE(y[t][v], y[t][W + v], br[t], bi[t], tw[2 * (t - 1)],
                            tw[2 * (t - 1) + 1]);
      }
    }
  }
}

// A pass of any other prime radix p, by its direct transform (p^2 products).
template <class T, int W>
void pass_generic(const T* src, T* dst, int64_t m, int64_t s, int p, const T* twiddles,
                  const T* roots) {
  std::vector<T> acc(static_cast<size_t>(2 * W));
  for (int64_t j = 0; j < m; ++j) {
    const T* tw = twiddles + 2 * j * (p - 1);
    for (int64_t q = 0; q < s; ++q) {
      for (int t = 0; t < p; ++t) {
        T* a = acc.data();
        for (int v = 0; v < 2 * W; ++v) a[v] = 0;
        for (int r = 0; r < p; ++r) {
          const T* x = element<const T, W>(src, q + s * (j + r * m));
          const int k = static_cast<int>((static_cast<int64_t>(r) * t) % p);
          const T wr = roots[2 * k], wi = roots[2 * k + 1];
          for (int v = 0; v < W; ++v) {
            a[v] += x[v] * wr - x[W + v] * wi;
            a[W + v] += x[v] * wi + x[W + v] * wr;
          }
        }
        T* y = element<T, W>(dst, q + s * (p * j + t));
        if (t == 0) {
          for (int v = 0; v < 2 * W; ++v) y[v] = a[v];
        } else {
          const T wr = tw[2 * (t - 1)], wi = tw[2 * (t - 1) + 1];
          for (int v = 0; v < W; ++v) BRASA_FFT_TWIDDLE(y[v], y[W + v], a[v], a[W + v], wr, wi);
        }
      }
    }
  }
}

// The forward transform of the plan's length held in `a` (the other buffer
// is work space, both work_length() elements long); returns the buffer
// holding the result.
template <class T, int W>
T* transform(const FftPlan& plan, T* a, T* b) {
  if (plan.bluestein_length > 0) {
    // X_k = c_k * sum_j (x_j c_j) conj(c_{k-j}), c_k = exp(-pi i k^2 / n):
    // a circular convolution at the longer length, by transforms.
    const int64_t n = plan.n, m = plan.bluestein_length;
    const T* chirp = plan.chirp.data<T>();
    for (int64_t k = 0; k < n; ++k) {
      T* e = element<T, W>(a, k);
      for (int v = 0; v < W; ++v)
        BRASA_FFT_TWIDDLE(e[v], e[W + v], e[v], e[W + v], chirp[2 * k], chirp[2 * k + 1]);
    }
    std::fill(element<T, W>(a, n), element<T, W>(a, m), T(0));
    T* spectrum = transform<T, W>(*plan.inner, a, b);
    T* other = spectrum == a ? b : a;
    const T* kernel = plan.chirp_spectrum.data<T>();
    // The product, its parts swapped so that the forward transform inverts.
    for (int64_t k = 0; k < m; ++k) {
      T* e = element<T, W>(spectrum, k);
      for (int v = 0; v < W; ++v) {
        T re, im;
        BRASA_FFT_TWIDDLE(re, im, e[v], e[W + v], kernel[2 * k], kernel[2 * k + 1]);
        e[v] = im;
        e[W + v] = re;
      }
    }
    T* conv = transform<T, W>(*plan.inner, spectrum, other);
    for (int64_t k = 0; k < n; ++k) {
      T* e = element<T, W>(conv, k);
      for (int v = 0; v < W; ++v) {
        const T re = e[W + v], im = e[v];  // swapped back
        BRASA_FFT_TWIDDLE(e[v], e[W + v], re, im, chirp[2 * k], chirp[2 * k + 1]);
      }
    }
    return conv;
  }
  int64_t len = plan.n, s = 1;
  for (size_t i = 0; i < plan.radices.size(); ++i) {
    const int p = plan.radices[i];
    const int64_t m = len / p;
    const T* tw = plan.twiddles.data<T>() + 2 * plan.offsets[i];
    switch (p) {
      case 2:
        pass<T, W, 2>(a, b, m, s, tw);
        break;
      case 3:
        pass<T, W, 3>(a, b, m, s, tw);
        break;
      case 4:
        pass<T, W, 4>(a, b, m, s, tw);
        break;
      case 5:
        pass<T, W, 5>(a, b, m, s, tw);
        break;
      default:
        pass_generic<T, W>(a, b, m, s, p, tw, plan.roots.data<T>() + 2 * plan.root_offsets[i]);
    }
    std::swap(a, b);
    len = m;
    s *= p;
  }
  return a;
}

// Where the W rows of a block (or the one row when W = 1) lie, in units of
// T: element e of lane v starts at base + v * lane + e * step, and a pair's
// second value (imaginary part, or the odd sample of a real pair) is
// `second` further.
struct Strides {
  int64_t lane, step, second;
};

// Elements 0..count-1 of the W lanes into a lane buffer (Swap: the second
// values in the real lanes), and back, scaled. With the rows in the inner
// dim (lane 1 or 2) the W values of an element are adjacent in memory;
// with the rows apart and each row's pairs adjacent, U pairs of each row
// are staged at a time so that the memory side reads and writes runs.
constexpr int64_t kStaged = 8;

template <class T, int W>
bool staged(const Strides& at) {
  return W > 1 && at.step == 2 && at.second == 1 && at.lane > 2;
}

// Swaps each element's W first and W second values in a lane buffer.
template <class T, int W>
void swap_parts(T* lanes, int64_t count) {
  for (int64_t e = 0; e < count; ++e) {
    T* d = lanes + e * 2 * W;
    for (int v = 0; v < W; ++v) std::swap(d[v], d[W + v]);
  }
}

#ifdef BRASA_CPU_HAS_AVX2
// Float rows staged by 8x8 register transposes: 8 pairs (16 values) of W
// rows are a W x 16 block whose transpose is, row for row, the 8 elements
// of the lane buffer (its row 2i the first values of pair i, row 2i+1 the
// second). Returns the pairs done: the whole groups of 8.
template <class T, int W>
constexpr bool kTransposeStaging = std::is_same_v<T, float>&& W % 8 == 0;

template <int W>
int64_t gather_by_transposes(const float* x, int64_t lane, int64_t count, float* lanes) {
  const int64_t full = count / kStaged * kStaged;
  for (int64_t e0 = 0; e0 < full; e0 += kStaged)
    for (int v = 0; v < W; v += 8)
      for (int k = 0; k < 2 * kStaged; k += 8)
        transpose_8x8_32bit(reinterpret_cast<const uint32_t*>(x + v * lane + 2 * e0 + k), lane,
                            reinterpret_cast<uint32_t*>(lanes + (2 * e0 + k) * W + v), W);
  return full;
}
template <int W>
int64_t scatter_by_transposes(const float* lanes, int64_t count, float* x, int64_t lane) {
  const int64_t full = count / kStaged * kStaged;
  for (int64_t e0 = 0; e0 < full; e0 += kStaged)
    for (int v = 0; v < W; v += 8)
      for (int k = 0; k < 2 * kStaged; k += 8)
        transpose_8x8_32bit(reinterpret_cast<const uint32_t*>(lanes + (2 * e0 + k) * W + v), W,
                            reinterpret_cast<uint32_t*>(x + v * lane + 2 * e0 + k), lane);
  return full;
}
#endif

template <class T, int W, bool Swap>
void gather_pairs(const T* __restrict x, Strides at, int64_t count, T* __restrict lanes) {
  const int first = Swap ? 1 : 0;
  if (staged<T, W>(at)) {
    int64_t done = 0;
#ifdef BRASA_CPU_HAS_AVX2
    if constexpr (kTransposeStaging<T, W>) {
      done = gather_by_transposes<W>(x, at.lane, count, lanes);
      if (Swap) swap_parts<T, W>(lanes, done);
    }
#endif
    T t[W][2 * kStaged];
    for (int64_t e0 = done; e0 < count; e0 += kStaged) {
      const int64_t u = std::min(kStaged, count - e0);
      for (int v = 0; v < W; ++v)
        for (int64_t k = 0; k < 2 * u; ++k) t[v][k] = x[v * at.lane + 2 * e0 + k];
      for (int64_t i = 0; i < u; ++i) {
        T* __restrict d = lanes + (e0 + i) * 2 * W;
        for (int v = 0; v < W; ++v) {
          d[first * W + v] = t[v][2 * i];
          d[(1 - first) * W + v] = t[v][2 * i + 1];
        }
      }
    }
    return;
  }
  // The lane strides of the inner layouts as constants, so that the loads
  // vectorize: complex values (2) and real ones (1).
  auto run = [&](auto lane) {
    for (int64_t e = 0; e < count; ++e) {
      T* __restrict d = lanes + e * 2 * W;
      const T* __restrict p = x + e * at.step;
      for (int v = 0; v < W; ++v) {
        d[first * W + v] = p[v * lane];
        d[(1 - first) * W + v] = p[v * lane + at.second];
      }
    }
  };
  if (at.lane == 2)
    run(std::integral_constant<int64_t, 2>());
  else if (at.lane == 1)
    run(std::integral_constant<int64_t, 1>());
  else
    run(at.lane);
}
// (The staged path scales and swaps the lane buffer in place: it is the
// transform's scratch.)
template <class T, int W, bool Swap>
void scatter_pairs(T* __restrict lanes, int64_t count, T scale, T* __restrict x, Strides at) {
  const int first = Swap ? 1 : 0;
  if (staged<T, W>(at)) {
    int64_t done = 0;
#ifdef BRASA_CPU_HAS_AVX2
    if constexpr (kTransposeStaging<T, W>) {
      const int64_t full = count / kStaged * kStaged;
      if (Swap) swap_parts<T, W>(lanes, full);
      if (scale != T(1))
        for (int64_t i = 0; i < full * 2 * W; ++i) lanes[i] *= scale;
      done = scatter_by_transposes<W>(lanes, count, x, at.lane);
    }
#endif
    T t[W][2 * kStaged];
    for (int64_t e0 = done; e0 < count; e0 += kStaged) {
      const int64_t u = std::min(kStaged, count - e0);
      for (int64_t i = 0; i < u; ++i) {
        const T* __restrict d = lanes + (e0 + i) * 2 * W;
        for (int v = 0; v < W; ++v) {
          t[v][2 * i] = d[first * W + v] * scale;
          t[v][2 * i + 1] = d[(1 - first) * W + v] * scale;
        }
      }
      for (int v = 0; v < W; ++v)
        for (int64_t k = 0; k < 2 * u; ++k) x[v * at.lane + 2 * e0 + k] = t[v][k];
    }
    return;
  }
  auto run = [&](auto lane) {
    for (int64_t e = 0; e < count; ++e) {
      const T* __restrict d = lanes + e * 2 * W;
      T* __restrict p = x + e * at.step;
      for (int v = 0; v < W; ++v) {
        p[v * lane] = d[first * W + v] * scale;
        p[v * lane + at.second] = d[(1 - first) * W + v] * scale;
      }
    }
  };
  if (at.lane == 2)
    run(std::integral_constant<int64_t, 2>());
  else if (at.lane == 1)
    run(std::integral_constant<int64_t, 1>());
  else
    run(at.lane);
}

// One transform over the W rows of a block, its input and output at `in`
// and `out` (their element 0 of lane 0).
template <class T, int W>
struct Rows {
  const FftPlan& plan;  // of n, or of n / 2 for real transforms of even n
  FftKind kind;
  int64_t n;  // the transform's length
  bool inverse;
  T scale;
  int64_t inner;  // the layout's inner size: elements of one row are that far apart
  // From one lane's row to the next in the input and the output, in T.
  int64_t lane_in, lane_out;
  T* a;
  T* b;

  // Complex data, and real data read in pairs, in and out.
  Strides complex_in() const { return {lane_in, 2 * inner, 1}; }
  Strides complex_out() const { return {lane_out, 2 * inner, 1}; }
  Strides real_pairs_in() const { return {lane_in, 2 * inner, inner}; }
  Strides real_pairs_out() const { return {lane_out, 2 * inner, inner}; }

  void c2c(const T* in, T* out) const {
    // Inverse: real and imaginary parts swapped in and out.
    if (inverse)
      gather_pairs<T, W, true>(in, complex_in(), n, a);
    else
      gather_pairs<T, W, false>(in, complex_in(), n, a);
    T* y = transform<T, W>(plan, a, b);
    if (inverse)
      scatter_pairs<T, W, true>(y, n, scale, out, complex_out());
    else
      scatter_pairs<T, W, false>(y, n, scale, out, complex_out());
  }

  void r2c(const T* in, T* out) const {
    const int64_t bins = n / 2 + 1;
    if (n % 2 == 1) {
      for (int64_t e = 0; e < n; ++e) {
        T* d = element<T, W>(a, e);
        for (int v = 0; v < W; ++v) {
          d[v] = in[v * lane_in + e * inner];
          d[W + v] = 0;
        }
      }
      scatter_pairs<T, W, false>(transform<T, W>(plan, a, b), bins, scale, out, complex_out());
      return;
    }
    // z_j = x_2j + i x_2j+1, Z its transform of length h = n / 2; then
    // X_k = E_k + exp(-2 pi i k / n) O_k, where E_k = (Z_k + conj Z_h-k) / 2
    // and O_k = (Z_k - conj Z_h-k) / 2i are the even and odd samples'.
    const int64_t h = n / 2;
    gather_pairs<T, W, false>(in, real_pairs_in(), h, a);
    const T* y = transform<T, W>(plan, a, b);
    T* spectrum = y == a ? b : a;  // h + 1 elements
    const T* rtw = plan.real_twiddles.data<T>();
    for (int64_t k = 0; k <= h; ++k) {
      const T* __restrict zk = element<const T, W>(y, k % h);
      const T* __restrict zc = element<const T, W>(y, (h - k) % h);
      T* __restrict x = element<T, W>(spectrum, k);
      const T wr = rtw[2 * k], wi = rtw[2 * k + 1];
      for (int v = 0; v < W; ++v) {
        const T er = zk[v] + zc[v], ei = zk[W + v] - zc[W + v];
        // (Z_k - conj Z_h-k) / i
        const T orr = zk[W + v] + zc[W + v], oi = zc[v] - zk[v];
        T tr, ti;
        BRASA_FFT_TWIDDLE(tr, ti, orr, oi, wr, wi);
        x[v] = er + tr;
        x[W + v] = ei + ti;
      }
    }
    scatter_pairs<T, W, false>(spectrum, h + 1, T(0.5) * scale, out, complex_out());
  }

  void c2r(const T* in, T* out) const {
    const int64_t bins = n / 2 + 1;
    gather_pairs<T, W, false>(in, complex_in(), bins, b);
    if (n % 2 == 1) {
      // The whole Hermitian spectrum, inverted as a swapped forward one.
      for (int64_t k = 0; k < bins; ++k) {
        const T* x = element<const T, W>(b, k);
        T* d = element<T, W>(a, k);
        T* mirror = element<T, W>(a, (n - k) % n);
        for (int v = 0; v < W; ++v) {
          const T xr = x[v], xi = k == 0 ? T(0) : x[W + v];
          d[v] = xi;
          d[W + v] = xr;
          if (k > 0) {
            mirror[v] = -xi;
            mirror[W + v] = xr;
          }
        }
      }
      const T* y = transform<T, W>(plan, a, b);
      for (int64_t e = 0; e < n; ++e) {
        const T* d = element<const T, W>(y, e);
        for (int v = 0; v < W; ++v) out[v * lane_out + e * inner] = d[W + v] * scale;
      }
      return;
    }
    // The inverse of r2c's split: Z_k = (X_k + conj X_h-k)
    // + i exp(2 pi i k / n) (X_k - conj X_h-k), inverted at length h gives
    // n (x_2j + i x_2j+1).
    const int64_t h = n / 2;
    const T* rtw = plan.real_twiddles.data<T>();
    for (int64_t k = 0; k < h; ++k) {
      const T* __restrict xa = element<const T, W>(b, k);
      const T* __restrict xb = element<const T, W>(b, h - k);
      T* __restrict d = element<T, W>(a, k);
      const T wr = rtw[2 * k], wi = -rtw[2 * k + 1];
      // The imaginary parts of X_0 and X_h play no part.
      const T keep = k == 0 ? T(0) : T(1);
      for (int v = 0; v < W; ++v) {
        const T ar = xa[v], ai = keep * xa[W + v];
        const T br = xb[v], bi = -keep * xb[W + v];
        T tr, ti;
        BRASA_FFT_TWIDDLE(tr, ti, ar - br, ai - bi, wr, wi);
        // (A + B) + i t, stored swapped.
        d[v] = (ai + bi) + tr;
        d[W + v] = (ar + br) - ti;
      }
    }
    scatter_pairs<T, W, true>(transform<T, W>(plan, a, b), h, scale, out, real_pairs_out());
  }

  void run(const T* in, T* out) const {
    if (kind == FftKind::C2C)
      c2c(in, out);
    else if (kind == FftKind::R2C)
      r2c(in, out);
    else
      c2r(in, out);
  }
};

#undef BRASA_FFT_TWIDDLE

template <class T>
void fft_typed(const Tensor& in, const Tensor& out, FftKind kind, int64_t n, bool inverse,
               double scale, int64_t outer, int64_t inner) {
  const bool halved = kind != FftKind::C2C && n % 2 == 0;
  const std::shared_ptr<const FftPlan> plan = fft_plan(halved ? n / 2 : n);
  // Lengths and widths (in T) of one input and one output row.
  const int64_t bins = n / 2 + 1;
  const int64_t len_in = kind == FftKind::C2R ? bins : n, len_out = kind == FftKind::R2C ? bins : n;
  const int64_t width_in = kind == FftKind::R2C ? 1 : 2, width_out = kind == FftKind::C2R ? 1 : 2;
  const T* src = static_cast<const T*>(in.data_ptr());
  T* dst = static_cast<T*>(out.data_ptr());
  // A vector register's worth of rows at a time while their two buffers
  // stay within 2 MiB; the rest one by one.
#if defined(BRASA_CPU_HAS_AVX512)
  constexpr int kLanes = static_cast<int>(64 / sizeof(T));
#elif defined(BRASA_CPU_HAS_AVX2)
  constexpr int kLanes = static_cast<int>(32 / sizeof(T));
#else
  constexpr int kLanes = static_cast<int>(16 / sizeof(T));
#endif
  // Lanes are rows adjacent in the inner dim, or with inner = 1 whole rows
  // one after another.
  const bool lanes =
      (inner >= kLanes || (inner == 1 && outer >= kLanes)) &&
      plan->work_length() * 4 * kLanes * static_cast<int64_t>(sizeof(T)) <= (int64_t{2} << 20);
  // Rows (o, i) numbered o * inner + i; a task is a block of kLanes rows
  // (in the inner dim, or whole rows when inner = 1) or a single row.
  const bool across = inner == 1;
  const int64_t span = across ? outer : inner;  // rows a block can take
  const int64_t blocks = lanes ? span / kLanes : 0, singles = span - blocks * kLanes;
  const int64_t per_group = blocks + singles, groups = across ? 1 : outer;
  const T typed_scale = static_cast<T>(scale);
  const int64_t lane_in = across ? len_in * width_in : width_in;
  const int64_t lane_out = across ? len_out * width_out : width_out;
  // About 64K elements of work per task.
  const int64_t grain = std::max<int64_t>(1, (int64_t{1} << 16) / (n * (lanes ? kLanes : 1)));
  parallel_for(0, groups * per_group, grain, [&](int64_t begin, int64_t end) {
    // One element more than a transform needs: a real transform's h + 1 bins.
    const size_t work = static_cast<size_t>(plan->work_length()) + 1;
    std::vector<T> buffers(4 * work * static_cast<size_t>(lanes ? kLanes : 1));
    T* a = buffers.data();
    T* b = a + buffers.size() / 2;
    const Rows<T, kLanes> block{*plan, kind,    n,        inverse, typed_scale,
                                inner, lane_in, lane_out, a,       b};
    const Rows<T, 1> single{*plan, kind, n, inverse, typed_scale, inner, lane_in, lane_out, a, b};
    for (int64_t task = begin; task < end; ++task) {
      const int64_t g = task / per_group, t = task % per_group;
      const int64_t r = t < blocks ? t * kLanes : blocks * kLanes + (t - blocks);
      const int64_t o = across ? r : g, i = across ? 0 : r;
      const T* x = src + (o * len_in * inner + i) * width_in;
      T* y = dst + (o * len_out * inner + i) * width_out;
      if (t < blocks)
        block.run(x, y);
      else
        single.run(x, y);
    }
  });
}

void fft_cpu(const Tensor& in, const Tensor& out, FftKind kind, int64_t n, bool inverse,
             double scale, int64_t outer, int64_t inner) {
  BRASA_CHECK(in.is_contiguous() && out.is_contiguous() && n >= 1,
              "fft: the kernel expects contiguous tensors and a length of at least 1");
  if (out.numel() == 0) return;
  const ScalarType part = toRealValueType(out.scalar_type());
  if (part == kDouble) return fft_typed<double>(in, out, kind, n, inverse, scale, outer, inner);
  BRASA_CHECK(part == kFloat, "fft: expected float or double data, got ",
              toString(out.scalar_type()));
  fft_typed<float>(in, out, kind, n, inverse, scale, outer, inner);
}

}  // namespace

void register_fft_kernels() { register_kernel<FftKernel>(kCPU, fft_cpu); }

}  // namespace BRASA_CPU_VARIANT
}  // namespace brasa::cpu
