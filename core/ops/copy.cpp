#include <brasa/ops/copy.h>
#include <brasa/ops/cpu/loops.h>
#include <brasa/ops/elementwise.h>
#include <brasa/ops/factory.h>

#include <cstring>

namespace brasa {
namespace {

template <class D, class S>
void convert_run(char** data, const int64_t* s, int64_t n) {
  D* d = reinterpret_cast<D*>(data[0]);
  const S* src = reinterpret_cast<const S*>(data[1]);
  if (s[0] == sizeof(D) && s[1] == sizeof(S)) {
    if constexpr (std::is_same_v<D, S>) {
      std::memcpy(d, src, n * sizeof(D));
    } else {
      for (int64_t i = 0; i < n; ++i) d[i] = convert<D, S>(src[i]);
    }
    return;
  }
  if (s[0] == sizeof(D) && s[1] == 0) {
    const D v = convert<D, S>(src[0]);
    for (int64_t i = 0; i < n; ++i) d[i] = v;
    return;
  }
  for (int64_t i = 0; i < n; ++i)
    *reinterpret_cast<D*>(data[0] + i * s[0]) =
        convert<D, S>(*reinterpret_cast<const S*>(data[1] + i * s[1]));
}

// 2-D copy where one side walks rows and the other columns: done in square
// tiles so both sides stay in cache (a plain loop misses on every element).
template <class T>
void blocked_transpose_copy(char* dst, const int64_t* ds, char* src, const int64_t* ss, int64_t rows,
                            int64_t cols) {
  constexpr int64_t B = 32;
  const int64_t es = sizeof(T);
  parallel_for(0, (rows + B - 1) / B, 1, [&](int64_t rb, int64_t re) {
    for (int64_t bi = rb * B; bi < std::min(rows, re * B); bi += B)
      for (int64_t bj = 0; bj < cols; bj += B) {
        int64_t ie = std::min(rows, bi + B), je = std::min(cols, bj + B);
        for (int64_t i = bi; i < ie; ++i)
          for (int64_t j = bj; j < je; ++j)
            *reinterpret_cast<T*>(dst + (i * ds[0] + j * ds[1])) =
                *reinterpret_cast<const T*>(src + (i * ss[0] + j * ss[1]));
      }
  });
  (void)es;
}

bool try_transpose_copy(const Tensor& dst, const Tensor& src) {
  if (dst.dtype() != src.dtype() || dst.sizes() != src.sizes()) return false;
  cpu::StridedLoop loop(dst.sizes());
  loop.add(dst);
  loop.add(src);
  loop.coalesce();
  if (loop.ndim() != 2) return false;
  const int64_t es = dst.element_size();
  const int64_t* d = loop.strides(0);
  const int64_t* s = loop.strides(1);
  // dst row-contiguous and src column-contiguous (or the other way round).
  bool transposed = (d[1] == es && s[0] == es) || (d[0] == es && s[1] == es);
  if (!transposed || loop.numel() < 4096) return false;
  int64_t rows = loop.shape()[0], cols = loop.shape()[1];
  char* dp = loop.data(0);
  char* sp = loop.data(1);
  switch (es) {
    case 1: blocked_transpose_copy<uint8_t>(dp, d, sp, s, rows, cols); break;
    case 2: blocked_transpose_copy<uint16_t>(dp, d, sp, s, rows, cols); break;
    case 4: blocked_transpose_copy<uint32_t>(dp, d, sp, s, rows, cols); break;
    case 8: blocked_transpose_copy<uint64_t>(dp, d, sp, s, rows, cols); break;
    default: return false;
  }
  return true;
}

}  // namespace

Tensor& copy_(Tensor& dst, const Tensor& src) {
  BRASA_CHECK(dst.defined() && src.defined(), "copy_: expected defined tensors");
  BRASA_CHECK(dst.device().is_cpu() && src.device().is_cpu(), "copy_: only CPU tensors are supported, got dst on ",
              dst.device(), " and src on ", src.device());
  bool fits = src.dim() <= dst.dim();
  for (int64_t i = 0; fits && i < src.dim(); ++i) {
    int64_t s = src.size(src.dim() - 1 - i), d = dst.size(dst.dim() - 1 - i);
    fits = s == d || s == 1;
  }
  BRASA_CHECK(fits, "copy_: source of shape ", src.sizes(),
              " cannot be broadcast to destination of shape ", dst.sizes());
  if (dst.numel() == 0 || dst.is_same(src)) return dst;
  detail::copy_kernel(dst, src);
  dst.bump_version();
  return dst;
}

void detail::copy_kernel(const Tensor& dst, const Tensor& src) {
  Tensor source = src;
  // Overlapping memory with a different layout: copy through a temporary.
  if (src.is_alias_of(dst) && !(src.data_ptr() == dst.data_ptr() && src.strides() == dst.strides()))
    source = clone(src);
  if (!try_transpose_copy(dst, source)) {
    cpu::StridedLoop loop(dst.sizes());
    loop.add(dst);
    loop.add(source);
    BRASA_DISPATCH_ALL_TYPES_AND_BOOL(dst.dtype(), "copy_", [&] {
      using D = scalar_t;
      BRASA_DISPATCH_ALL_TYPES_AND_BOOL(source.dtype(), "copy_", [&] {
        using S = scalar_t;
        loop.run([](char** data, const int64_t* s, int64_t n) { convert_run<D, S>(data, s, n); });
      });
    });
  }
}

void detail::fill_kernel(const Tensor& dst, const Scalar& v) {
  cpu::StridedLoop loop(dst.sizes());
  loop.add(dst);
  BRASA_DISPATCH_ALL_TYPES_AND_BOOL(dst.dtype(), "fill_", [&] {
    const scalar_t value = v.to<scalar_t>();
    loop.run([value](char** data, const int64_t* s, int64_t n) {
      if (s[0] == sizeof(scalar_t)) {
        auto* d = reinterpret_cast<scalar_t*>(data[0]);
        std::fill(d, d + n, value);
      } else {
        for (int64_t i = 0; i < n; ++i) *reinterpret_cast<scalar_t*>(data[0] + i * s[0]) = value;
      }
    });
  });
}

Tensor clone(const Tensor& t) {
  Tensor out = empty(t.sizes(), t.options());
  detail::copy_kernel(out, t);
  return out;
}

Tensor contiguous(const Tensor& t) { return t.is_contiguous() ? t : clone(t); }

}  // namespace brasa
