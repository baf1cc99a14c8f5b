// Row reductions (sum, prod, max, min, var, std, all, any, norm,
// logsumexp), max/min with indices, and the row maps (softmax, log_softmax,
// cumsum, cumprod) on CUDA. One block reduces one row (threads stride over
// it, then a shared-memory tree); "outer" plans ([R, K]) give one thread per
// column so that reads stay coalesced. Floating types accumulate in double,
// integers in int64.
#include <brasa/ops/cuda/device_types.cuh>
#include <brasa/ops/kernels/elementwise_ops.h>

#include <cfloat>
#include <cmath>

namespace brasa::cuda::kernels {
namespace {

// Codes of RowReduction and RowMap (ops/kernels/reduction.h).
enum Reduction { kSum, kProd, kMax, kMin, kVar, kStd, kAll, kAny, kNorm, kLogsumexp };
enum Map { kSoftmax, kLogSoftmax, kCumsum, kCumprod };

constexpr int kThreads = 256;

template <class T>
using Wide = std::conditional_t<std::is_floating_point_v<Acc<T>>, double, int64_t>;

template <class T>
__device__ Wide<T> element(const Rows& r, int64_t k, int64_t i) {
  const T* in = static_cast<const T*>(r.in);
  return static_cast<Wide<T>>(to_acc(r.outer ? in[i * r.K + k] : in[k * r.R + i]));
}

template <class W>
__device__ bool is_nan(W v) {
  if constexpr (std::is_floating_point_v<W>)
    return v != v;
  else
    return false;
}

// Combines two partial results of `op`.
template <class W>
__device__ W combine(int op, W a, W b) {
  switch (op) {
    case kProd:
      return a * b;
    case kMax:
      return is_nan(a) ? a : is_nan(b) ? b : (a > b ? a : b);
    case kMin:
      return is_nan(a) ? a : is_nan(b) ? b : (a < b ? a : b);
    case kAll:
      return (a != W(0)) && (b != W(0));
    case kAny:
      return (a != W(0)) || (b != W(0));
    default:
      return a + b;  // sums of values, squares, powers, exponentials
  }
}

template <class W>
__device__ W identity(int op) {
  switch (op) {
    case kProd:
    case kAll:
      return W(1);
    case kMax:
      if constexpr (std::is_floating_point_v<W>)
        return -INFINITY;
      else
        return W(INT64_MIN);
    case kMin:
      if constexpr (std::is_floating_point_v<W>)
        return INFINITY;
      else
        return W(INT64_MAX);
    default:
      return W(0);
  }
}

// Shared memory that block_combine needs: a word per warp and the result.
constexpr int kCombineWords = 33;

// The warp's combination of each lane's `v` (lane 0 gets it).
template <class W>
__device__ W warp_combine(int op, W v) {
  for (int offset = 16; offset > 0; offset /= 2)
    v = combine(op, v, __shfl_down_sync(0xffffffffu, v, offset));
  return v;
}

// The block's combination of each thread's `v` (every thread gets it): warps
// combine by shuffles, then the first warp combines the warps' results, so a
// block waits at two barriers rather than at one per halving. blockDim.x is a
// multiple of 32; `shared` holds kCombineWords words.
template <class W>
__device__ W block_combine(int op, W v, W* shared) {
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, warps = blockDim.x / 32;
  v = warp_combine(op, v);
  if (lane == 0) shared[warp] = v;
  __syncthreads();
  if (warp == 0) {
    W w = warp_combine(op, lane < warps ? shared[lane] : identity<W>(op));
    if (lane == 0) shared[32] = w;
  }
  __syncthreads();
  const W r = shared[32];
  __syncthreads();  // `shared` is reused by the caller's next combination
  return r;
}

// f of elements first, first + step, ... (below hi) of row k combined by
// `op`, four at a time so that four loads are in flight per thread (any
// layout; fold_row below is the contiguous rows' faster way).
template <class T, class F>
__device__ Wide<T> fold(const Rows& r, int64_t k, int64_t first, int64_t hi, int64_t step, int op,
                        F f) {
  using W = Wide<T>;
  W a0 = identity<W>(op), a1 = a0, a2 = a0, a3 = a0;
  int64_t i = first;
  for (; i + 3 * step < hi; i += 4 * step) {
    const W v0 = f(element<T>(r, k, i)), v1 = f(element<T>(r, k, i + step)),
            v2 = f(element<T>(r, k, i + 2 * step)), v3 = f(element<T>(r, k, i + 3 * step));
    a0 = combine(op, a0, v0);
    a1 = combine(op, a1, v1);
    a2 = combine(op, a2, v2);
    a3 = combine(op, a3, v3);
  }
  for (; i < hi; i += step) a0 = combine(op, a0, f(element<T>(r, k, i)));
  return combine(op, combine(op, a0, a1), combine(op, a2, a3));
}

// f of elements lo..hi-1 of row k combined by `op`, shared by `threads`
// threads (this one is number `tid`). A contiguous row is read 16 bytes at a
// time (two loads in flight per thread), its unaligned head and tail element
// by element.
template <class T, class F>
__device__ Wide<T> fold_row(const Rows& r, int64_t k, int64_t lo, int64_t hi, int op, F f,
                            int tid = threadIdx.x, int threads = blockDim.x) {
  using W = Wide<T>;
  if (r.outer) return fold<T>(r, k, lo + tid, hi, threads, op, f);
  constexpr int N = 16 / sizeof(T);
  const T* row = static_cast<const T*>(r.in) + k * r.R;
  const uintptr_t misalign = reinterpret_cast<uintptr_t>(row + lo) % 16;
  int64_t head = misalign == 0 ? 0 : int64_t((16 - misalign) / sizeof(T));
  if (head > hi - lo) head = hi - lo;
  const int64_t a = lo + head, vectors = (hi - a) / N, b = a + vectors * N;
  auto element_at = [&](int64_t i) { return f(static_cast<W>(to_acc(row[i]))); };
  W acc0 = identity<W>(op), acc1 = acc0;
  for (int64_t i = lo + tid; i < a; i += threads) acc0 = combine(op, acc0, element_at(i));
  for (int64_t i = b + tid; i < hi; i += threads) acc1 = combine(op, acc1, element_at(i));
  const uint4* vec = reinterpret_cast<const uint4*>(row + a);
  int64_t v = tid;
  for (; v + threads < vectors; v += 2 * int64_t(threads)) {
    const uint4 p0 = __ldg(vec + v), p1 = __ldg(vec + v + threads);
    const T* e0 = reinterpret_cast<const T*>(&p0);
    const T* e1 = reinterpret_cast<const T*>(&p1);
#pragma unroll
    for (int j = 0; j < N; ++j) {
      acc0 = combine(op, acc0, f(static_cast<W>(to_acc(e0[j]))));
      acc1 = combine(op, acc1, f(static_cast<W>(to_acc(e1[j]))));
    }
  }
  if (v < vectors) {
    const uint4 p0 = __ldg(vec + v);
    const T* e0 = reinterpret_cast<const T*>(&p0);
#pragma unroll
    for (int j = 0; j < N; ++j) acc0 = combine(op, acc0, f(static_cast<W>(to_acc(e0[j]))));
  }
  return combine(op, acc0, acc1);
}

// Who reduces one row: one thread, one warp or the whole block.
enum By { kByThread, kByWarp, kByBlock };

// The value of row k reduced by `op` (every thread of the group gets it).
template <class T>
__device__ Wide<T> reduce_row(const Rows& r, int64_t k, int op, double p, bool unbiased,
                              Wide<T>* shared, By by) {
  using W = Wide<T>;
  auto all = [&](int pass_op, auto f) {
    if (by == kByThread) return fold<T>(r, k, 0, r.R, 1, pass_op, f);
    if (by == kByBlock)
      return block_combine(pass_op, fold_row<T>(r, k, 0, r.R, pass_op, f), shared);
    const W v = warp_combine(pass_op, fold_row<T>(r, k, 0, r.R, pass_op, f, threadIdx.x % 32, 32));
    return __shfl_sync(0xffffffffu, v, 0);
  };
  auto id = [](W v) { return v; };
  switch (op) {
    case kVar:
    case kStd: {
      if constexpr (std::is_floating_point_v<W>) {
        const W mean = all(kSum, id) / W(r.R);
        const W ss = all(kSum, [mean](W v) { return (v - mean) * (v - mean); });
        const int64_t n = r.R - (unbiased ? 1 : 0);
        const W var = n > 0 ? ss / W(n) : W(NAN);
        return op == kStd ? sqrt(var) : var;
      }
      return W(0);
    }
    case kNorm: {
      if constexpr (std::is_floating_point_v<W>) {
        if (isinf(p)) return all(p > 0 ? kMax : kMin, [](W v) { return fabs(v); });
        if (p == 0) return all(kSum, [](W v) { return W(v != W(0)); });
        if (p == 1) return all(kSum, [](W v) { return fabs(v); });
        if (p == 2) return sqrt(all(kSum, [](W v) { return v * v; }));
        return pow(all(kSum, [p](W v) { return pow(fabs(v), p); }), 1.0 / p);
      }
      return W(0);
    }
    case kLogsumexp: {
      if constexpr (std::is_floating_point_v<W>) {
        const W m = all(kMax, id);
        if (isinf(m)) return m;
        return m + log(all(kSum, [m](W v) { return exp(v - m); }));
      }
      return W(0);
    }
    default:
      return all(op, id);
  }
}

// Long rows are reduced by blocks of this many threads, middle ones by
// kThreads, rows of up to kWarpRowMax elements by a warp each.
constexpr int kLongRowThreads = 1024;
constexpr int64_t kWarpRowMax = 4096;

template <class T, class Out>
__global__ void __launch_bounds__(kLongRowThreads)
    reduce_rows_kernel(const Rows r, Out* out, int op, double p, bool unbiased) {
  __shared__ Wide<T> shared[kCombineWords];
  if (r.outer) {  // one thread per column k
    const int64_t k = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
    if (k < r.K) out[k] = from_acc<Out>(reduce_row<T>(r, k, op, p, unbiased, shared, kByThread));
    return;
  }
  if (r.R <= kWarpRowMax) {  // a warp per row: no block barriers, many loads in flight
    const int64_t warps = blockDim.x / 32;
    for (int64_t k = blockIdx.x * warps + threadIdx.x / 32; k < r.K; k += gridDim.x * warps) {
      const Wide<T> v = reduce_row<T>(r, k, op, p, unbiased, shared, kByWarp);
      if (threadIdx.x % 32 == 0) out[k] = from_acc<Out>(v);
    }
    return;
  }
  for (int64_t k = blockIdx.x; k < r.K; k += gridDim.x) {
    const Wide<T> v = reduce_row<T>(r, k, op, p, unbiased, shared, kByBlock);
    if (threadIdx.x == 0) out[k] = from_acc<Out>(v);
  }
}

template <class T>
__global__ void arg_extreme_kernel(const Rows r, T* values, int64_t* indices, bool is_max) {
  const int64_t k = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (k >= r.K) return;
  using W = Wide<T>;
  W best = element<T>(r, k, 0);
  int64_t at = 0;
  for (int64_t i = 1; i < r.R && !is_nan(best); ++i) {  // the first NaN wins
    const W v = element<T>(r, k, i);
    if (is_nan(v) || (is_max ? v > best : v < best)) best = v, at = i;
  }
  values[k] = from_acc<T>(best);
  indices[k] = at;
}

// One block per row: softmax and log_softmax in three passes (max, sum of
// exponentials, write); cumsum and cumprod by one thread per row.
template <class T>
__global__ void map_rows_kernel(const Rows r, T* out, int op) {
  __shared__ double shared[kCombineWords];
  const T* in = static_cast<const T*>(r.in);
  for (int64_t k = blockIdx.x; k < r.K; k += gridDim.x) {
    const T* row = in + k * r.R;
    T* o = out + k * r.R;
    if (op == kCumsum || op == kCumprod) {
      if (threadIdx.x == 0) {
        Wide<T> acc = op == kCumsum ? 0 : 1;
        for (int64_t i = 0; i < r.R; ++i) {
          const Wide<T> v = static_cast<Wide<T>>(to_acc(row[i]));
          acc = op == kCumsum ? acc + v : acc * v;
          o[i] = from_acc<T>(acc);
        }
      }
      continue;
    }
    if constexpr (std::is_floating_point_v<Acc<T>>) {
      double m = -INFINITY;
      for (int64_t i = threadIdx.x; i < r.R; i += blockDim.x) m = fmax(m, double(to_acc(row[i])));
      m = block_combine(kMax, m, shared);
      double sum = 0;
      for (int64_t i = threadIdx.x; i < r.R; i += blockDim.x)
        sum += exp(double(to_acc(row[i])) - m);
      sum = block_combine(kSum, sum, shared);
      const double log_sum = log(sum);
      for (int64_t i = threadIdx.x; i < r.R; i += blockDim.x) {
        const double x = double(to_acc(row[i])) - m;
        o[i] = from_acc<T>(op == kLogSoftmax ? x - log_sum : exp(x) / sum);
      }
    }
  }
}

// Split rows (few long rows): block (p, k) reduces chunk p of row k to a
// partial of three words at partials[(k * P + p) * 3]: the value, or for
// var/std the count, mean and sum of squared deviations of its chunk.
template <class T>
__global__ void partial_rows_kernel(const Rows r, int op, int64_t P, Wide<T>* partials) {
  using W = Wide<T>;
  __shared__ W shared[kCombineWords];
  const int64_t k = blockIdx.y, p = blockIdx.x;
  const int64_t chunk = (r.R + P - 1) / P, lo = p * chunk, hi = min(r.R, lo + chunk);
  W* out = partials + (k * P + p) * 3;
  auto id = [](W v) { return v; };
  if (op == kVar || op == kStd) {
    if constexpr (std::is_floating_point_v<W>) {
      const int64_t n = hi > lo ? hi - lo : 0;
      const W sum = block_combine(kSum, fold_row<T>(r, k, lo, hi, kSum, id), shared);
      const W mean = n > 0 ? sum / W(n) : W(0);
      const W m2 = block_combine(
          kSum, fold_row<T>(r, k, lo, hi, kSum, [mean](W v) { return (v - mean) * (v - mean); }),
          shared);
      if (threadIdx.x == 0) {
        out[0] = W(n);
        out[1] = mean;
        out[2] = m2;
      }
    }
    return;
  }
  const W v = block_combine(op, fold_row<T>(r, k, lo, hi, op, id), shared);
  if (threadIdx.x == 0) out[0] = v;
}

// Chan's pairwise merge of (count, mean, m2) summaries: a <- a with b.
template <class W>
__device__ void merge_moments(W& n, W& mean, W& m2, W nb, W mb, W m2b) {
  if (nb == 0) return;
  const W total = n + nb, delta = mb - mean;
  mean += delta * nb / total;
  m2 += m2b + delta * delta * n * nb / total;
  n = total;
}

// Combines each row's P partials, a block per row (block k, row k): each
// thread folds a strided share of them, then the block folds the threads'
// (a single thread walking P partials waited on P loads in a row: 0.25 ms
// for P = 1024). var/std merge by Chan's pairwise formula.
template <class T, class Out>
__global__ void finish_rows_kernel(const Wide<T>* partials, int64_t K, int64_t P, int op,
                                   bool unbiased, Out* out) {
  using W = Wide<T>;
  __shared__ W shared[3][kThreads];
  const int64_t k = blockIdx.x;
  const W* part = partials + k * P * 3;
  if (op == kVar || op == kStd) {
    if constexpr (std::is_floating_point_v<W>) {
      W n = 0, mean = 0, m2 = 0;
      for (int64_t p = threadIdx.x; p < P; p += blockDim.x)
        merge_moments(n, mean, m2, part[p * 3], part[p * 3 + 1], part[p * 3 + 2]);
      shared[0][threadIdx.x] = n;
      shared[1][threadIdx.x] = mean;
      shared[2][threadIdx.x] = m2;
      __syncthreads();
      for (int stride = blockDim.x / 2; stride > 0; stride /= 2) {
        if (threadIdx.x < stride) {
          const int o = threadIdx.x + stride;
          merge_moments(shared[0][threadIdx.x], shared[1][threadIdx.x], shared[2][threadIdx.x],
                        shared[0][o], shared[1][o], shared[2][o]);
        }
        __syncthreads();
      }
      if (threadIdx.x == 0) {
        const W d = shared[0][0] - (unbiased ? 1 : 0);
        const W var = d > 0 ? shared[2][0] / d : W(NAN);
        out[k] = from_acc<Out>(op == kStd ? sqrt(var) : var);
      }
    }
    return;
  }
  W acc = identity<W>(op);
  for (int64_t p = threadIdx.x; p < P; p += blockDim.x) acc = combine(op, acc, part[p * 3]);
  acc = block_combine(op, acc, shared[0]);
  if (threadIdx.x == 0) out[k] = from_acc<Out>(acc);
}

unsigned row_blocks(int64_t K) { return static_cast<unsigned>(K < 65535 ? K : 65535); }
unsigned column_blocks(int64_t K) { return static_cast<unsigned>((K + kThreads - 1) / kThreads); }

}  // namespace

int64_t split_count(const Rows& r, int op) {
  const bool splittable = op == kSum || op == kProd || op == kMax || op == kMin || op == kAll ||
                          op == kAny || op == kVar || op == kStd;
  if (!splittable || r.outer || r.K == 0 || r.K > 256 || r.R < 32768) return 1;
  const int64_t by_size = (r.R + 16383) / 16384, by_grid = 1024 / r.K;  // ~8 blocks per SM
  const int64_t P = by_size < by_grid ? by_size : by_grid;
  return P > 1 ? P : 1;
}

void launch_reduce_rows(const Rows& r, void* out, int out_dtype, int op, double p, bool unbiased,
                        int64_t P, void* scratch, cudaStream_t s) {
  if (r.K == 0) return;
  if (P > 1) {
    dispatch(r.dtype, [&](auto tag) {
      using T = decltype(tag);
      auto* partials = static_cast<Wide<T>*>(scratch);
      partial_rows_kernel<T>
          <<<dim3(unsigned(P), unsigned(r.K)), kThreads, 0, s>>>(r, op, P, partials);
      const unsigned blocks = static_cast<unsigned>(r.K);  // split rows: K <= 256
      if (out_dtype == kU8)
        finish_rows_kernel<T, uint8_t><<<blocks, kThreads, 0, s>>>(partials, r.K, P, op, unbiased,
                                                                   static_cast<uint8_t*>(out));
      else if (out_dtype == kBool)
        finish_rows_kernel<T, bool>
            <<<blocks, kThreads, 0, s>>>(partials, r.K, P, op, unbiased, static_cast<bool*>(out));
      else
        finish_rows_kernel<T, T>
            <<<blocks, kThreads, 0, s>>>(partials, r.K, P, op, unbiased, static_cast<T*>(out));
    });
    return;
  }
  const unsigned blocks = r.outer ? column_blocks(r.K)
                          : r.R <= kWarpRowMax
                              ? row_blocks((r.K + kThreads / 32 - 1) / (kThreads / 32))
                              : row_blocks(r.K);
  // Few long rows (batch norm's statistics: a row per channel) need big
  // blocks to keep enough loads in flight; with many rows (the first pass
  // of a per-channel sum: a row per sample and channel) smaller blocks fill
  // the device and wait less at their barriers.
  const int threads = !r.outer && r.R >= 8192 && r.K < 1024 ? kLongRowThreads : kThreads;
  dispatch(r.dtype, [&](auto tag) {
    using T = decltype(tag);
    if (op == kAll || op == kAny) {
      if (out_dtype == kU8)
        reduce_rows_kernel<T, uint8_t>
            <<<blocks, threads, 0, s>>>(r, static_cast<uint8_t*>(out), op, p, unbiased);
      else
        reduce_rows_kernel<T, bool>
            <<<blocks, threads, 0, s>>>(r, static_cast<bool*>(out), op, p, unbiased);
    } else {
      reduce_rows_kernel<T, T><<<blocks, threads, 0, s>>>(r, static_cast<T*>(out), op, p, unbiased);
    }
  });
}

void launch_arg_extreme(const Rows& r, void* values, int64_t* indices, bool is_max,
                        cudaStream_t s) {
  if (r.K == 0) return;
  dispatch(r.dtype, [&](auto tag) {
    using T = decltype(tag);
    arg_extreme_kernel<T>
        <<<column_blocks(r.K), kThreads, 0, s>>>(r, static_cast<T*>(values), indices, is_max);
  });
}

void launch_map_rows(const Rows& r, void* out, int op, cudaStream_t s) {
  if (r.K == 0 || r.R == 0) return;
  dispatch(r.dtype, [&](auto tag) {
    using T = decltype(tag);
    map_rows_kernel<T><<<row_blocks(r.K), kThreads, 0, s>>>(r, static_cast<T*>(out), op);
  });
}

}  // namespace brasa::cuda::kernels
