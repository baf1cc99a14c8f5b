// im2col / col2im of 2-D convolution (the GEMMs go through cuBLAS) and max
// pooling, one thread per output element.
#include <brasa/ops/cuda/device_types.cuh>

namespace brasa::cuda::kernels {
namespace {

constexpr int kThreads = 256;

unsigned blocks_for(int64_t n) {
  const int64_t b = (n + kThreads - 1) / kThreads;
  return static_cast<unsigned>(b < (1 << 20) ? b : (1 << 20));
}

// One thread per column entry: row (c, i, j), column (n, oh, ow).
template <class T>
__global__ void im2col_kernel(const T* x, T* cols, Windows g) {
  const int64_t L = g.OH * g.OW, NL = g.N * L, total = g.C * g.kh * g.kw * NL;
  const int64_t step = int64_t(gridDim.x) * blockDim.x;
  for (int64_t e = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; e < total; e += step) {
    const int64_t col = e % NL, row = e / NL;
    const int64_t n = col / L, l = col % L, oh = l / g.OW, ow = l % g.OW;
    const int64_t j = row % g.kw, i = (row / g.kw) % g.kh, c = row / (g.kw * g.kh);
    const int64_t h = oh * g.sh - g.ph + i * g.dh, w = ow * g.sw - g.pw + j * g.dw;
    cols[e] =
        (h >= 0 && h < g.H && w >= 0 && w < g.W) ? x[((n * g.C + c) * g.H + h) * g.W + w] : T(0);
  }
}

// One thread per input element: the sum over the windows that cover it.
template <class T>
__global__ void col2im_kernel(const T* cols, T* x, Windows g) {
  const int64_t L = g.OH * g.OW, NL = g.N * L, total = g.N * g.C * g.H * g.W;
  const int64_t step = int64_t(gridDim.x) * blockDim.x;
  for (int64_t e = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; e < total; e += step) {
    const int64_t w = e % g.W, h = (e / g.W) % g.H, c = (e / (g.W * g.H)) % g.C,
                  n = e / (g.W * g.H * g.C);
    T sum = 0;
    for (int64_t i = 0; i < g.kh; ++i) {
      const int64_t hs = h + g.ph - i * g.dh;
      if (hs < 0 || hs % g.sh != 0 || hs / g.sh >= g.OH) continue;
      for (int64_t j = 0; j < g.kw; ++j) {
        const int64_t ws = w + g.pw - j * g.dw;
        if (ws < 0 || ws % g.sw != 0 || ws / g.sw >= g.OW) continue;
        const int64_t row = (c * g.kh + i) * g.kw + j;
        sum += cols[row * NL + n * L + (hs / g.sh) * g.OW + ws / g.sw];
      }
    }
    x[e] = sum;
  }
}

// Index arithmetic in I: int when every offset fits (the divisions of 64-bit
// indices cost more than the window's loads), int64_t otherwise.
template <class T, class I>
__global__ void max_pool2d_kernel(const T* x, T* out, int64_t* idx, Windows g64) {
  struct {
    I N, C, H, W, kh, kw, sh, sw, ph, pw, dh, dw, OH, OW;
  } g{I(g64.N),  I(g64.C),  I(g64.H),  I(g64.W),  I(g64.kh), I(g64.kw), I(g64.sh),
      I(g64.sw), I(g64.ph), I(g64.pw), I(g64.dh), I(g64.dw), I(g64.OH), I(g64.OW)};
  const I total = g.N * g.C * g.OH * g.OW;
  const I step = I(gridDim.x) * I(blockDim.x);
  for (I e = I(blockIdx.x) * I(blockDim.x) + I(threadIdx.x); e < total; e += step) {
    const I ow = e % g.OW, oh = (e / g.OW) % g.OH, plane = e / (g.OW * g.OH);
    const T* p = x + int64_t(plane) * g.H * g.W;
    Acc<T> best = 0;
    I arg = -1;
    for (I i = 0; i < g.kh; ++i) {
      const I h = oh * g.sh - g.ph + i * g.dh;
      if (h < 0 || h >= g.H) continue;
      for (I j = 0; j < g.kw; ++j) {
        const I w = ow * g.sw - g.pw + j * g.dw;
        if (w < 0 || w >= g.W) continue;
        const Acc<T> v = to_acc(p[h * g.W + w]);
        // Greater wins; a NaN wins over a number, and the first NaN stays.
        if (arg < 0 || (best == best && (v > best || v != v))) {
          best = v;
          arg = h * g.W + w;
        }
      }
    }
    out[e] = from_acc<T>(best);
    if (idx) idx[e] = arg;
  }
}

template <class F>
void float_types(int dtype, F&& f) {
  if (dtype == kF32) f(float{});
  if (dtype == kF64) f(double{});
  if (dtype == kF16) f(__half{});
  if (dtype == kBF16) f(__nv_bfloat16{});
}

}  // namespace

void launch_im2col(const void* x, void* cols, const Windows& g, int dtype, cudaStream_t s) {
  const int64_t total = g.C * g.kh * g.kw * g.N * g.OH * g.OW;
  float_types(dtype, [&](auto tag) {
    using T = decltype(tag);
    im2col_kernel<T>
        <<<blocks_for(total), kThreads, 0, s>>>(static_cast<const T*>(x), static_cast<T*>(cols), g);
  });
}

void launch_col2im(const void* cols, void* x, const Windows& g, int dtype, cudaStream_t s) {
  const int64_t total = g.N * g.C * g.H * g.W;
  float_types(dtype, [&](auto tag) {
    using T = decltype(tag);
    col2im_kernel<T>
        <<<blocks_for(total), kThreads, 0, s>>>(static_cast<const T*>(cols), static_cast<T*>(x), g);
  });
}

void launch_max_pool2d(const void* x, void* out, int64_t* idx, const Windows& g, int dtype,
                       cudaStream_t s) {
  const int64_t total = g.N * g.C * g.OH * g.OW;
  // Offsets below 2^31 (input and output elements; the loop's index may
  // overshoot total by one grid of threads).
  const bool small = g.N * g.C * g.H * g.W < (int64_t(1) << 31) - 1 &&
                     total + int64_t(blocks_for(total)) * kThreads < (int64_t(1) << 31) - 1;
  float_types(dtype, [&](auto tag) {
    using T = decltype(tag);
    if (small)
      max_pool2d_kernel<T, int><<<blocks_for(total), kThreads, 0, s>>>(
          static_cast<const T*>(x), static_cast<T*>(out), idx, g);
    else
      max_pool2d_kernel<T, int64_t><<<blocks_for(total), kThreads, 0, s>>>(
          static_cast<const T*>(x), static_cast<T*>(out), idx, g);
  });
}

}  // namespace brasa::cuda::kernels
