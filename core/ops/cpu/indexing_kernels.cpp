// CPU kernels of the indexing family: advanced indexing by element offsets
// (rows copied with memcpy when the trailing dims are contiguous), scatter,
// gather, index_select, masked_select and nonzero.
#include <brasa/autograd/grad_mode.h>
#include <brasa/ops/copy.h>
#include <brasa/ops/cpu/loops.h>
#include <brasa/ops/factory.h>
#include <brasa/ops/cpu/register.h>
#include <brasa/ops/kernels/indexing.h>
#include <brasa/ops/shape.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cstdint>
#include <cstring>
#include <vector>

namespace brasa::cpu {
namespace {

// Reads index i of an int32/int64 tensor laid out contiguously.
inline int64_t read_index(const Tensor& idx, int64_t i) {
  const void* p = idx.data_ptr();
  return idx.dtype() == kLong ? static_cast<const int64_t*>(p)[i]
                              : static_cast<const int32_t*>(p)[i];
}

// Element offset in self of every broadcast position of the indices.
std::vector<int64_t> index_offsets(const char* op, const Tensor& self, const AdvancedIndex& p) {
  const int64_t nb = compute_numel(p.bshape);
  std::vector<int64_t> base(nb, 0);
  for (size_t i = 0; i < p.indices.size(); ++i) {
    const int64_t d = p.dims[i], size = self.size(d), stride = self.stride(d);
    for (int64_t b = 0; b < nb; ++b)
      base[b] += wrap_index(op, read_index(p.indices[i], b), size, d) * stride;
  }
  return base;
}

// Element offsets (in self) of every position of the non-indexed dims.
std::vector<int64_t> rest_offsets(const Tensor& self, const std::vector<int64_t>& rest) {
  int64_t n = 1;
  for (auto d : rest) n *= self.size(d);
  std::vector<int64_t> off(n, 0);
  for (int64_t i = 0; i < n; ++i) {
    int64_t rem = i, o = 0;
    for (int64_t k = static_cast<int64_t>(rest.size()) - 1; k >= 0; --k) {
      int64_t s = self.size(rest[k]);
      o += (rem % s) * self.stride(rest[k]);
      rem /= s;
    }
    off[i] = o;
  }
  return off;
}

void index_cpu(const Tensor& self, const AdvancedIndex& p, const Tensor& out) {
  const auto base = index_offsets("index", self, p);
  const auto roff = rest_offsets(self, p.rest);
  const int64_t nb = static_cast<int64_t>(base.size()), nr = static_cast<int64_t>(roff.size());
  const int64_t es = self.element_size();
  const char* src = static_cast<const char*>(self.data_ptr());
  char* dst = static_cast<char*>(out.data_ptr());
  // Contiguous trailing run: copy rows with memcpy.
  const bool rows = !p.rest.empty() && self.is_contiguous() && p.rest.back() == self.dim() - 1 &&
                    p.dims.back() < p.rest.front();
  parallel_for(0, nb, std::max<int64_t>(1, 16384 / std::max<int64_t>(nr, 1)),
               [&](int64_t b0, int64_t b1) {
                 for (int64_t b = b0; b < b1; ++b) {
                   if (rows) {
                     std::memcpy(dst + b * nr * es, src + base[b] * es, nr * es);
                     continue;
                   }
                   for (int64_t r = 0; r < nr; ++r)
                     std::memcpy(dst + (b * nr + r) * es, src + (base[b] + roff[r]) * es, es);
                 }
               });
}

void index_put_cpu(const Tensor& self, const AdvancedIndex& p, const Tensor& v, bool accumulate) {
  const auto base = index_offsets("index_put_", self, p);
  const auto roff = rest_offsets(self, p.rest);
  const int64_t nb = static_cast<int64_t>(base.size()), nr = static_cast<int64_t>(roff.size());
  BRASA_DISPATCH_ALL_TYPES_AND_BOOL(self.dtype(), "index_put_", [&] {
    scalar_t* dst = static_cast<scalar_t*>(self.data_ptr());
    const scalar_t* src = v.data_ptr<scalar_t>();
    // Serial: repeated indices must accumulate (or the last one win) deterministically.
    for (int64_t b = 0; b < nb; ++b)
      for (int64_t r = 0; r < nr; ++r) {
        scalar_t& d = dst[base[b] + roff[r]];
        if (accumulate) {
          if constexpr (std::is_same_v<scalar_t, bool>)
            d = d || src[b * nr + r];
          else
            d = static_cast<scalar_t>(static_cast<opmath_t<scalar_t>>(d) +
                                      static_cast<opmath_t<scalar_t>>(src[b * nr + r]));
        } else {
          d = src[b * nr + r];
        }
      }
  });
}

// One thread's scatter of every position of `index` (in its order, so that
// repeated targets accumulate, or the last one wins, deterministically);
// an index out of range is stored in `bad`.
void scatter_serial(const char* op, const Tensor& self, int64_t d, const Tensor& index,
                    const Tensor& s, bool add, std::atomic<int64_t>& bad) {
  StridedLoop loop(index.sizes());
  DimVector st(self.strides().begin(), self.strides().end());
  if (self.dim() > 0) st[d] = 0;
  if (self.dim() == 0) st.clear();
  DimVector ist(index.sizes().size(), 0);
  for (size_t k = 0; k < ist.size() && k < st.size(); ++k) ist[k] = st[k];
  loop.add_raw(static_cast<char*>(self.data_ptr()), ist, self.element_size());
  loop.add(index);
  if (s.dim() == 0)
    loop.add(s);
  else
    loop.add(s.as_strided(index.sizes(), s.strides()));
  const int64_t size = self.dim() == 0 ? 1 : self.size(d),
                stride = self.dim() == 0 ? 0 : self.stride(d);
  BRASA_DISPATCH_ALL_TYPES_AND_BOOL(self.dtype(), op, [&] {
    using T = scalar_t;
    loop.run_serial([&](char** p, const int64_t* s, int64_t n) {
      for (int64_t i = 0; i < n; ++i) {
        // In [0, size): scatter takes no negative index (as PyTorch, and
        // as the CUDA kernel).
        const int64_t ix = *reinterpret_cast<const int64_t*>(p[1] + i * s[1]);
        if (ix < 0 || ix >= size) {
          bad.store(ix);
          return;
        }
        T* dst = reinterpret_cast<T*>(p[0] + i * s[0]) + ix * stride;
        T v = *reinterpret_cast<const T*>(p[2] + i * s[2]);
        if (add) {
          if constexpr (std::is_same_v<T, bool>)
            *dst = *dst || v;
          else
            *dst = static_cast<T>(static_cast<opmath_t<T>>(*dst) + static_cast<opmath_t<T>>(v));
        } else {
          *dst = v;
        }
      }
    });
  });
}

// Threads take slices along the largest dim other than d: positions that
// differ only along d (which may target one element) stay in one thread, in
// the serial order, so the result does not depend on the thread count.
void scatter_cpu(const Tensor& self, int64_t d, const Tensor& index, const Tensor& s, bool add) {
  const char* op = add ? "scatter_add_" : "scatter_";
  std::atomic<int64_t> bad{INT64_MIN};
  int64_t split = -1;
  for (int64_t k = 0; k < index.dim(); ++k)
    if (k != d && index.size(k) > 1 && (split < 0 || index.size(k) > index.size(split))) split = k;
  const int64_t n = index.numel();
  if (split < 0 || n < 32768 || self.dim() == 0) {
    scatter_serial(op, self, d, index, s, add, bad);
  } else {
    const int64_t slices = index.size(split);
    const int64_t grain = std::max<int64_t>(1, 16384 / std::max<int64_t>(n / slices, 1));
    parallel_for(0, slices, grain, [&](int64_t b, int64_t e) {
      NoGradGuard no_grad;  // the slices are views for the kernel alone (grad mode is per thread)
      scatter_serial(op, self.narrow(split, b, e - b), d, index.narrow(split, b, e - b),
                     s.dim() == 0 ? s : s.narrow(split, b, e - b), add, bad);
    });
  }
  const int64_t size = self.dim() == 0 ? 1 : self.size(d);
  BRASA_CHECK(bad.load() == INT64_MIN, op, ": index ", bad.load(),
              " is out of bounds for dimension ", d, " with size ", size);
}

// The largest of n indices taken as unsigned (a negative one is huge): below
// `size` exactly when all are in [0, size). Four running maxima, so that the
// compare-and-select chains overlap.
uint64_t max_unsigned(const int64_t* ix, int64_t n) {
  uint64_t m0 = 0, m1 = 0, m2 = 0, m3 = 0;
  int64_t k = 0;
  for (; k + 4 <= n; k += 4) {
    m0 = std::max(m0, static_cast<uint64_t>(ix[k]));
    m1 = std::max(m1, static_cast<uint64_t>(ix[k + 1]));
    m2 = std::max(m2, static_cast<uint64_t>(ix[k + 2]));
    m3 = std::max(m3, static_cast<uint64_t>(ix[k + 3]));
  }
  for (; k < n; ++k) m0 = std::max(m0, static_cast<uint64_t>(ix[k]));
  return std::max(std::max(m0, m1), std::max(m2, m3));
}

// Blocks [b, e) of a contiguous gather: block p reads src's [size, inner]
// and writes dst's [m, inner] by ix's [m, inner] indices. False, with the
// index in `wrong`, at the first index outside [0, size). A block whose indices
// are all in [0, size) (one quick pass) is copied by a loop with nothing but
// the copy: the gather's loads miss the cache, and every instruction more
// per element leaves fewer of them in flight (a bounds check in the loop
// doubled its time: gather of 256x4096 by 256x1024, 204 against 93 us).
// Not inlined: inside the large caller GCC kept the loop counters on the
// stack.
template <class T>
[[gnu::noinline]] bool gather_blocks(const T* src, const int64_t* ix, T* dst, int64_t b, int64_t e,
                                     int64_t size, int64_t m, int64_t inner, int64_t& wrong) {
  const int64_t run = m * inner;
  for (int64_t p = b; p < e; ++p) {
    const T* base = src + p * size * inner;
    const int64_t* at = ix + p * run;
    T* o = dst + p * run;
    if (max_unsigned(at, run) < static_cast<uint64_t>(size)) {
      if (inner == 1) {
        for (int64_t j = 0; j < m; ++j) o[j] = base[at[j]];
      } else {
        for (int64_t j = 0; j < m; ++j)
          for (int64_t q = 0; q < inner; ++q)
            o[j * inner + q] = base[at[j * inner + q] * inner + q];
      }
      continue;
    }
    // Some index outside [0, size) (negative ones too, as PyTorch): the first.
    for (int64_t j = 0; j < run; ++j)
      if (at[j] < 0 || at[j] >= size) {
        wrong = at[j];
        return false;
      }
  }
  return true;
}

// gather on contiguous tensors whose index has self's sizes but along d:
// self as [outer, size, inner], index and out as [outer, m, inner], in
// parallel. False when the tensors do not have that form.
bool gather_contiguous(const Tensor& out, const Tensor& self, int64_t d, const Tensor& index) {
  if (self.dim() == 0 || !self.is_contiguous() || !index.is_contiguous() || !out.is_contiguous() ||
      index.dim() != self.dim())
    return false;
  for (int64_t k = 0; k < self.dim(); ++k)
    if (k != d && index.size(k) != self.size(k)) return false;
  int64_t outer = 1, inner = 1;
  for (int64_t k = 0; k < d; ++k) outer *= self.size(k);
  for (int64_t k = d + 1; k < self.dim(); ++k) inner *= self.size(k);
  const int64_t size = self.size(d), m = index.size(d), es = self.element_size();
  const int64_t* ix = index.data_ptr<int64_t>();
  const char* src = static_cast<const char*>(self.data_ptr());
  char* dst = static_cast<char*>(out.data_ptr());
  std::atomic<int64_t> bad{0};
  std::atomic<bool> failed{false};
  // Element copies typed by size, so that each is one load and one store.
  auto run = [&](auto zero) {
    using T = decltype(zero);
    const T* from = reinterpret_cast<const T*>(src);
    T* to = reinterpret_cast<T*>(dst);
    parallel_for(0, outer, std::max<int64_t>(1, 16384 / std::max<int64_t>(m * inner, 1)),
                 [&](int64_t b, int64_t e) {
                   int64_t wrong = 0;
                   if (!gather_blocks<T>(from, ix, to, b, e, size, m, inner, wrong)) {
                     bad.store(wrong);
                     failed.store(true);
                   }
                 });
  };
  if (es == 8)
    run(uint64_t{});
  else if (es == 4)
    run(uint32_t{});
  else if (es == 2)
    run(uint16_t{});
  else if (es == 1)
    run(uint8_t{});
  else
    return false;
  BRASA_CHECK(!failed.load(), "gather: index ", bad.load(), " is out of bounds for dimension ", d,
              " with size ", size);
  return true;
}

void gather_cpu(const Tensor& out, const Tensor& self, int64_t d, const Tensor& index) {
  if (gather_contiguous(out, self, d, index)) return;
  StridedLoop loop(index.sizes());
  loop.add(out);
  loop.add(index);
  DimVector st(index.dim(), 0);
  for (int64_t k = 0; k < index.dim() && k < self.dim(); ++k) st[k] = k == d ? 0 : self.stride(k);
  loop.add_raw(static_cast<char*>(self.data_ptr()), st, self.element_size());
  const int64_t size = self.dim() == 0 ? 1 : self.size(d),
                stride = self.dim() == 0 ? 0 : self.stride(d);
  std::atomic<int64_t> bad{INT64_MIN};
  const int64_t es = self.element_size();
  loop.run([&](char** p, const int64_t* s, int64_t n) {
    for (int64_t i = 0; i < n; ++i) {
      // In [0, size), as gather_contiguous's check and the CUDA kernel.
      const int64_t ix = *reinterpret_cast<const int64_t*>(p[1] + i * s[1]);
      if (ix < 0 || ix >= size) {
        bad.store(ix);
        return;
      }
      std::memcpy(p[0] + i * s[0], p[2] + i * s[2] + ix * stride * es, es);
    }
  });
  BRASA_CHECK(bad.load() == INT64_MIN, "gather: index ", bad.load(),
              " is out of bounds for dimension ", d, " with size ", size);
}

// Copies element i of each of `count` runs: dst[i] = src[ix[i]] with
// elements of `es` bytes (typed for the common sizes, memcpy for the rest).
void gather_elements(char* dst, const char* src, const int64_t* ix, int64_t count, int64_t es) {
  auto typed = [&](auto zero) {
    using T = decltype(zero);
    T* d = reinterpret_cast<T*>(dst);
    const T* s = reinterpret_cast<const T*>(src);
    for (int64_t i = 0; i < count; ++i) d[i] = s[ix[i]];
  };
  if (es == 4)
    typed(uint32_t{});
  else if (es == 8)
    typed(uint64_t{});
  else if (es == 2)
    typed(uint16_t{});
  else if (es == 1)
    typed(uint8_t{});
  else
    for (int64_t i = 0; i < count; ++i) std::memcpy(dst + i * es, src + ix[i] * es, es);
}

void index_select_cpu(const Tensor& out, const Tensor& self, int64_t d, const Tensor& index) {
  const int64_t n = index.numel(), size = self.size(d);
  const int64_t* ix = index.data_ptr<int64_t>();
  if (self.is_contiguous() && out.is_contiguous()) {
    // self as [outer, size, inner] and out as [outer, n, inner]: runs of
    // `inner` elements copied whole, or single elements gathered (inner 1).
    const int64_t es = self.element_size();
    int64_t outer = 1, inner = 1;
    for (int64_t k = 0; k < d; ++k) outer *= self.size(k);
    for (int64_t k = d + 1; k < self.dim(); ++k) inner *= self.size(k);
    const int64_t run = inner * es;
    const char* src = static_cast<const char*>(self.data_ptr());
    char* dst = static_cast<char*>(out.data_ptr());
    if (inner == 1) {
      parallel_for(0, outer, std::max<int64_t>(1, 16384 / std::max<int64_t>(n, 1)),
                   [&](int64_t b, int64_t e) {
                     for (int64_t p = b; p < e; ++p)
                       gather_elements(dst + p * n * es, src + p * size * es, ix, n, es);
                   });
      return;
    }
    parallel_for(0, outer * n, std::max<int64_t>(1, 65536 / std::max<int64_t>(run, 1)),
                 [&](int64_t b, int64_t e) {
                   for (int64_t r = b; r < e; ++r) {
                     const int64_t p = r / n, i = r % n;
                     std::memcpy(dst + r * run, src + (p * size + ix[i]) * run, run);
                   }
                 });
    return;
  }
  for (int64_t i = 0; i < n; ++i) detail::copy_kernel(select(out, d, i), select(self, d, ix[i]));
}

// A 16-byte element (complex double), moved as one value.
struct Bytes16 {
  alignas(8) unsigned char b[16];
};

// Chunk [start, end) of a masked select writing from dst[first] up to
// dst[last]: every element is stored and the slot advances only past selected
// ones (no branch to mispredict on a random mask); a store past `last` (the
// next chunk's first slot) goes to a sink.
template <class T>
void select_chunk(const T* src, const uint8_t* mask, T* dst, int64_t start, int64_t end,
                  int64_t first, int64_t last) {
  T sink;
  int64_t j = first;
  for (int64_t i = start; i < end; ++i) {
    *(j < last ? dst + j : &sink) = src[i];
    j += mask[i];
  }
}

// The chunks of masked_select, the masked put and nonzero: offset[c] counts
// the nonzero elements of p (compared as M) before chunk c, offset.back()
// all of them; the chunks are counted in parallel. A mask is read as its
// bytes (S = M = uint8_t), so that the count vectorizes.
constexpr int64_t kMaskChunk = 1 << 16;
template <class M, class S>
std::vector<int64_t> nonzeros_before_chunks(const S* p, int64_t n) {
  const int64_t chunks = (n + kMaskChunk - 1) / kMaskChunk;
  std::vector<int64_t> offset(static_cast<size_t>(chunks) + 1, 0);
  parallel_for(0, chunks, 1, [&](int64_t b, int64_t e) {
    for (int64_t ch = b; ch < e; ++ch) {
      int64_t count = 0;
      for (int64_t i = ch * kMaskChunk, end = std::min(n, i + kMaskChunk); i < end; ++i)
        count += static_cast<M>(p[i]) != M(0);
      offset[ch + 1] = count;
    }
  });
  for (int64_t ch = 0; ch < chunks; ++ch) offset[ch + 1] += offset[ch];
  return offset;
}

// Two passes over chunks, as nonzero: count each chunk's selected elements
// (in parallel), then each chunk copies from its offset.
Tensor masked_select_cpu(const Tensor& s, const Tensor& m) {
  const uint8_t* mp = static_cast<const uint8_t*>(m.data_ptr());  // bool as bytes: vectorized
  const int64_t n = m.numel();
  const std::vector<int64_t> offset = nonzeros_before_chunks<uint8_t>(mp, n);
  const int64_t chunks = static_cast<int64_t>(offset.size()) - 1;
  Tensor out = empty({offset[chunks]}, s.options());
  auto copy = [&](auto element) {
    using T = decltype(element);
    const T* src = static_cast<const T*>(s.data_ptr());
    T* dst = static_cast<T*>(out.data_ptr());
    parallel_for(0, chunks, 1, [&](int64_t b, int64_t e) {
      for (int64_t ch = b; ch < e; ++ch)
        select_chunk(src, mp, dst, ch * kMaskChunk, std::min(n, (ch + 1) * kMaskChunk), offset[ch],
                     offset[ch + 1]);
    });
  };
  switch (s.element_size()) {
    case 1:
      copy(uint8_t{});
      break;
    case 2:
      copy(uint16_t{});
      break;
    case 4:
      copy(uint32_t{});
      break;
    case 8:
      copy(uint64_t{});
      break;
    default:
      BRASA_CHECK(s.element_size() == 16, "masked_select: unexpected element size ",
                  s.element_size());
      copy(Bytes16{});
  }
  return out;
}

// The new value at a true place or the old one, chosen by bits: GCC
// compiled `mask[i] ? a : b` to a branch, mispredicted on a random mask.
template <class T>
T pick(uint8_t m, T a, T b) {
  using U = std::conditional_t<
      sizeof(T) == 1, uint8_t,
      std::conditional_t<sizeof(T) == 2, uint16_t,
                         std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>>>;
  const U sel = U(0) - U(m);
  return std::bit_cast<T>(U((std::bit_cast<U>(a) & sel) | (std::bit_cast<U>(b) & U(~sel))));
}

// Chunk [start, end) of a masked put reading values from v[first] up to
// v[last]: every element is written without a branch on the mask, and the
// position in v advances only past true places (reads past `last`, after
// the chunk's last true place, stay at `last`).
template <class T, bool kAccumulate>
void put_chunk(T* self, const uint8_t* mask, const T* v, int64_t start, int64_t end, int64_t first,
               int64_t last) {
  using M = opmath_t<T>;
  int64_t j = first;
  for (int64_t i = start; i < end; ++i) {
    const T x = v[std::min(j, last)], old = self[i];
    const T now = kAccumulate ? static_cast<T>(static_cast<M>(old) + static_cast<M>(x)) : x;
    self[i] = pick(mask[i], now, old);
    j += mask[i];
  }
}

// Two passes over chunks, as masked_select: count each chunk's true places
// (in parallel), then each chunk writes from its offset into values.
void masked_put_cpu(const Tensor& self, const Tensor& mask, const Tensor& values, bool accumulate) {
  const uint8_t* mp = static_cast<const uint8_t*>(mask.data_ptr());  // bool as bytes: vectorized
  const int64_t n = mask.numel();
  const std::vector<int64_t> offset = nonzeros_before_chunks<uint8_t>(mp, n);
  const int64_t chunks = static_cast<int64_t>(offset.size()) - 1;
  if (values.numel() != offset[chunks]) {
    DimVector result(values.sizes().begin(), values.sizes().end());
    int64_t row = 1;  // elements per value row: the trailing dims
    for (size_t d = 1; d < result.size(); ++d) row *= result[d];
    result[0] = offset[chunks] / std::max<int64_t>(row, 1);
    BRASA_ERROR("index_put_: shape mismatch: value tensor of shape ", values.sizes(),
                " cannot be broadcast to indexing result of shape ", IntArrayRef(result));
  }
  BRASA_DISPATCH_ALL_TYPES_AND_BOOL(self.dtype(), "index_put_", [&] {
    using T = scalar_t;
    T* sp = self.data_ptr<T>();
    const T* vp = values.data_ptr<T>();
    parallel_for(0, chunks, 1, [&](int64_t b, int64_t e) {
      for (int64_t ch = b; ch < e; ++ch) {
        if (offset[ch] == offset[ch + 1]) continue;  // no true place
        const int64_t start = ch * kMaskChunk, end = std::min(n, start + kMaskChunk);
        if (accumulate)
          put_chunk<T, true>(sp, mp, vp, start, end, offset[ch], offset[ch + 1] - 1);
        else
          put_chunk<T, false>(sp, mp, vp, start, end, offset[ch], offset[ch + 1] - 1);
      }
    });
  });
}

// Chunk [start, end) of nonzero's elements, writing coordinates at w: one
// run of the last dim at a time, the columns of the run's nonzeros are
// gathered first without a branch (one store an element), then each gets
// the run's leading coordinates and its column. (Writing every element's
// coordinates and stepping a multi-index per element took 1.4 ms for 1 Mi
// bools of [64, 128, 32], libtorch 1.3 ms; Intel Xeon, 1 thread.)
// Writes k rows of nonzero's output: the run's leading coordinates, then a
// column. kNd is nd when it is known at compile time (0: not): with a
// run-time count GCC made the leading copy a memcpy call per row (40% of a
// 3-D nonzero's time).
template <int kNd>
int64_t* write_rows(int64_t* w, const int64_t* lead, const int64_t* cols, int64_t k, int64_t nd) {
  const int64_t n = kNd > 0 ? kNd : nd;
  for (int64_t q = 0; q < k; ++q, w += n) {
    for (int64_t d = 0; d + 1 < n; ++d) w[d] = lead[d];
    w[n - 1] = cols[q];
  }
  return w;
}

template <class M, class S>
void nonzero_chunk(const S* p, IntArrayRef sizes, int64_t start, int64_t end, int64_t* w,
                   std::vector<int64_t>& cols) {
  const int64_t nd = static_cast<int64_t>(sizes.size()), width = sizes[nd - 1];
  std::vector<int64_t> at(static_cast<size_t>(nd));  // the coordinates of element i
  int64_t rem = start;
  for (int64_t d = nd - 1; d >= 0; --d) {
    at[d] = rem % sizes[d];
    rem /= sizes[d];
  }
  for (int64_t i = start; i < end;) {
    const int64_t run_end = std::min(end, i + width - at[nd - 1]), first_col = at[nd - 1];
    int64_t k = 0;
    for (int64_t j = i; j < run_end; ++j) {
      cols[k] = first_col + (j - i);
      k += static_cast<M>(p[j]) != M(0);
    }
    switch (nd) {
      case 1:
        w = write_rows<1>(w, at.data(), cols.data(), k, nd);
        break;
      case 2:
        w = write_rows<2>(w, at.data(), cols.data(), k, nd);
        break;
      case 3:
        w = write_rows<3>(w, at.data(), cols.data(), k, nd);
        break;
      case 4:
        w = write_rows<4>(w, at.data(), cols.data(), k, nd);
        break;
      default:
        w = write_rows<0>(w, at.data(), cols.data(), k, nd);
    }
    i = run_end;
    at[nd - 1] = 0;  // the next run starts a row: carry into the leading dims
    for (int64_t d = nd - 2; d >= 0 && ++at[d] == sizes[d]; --d) at[d] = 0;
  }
}

// Two passes over chunks: count each chunk's nonzeros (in parallel), then
// each chunk writes its coordinates from its offset.
Tensor nonzero_cpu(const Tensor& c) {
  const int64_t n = c.numel(), nd = c.dim();
  Tensor out;
  BRASA_DISPATCH_ALL_TYPES_AND_BOOL(c.dtype(), "nonzero", [&] {
    // Bools as their bytes: the count vectorizes. Other types compare in
    // their opmath type (a half -0 is zero).
    using M = std::conditional_t<std::is_same_v<scalar_t, bool>, uint8_t, opmath_t<scalar_t>>;
    using S = std::conditional_t<std::is_same_v<scalar_t, bool>, uint8_t, scalar_t>;
    const S* p = static_cast<const S*>(c.data_ptr());
    const std::vector<int64_t> offset = nonzeros_before_chunks<M>(p, n);
    const int64_t chunks = static_cast<int64_t>(offset.size()) - 1;
    out = empty({offset[chunks], nd}, c.options().dtype(kLong));
    if (nd == 0) return;  // a number: [1, 0] or [0, 0], nothing to write
    int64_t* o = out.data_ptr<int64_t>();
    parallel_for(0, chunks, 1, [&](int64_t b, int64_t e) {
      std::vector<int64_t> cols(static_cast<size_t>(std::min(kMaskChunk, c.size(nd - 1))));
      for (int64_t ch = b; ch < e; ++ch)
        nonzero_chunk<M>(p, c.sizes(), ch * kMaskChunk, std::min(n, (ch + 1) * kMaskChunk),
                         o + offset[ch] * nd, cols);
    });
  });
  return out;
}

}  // namespace

void class_targets_cpu(const Tensor& target, int64_t C, int64_t ignore_index, const Tensor& safe,
                       const Tensor& valid) {
  const int64_t* t = target.data_ptr<int64_t>();
  int64_t* s = safe.data_ptr<int64_t>();
  const int64_t n = target.numel();
  BRASA_DISPATCH_FLOATING_TYPES(valid.dtype(), "nll_loss", [&] {
    scalar_t* out = valid.data_ptr<scalar_t>();
    for (int64_t i = 0; i < n; ++i) {
      const int64_t v = t[i];
      if (v == ignore_index) {
        s[i] = 0;
        out[i] = scalar_t(0);
        continue;
      }
      BRASA_CHECK(v >= 0 && v < C, "nll_loss: target ", v, " is out of bounds for ", C, " classes");
      s[i] = v;
      out[i] = scalar_t(1);
    }
  });
}

void register_indexing_kernels() {
  register_kernel<AdvancedIndexKernel>(kCPU, index_cpu);
  register_kernel<AdvancedIndexPutKernel>(kCPU, index_put_cpu);
  register_kernel<ScatterKernel>(kCPU, scatter_cpu);
  register_kernel<GatherKernel>(kCPU, gather_cpu);
  register_kernel<IndexSelectKernel>(kCPU, index_select_cpu);
  register_kernel<MaskedSelectKernel>(kCPU, masked_select_cpu);
  register_kernel<MaskedPutKernel>(kCPU, masked_put_cpu);
  register_kernel<NonzeroKernel>(kCPU, nonzero_cpu);
  register_kernel<ClassTargetKernel>(kCPU, class_targets_cpu);
}

}  // namespace brasa::cpu
