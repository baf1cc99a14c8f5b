#pragma once
// The one strided-iteration helper every elementwise kernel goes through:
// operands share an iteration shape; each has its own byte strides (0 where
// broadcast). Adjacent dims are coalesced, the range is split across the pool,
// and the kernel sees 1-D runs (pointers + inner strides + length) with a
// contiguous fast path the compiler vectorizes.
#include <brasa/ops/cpu/variant.h>
#include <brasa/tensor/tensor.h>
#include <brasa/util/parallel.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cstring>
#include <tuple>
#include <utility>
#ifdef BRASA_CPU_HAS_AVX2
#include <immintrin.h>
#endif

namespace brasa::cpu {
inline namespace BRASA_CPU_VARIANT {

constexpr int kMaxOperands = 8;
constexpr int64_t kGrain = 32768;
// Outputs of at least this many bytes leave the caches anyway: elementwise
// kernels write them with streaming stores (see write_run).
constexpr int64_t kStreamOutputBytes = int64_t(8) << 20;

// Whether an op's output of `bytes` at `out` goes out with streaming stores:
// only a large one that is not an input (in place, its lines were just read
// and a plain store costs no extra traffic). `b` is null for a unary op.
inline bool stream_output(int64_t bytes, const char* out, const char* a, const char* b) {
  return bytes >= kStreamOutputBytes && out != a && out != b;
}

class StridedLoop {
 public:
  explicit StridedLoop(IntArrayRef shape) : shape_(shape.begin(), shape.end()) {}
  // Adds an operand: `t` must have (or broadcast to) the loop's shape.
  void add(const Tensor& t);
  // Adds raw memory with element strides given per loop dim.
  void add_raw(char* data, IntArrayRef elem_strides, int64_t elem_size);
  int nops() const { return nops_; }
  int64_t numel() const {
    int64_t n = 1;
    for (auto s : shape_) n *= s;
    return n;
  }
  int ndim() const { return static_cast<int>(shape_.size()); }
  IntArrayRef shape() const { return shape_; }
  const int64_t* strides(int op) const { return strides_[op].data(); }
  char* data(int op) const { return data_[op]; }
  // Drops size-1 dims and merges dims that are contiguous for every operand.
  void coalesce();
  // Reorders the loop's dims so that operand 0 (an elementwise op's output)
  // is walked in memory order: an output laid out channels-last, like its
  // input, is then written and read in runs instead of one element per
  // cache line. Only for loops whose result does not depend on the order.
  void order_dims_by_first_operand();

  // f(char** ptrs, const int64_t* inner_strides, int64_t n) for every inner run.
  template <class F>
  void run(const F& f, int64_t grain = kGrain) {
    coalesce();
    int64_t total = numel();
    if (total == 0) return;
    parallel_for(0, total, grain, [&](int64_t b, int64_t e) { run_range(f, b, e); });
  }
  template <class F>
  void run_serial(const F& f) {
    coalesce();
    int64_t total = numel();
    if (total > 0) run_range(f, 0, total);
  }
  // Like run, but whole rows of the innermost dim come in blocks:
  // f(ptrs, inner_strides, n, outer_strides, m) for m rows of n elements,
  // row r at ptrs[k] + r * outer_strides[k]. A short innermost dim (a
  // broadcast against a 12-wide axis) then costs the kernel one call per
  // block instead of one per row.
  template <class F>
  void run_rows(const F& f, int64_t grain = kGrain) {
    coalesce();
    int64_t total = numel();
    if (total == 0) return;
    parallel_for(0, total, grain, [&](int64_t b, int64_t e) { run_rows_range(f, b, e); });
  }

 private:
  // Points ptrs at element `pos` (row-major over shape_), its index in idx.
  void seek(int64_t pos, DimVector& idx, char** ptrs) const {
    for (int d = ndim() - 1; d >= 0; --d) {
      idx[d] = pos % shape_[d];
      pos /= shape_[d];
    }
    for (int k = 0; k < nops_; ++k) {
      ptrs[k] = data_[k];
      for (int d = 0; d < ndim(); ++d) ptrs[k] += idx[d] * strides_[k][d];
    }
  }
  // After dim d moved on: wraps every dim from d up that reached its end.
  void carry(int d, DimVector& idx, char** ptrs) const {
    for (; d > 0 && idx[d] == shape_[d]; --d) {
      idx[d] = 0;
      ++idx[d - 1];
      for (int k = 0; k < nops_; ++k) ptrs[k] += strides_[k][d - 1] - shape_[d] * strides_[k][d];
    }
  }

  template <class F>
  void run_rows_range(const F& f, int64_t begin, int64_t end) const {
    const int nd = ndim();
    const int last = nd - 1;
    DimVector idx(nd);
    char* ptrs[kMaxOperands];
    int64_t inner[kMaxOperands], outer[kMaxOperands];
    seek(begin, idx, ptrs);
    for (int k = 0; k < nops_; ++k) {
      inner[k] = strides_[k][last];
      outer[k] = nd >= 2 ? strides_[k][last - 1] : 0;
    }
    const int64_t width = shape_[last];
    int64_t pos = begin;
    while (pos < end) {
      if (idx[last] == 0 && end - pos >= width && nd >= 2) {
        // Whole rows up to the end of the range or of the row dim.
        const int64_t m = std::min((end - pos) / width, shape_[last - 1] - idx[last - 1]);
        f(ptrs, inner, width, outer, m);
        pos += m * width;
        if (pos >= end) break;
        idx[last - 1] += m;
        for (int k = 0; k < nops_; ++k) ptrs[k] += m * outer[k];
        carry(last - 1, idx, ptrs);
        continue;
      }
      // A part of a row (where the range starts or ends mid-row), or 1-D.
      const int64_t n = std::min(width - idx[last], end - pos);
      f(ptrs, inner, n, outer, int64_t(1));
      pos += n;
      if (pos >= end) break;
      idx[last] += n;
      for (int k = 0; k < nops_; ++k) ptrs[k] += n * inner[k];
      carry(last, idx, ptrs);
    }
  }

  template <class F>
  void run_range(const F& f, int64_t begin, int64_t end) const {
    const int last = ndim() - 1;
    DimVector idx(ndim());  // any number of dims (inline up to DimVector's capacity)
    char* ptrs[kMaxOperands];
    int64_t inner[kMaxOperands];
    seek(begin, idx, ptrs);
    for (int k = 0; k < nops_; ++k) inner[k] = strides_[k][last];
    int64_t pos = begin;
    while (pos < end) {
      int64_t n = std::min(shape_[last] - idx[last], end - pos);
      f(ptrs, inner, n);
      pos += n;
      if (pos >= end) break;
      idx[last] += n;
      for (int k = 0; k < nops_; ++k) ptrs[k] += n * inner[k];
      carry(last, idx, ptrs);
    }
  }

  DimVector shape_;
  DimVector strides_[kMaxOperands];  // bytes
  char* data_[kMaxOperands] = {};
  int nops_ = 0;
};

// ---- typed 1-D kernels ----

// out[i] = f(in0[i], in1[i], ...) with Out/In the storage types; f works on opmath types.
// Each call of f here and in binary_run/unary_run is a site GCC weighs for
// inlining: one site more once left a whole activation's lambda called per
// element (7x slower), so new cases reuse the sites there are.
template <class Out, class... In, class F, size_t... I>
inline void nary_run(char** data, const int64_t* s, int64_t n, const F& op,
                     std::index_sequence<I...>) {
  const F f = op;  // a local copy: see binary_run
  if constexpr (sizeof...(In) >= 3) {
    // Contiguous, or contiguous but for broadcast inputs (a gradient
    // expanded from a sum or mean): those are read from a chunk-long copy
    // of their value, so that the loop sees only contiguous arrays and
    // vectorizes.
    const bool dense = s[0] == sizeof(Out) && ((s[I + 1] == sizeof(In) || s[I + 1] == 0) && ...);
    // (A short run, a row of a broadcast against a 10-wide axis, costs more
    // in filling the copies than the plain loop below.)
    if (dense && n >= 64) {
      constexpr int64_t kChunk = 256;
      const int64_t filled = std::min(kChunk, n);
      std::tuple<std::array<In, kChunk>...> repeated;
      ((s[I + 1] == 0 ? std::fill_n(std::get<I>(repeated).data(), filled,
                                    *reinterpret_cast<const In*>(data[I + 1]))
                      : nullptr),
       ...);
      Out* o = reinterpret_cast<Out*>(data[0]);
      for (int64_t c = 0; c < n; c += kChunk) {
        const int64_t m = std::min(kChunk, n - c);
        const std::tuple<const In*...> in{(s[I + 1] == 0
                                               ? std::get<I>(repeated).data()
                                               : reinterpret_cast<const In*>(data[I + 1]) + c)...};
        Out* oc = o + c;
        for (int64_t i = 0; i < m; ++i)
          oc[i] = static_cast<Out>(f(static_cast<opmath_t<In>>(std::get<I>(in)[i])...));
      }
      return;
    }
  } else {
    if (s[0] == sizeof(Out) && ((s[I + 1] == sizeof(In)) && ...)) {
      Out* o = reinterpret_cast<Out*>(data[0]);
      for (int64_t i = 0; i < n; ++i)
        o[i] = static_cast<Out>(
            f(static_cast<opmath_t<In>>(reinterpret_cast<const In*>(data[I + 1])[i])...));
      return;
    }
  }
  for (int64_t i = 0; i < n; ++i)
    *reinterpret_cast<Out*>(data[0] + i * s[0]) = static_cast<Out>(
        f(static_cast<opmath_t<In>>(*reinterpret_cast<const In*>(data[I + 1] + i * s[I + 1]))...));
}

// The element lambdas handed to write_run: always inlined into its loops,
// whose vectorization depends on it (GCC left a call per element once the
// op's own function grew, as an activation with an inlined exp).
#define BRASA_INLINE_LAMBDA __attribute__((always_inline))

// o[i] = g(i) for i in [0, n). With `stream`, whole 256-byte runs are
// computed into a buffer in L1 and written with streaming stores: no output
// line is read in before it is overwritten (a quarter less memory traffic
// for a binary op, a third for a unary one).
template <class Out, class G>
inline void write_run(Out* o, int64_t n, bool stream, const G& g) {
#ifdef BRASA_CPU_HAS_AVX2
  if (stream) {
    constexpr int64_t kRun = 256 / sizeof(Out);
    int64_t i = 0;
    for (; i < n && reinterpret_cast<uintptr_t>(o + i) % 32 != 0; ++i) o[i] = g(i);
    alignas(32) Out run[kRun];
    for (; i + kRun <= n; i += kRun) {
      for (int64_t k = 0; k < kRun; ++k) run[k] = g(i + k);
      char* dst = reinterpret_cast<char*>(o + i);
      for (int k = 0; k < 256; k += 32)
        _mm256_stream_si256(reinterpret_cast<__m256i*>(dst + k),
                            _mm256_load_si256(reinterpret_cast<const __m256i*>(
                                reinterpret_cast<const char*>(run) + k)));
    }
    for (; i < n; ++i) o[i] = g(i);
    _mm_sfence();  // streaming stores are weakly ordered: publish them before the pool's join
    return;
  }
#endif
  for (int64_t i = 0; i < n; ++i) o[i] = g(i);
}

// Binary with the common "one side is a scalar" cases hoisted so they vectorize.
template <class Out, class A, class B, class F>
inline void binary_run(char** data, const int64_t* s, int64_t n, const F& op, bool stream) {
  // A local copy of the functor: the values it captured (leaky_relu's
  // float slope) could alias the float output through the caller's object,
  // so they were reloaded after every store and the loop was not vectorized
  // (a scalar loop with a branch per element).
  const F f = op;
  Out* o = reinterpret_cast<Out*>(data[0]);
  const A* a = reinterpret_cast<const A*>(data[1]);
  const B* b = reinterpret_cast<const B*>(data[2]);
  if (s[0] == sizeof(Out)) {
    if (s[1] == sizeof(A) && s[2] == sizeof(B)) {
      write_run(o, n, stream, [&](int64_t i) BRASA_INLINE_LAMBDA {
        return static_cast<Out>(f(opmath_t<A>(a[i]), opmath_t<B>(b[i])));
      });
      return;
    }
    if (s[1] == sizeof(A) && s[2] == 0) {
      const opmath_t<B> bv = b[0];
      write_run(o, n, stream, [&](int64_t i) BRASA_INLINE_LAMBDA {
        return static_cast<Out>(f(opmath_t<A>(a[i]), bv));
      });
      return;
    }
    if (s[1] == 0 && s[2] == sizeof(B)) {
      const opmath_t<A> av = a[0];
      write_run(o, n, stream, [&](int64_t i) BRASA_INLINE_LAMBDA {
        return static_cast<Out>(f(av, opmath_t<B>(b[i])));
      });
      return;
    }
    if (s[1] == 0 && s[2] == 0 && n > 1) {
      // Both broadcast (an expanded gradient and a number): one value, then
      // a fill (through nary_run's call of f: see there).
      nary_run<Out, A, B>(data, s, 1, f, std::index_sequence_for<A, B>{});
      std::fill(o + 1, o + n, o[0]);
      return;
    }
  }
  nary_run<Out, A, B>(data, s, n, f, std::index_sequence_for<A, B>{});
}

// Unary with the contiguous case through write_run.
template <class Out, class A, class F>
inline void unary_run(char** data, const int64_t* s, int64_t n, const F& op, bool stream) {
  const F f = op;  // a local copy: see binary_run
  if (s[0] == sizeof(Out) && s[1] == sizeof(A)) {
    Out* o = reinterpret_cast<Out*>(data[0]);
    const A* a = reinterpret_cast<const A*>(data[1]);
    write_run(o, n, stream, [&](int64_t i) BRASA_INLINE_LAMBDA {
      return static_cast<Out>(f(opmath_t<A>(a[i])));
    });
    return;
  }
  nary_run<Out, A>(data, s, n, f, std::index_sequence<0>{});
}

// ---- short rows ----
// A row of a few elements (a broadcast against a 13-wide axis, a slice of
// one) leaves binary_run's vector loops with their scalar epilogues only and
// costs a call per row. With AVX-512, such rows go through one 64-byte
// vector of lanes each: every operand's row is read by a masked load (a
// broadcast one by a set1), the op runs over all the lanes of a stack array
// (a fixed-length loop the compiler vectorizes), and a masked store writes
// the row's part back.
#ifdef BRASA_CPU_HAS_AVX512
// The first min(bytes, 64) lanes of a byte mask.
inline __mmask64 byte_mask(int64_t bytes) {
  return bytes >= 64 ? ~__mmask64(0) : _bzhi_u64(~uint64_t(0), static_cast<unsigned>(bytes));
}

// All lanes of a 64-byte vector of T equal to *p.
template <class T>
inline __m512i splat(const char* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  if constexpr (sizeof(T) == 1) return _mm512_set1_epi8(std::bit_cast<char>(v));
  if constexpr (sizeof(T) == 2) return _mm512_set1_epi16(std::bit_cast<int16_t>(v));
  if constexpr (sizeof(T) == 4) return _mm512_set1_epi32(std::bit_cast<int32_t>(v));
  if constexpr (sizeof(T) == 8) return _mm512_set1_epi64(std::bit_cast<long long>(v));
}

// Lanes [0, count) of the row at p (stride `step`: sizeof(T), or 0 for one
// value); the other lanes repeat the row's first element, so the op sees no
// garbage there (no integer division by a stray zero).
template <class T>
inline void load_lanes(T* lanes, const char* p, int64_t step, int64_t count) {
  const __m512i first = splat<T>(p);
  _mm512_store_si512(
      lanes,
      step == 0 ? first : _mm512_mask_loadu_epi8(first, byte_mask(count * int64_t(sizeof(T))), p));
}

// Rows of at most this many elements of A go through lanes (4 vectors).
template <class A>
constexpr int64_t kShortRow = 4 * 64 / int64_t(sizeof(A));
#endif

// Rows of fewer than this many elements laid end to end in the output go
// through binary_run in chunks of whole rows (see packed_short_rows).
constexpr int64_t kPackedRowMax = 16;
constexpr int64_t kPackedChunk = 2048;  // elements per chunk

// Points p/ps at input k of a chunk of `rows` rows from row r0 as one flat
// run: itself where its rows are contiguous and end to end, one value where
// it is the same for every element, else (one value per row) that value
// repeated n times per row in `buffer`.
template <class T>
void packed_input(const char* base, int64_t s, int64_t os, int64_t n, int64_t r0, int64_t rows,
                  T* buffer, char*& p, int64_t& ps) {
  if (s != 0) {
    p = const_cast<char*>(base) + r0 * os;
    ps = int64_t(sizeof(T));
  } else if (os == 0) {
    p = const_cast<char*>(base);
    ps = 0;
  } else {
    for (int64_t r = 0; r < rows; ++r)
      std::fill_n(buffer + r * n, n, *reinterpret_cast<const T*>(base + (r0 + r) * os));
    p = reinterpret_cast<char*>(buffer);
    ps = int64_t(sizeof(T));
  }
}

// Short rows whose outputs lie end to end, each input either contiguous the
// same way or one value per row (a mean's gradient broadcast back over a
// last dim of 3): chunks of whole rows run flat, a per-row input expanded
// first, one call per chunk instead of a few masked vectors per row (65536
// rows of 3: 5.4 ns a row).
template <class Out, class A, class B, class F>
bool packed_short_rows(char** data, const int64_t* s, int64_t n, const int64_t* os, int64_t m,
                       const F& op) {
  auto packs = [&](int k, int64_t size) {
    return (s[k] == size && os[k] == n * size) || s[k] == 0;
  };
  if (m < 2 || n >= kPackedRowMax || s[0] != int64_t(sizeof(Out)) ||
      os[0] != n * int64_t(sizeof(Out)) || !packs(1, sizeof(A)) || !packs(2, sizeof(B)))
    return false;
  A a_rows[kPackedChunk];
  B b_rows[kPackedChunk];
  const int64_t per_chunk = kPackedChunk / n;
  for (int64_t r0 = 0; r0 < m; r0 += per_chunk) {
    const int64_t rows = std::min(per_chunk, m - r0);
    char* p[3];
    int64_t ps[3];
    p[0] = data[0] + r0 * os[0];
    ps[0] = int64_t(sizeof(Out));
    packed_input<A>(data[1], s[1], os[1], n, r0, rows, a_rows, p[1], ps[1]);
    packed_input<B>(data[2], s[2], os[2], n, r0, rows, b_rows, p[2], ps[2]);
    binary_run<Out, A, B>(p, ps, rows * n, op, false);
  }
  return true;
}

// m rows of binary_run, row r of operand k at data[k] + r * os[k].
template <class Out, class A, class B, class F>
inline void binary_rows(char** data, const int64_t* s, int64_t n, const int64_t* os, int64_t m,
                        const F& op, bool stream) {
  if (packed_short_rows<Out, A, B>(data, s, n, os, m, op)) return;
#ifdef BRASA_CPU_HAS_AVX512
  constexpr bool lanes_fit = sizeof(A) == sizeof(B) && sizeof(Out) <= sizeof(A) &&
                             (sizeof(A) == 1 || sizeof(A) == 2 || sizeof(A) == 4 || sizeof(A) == 8);
  if constexpr (lanes_fit) {
    constexpr int64_t L = 64 / int64_t(sizeof(A));
    if (m > 1 && n <= kShortRow<A> && s[0] == int64_t(sizeof(Out)) &&
        (s[1] == int64_t(sizeof(A)) || s[1] == 0) && (s[2] == int64_t(sizeof(B)) || s[2] == 0)) {
      const F f = op;  // a local copy: see binary_run
      alignas(64) A la[L];
      alignas(64) B lb[L];
      alignas(64) Out lo[64 / sizeof(Out)];
      for (int64_t r = 0; r < m; ++r) {
        char* o = data[0] + r * os[0];
        const char* a = data[1] + r * os[1];
        const char* b = data[2] + r * os[2];
        for (int64_t c = 0; c < n; c += L) {
          const int64_t count = std::min(L, n - c);
          load_lanes(la, a + c * s[1], s[1], count);
          load_lanes(lb, b + c * s[2], s[2], count);
          for (int64_t i = 0; i < L; ++i)
            lo[i] = static_cast<Out>(f(opmath_t<A>(la[i]), opmath_t<B>(lb[i])));
          _mm512_mask_storeu_epi8(o + c * int64_t(sizeof(Out)),
                                  byte_mask(count * int64_t(sizeof(Out))), _mm512_load_si512(lo));
        }
      }
      return;
    }
  }
#endif
  char* p[3] = {data[0], data[1], data[2]};
  for (int64_t r = 0; r < m; ++r) {
    binary_run<Out, A, B>(p, s, n, op, stream);
    for (int k = 0; k < 3; ++k) p[k] += os[k];
  }
}

// Runs `f` elementwise: operand 0 of `loop` is the output of type Out, the rest
// In... Unary and binary ops stream large outputs.
template <class Out, class... In, class F>
void cpu_kernel(StridedLoop& loop, const F& f) {
  static_assert(sizeof...(In) + 1 <= kMaxOperands);
  if constexpr (sizeof...(In) == 2) {
    const bool stream = stream_output(loop.numel() * int64_t(sizeof(Out)), loop.data(0),
                                      loop.data(1), loop.data(2));
    loop.run_rows([&](char** d, const int64_t* s, int64_t n, const int64_t* os, int64_t m) {
      binary_rows<Out, In...>(d, s, n, os, m, f, stream);
    });
  } else if constexpr (sizeof...(In) == 1) {
    const bool stream =
        stream_output(loop.numel() * int64_t(sizeof(Out)), loop.data(0), loop.data(1), nullptr);
    loop.run(
        [&](char** d, const int64_t* s, int64_t n) { unary_run<Out, In...>(d, s, n, f, stream); });
  } else {
    // Rows in blocks: a short innermost dim (where() of a mask against a
    // value broadcast along a middle dim) costs a step of the loop's index
    // per row otherwise.
    loop.run_rows([&](char** d, const int64_t* s, int64_t n, const int64_t* os, int64_t m) {
      char* p[kMaxOperands];
      for (int k = 0; k < loop.nops(); ++k) p[k] = d[k];
      for (int64_t r = 0; r < m; ++r) {
        nary_run<Out, In...>(p, s, n, f, std::index_sequence_for<In...>{});
        for (int k = 0; k < loop.nops(); ++k) p[k] += os[k];
      }
    });
  }
}

}  // namespace BRASA_CPU_VARIANT
}  // namespace brasa::cpu
