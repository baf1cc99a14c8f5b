// CPU kernels of copies and fills: dtype conversion in one strided loop,
// blocked (and for 32-bit values vectorized, streaming) transposes, and
// fills with streaming stores for large outputs.
#include <brasa/ops/cpu/variant.h>
#include <brasa/ops/cpu/loops.h>
#include <brasa/ops/cpu/register.h>
#include <brasa/ops/cpu/scratch.h>
#include <brasa/ops/cpu/transpose_8x8.h>
#include <brasa/ops/kernels/copy.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#ifdef BRASA_CPU_HAS_AVX2
#include <immintrin.h>
#endif

namespace brasa::cpu {
inline namespace BRASA_CPU_VARIANT {
namespace {

// With `stream`, a contiguous destination of a conversion between float and
// double or of a broadcast value is written with streaming stores
// (write_run); memcpy already does so for large copies.
template <class D, class S>
void convert_run(char** data, const int64_t* s, int64_t n, bool stream) {
  D* d = reinterpret_cast<D*>(data[0]);
  const S* src = reinterpret_cast<const S*>(data[1]);
  if (s[0] == sizeof(D) && s[1] == sizeof(S)) {
    if constexpr (std::is_same_v<D, S>) {
      std::memcpy(d, src, n * sizeof(D));
    } else if constexpr (std::is_floating_point_v<D> && std::is_floating_point_v<S>) {
      write_run(d, n, stream, [&](int64_t i) { return convert<D, S>(src[i]); });
    } else {
      // (float -> int goes through a scalar int64 conversion; in write_run's
      // runs it measured twice as slow.)
      for (int64_t i = 0; i < n; ++i) d[i] = convert<D, S>(src[i]);
    }
    return;
  }
  if (s[0] == sizeof(D) && s[1] == 0) {
    const D v = convert<D, S>(src[0]);
    write_run(d, n, stream, [&](int64_t) { return v; });
    return;
  }
  for (int64_t i = 0; i < n; ++i)
    *reinterpret_cast<D*>(data[0] + i * s[0]) =
        convert<D, S>(*reinterpret_cast<const S*>(data[1] + i * s[1]));
}

// m rows of convert_run (row r at data[k] + r * os[k]). Short rows of one
// dtype, both contiguous, move as masked 64-byte vectors: a memcpy call
// per 48-byte row (a slice of a narrow last dim) cost more than the bytes.
template <class D, class S>
void convert_rows(char** data, const int64_t* s, int64_t n, const int64_t* os, int64_t m,
                  bool stream) {
#ifdef BRASA_CPU_HAS_AVX512
  const int64_t bytes = n * int64_t(sizeof(D));
  if (std::is_same_v<D, S> && s[0] == int64_t(sizeof(D)) && s[1] == int64_t(sizeof(S)) &&
      bytes <= 256) {
    for (int64_t r = 0; r < m; ++r) {
      char* d = data[0] + r * os[0];
      const char* src = data[1] + r * os[1];
      for (int64_t c = 0; c < bytes; c += 64) {
        const __mmask64 mask = byte_mask(bytes - c);
        _mm512_mask_storeu_epi8(d + c, mask, _mm512_maskz_loadu_epi8(mask, src + c));
      }
    }
    return;
  }
#endif
  char* p[2] = {data[0], data[1]};
  for (int64_t r = 0; r < m; ++r) {
    convert_run<D, S>(p, s, n, stream);
    p[0] += os[0];
    p[1] += os[1];
  }
}

// 2-D copy where dst walks rows contiguously (dc == 1) and src walks columns
// (sr == 1); strides in elements. A plain loop misses the cache on every
// element, and power-of-two strides also thrash its sets, so the copy goes by
// 32x32 tiles made of 8x8 micro tiles staged in registers.
template <class T>
void blocked_transpose_copy(T* dst, int64_t dr, const T* src, int64_t sc, int64_t rows,
                            int64_t cols) {
  constexpr int64_t M = 32, U = 8;
  parallel_for(0, (rows + M - 1) / M, 1, [&](int64_t rb, int64_t re) {
    for (int64_t Bi = rb * M; Bi < std::min(rows, re * M); Bi += M)
      for (int64_t Bj = 0; Bj < cols; Bj += M)
        for (int64_t bi = Bi; bi < std::min(rows, Bi + M); bi += U)
          for (int64_t bj = Bj; bj < std::min(cols, Bj + M); bj += U) {
            if (bi + U <= rows && bj + U <= cols) {
              T t[U][U];
              for (int64_t j = 0; j < U; ++j)
                for (int64_t i = 0; i < U; ++i) t[j][i] = src[(bj + j) * sc + bi + i];
              for (int64_t i = 0; i < U; ++i)
                for (int64_t j = 0; j < U; ++j) dst[(bi + i) * dr + bj + j] = t[j][i];
            } else {
              for (int64_t i = bi; i < std::min(rows, bi + U); ++i)
                for (int64_t j = bj; j < std::min(cols, bj + U); ++j)
                  dst[i * dr + j] = src[j * sc + i];
            }
          }
  });
}

// A 16-byte value (a complex double) moved whole.
struct Bytes16 {
  uint64_t lo, hi;
};

#ifdef BRASA_CPU_HAS_AVX2
// An edge tile (ni x nj at bi, bj, smaller than a whole one): its whole 8x8
// blocks straight from the source, the last rows and columns one value at a
// time.
inline void transpose_edge_tile_32bit(uint32_t* dst, int64_t dr, const uint32_t* src, int64_t sc,
                                      int64_t bi, int64_t bj, int64_t ni, int64_t nj) {
  const int64_t ni8 = ni / 8 * 8, nj8 = nj / 8 * 8;
  for (int64_t i = 0; i < ni8; i += 8)
    for (int64_t j = 0; j < nj8; j += 8)
      transpose_8x8_32bit(src + (bj + j) * sc + bi + i, sc, dst + (bi + i) * dr + bj + j, dr);
  for (int64_t i = 0; i < ni; ++i)
    for (int64_t j = i < ni8 ? nj8 : 0; j < nj; ++j)
      dst[(bi + i) * dr + bj + j] = src[(bj + j) * sc + bi + i];
}

// The 32-bit case by 64x64 tiles. Rows of a power-of-two length put every
// row of a tile in the same cache set. When the source rows are the
// far-apart ones, a tile's source rows are first copied (line by line,
// sequentially) into a contiguous buffer, then transposed from there in 8x8
// register blocks into the destination rows. When the destination rows are
// (`buffer_out`; NHWC -> NCHW, where a source row is one pixel's channels),
// the tile is transposed into the buffer and its rows copied out, so the 8x8
// stores do not land on 64 rows of one cache set (0.30 -> 0.19 ms for
// [16, 64, 32, 32] back to NCHW, Zen 5, 1 thread).
// The kernels here capture by value: their vector stores go through
// may-alias types, so captured references would be reloaded after each one.
void transpose_tiles_32bit(uint32_t* dst, int64_t dr, const uint32_t* src, int64_t sc, int64_t rows,
                           int64_t cols, bool buffer_out) {
  constexpr int64_t T = 64;
  parallel_for(0, (rows + T - 1) / T, 1, [=](int64_t b, int64_t e) {
    alignas(64) uint32_t buf[T * T];
    for (int64_t bi = b * T; bi < std::min(rows, e * T); bi += T) {
      const int64_t ni = std::min(T, rows - bi);
      for (int64_t bj = 0; bj < cols; bj += T) {
        const int64_t nj = std::min(T, cols - bj);
        if (ni < T || nj < T) {
          transpose_edge_tile_32bit(dst, dr, src, sc, bi, bj, ni, nj);
        } else if (buffer_out) {
          for (int64_t i = 0; i < T; i += 8)
            for (int64_t j = 0; j < T; j += 8)
              transpose_8x8_32bit(src + (bj + j) * sc + bi + i, sc, buf + i * T + j, T);
          for (int64_t i = 0; i < T; ++i)
            std::memcpy(dst + (bi + i) * dr + bj, buf + i * T, T * sizeof(uint32_t));
        } else {
          for (int64_t j = 0; j < T; ++j)
            std::memcpy(buf + j * T, src + (bj + j) * sc + bi, T * sizeof(uint32_t));
          for (int64_t i = 0; i < T; i += 8)
            for (int64_t j = 0; j < T; j += 8)
              transpose_8x8_32bit(buf + j * T + i, T, dst + (bi + i) * dr + bj + j, dr);
        }
      }
    }
  });
}

// The 32-bit case for a destination larger than the caches, over the strips
// of S source rows starting at columns [j_begin, j_end) of the destination
// (the 32 columns that TransposeTiles' 64 leave over, when there are that
// many). A strip's rows are read front to back, I values per row and step;
// each step transposes its S x I
// block into `buf` and writes the block's I rows to the destination as whole
// S*4-byte runs with streaming stores, so no destination line is read before
// it is written and none is split between steps. The destination must be
// 32-byte aligned with rows a multiple of 8 values.
template <int64_t S, int64_t I>
void transpose_strips_32bit(uint32_t* dst, int64_t dr, const uint32_t* src, int64_t sc,
                            int64_t rows, int64_t j_begin, int64_t j_end, uint32_t* buf) {
  const int64_t full_rows = rows / I * I;
  for (int64_t j0 = j_begin; j0 < j_end; j0 += S) {
    for (int64_t i = 0; i < full_rows; i += I) {
      for (int64_t jj = 0; jj < S; jj += 8)
        for (int64_t ii = 0; ii < I; ii += 8)
          transpose_8x8_32bit(src + (j0 + jj) * sc + i + ii, sc, buf + ii * S + jj, S);
      for (int64_t k = 0; k < I; ++k)
        for (int64_t q = 0; q < S; q += 8)
          _mm256_stream_si256(reinterpret_cast<__m256i*>(dst + (i + k) * dr + j0 + q),
                              _mm256_load_si256(reinterpret_cast<const __m256i*>(buf + k * S + q)));
    }
    for (int64_t i = full_rows; i < rows; ++i)
      for (int64_t j = j0; j < j0 + S; ++j) dst[i * dr + j] = src[j * sc + i];
  }
  _mm_sfence();  // streaming stores are weakly ordered: publish them before the pool's join
}

// The strips' 4 KiB staging buffer, one per thread. It is kept off the stack:
// there the same loops ran 15-30% slower at one thread, likely from false
// store-to-load dependencies (equal address bits 0-11) between the buffer's
// stores and the loads of its frame.
uint32_t* strip_buffer() {
  alignas(64) static thread_local uint32_t buf[16 * 64];
  return buf;
}

// The 32-bit case for a destination larger than the caches, by strips of 64
// source rows (64 destination columns). A strip goes in tiles of W
// destination rows (the last one shorter): a tile is
// filled, 8 source rows at a time, into a staging tile that holds its W
// destination rows of 64 values (in L2), while the previous tile drains from
// the other staging tile to the destination as 256-byte runs of streaming
// stores. Why: reads stream best from few source rows at a time (8 here;
// reading all 64 rows of a strip a line each, the prefetchers lose track)
// and writes best in whole runs of several lines; the two staging tiles let
// both happen at once. The destination must be 32-byte aligned with rows a
// multiple of 8 values.
class TransposeTiles {
 public:
  static constexpr int64_t S = 64, W = 512;

  TransposeTiles(uint32_t* dst, int64_t dr, const uint32_t* src, int64_t sc)
      : dst_(dst), dr_(dr), src_(src), sc_(sc) {
    // 256 KiB per thread, made once.
    static thread_local std::vector<uint32_t> storage;
    uint32_t* base = cache_aligned_scratch(storage, 2 * W * S);
    stage_[0] = base;
    stage_[1] = base + W * S;
  }

  // Destination rows [i0, i0 + w) (w a multiple of 8) of the strip at column j0.
  void tile(int64_t j0, int64_t i0, int64_t w) {
    uint32_t* fill = stage_[filling_];
    const int64_t calls = (S / 8) * (w / 8);
    int64_t call = 0, drained = 0;
    for (int64_t g = 0; g < S; g += 8)
      for (int64_t c = 0; c < w; c += 8) {
        transpose_8x8_32bit(src_ + (j0 + g) * sc_ + i0 + c, sc_, fill + c * S + g, S);
        // The previous tile's rows, in step with this tile's blocks (all of
        // them by the last block).
        for (const int64_t upto = ++call * pending_.w / calls; drained < upto; ++drained)
          drain_row(drained);
      }
    pending_ = {j0, i0, w};
    filling_ = 1 - filling_;
  }

  void finish() {
    for (int64_t r = 0; r < pending_.w; ++r) drain_row(r);
    pending_.w = 0;
    _mm_sfence();  // streaming stores are weakly ordered: publish them before the pool's join
  }

 private:
  void drain_row(int64_t r) {
    const uint32_t* from = stage_[1 - filling_] + r * S;
    uint32_t* to = dst_ + (pending_.i0 + r) * dr_ + pending_.j0;
    for (int64_t q = 0; q < S; q += 8)
      _mm256_stream_si256(reinterpret_cast<__m256i*>(to + q),
                          _mm256_load_si256(reinterpret_cast<const __m256i*>(from + q)));
  }

  uint32_t* dst_;
  int64_t dr_;
  const uint32_t* src_;
  int64_t sc_;
  uint32_t* stage_[2];
  int filling_ = 0;
  struct {
    int64_t j0 = 0, i0 = 0, w = 0;  // the tile waiting to drain (w = 0: none)
  } pending_;
};

// In benchmarks/ops_bench-like runs on 4096x4096, tiles measured 17.0-17.5
// GB/s at one thread and 24-27.5 at two, where strips of 64 rows read a line
// per row and step (transpose_strips_32bit<64, 16>) reached 15.6-16.8 and
// 20.5-24 in the same runs.
void transpose_streaming_32bit(uint32_t* dst, int64_t dr, const uint32_t* src, int64_t sc,
                               int64_t rows, int64_t cols) {
  const int64_t rows8 = rows / 8 * 8;
  parallel_for(0, cols / 64, 1, [=](int64_t b, int64_t e) {
    TransposeTiles tiles(dst, dr, src, sc);
    for (int64_t j0 = b * 64; j0 < e * 64; j0 += 64)
      for (int64_t i0 = 0; i0 < rows8; i0 += TransposeTiles::W)
        tiles.tile(j0, i0, std::min(TransposeTiles::W, rows8 - i0));
    tiles.finish();
    for (int64_t i = rows8; i < rows; ++i)
      for (int64_t j = b * 64; j < e * 64; ++j) dst[i * dr + j] = src[j * sc + i];
  });
  const int64_t done = cols / 64 * 64;
  if (cols - done >= 32)
    transpose_strips_32bit<32, 16>(dst, dr, src, sc, rows, done, done + 32, strip_buffer());
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = cols / 32 * 32; j < cols; ++j) dst[i * dr + j] = src[j * sc + i];
}

void transpose_copy_32bit(uint32_t* dst, int64_t dr, const uint32_t* src, int64_t sc, int64_t rows,
                          int64_t cols) {
  // Beyond this size the destination leaves the caches anyway, and reading
  // its lines in before overwriting them only costs bandwidth.
  constexpr int64_t kStreamBytes = int64_t(8) << 20;
  const bool aligned = reinterpret_cast<uintptr_t>(dst) % 32 == 0 && dr % 8 == 0;
  if (aligned && rows * cols * 4 >= kStreamBytes && cols >= 32)
    transpose_streaming_32bit(dst, dr, src, sc, rows, cols);
  else
    transpose_tiles_32bit(dst, dr, src, sc, rows, cols, /*buffer_out=*/sc < dr);
}

// dst[i * dr + j] = src[j * sc + i] for a 4x4 block of 64-bit values: four
// row loads, two rounds of shuffles, four row stores.
inline void transpose_4x4_64bit(const uint64_t* src, int64_t sc, uint64_t* dst, int64_t dr) {
  const double* s = reinterpret_cast<const double*>(src);
  double* d = reinterpret_cast<double*>(dst);
  __m256d r[4], t[4];
  for (int k = 0; k < 4; ++k) r[k] = _mm256_loadu_pd(s + k * sc);
  t[0] = _mm256_unpacklo_pd(r[0], r[1]);  // a0 b0 | a2 b2
  t[1] = _mm256_unpackhi_pd(r[0], r[1]);  // a1 b1 | a3 b3
  t[2] = _mm256_unpacklo_pd(r[2], r[3]);
  t[3] = _mm256_unpackhi_pd(r[2], r[3]);
  _mm256_storeu_pd(d, _mm256_permute2f128_pd(t[0], t[2], 0x20));
  _mm256_storeu_pd(d + dr, _mm256_permute2f128_pd(t[1], t[3], 0x20));
  _mm256_storeu_pd(d + 2 * dr, _mm256_permute2f128_pd(t[0], t[2], 0x31));
  _mm256_storeu_pd(d + 3 * dr, _mm256_permute2f128_pd(t[1], t[3], 0x31));
}

// dst[i * dr + j] = src[j * sc + i] for a 2x2 block of 128-bit values
// (complex doubles): the halves of two rows exchanged.
inline void transpose_2x2_128bit(const Bytes16* src, int64_t sc, Bytes16* dst, int64_t dr) {
  const double* s = reinterpret_cast<const double*>(src);
  double* d = reinterpret_cast<double*>(dst);
  const __m256d r0 = _mm256_loadu_pd(s), r1 = _mm256_loadu_pd(s + 2 * sc);
  _mm256_storeu_pd(d, _mm256_permute2f128_pd(r0, r1, 0x20));
  _mm256_storeu_pd(d + 2 * dr, _mm256_permute2f128_pd(r0, r1, 0x31));
}

// 64- and 128-bit values (doubles, complex floats, complex doubles): 32x32
// tiles of B x B blocks moved by `block` (a lambda, inlined), the edges
// value by value. 1.5-4x
// the staged 8x8 loop on Zen 5.
template <class T, int64_t B, class Block>
void transpose_copy_tiles(T* dst, int64_t dr, const T* src, int64_t sc, int64_t rows, int64_t cols,
                          Block block) {
  constexpr int64_t M = 32;
  parallel_for(0, (rows + M - 1) / M, 1, [&](int64_t rb, int64_t re) {
    for (int64_t Bi = rb * M; Bi < std::min(rows, re * M); Bi += M)
      for (int64_t Bj = 0; Bj < cols; Bj += M) {
        const int64_t ni = std::min(M, rows - Bi), nj = std::min(M, cols - Bj);
        const int64_t nib = ni / B * B, njb = nj / B * B;
        for (int64_t i = 0; i < nib; i += B)
          for (int64_t j = 0; j < njb; j += B)
            block(src + (Bj + j) * sc + Bi + i, sc, dst + (Bi + i) * dr + Bj + j, dr);
        for (int64_t i = 0; i < ni; ++i)
          for (int64_t j = i < nib ? njb : 0; j < nj; ++j)
            dst[(Bi + i) * dr + Bj + j] = src[(Bj + j) * sc + Bi + i];
      }
  });
}
#endif

// A copy that is a transpose of two dims — of the whole tensor, or of each
// slice of one outer batch dim (NCHW <-> NHWC: [N, C, HW] <-> [N, HW, C]) —
// goes through the blocked transposes; false for any other copy.
bool try_transpose_copy(const Tensor& dst, const Tensor& src) {
  if (dst.dtype() != src.dtype() || dst.sizes() != src.sizes()) return false;
  StridedLoop loop(dst.sizes());
  loop.add(dst);
  loop.add(src);
  loop.coalesce();
  if (loop.ndim() != 2 && loop.ndim() != 3) return false;
  const int64_t es = dst.element_size();
  const int64_t* d = loop.strides(0);
  const int64_t* s = loop.strides(1);
  const int k = loop.ndim() - 2;  // the two transposed dims are k and k + 1
  int64_t rows = loop.shape()[k], cols = loop.shape()[k + 1];
  int64_t dr = d[k] / es, dc = d[k + 1] / es, sr = s[k] / es, sc = s[k + 1] / es;
  // Normalize to dst row-contiguous, src column-contiguous (swap the dims if needed).
  if (dc != 1 || sr != 1) {
    std::swap(rows, cols);
    std::swap(dr, dc);
    std::swap(sr, sc);
  }
  if (dc != 1 || sr != 1 || loop.numel() < 4096) return false;
  // Batched: slices narrow in either dim copy faster through the plain loop.
  if (k == 1 && std::min(rows, cols) < 16) return false;
  const int64_t batches = k == 1 ? loop.shape()[0] : 1;
  for (int64_t b = 0; b < batches; ++b) {
    char* dp = loop.data(0) + (k == 1 ? b * d[0] : 0);
    char* sp = loop.data(1) + (k == 1 ? b * s[0] : 0);
    switch (es) {
      case 1:
        blocked_transpose_copy(reinterpret_cast<uint8_t*>(dp), dr, reinterpret_cast<uint8_t*>(sp),
                               sc, rows, cols);
        break;
      case 2:
        blocked_transpose_copy(reinterpret_cast<uint16_t*>(dp), dr, reinterpret_cast<uint16_t*>(sp),
                               sc, rows, cols);
        break;
      case 4:
#ifdef BRASA_CPU_HAS_AVX2
        transpose_copy_32bit(reinterpret_cast<uint32_t*>(dp), dr, reinterpret_cast<uint32_t*>(sp),
                             sc, rows, cols);
#else
        blocked_transpose_copy(reinterpret_cast<uint32_t*>(dp), dr, reinterpret_cast<uint32_t*>(sp),
                               sc, rows, cols);
#endif
        break;
      case 8:
#ifdef BRASA_CPU_HAS_AVX2
        transpose_copy_tiles<uint64_t, 4>(reinterpret_cast<uint64_t*>(dp), dr,
                                          reinterpret_cast<uint64_t*>(sp), sc, rows, cols,
                                          [](const uint64_t* s, int64_t ss, uint64_t* d,
                                             int64_t ds) { transpose_4x4_64bit(s, ss, d, ds); });
#else
        blocked_transpose_copy(reinterpret_cast<uint64_t*>(dp), dr, reinterpret_cast<uint64_t*>(sp),
                               sc, rows, cols);
#endif
        break;
      case 16:  // complex doubles
#ifdef BRASA_CPU_HAS_AVX2
        transpose_copy_tiles<Bytes16, 2>(reinterpret_cast<Bytes16*>(dp), dr,
                                         reinterpret_cast<Bytes16*>(sp), sc, rows, cols,
                                         [](const Bytes16* s, int64_t ss, Bytes16* d, int64_t ds) {
                                           transpose_2x2_128bit(s, ss, d, ds);
                                         });
#else
        blocked_transpose_copy(reinterpret_cast<Bytes16*>(dp), dr, reinterpret_cast<Bytes16*>(sp),
                               sc, rows, cols);
#endif
        break;
      default:
        return false;
    }
  }
  return true;
}

// Same-dtype copies of complex values (the other dtypes convert in
// convert_run). A complex float moves as one 64-bit word, through the same
// row loops as int64 copies (short rows masked, runs streamed); a complex
// double as a 16-byte value.
void copy_complex_cpu(const Tensor& dst, const Tensor& source) {
  StridedLoop loop(dst.sizes());
  loop.add(dst);
  loop.add(source);
  if (dst.element_size() == 8) {
    const bool stream =
        stream_output(dst.numel() * dst.element_size(), loop.data(0), loop.data(1), nullptr);
    loop.run_rows([stream](char** data, const int64_t* s, int64_t n, const int64_t* os, int64_t m) {
      convert_rows<int64_t, int64_t>(data, s, n, os, m, stream);
    });
    return;
  }
  loop.run([](char** data, const int64_t* s, int64_t n) {
    if (s[0] == 16 && s[1] == 16) {
      std::memcpy(data[0], data[1], static_cast<size_t>(n * 16));
      return;
    }
    for (int64_t i = 0; i < n; ++i)
      *reinterpret_cast<Bytes16*>(data[0] + i * s[0]) =
          *reinterpret_cast<const Bytes16*>(data[1] + i * s[1]);
  });
}

void copy_cpu(const Tensor& dst, const Tensor& source) {
  if (try_transpose_copy(dst, source)) return;
  if (dst.dtype() == source.dtype() && dst.is_complex()) return copy_complex_cpu(dst, source);
  {
    StridedLoop loop(dst.sizes());
    loop.add(dst);
    loop.add(source);
    const bool stream =
        stream_output(dst.numel() * dst.element_size(), loop.data(0), loop.data(1), nullptr);
    BRASA_DISPATCH_ALL_TYPES_AND_BOOL(dst.dtype(), "copy_", [&] {
      using D = scalar_t;
      BRASA_DISPATCH_ALL_TYPES_AND_BOOL(source.dtype(), "copy_", [&] {
        // A bool source converts from the bytes 0 and 1 it is stored in: the
        // same values, and GCC vectorizes the loads (mask.to(kFloat) of 1 Mi
        // elements ran scalar, 3x a float copy's time).
        using S = std::conditional_t<std::is_same_v<scalar_t, bool> && !std::is_same_v<D, bool>,
                                     uint8_t, scalar_t>;
        loop.run_rows([stream](char** data, const int64_t* s, int64_t n, const int64_t* os,
                               int64_t m) { convert_rows<D, S>(data, s, n, os, m, stream); });
      });
    });
  }
}

bool is_positive_zero(const Scalar& v) {
  if (v.isFloatingPoint()) return v.toDouble() == 0.0 && !std::signbit(v.toDouble());
  return v.toLong() == 0;
}

void fill_cpu(const Tensor& dst, const Scalar& v) {
  if (dst.is_contiguous() && is_positive_zero(v)) {  // zeros(): all-zero bytes in every dtype
    std::memset(dst.data_ptr(), 0, dst.nbytes());
    return;
  }
  StridedLoop loop(dst.sizes());
  loop.add(dst);
  const bool stream =
      stream_output(dst.numel() * dst.element_size(), loop.data(0), nullptr, nullptr);
  BRASA_DISPATCH_ALL_TYPES_AND_BOOL(dst.dtype(), "fill_", [&] {
    const scalar_t value = v.to<scalar_t>();
    loop.run([value, stream](char** data, const int64_t* s, int64_t n) {
      if (s[0] == sizeof(scalar_t)) {
        write_run(reinterpret_cast<scalar_t*>(data[0]), n, stream,
                  [value](int64_t) { return value; });
      } else {
        for (int64_t i = 0; i < n; ++i) *reinterpret_cast<scalar_t*>(data[0] + i * s[0]) = value;
      }
    });
  });
}

// Reads through the input walked backwards along the flipped dims (a view
// with negative strides, which only the loop's offsets can express).
void flip_cpu(const Tensor& out, const Tensor& t, const std::vector<bool>& flipped) {
  DimVector st(t.strides().begin(), t.strides().end());
  char* base = static_cast<char*>(t.data_ptr());
  for (int64_t d = 0; d < t.dim(); ++d)
    if (flipped[d]) {
      base += (t.size(d) - 1) * t.stride(d) * t.element_size();
      st[d] = -st[d];
    }
  StridedLoop loop(t.sizes());
  loop.add(out);
  loop.add_raw(base, st, t.element_size());
  const int64_t es = t.element_size();
  loop.run([es](char** d, const int64_t* s, int64_t n) {
    for (int64_t i = 0; i < n; ++i) std::memcpy(d[0] + i * s[0], d[1] + i * s[1], es);
  });
}

}  // namespace

void register_copy_kernels() {
  register_kernel<FlipKernel>(kCPU, flip_cpu);
  register_kernel<CopyKernel>(kCPU, copy_cpu);
  register_kernel<FillKernel>(kCPU, fill_cpu);
}

}  // namespace BRASA_CPU_VARIANT
}  // namespace brasa::cpu
