// CPU kernels of the reduction family: rows summed in blocks (floats four
// rows in step, in double across blocks), generic row reductions, arg
// max/min, and softmax/cumsum row maps.
#include <brasa/ops/cpu/variant.h>
#include <brasa/ops/cpu/register.h>
#include <brasa/ops/cpu/softmax_kernel.h>
#include <brasa/ops/copy.h>
#include <brasa/ops/kernels/reduction.h>
#include <brasa/util/parallel.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>
#ifdef BRASA_CPU_HAS_AVX512
#include <immintrin.h>
#endif

namespace brasa::cpu {
inline namespace BRASA_CPU_VARIANT {
namespace {

// Rows per parallel_for task: at least ~32K elements of work.
int64_t row_grain(int64_t R) { return std::max<int64_t>(1, 32768 / std::max<int64_t>(R, 1)); }

template <class F>
void for_each_row(int64_t K, int64_t R, const F& f) {
  parallel_for(0, K, row_grain(R), [&](int64_t b, int64_t e) {
    for (int64_t k = b; k < e; ++k) f(k);
  });
}

typedef float v8 __attribute__((vector_size(32)));

// 128 floats added by four independent 8-wide accumulators.
inline v8 sum_sub_block(const float* p) {
  v8 a0 = {}, a1 = {}, a2 = {}, a3 = {};
  for (int i = 0; i < 128; i += 32) {
    v8 x0, x1, x2, x3;
    std::memcpy(&x0, p + i, 32);
    std::memcpy(&x1, p + i + 8, 32);
    std::memcpy(&x2, p + i + 16, 32);
    std::memcpy(&x3, p + i + 24, 32);
    a0 += x0, a1 += x1, a2 += x2, a3 += x3;
  }
  return (a0 + a1) + (a2 + a3);
}

// Sums G rows of n floats, `ld` apart, into out[0..G), accurately for long
// rows: 128-element sub-blocks add into block sums over 4096 elements, and
// blocks add up in double. The G rows go in step, sub-block by sub-block,
// because one core reads memory ~20% faster from four streams than from one
// (measured: 19-20 GB/s against 22-24). Each row is summed in the same order
// whatever G, so a row's sum does not depend on grouping or thread count.
template <int G>
void sum_float_rows(const float* p, int64_t ld, int64_t n, double* out) {
  for (int g = 0; g < G; ++g) out[g] = 0;
  for (int64_t b = 0; b < n; b += 4096) {
    const int64_t e = std::min(n, b + 4096);
    int64_t i = b;
    v8 block[G] = {};
    for (; i + 128 <= e; i += 128)
      for (int g = 0; g < G; ++g) block[g] += sum_sub_block(p + g * ld + i);
    // The rest of the block 8 at a time too: one by one, the adds of a
    // row of 224 (128 + 96) waited on each other (1.2-1.5x libtorch's time).
    for (int g = 0; g < G; ++g) {
      v8 rest = {};
      int64_t t = i;
      for (; t + 8 <= e; t += 8) {
        v8 x;
        std::memcpy(&x, p + g * ld + t, 32);
        rest += x;
      }
      const v8 all = block[g] + rest;
      float s = 0;
      for (int j = 0; j < 8; ++j) s += all[j];
      for (; t < e; ++t) s += p[g * ld + t];
      out[g] += s;
    }
  }
}

// Integer sums wrap around, as PyTorch's do: they add in uint64_t, where
// wrapping is defined (in int64_t it is undefined behaviour), and the caller
// casts back.
template <class T>
using sum_acc_t = std::conditional_t<std::is_floating_point_v<opmath_t<T>>, opmath_t<T>, uint64_t>;

template <class T>
auto sum_contig(const T* p, int64_t n) {
  using A = std::conditional_t<std::is_floating_point_v<opmath_t<T>>, double, uint64_t>;
  A s = 0;
  for (int64_t i = 0; i < n; ++i) s += static_cast<A>(static_cast<opmath_t<T>>(p[i]));
  return s;
}

#ifdef BRASA_CPU_HAS_AVX512
// Float rows of at most four vectors (a gradient reduced over a broadcast
// 13-wide axis): masked loads added lane-wise, then one tree sum of the 16
// lanes. Every such row takes this path whatever its neighbours, so a row's
// sum does not depend on grouping or thread count. sum_float_rows would add
// a short row element by element in its tail loop, a dependent chain of adds.
constexpr int64_t kShortSumRow = 64;
inline float sum_short_row(const float* p, int64_t n) {
  __m512 acc =
      _mm512_maskz_loadu_ps(_bzhi_u32(0xFFFF, static_cast<unsigned>(std::min<int64_t>(n, 16))), p);
  for (int64_t c = 16; c < n; c += 16)
    acc = _mm512_add_ps(
        acc, _mm512_maskz_loadu_ps(
                 _bzhi_u32(0xFFFF, static_cast<unsigned>(std::min<int64_t>(n - c, 16))), p + c));
  return _mm512_reduce_add_ps(acc);
}
#endif

// Sums `rows` rows of n elements, `ld` apart; store(r, sum) takes row r's.
template <class T, class Store>
void sum_rows(const T* p, int64_t ld, int64_t rows, int64_t n, const Store& store) {
  int64_t r = 0;
  if constexpr (std::is_same_v<T, float>) {
#ifdef BRASA_CPU_HAS_AVX512
    if (n <= kShortSumRow) {
      for (; r < rows; ++r) store(r, static_cast<double>(sum_short_row(p + r * ld, n)));
      return;
    }
#endif
    double s[4];
    for (; r + 4 <= rows; r += 4) {
      sum_float_rows<4>(p + r * ld, ld, n, s);
      for (int g = 0; g < 4; ++g) store(r + g, s[g]);
    }
    for (; r < rows; ++r) {
      sum_float_rows<1>(p + r * ld, ld, n, s);
      store(r, s[0]);
    }
  }
  for (; r < rows; ++r) store(r, sum_contig(p + r * ld, n));
}

// The sums of a row plan into out (T), reading In: T itself, or the bytes of
// a bool mask counted into int64 (mask.sum() without an int64 copy of the
// mask first: 1 Mi elements, 107 us with the copy).
// The columns of a plan whose rows are not rows (`outer`: [R, K]; `inner`:
// [K / inner, R, inner]), each folded where it lies: out(k, acc) gets
// fold(first, x[.., r, ..]) over r for column k. A strip of columns at a
// time keeps the accumulators in L1 while the loop runs along memory (it
// vectorizes across the strip), with no transposed copy of the input first.
template <class Acc, class In, class Step, class Store>
void reduce_columns(const RowPlan& p, Acc first, const Step& step, const Store& store) {
  const In* in = static_cast<const In*>(p.rows.data_ptr());
  const int64_t I = p.outer ? p.K : p.inner, O = p.K / I, R = p.R;
  constexpr int64_t kStrip = 1024;
  const int64_t strips = (I + kStrip - 1) / kStrip;
  const int64_t grain = std::max<int64_t>(1, 32768 / std::max<int64_t>(R * std::min(I, kStrip), 1));
  parallel_for(0, O * strips, grain, [&](int64_t b, int64_t e) {
    Acc acc[kStrip];
    for (int64_t task = b; task < e; ++task) {
      const int64_t o = task / strips, i0 = (task % strips) * kStrip, n = std::min(kStrip, I - i0);
      const In* block = in + o * R * I + i0;
      for (int64_t i = 0; i < n; ++i) acc[i] = first;
      for (int64_t r = 0; r < R; ++r) {
        const In* row = block + r * I;
        for (int64_t i = 0; i < n; ++i) acc[i] = step(acc[i], row[i]);
      }
      for (int64_t i = 0; i < n; ++i) store(o * I + i0 + i, acc[i]);
    }
  });
}

template <class T, class In>
void sum_typed(const RowPlan& p, const Tensor& out) {
  const In* in = static_cast<const In*>(p.rows.data_ptr());
  T* o = out.template data_ptr<T>();
  if (p.outer || p.inner > 0) {
    using Acc = sum_acc_t<In>;
    reduce_columns<Acc, In>(
        p, Acc(0), [](Acc a, In v) { return a + static_cast<Acc>(static_cast<opmath_t<In>>(v)); },
        [o](int64_t k, Acc a) { o[k] = static_cast<T>(a); });
  } else if (p.K == 1 && p.R > 65536) {
    if constexpr (std::is_floating_point_v<opmath_t<T>>) {
      // One long row: fixed-size chunks summed in parallel, added in order
      // (the same result whatever the thread count); the last may be short.
      const int64_t chunk = 65536, full = p.R / chunk, n = (p.R + chunk - 1) / chunk;
      std::vector<double> parts(n);
      parallel_for(0, n, 1, [&](int64_t b, int64_t e) {
        const int64_t e_full = std::min(e, full);
        sum_rows(in + b * chunk, chunk, e_full - b, chunk,
                 [&](int64_t c, auto v) { parts[b + c] = static_cast<double>(v); });
        if (e > full)
          sum_rows(in + full * chunk, chunk, 1, p.R - full * chunk,
                   [&](int64_t, auto v) { parts[full] = static_cast<double>(v); });
      });
      double s = 0;
      for (double v : parts) s += v;
      o[0] = static_cast<T>(s);
    } else {
      o[0] = static_cast<T>(sum_contig(in, p.R));
    }
  } else {
    parallel_for(0, p.K, row_grain(p.R), [&](int64_t b, int64_t e) {
      sum_rows(in + b * p.R, p.R, e - b, p.R,
               [&](int64_t k, auto v) { o[b + k] = static_cast<T>(v); });
    });
  }
}

void sum_cpu(const RowPlan& p, const Tensor& out) {
  if (p.rows.dtype() == kBool && out.dtype() == kLong) return sum_typed<int64_t, uint8_t>(p, out);
  BRASA_DISPATCH_ALL_TYPES(out.dtype(), "sum", [&] { sum_typed<scalar_t, scalar_t>(p, out); });
}

template <class T>
bool is_nan(T v) {
  if constexpr (std::is_floating_point_v<opmath_t<T>>)
    return static_cast<opmath_t<T>>(v) != static_cast<opmath_t<T>>(v);
  return false;
}

// Index of the max (or min) of a row; the first NaN wins, as in PyTorch.
template <class T>
int64_t arg_extreme(const T* r, int64_t n, bool is_max) {
  int64_t best = 0;
  opmath_t<T> bv = r[0];
  if (is_nan(r[0])) return 0;
  for (int64_t i = 1; i < n; ++i) {
    opmath_t<T> v = r[i];
    if (is_nan(r[i])) return i;
    if (is_max ? v > bv : v < bv) bv = v, best = i;
  }
  return best;
}

// The max (or min) of a row, NaN if it holds one (as PyTorch), in 16
// independent lanes the compiler vectorizes: arg_extreme's scalar loop, with
// its index and early NaN exit, took 14x libtorch's time for amax over rows
// of 512.
typedef int32_t v8i __attribute__((vector_size(32)));

// The max (or min) of a float row in two vectors of 8 (GCC's vector
// extensions: `a > x ? a : x` is one vector max), NaN if the row holds one,
// as PyTorch: arg_extreme's scalar loop with its index and NaN exit took 14x
// libtorch's time for amax over rows of 512, and a plain lane loop stayed
// scalar (the NaN test kept GCC from vectorizing it).
float extreme_of_float_row(const float* r, int64_t n, bool is_max) {
  v8 a0, a1;
  std::memcpy(&a0, r, sizeof a0);
  std::memcpy(&a1, r + 8, sizeof a1);
  v8i nan = (a0 != a0) | (a1 != a1);  // (a NaN in a0 would lose the first max)
  int64_t i = 16;
  for (; i + 16 <= n; i += 16) {
    v8 x0, x1;
    std::memcpy(&x0, r + i, sizeof x0);
    std::memcpy(&x1, r + i + 8, sizeof x1);
    nan |= (x0 != x0) | (x1 != x1);
    if (is_max) {
      a0 = a0 > x0 ? a0 : x0;
      a1 = a1 > x1 ? a1 : x1;
    } else {
      a0 = a0 < x0 ? a0 : x0;
      a1 = a1 < x1 ? a1 : x1;
    }
  }
  bool has_nan = false;
  float best = a0[0];
  for (int j = 0; j < 8; ++j) {
    has_nan = has_nan || nan[j] != 0;
    for (float v : {a0[j], a1[j]}) best = is_max ? (best > v ? best : v) : (best < v ? best : v);
  }
  for (; i < n; ++i) {
    has_nan = has_nan || r[i] != r[i];
    best = is_max ? (best > r[i] ? best : r[i]) : (best < r[i] ? best : r[i]);
  }
  return has_nan ? std::numeric_limits<float>::quiet_NaN() : best;
}

// The index of the first max (or min) of a float row, or of its first NaN:
// the value by extreme_of_float_row, then the first place that holds it,
// 16 at a time (max(dim) over rows of 512 took 3.3x libtorch's time by
// arg_extreme's scalar loop).
int64_t arg_extreme_of_float_row(const float* r, int64_t n, bool is_max) {
  const float best = extreme_of_float_row(r, n, is_max);
  const bool nan = best != best;
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    v8 x0, x1;
    std::memcpy(&x0, r + i, sizeof x0);
    std::memcpy(&x1, r + i + 8, sizeof x1);
    const v8i hit = nan ? (x0 != x0) | (x1 != x1) : (x0 == best) | (x1 == best);
    int32_t any = 0;
    for (int j = 0; j < 8; ++j) any |= hit[j];
    if (any) break;
  }
  for (; i < n; ++i)
    if (nan ? r[i] != r[i] : r[i] == best) return i;
  return 0;  // (not reached: the row holds its extreme)
}

// Rows as [K, R] (a plan of columns is transposed first).
Tensor row_major(const RowPlan& p) {
  if (p.outer) return contiguous(p.rows.t());
  if (p.inner > 0) return contiguous(p.rows.transpose(1, 2)).view({p.K, p.R});
  return p.rows;
}

// Max or min of each column of a plan of columns (see reduce_columns); a
// NaN wins, as in PyTorch.
template <class T>
void extreme_columns(const RowPlan& p, const Tensor& out, bool is_max) {
  using M = opmath_t<T>;
  M first = is_max ? std::numeric_limits<M>::lowest() : std::numeric_limits<M>::max();
  if constexpr (std::numeric_limits<M>::has_infinity)
    first = is_max ? -std::numeric_limits<M>::infinity() : std::numeric_limits<M>::infinity();
  T* o = out.data_ptr<T>();
  auto store = [o](int64_t k, M a) { o[k] = static_cast<T>(a); };
  if (is_max)
    reduce_columns<M, T>(
        p, first,
        [](M a, T x) {
          M v = x;
          return v > a || v != v ? v : a;
        },
        store);
  else
    reduce_columns<M, T>(
        p, first,
        [](M a, T x) {
          M v = x;
          return v < a || v != v ? v : a;
        },
        store);
}

// out[k] = f(row k, R) for every row.
template <class In, class Out, class F>
void reduce_rows(const RowPlan& p, const Tensor& out, const F& f) {
  Tensor rows = row_major(p);
  const In* in = rows.data_ptr<In>();
  Out* o = out.data_ptr<Out>();
  const int64_t R = p.R;
  for_each_row(p.K, R, [&](int64_t k) { o[k] = static_cast<Out>(f(in + k * R, R)); });
}

// The sum of f(r[i]) in double, in 8 independent lanes: the compiler
// vectorizes them (one running sum it may not reorder).
template <class T, class F>
double lane_sum(const T* r, int64_t n, const F& f) {
  double lanes[8] = {};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (int j = 0; j < 8; ++j) lanes[j] += f(static_cast<double>(r[i + j]));
  double s = 0;
  for (; i < n; ++i) s += f(static_cast<double>(r[i]));
  for (double v : lanes) s += v;
  return s;
}
// lane_sum with 32 lanes for long rows: four vectors of doubles add
// independently, so the adds' latency does not bound the loop (8 lanes
// run at 2 elements a cycle); short rows would pay for folding them.
template <class T, class F>
double long_row_sum(const T* r, int64_t n, const F& f) {
  if (n < 128) return lane_sum(r, n, f);
  double lanes[32] = {};
  int64_t i = 0;
  for (; i + 32 <= n; i += 32)
    for (int j = 0; j < 32; ++j) lanes[j] += f(static_cast<double>(r[i + j]));
  double s = lane_sum(r + i, n - i, f);
  for (double v : lanes) s += v;
  return s;
}

// Two passes (the mean, then the squared deviations), each in lanes.
template <class T>
double variance(const T* r, int64_t n, bool unbiased) {
  const double m = long_row_sum(r, n, [](double a) { return a; }) / static_cast<double>(n);
  const double ss = long_row_sum(r, n, [m](double a) { return (a - m) * (a - m); });
  const double denom = static_cast<double>(n) - (unbiased ? 1.0 : 0.0);
  return denom > 0 ? ss / denom : std::numeric_limits<double>::quiet_NaN();
}

template <class T>
double norm_of_row(const T* r, int64_t n, double p) {
  if (std::isinf(p)) {
    double m = p > 0 ? 0.0 : INFINITY;
    for (int64_t i = 0; i < n; ++i) {
      double a = std::abs(static_cast<double>(r[i]));
      if (a != a) return a;
      m = p > 0 ? std::max(m, a) : std::min(m, a);
    }
    return m;
  }
  if (p == 2) return std::sqrt(long_row_sum(r, n, [](double a) { return a * a; }));
  if (p == 1) return long_row_sum(r, n, [](double a) { return std::abs(a); });
  if (p == 0) return lane_sum(r, n, [](double a) { return a != 0 ? 1.0 : 0.0; });
  return std::pow(lane_sum(r, n, [p](double a) { return std::pow(std::abs(a), p); }), 1.0 / p);
}

template <class T>
double logsumexp_of_row(const T* r, int64_t n) {
  double m = -INFINITY;
  for (int64_t i = 0; i < n; ++i) m = std::max(m, static_cast<double>(r[i]));
  if (std::isinf(m)) return m;
  double s = 0;
  for (int64_t i = 0; i < n; ++i) s += std::exp(static_cast<double>(r[i]) - m);
  return m + std::log(s);
}

template <class T>
bool all_or_any(const T* r, int64_t n, bool is_all) {
  for (int64_t i = 0; i < n; ++i) {
    bool nz = static_cast<opmath_t<T>>(r[i]) != opmath_t<T>(0);
    if (is_all && !nz) return false;
    if (!is_all && nz) return true;
  }
  return is_all;
}

void reduce_rows_cpu(const RowPlan& p, const Tensor& out, RowReduction op, const ReduceOptions& o) {
  using RR = RowReduction;
  const ScalarType t = p.rows.dtype();
  switch (op) {
    case RR::Sum:
      return sum_cpu(p, out);
    case RR::Prod:
      BRASA_DISPATCH_ALL_TYPES(t, "prod", [&] {
        reduce_rows<scalar_t, scalar_t>(p, out, [](const scalar_t* r, int64_t n) {
          opmath_t<scalar_t> a = 1;
          for (int64_t i = 0; i < n; ++i) a *= static_cast<opmath_t<scalar_t>>(r[i]);
          return a;
        });
      });
      return;
    case RR::Max:
    case RR::Min: {
      const bool is_max = op == RR::Max;
      if ((p.outer || p.inner > 0) && t != kBool)
        return BRASA_DISPATCH_ALL_TYPES(t, is_max ? "max" : "min",
                                        [&] { extreme_columns<scalar_t>(p, out, is_max); });
      if (t == kFloat && p.R >= 16)
        return reduce_rows<float, float>(p, out, [is_max](const float* r, int64_t n) {
          return extreme_of_float_row(r, n, is_max);
        });
      BRASA_DISPATCH_ALL_TYPES_AND_BOOL(t, is_max ? "max" : "min", [&] {
        reduce_rows<scalar_t, scalar_t>(p, out, [is_max](const scalar_t* r, int64_t n) {
          return r[arg_extreme(r, n, is_max)];
        });
      });
      return;
    }
    case RR::Var:
    case RR::Std: {
      const bool take_sqrt = op == RR::Std, unbiased = o.unbiased;
      BRASA_DISPATCH_FLOATING_TYPES(t, take_sqrt ? "std" : "var", [&] {
        reduce_rows<scalar_t, scalar_t>(p, out, [=](const scalar_t* r, int64_t n) {
          const double v = variance(r, n, unbiased);
          return take_sqrt ? std::sqrt(v) : v;
        });
      });
      return;
    }
    case RR::All:
    case RR::Any: {
      const bool is_all = op == RR::All;
      BRASA_DISPATCH_ALL_TYPES_AND_BOOL(t, is_all ? "all" : "any", [&] {
        auto f = [is_all](const scalar_t* r, int64_t n) { return all_or_any(r, n, is_all); };
        if (out.dtype() == kByte)
          reduce_rows<scalar_t, uint8_t>(p, out, f);
        else
          reduce_rows<scalar_t, bool>(p, out, f);
      });
      return;
    }
    case RR::Norm:
      BRASA_DISPATCH_FLOATING_TYPES(t, "norm", [&] {
        const double order = o.p;
        reduce_rows<scalar_t, scalar_t>(
            p, out, [order](const scalar_t* r, int64_t n) { return norm_of_row(r, n, order); });
      });
      return;
    case RR::Logsumexp:
      BRASA_DISPATCH_FLOATING_TYPES(t, "logsumexp", [&] {
        reduce_rows<scalar_t, scalar_t>(
            p, out, [](const scalar_t* r, int64_t n) { return logsumexp_of_row(r, n); });
      });
      return;
  }
}

void arg_extreme_cpu(const RowPlan& p, const Tensor& vals, const Tensor& idx, bool is_max) {
  Tensor rows = row_major(p);
  if (rows.dtype() == kFloat && p.R >= 16) {
    const float* in = rows.data_ptr<float>();
    float* v = vals.data_ptr<float>();
    int64_t* ix = idx.data_ptr<int64_t>();
    for_each_row(p.K, p.R, [&](int64_t k) {
      ix[k] = arg_extreme_of_float_row(in + k * p.R, p.R, is_max);
      v[k] = in[k * p.R + ix[k]];
    });
    return;
  }
  BRASA_DISPATCH_ALL_TYPES_AND_BOOL(rows.dtype(), is_max ? "max" : "min", [&] {
    const scalar_t* in = rows.data_ptr<scalar_t>();
    scalar_t* v = vals.data_ptr<scalar_t>();
    int64_t* ix = idx.data_ptr<int64_t>();
    for_each_row(p.K, p.R, [&](int64_t k) {
      int64_t i = arg_extreme(in + k * p.R, p.R, is_max);
      ix[k] = i;
      v[k] = in[k * p.R + i];
    });
  });
}

void softmax_rows(const Tensor& in, const Tensor& out, int64_t K, int64_t R, bool log) {
  const ScalarType t = in.dtype();
  const char* op = log ? "log_softmax" : "softmax";
  if (t == kFloat)
    return softmax_rows_float(in.data_ptr<float>(), out.data_ptr<float>(), K, R, log);
  BRASA_DISPATCH_FLOATING_TYPES(t, op, [&] {
    using M = opmath_t<scalar_t>;
    const scalar_t* ip = in.data_ptr<scalar_t>();
    scalar_t* op_ = out.data_ptr<scalar_t>();
    for_each_row(K, R, [&](int64_t k) {
      const scalar_t* r = ip + k * R;
      scalar_t* o = op_ + k * R;
      M m = -INFINITY;
      for (int64_t i = 0; i < R; ++i) m = std::max<M>(m, r[i]);
      if (m == -INFINITY) m = 0;
      M s = 0;
      for (int64_t i = 0; i < R; ++i) s += std::exp(M(r[i]) - m);
      M ls = m + std::log(s);
      for (int64_t i = 0; i < R; ++i)
        o[i] = static_cast<scalar_t>(log ? M(r[i]) - ls : std::exp(M(r[i]) - ls));
    });
  });
}

void scan_rows(const Tensor& in, const Tensor& out, int64_t K, int64_t R, bool product) {
  const ScalarType t = in.dtype();
  const char* op = product ? "cumprod" : "cumsum";
  BRASA_DISPATCH_ALL_TYPES(t, op, [&] {
    using M = opmath_t<scalar_t>;
    const scalar_t* ip = in.data_ptr<scalar_t>();
    scalar_t* o = out.data_ptr<scalar_t>();
    for_each_row(K, R, [&](int64_t k) {
      M acc = product ? M(1) : M(0);
      for (int64_t i = 0; i < R; ++i) {
        acc = product ? acc * M(ip[k * R + i]) : acc + M(ip[k * R + i]);
        o[k * R + i] = static_cast<scalar_t>(acc);
      }
    });
  });
}

void map_rows_cpu(const Tensor& in, const Tensor& out, int64_t K, int64_t R, RowMap op) {
  switch (op) {
    case RowMap::Softmax:
      return softmax_rows(in, out, K, R, false);
    case RowMap::LogSoftmax:
      return softmax_rows(in, out, K, R, true);
    case RowMap::Cumsum:
      return scan_rows(in, out, K, R, false);
    case RowMap::Cumprod:
      return scan_rows(in, out, K, R, true);
  }
}

}  // namespace

namespace {

// Blocks of this many elements are summed in a local array that stays in L1:
// every input is read once, in order, and `out` may alias any of them.
constexpr int64_t kSumArraysBlock = 1024;

template <class T>
void sum_arrays_typed(T* out, const void* const* inputs, int count, int64_t n, bool average) {
  const T* a = static_cast<const T*>(inputs[0]);
  if (count == 1) {  // an average of one is the value itself
    if (out != a) std::memmove(out, a, static_cast<size_t>(n) * sizeof(T));
    return;
  }
  // An average divides by count; by a power of two that is a multiplication
  // by its exact inverse, several times cheaper than a vector division (it
  // doubled a 2 MiB allreduce's time).
  const bool exact_inverse = (count & (count - 1)) == 0;
  const T inverse = T(1) / static_cast<T>(count), divisor = static_cast<T>(count);
  if (count == 2) {
    // The common case (two ranks): one elementwise pass. The in-place forms
    // are spelled out so that the compiler sees the aliasing and vectorizes.
    const T* b = static_cast<const T*>(inputs[1]);
    if (!average) {
      if (out == a) {
        for (int64_t i = 0; i < n; ++i) out[i] += b[i];
      } else if (out == b) {
        for (int64_t i = 0; i < n; ++i) out[i] = a[i] + out[i];
      } else {
        for (int64_t i = 0; i < n; ++i) out[i] = a[i] + b[i];
      }
    } else if (out == a) {
      for (int64_t i = 0; i < n; ++i) out[i] = (out[i] + b[i]) * inverse;
    } else if (out == b) {
      for (int64_t i = 0; i < n; ++i) out[i] = (a[i] + out[i]) * inverse;
    } else {
      for (int64_t i = 0; i < n; ++i) out[i] = (a[i] + b[i]) * inverse;
    }
    return;
  }
  T acc[kSumArraysBlock];
  for (int64_t start = 0; start < n; start += kSumArraysBlock) {
    const int64_t m = std::min(kSumArraysBlock, n - start);
    for (int64_t i = 0; i < m; ++i) acc[i] = a[start + i];
    for (int k = 1; k < count; ++k) {
      const T* in = static_cast<const T*>(inputs[k]) + start;
      for (int64_t i = 0; i < m; ++i) acc[i] += in[i];
    }
    if (average && exact_inverse) {
      for (int64_t i = 0; i < m; ++i) acc[i] *= inverse;
    } else if (average) {
      for (int64_t i = 0; i < m; ++i) acc[i] /= divisor;
    }
    std::memcpy(out + start, acc, static_cast<size_t>(m) * sizeof(T));
  }
}

void sum_arrays_cpu(void* out, const void* const* inputs, int count, int64_t n, ScalarType t,
                    bool average) {
  BRASA_CHECK(count >= 1 && n >= 0, "sum of arrays: needs at least one input and n >= 0, got ",
              count, " inputs of ", n, " elements");
  if (n == 0) return;
  if (t == ScalarType::Float)
    return sum_arrays_typed(static_cast<float*>(out), inputs, count, n, average);
  if (t == ScalarType::Double)
    return sum_arrays_typed(static_cast<double*>(out), inputs, count, n, average);
  BRASA_ERROR("sum of arrays: expected float or double elements, got ", toString(t));
}

}  // namespace

void register_reduction_kernels() {
  register_kernel<ReduceRowsKernel>(kCPU, reduce_rows_cpu);
  register_kernel<ArgExtremeKernel>(kCPU, arg_extreme_cpu);
  register_kernel<MapRowsKernel>(kCPU, map_rows_cpu);
  register_kernel<SumArraysKernel>(kCPU, sum_arrays_cpu);
}

}  // namespace BRASA_CPU_VARIANT
}  // namespace brasa::cpu
