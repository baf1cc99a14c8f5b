#include <brasa/ops/cpu/variant.h>
#include <brasa/ops/cpu/scratch.h>
#include <brasa/ops/cpu/softmax_kernel.h>
#include <brasa/ops/cpu/vec_math.h>
#include <brasa/util/parallel.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

namespace brasa::cpu {
inline namespace BRASA_CPU_VARIANT {
namespace {

// A row is taken in chunks that stay in L1: exp(x - shift) and its sum for
// each chunk while it is in cache, the shift being the first chunk's own max
// and, for the others, the max so far. The chunks are put on the row's
// common max at the end (one exp per chunk), so the input is read from
// memory once instead of once for the max and once more for the exp.
// Chunks hold at least 4096 values (16 KiB): a row up to that length is one
// chunk, read from memory once all the same (its max pass finds it in L1,
// where the previous row's exps prefetched it), and measured 5-12% faster
// than chunks of 512, whose bookkeeping costs more than the second pass over
// L1 saves.
constexpr int64_t kMinChunk = 4096, kMaxChunks = 64;

int64_t chunk_length(int64_t R) {
  const int64_t spread = (R + kMaxChunks - 1) / kMaxChunks;
  return std::max(kMinChunk, (spread + 7) / 8 * 8);
}

// Max of x[0, n); sets `nan` when any value is NaN.
float chunk_max(const float* x, int64_t n, bool& nan) {
  float m = -INFINITY;
  int64_t i = 0;
#ifdef BRASA_VEC_EXP8
  __m256 m0 = _mm256_set1_ps(-INFINITY), m1 = m0, unordered = _mm256_setzero_ps();
  for (; i + 16 <= n; i += 16) {
    const __m256 a = _mm256_loadu_ps(x + i), b = _mm256_loadu_ps(x + i + 8);
    unordered = _mm256_or_ps(unordered, _mm256_cmp_ps(a, b, _CMP_UNORD_Q));
    m0 = _mm256_max_ps(m0, a);
    m1 = _mm256_max_ps(m1, b);
  }
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, _mm256_max_ps(m0, m1));
  for (float v : lanes) m = std::max(m, v);
  nan = nan || _mm256_movemask_ps(unordered) != 0;
#endif
  for (; i < n; ++i) {
    m = std::max(m, x[i]);
    nan = nan || x[i] != x[i];
  }
  return m;
}

// Writes exp(x - m) to `out` (when not null) for x[0, n) and returns the
// sum; x - m may be positive up to 88. With kTrack, also gives the max of x
// and `odd`: x holds a NaN or both infinities (a running sum of x that NaN
// cannot leave), for the caller to redo the chunk on its own max.
template <bool kTrack>
float exp_shifted_sum(const float* x, float* out, int64_t n, float m, float* max_out = nullptr,
                      bool* odd = nullptr) {
  int64_t i = 0;
  float s = 0, mx = -INFINITY, xs = 0;
#ifdef BRASA_VEC_EXP8
  const __m256 mv = _mm256_set1_ps(m);
  __m256 s0 = _mm256_setzero_ps(), s1 = s0, xs0 = s0, xs1 = s0;
  __m256 mx0 = _mm256_set1_ps(-INFINITY), mx1 = mx0;
  for (; i + 16 <= n; i += 16) {
    // The next chunk (or row), one line per 16 values: its loads overlap
    // this chunk's exps instead of stalling its max pass. (Prefetches past
    // the end of the data are harmless; the address is formed as an integer.)
    _mm_prefetch(
        reinterpret_cast<const char*>(reinterpret_cast<uintptr_t>(x + i) + n * sizeof(float)),
        _MM_HINT_T0);
    const __m256 a = _mm256_loadu_ps(x + i), b = _mm256_loadu_ps(x + i + 8);
    const __m256 e0 = exp_nonpositive_8(_mm256_sub_ps(a, mv));
    const __m256 e1 = exp_nonpositive_8(_mm256_sub_ps(b, mv));
    if (out) _mm256_storeu_ps(out + i, e0), _mm256_storeu_ps(out + i + 8, e1);
    s0 = _mm256_add_ps(s0, e0);
    s1 = _mm256_add_ps(s1, e1);
    if constexpr (kTrack) {
      mx0 = _mm256_max_ps(mx0, a);
      mx1 = _mm256_max_ps(mx1, b);
      xs0 = _mm256_add_ps(xs0, a);
      xs1 = _mm256_add_ps(xs1, b);
    }
  }
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, _mm256_add_ps(s0, s1));
  for (float v : lanes) s += v;
  if constexpr (kTrack) {
    _mm256_store_ps(lanes, _mm256_max_ps(mx0, mx1));
    for (float v : lanes) mx = std::max(mx, v);
    _mm256_store_ps(lanes, _mm256_add_ps(xs0, xs1));
    for (float v : lanes) xs += v;
  }
#endif
  // The rest (all of it in the base variant), summed in double: one float
  // sum along a long row would lose digits.
  double sd = s;
  for (; i < n; ++i) {
    const float e = fast_exp_nonpositive(x[i] - m);
    if (out) out[i] = e;
    sd += e;
    if constexpr (kTrack) mx = std::max(mx, x[i]), xs += x[i];
  }
  if constexpr (kTrack) *max_out = mx, *odd = xs != xs;
  return static_cast<float>(sd);
}

// Scales the chunks of `e` by their factors into `o`. With `stream`, `o`
// is written with streaming stores (32-byte aligned, R a multiple of 8).
void scale_chunks(const float* e, float* o, int64_t R, int64_t C, int64_t chunks, const float* f,
                  bool stream) {
  for (int64_t c = 0; c < chunks; ++c) {
    const int64_t b = c * C, n = std::min(C, R - b);
#ifdef BRASA_VEC_EXP8
    if (stream) {
      const __m256 fv = _mm256_set1_ps(f[c]);
      for (int64_t i = b; i < b + n; i += 8)
        _mm256_stream_ps(o + i, _mm256_mul_ps(_mm256_loadu_ps(e + i), fv));
      continue;
    }
#endif
    for (int64_t i = b; i < b + n; ++i) o[i] = e[i] * f[c];
  }
}

// With `stream`, `o` is written once, with streaming stores; softmax's exps
// wait for the row's sum in `scratch` (R floats) instead of in `o`.
void softmax_row(const float* x, float* o, int64_t R, bool log, bool stream, float* scratch) {
  const int64_t C = chunk_length(R), chunks = (R + C - 1) / C;
  float* e = stream && !log ? scratch : o;
  // cmax[c]: the value chunk c's exps are shifted by. The first chunk (and
  // any after a NaN, an infinity or a jump of more than kHeadroom above the
  // max so far) is shifted by its own max, found in a pass of its own; later
  // chunks by the max so far, found on the side of their exps. Values further
  // than 87 below that shift underflow to 0, as they would below the row's
  // max, which is at least as large.
  constexpr float kHeadroom = 64;  // exp(x - shift) stays finite up to 88
  float cmax[kMaxChunks], csum[kMaxChunks];
  bool nan = false, guess = true;
  float M = -INFINITY;
  for (int64_t c = 0; c < chunks && !nan; ++c) {
    const int64_t b = c * C, n = std::min(C, R - b);
    if (guess && M != -INFINITY) {
      float chunk_m;
      bool odd;
      const float s = exp_shifted_sum<true>(x + b, log ? nullptr : e + b, n, M, &chunk_m, &odd);
      if (!odd && chunk_m <= M + kHeadroom) {
        cmax[c] = M;
        csum[c] = s;
        M = std::max(M, chunk_m);
        continue;
      }
      guess = false;  // a row like that is done chunk by chunk
    }
    cmax[c] = chunk_max(x + b, n, nan);
    M = std::max(M, cmax[c]);
    if (cmax[c] == -INFINITY) {  // x - max would be NaN; the chunk contributes 0
      csum[c] = 0;
      if (!log) std::fill(e + b, e + b + n, 0.0f);
    } else {
      csum[c] = exp_shifted_sum<false>(x + b, log ? nullptr : e + b, n, cmax[c]);
    }
  }
  if (nan || M == -INFINITY) {  // NaN anywhere, or all -inf (0/0): NaN, as in PyTorch
    std::fill(o, o + R, NAN);
    return;
  }
  float factor[kMaxChunks];
  double S = 0;
  for (int64_t c = 0; c < chunks; ++c) {
    // 1 for chunks shifted by the max (no exp for short rows). With a +inf
    // max the exps of the +inf values (of inf - inf) are NaN, so S is NaN and
    // so is the row, as in PyTorch.
    factor[c] = cmax[c] == M ? 1.0f : cmax[c] == -INFINITY ? 0.0f : std::exp(cmax[c] - M);
    S += double(csum[c]) * factor[c];
  }
  if (log) {
    const float lse = M + static_cast<float>(std::log(S));
    int64_t i = 0;
#ifdef BRASA_VEC_EXP8
    if (stream)
      for (const __m256 l = _mm256_set1_ps(lse); i < R; i += 8)
        _mm256_stream_ps(o + i, _mm256_sub_ps(_mm256_loadu_ps(x + i), l));
#endif
    for (; i < R; ++i) o[i] = x[i] - lse;
    return;
  }
  const float inv = static_cast<float>(1.0 / S);
  for (int64_t c = 0; c < chunks; ++c) factor[c] *= inv;
  scale_chunks(e, o, R, C, chunks, factor, stream);
}

#ifdef BRASA_VEC_EXP8
float lanes_max(__m256 v) {
  alignas(32) float l[8];
  _mm256_store_ps(l, v);
  return *std::max_element(l, l + 8);
}

float lanes_sum(__m256 v) {
  alignas(32) float l[8];
  _mm256_store_ps(l, v);
  float s = 0;
  for (float x : l) s += x;
  return s;
}

// A row whose output waits for the next step: softmax rows as exps in
// `from` (scratch) times `factor`, log_softmax rows as `from` (x) - `factor`.
struct PendingRow {
  const float* from = nullptr;  // null when nothing waits
  float* out = nullptr;
  float factor = 0;
};

// Writes values [i, i + 8) of a pending row.
template <bool kLog>
void emit8(const PendingRow& p, __m256 f, int64_t i) {
  const __m256 v = _mm256_loadu_ps(p.from + i);
  _mm256_stream_ps(p.out + i, kLog ? _mm256_sub_ps(v, f) : _mm256_mul_ps(v, f));
}

// One step of the streamed pipeline over rows of R values (R % 8 == 0, at
// most kMinChunk): the max of row `next` (from memory; skipped when null),
// the exps of row `x` shifted by its max `m` (into `e` for softmax), and the
// streamed output of `pending` (when set). Returns the sum of the exps: NaN
// when x holds a NaN or m is infinite. One pass that keeps the memory reads
// of the next row, the exps and the streaming writes going together measured
// 20-21 GB/s at one thread on 4096 x 4096 (32 at two), where the three passes
// one after another (softmax_row) reach 12-16 (24 at two): the exps are
// compute-bound, and in their own pass the memory sits idle.
template <bool kLog>
float pipeline_step(const float* __restrict next, float& next_max, const float* __restrict x,
                    float m, float* __restrict e, PendingRow pending, int64_t R) {
  const __m256 mv = _mm256_set1_ps(m), f = _mm256_set1_ps(pending.factor);
  __m256 mx = _mm256_set1_ps(-INFINITY), s0 = _mm256_setzero_ps(), s1 = s0;
  int64_t i = 0;
  for (; i + 16 <= R; i += 16) {
    if (next) {
      // Two rows ahead: the hardware prefetcher alone leaves the reads short.
      _mm_prefetch(reinterpret_cast<const char*>(reinterpret_cast<uintptr_t>(next + i + R)),
                   _MM_HINT_T0);
      mx = _mm256_max_ps(mx,
                         _mm256_max_ps(_mm256_loadu_ps(next + i), _mm256_loadu_ps(next + i + 8)));
    }
    const __m256 e0 = exp_nonpositive_8(_mm256_sub_ps(_mm256_loadu_ps(x + i), mv));
    const __m256 e1 = exp_nonpositive_8(_mm256_sub_ps(_mm256_loadu_ps(x + i + 8), mv));
    if (!kLog) _mm256_storeu_ps(e + i, e0), _mm256_storeu_ps(e + i + 8, e1);
    s0 = _mm256_add_ps(s0, e0);
    s1 = _mm256_add_ps(s1, e1);
    if (pending.from) emit8<kLog>(pending, f, i), emit8<kLog>(pending, f, i + 8);
  }
  if (i < R) {  // the last 8
    if (next) mx = _mm256_max_ps(mx, _mm256_loadu_ps(next + i));
    const __m256 e0 = exp_nonpositive_8(_mm256_sub_ps(_mm256_loadu_ps(x + i), mv));
    if (!kLog) _mm256_storeu_ps(e + i, e0);
    s0 = _mm256_add_ps(s0, e0);
    if (pending.from) emit8<kLog>(pending, f, i);
  }
  // (A NaN in `next` may leave its max wrong; its exps' sum is NaN all the same.)
  if (next) next_max = lanes_max(mx);
  return lanes_sum(_mm256_add_ps(s0, s1));
}

// Rows [b, e) of R values with a streamed output, R % 8 == 0 and R <= kMinChunk,
// through pipeline_step; `scratch` holds 2R floats (the exps of the row in
// the works and of the one waiting). A row with a NaN, a +inf or only -inf
// has a NaN sum of exps, so its factor and its whole output are NaN, as in
// PyTorch.
template <bool kLog>
void softmax_rows_pipelined(const float* in, float* out, int64_t b, int64_t e, int64_t R,
                            float* scratch) {
  PendingRow pending;
  bool unused = false;  // a NaN shows in the row's sum of exps instead
  float m = chunk_max(in + b * R, R, unused);
  for (int64_t k = b; k < e; ++k) {
    const float* x = in + k * R;
    float* ek = scratch + (k % 2) * R;
    const float mk = m;
    const float s = pipeline_step<kLog>(k + 1 < e ? x + R : nullptr, m, x, mk, ek, pending, R);
    pending = {kLog ? x : ek, out + k * R, kLog ? mk + std::log(s) : 1.0f / s};
  }
  if (pending.from)
    for (int64_t i = 0; i < R; i += 8) emit8<kLog>(pending, _mm256_set1_ps(pending.factor), i);
}
#endif

}  // namespace

void softmax_rows_float(const float* in, float* out, int64_t K, int64_t R, bool log) {
  // An output larger than the caches is streamed: its rows are not read in
  // before they are written (a third less memory traffic). Softmax rows of
  // up to 64K values wait in a per-thread scratch row that stays in L1/L2.
  bool stream = false;
#ifdef BRASA_VEC_EXP8
  constexpr int64_t kStreamBytes = int64_t(8) << 20, kMaxScratch = int64_t(1) << 16;
  stream = K * R * 4 >= kStreamBytes && R <= kMaxScratch && R % 8 == 0 &&
           reinterpret_cast<uintptr_t>(out) % 32 == 0;
#endif
  parallel_for(
      0, K, std::max<int64_t>(1, 32768 / std::max<int64_t>(R, 1)), [=](int64_t b, int64_t e) {
        const bool pipelined = stream && R <= kMinChunk;
        std::vector<float> buffer;
        float* scratch = cache_aligned_scratch(buffer, pipelined ? 2 * R : stream && !log ? R : 0);
#ifdef BRASA_VEC_EXP8
        if (pipelined) {
          log ? softmax_rows_pipelined<true>(in, out, b, e, R, scratch)
              : softmax_rows_pipelined<false>(in, out, b, e, R, scratch);
          _mm_sfence();
          return;
        }
#endif
        for (int64_t k = b; k < e; ++k)
          softmax_row(in + k * R, out + k * R, R, log, stream, scratch);
#ifdef BRASA_VEC_EXP8
        if (stream)
          _mm_sfence();  // streaming stores are weakly ordered: publish them before the pool's join
#endif
      });
}

}  // namespace BRASA_CPU_VARIANT
}  // namespace brasa::cpu
