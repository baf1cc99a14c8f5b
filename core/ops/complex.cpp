#include <brasa/autograd/grad_mode.h>
#include <brasa/autograd/record.h>
#include <brasa/ops/aliases.h>
#include <brasa/ops/binary.h>
#include <brasa/ops/complex.h>
#include <brasa/ops/copy.h>
#include <brasa/ops/factory.h>
#include <brasa/ops/kernel_table.h>
#include <brasa/ops/kernels/copy.h>
#include <brasa/ops/shape.h>
#include <brasa/ops/type_queries.h>
#include <brasa/ops/unary.h>

#include <numbers>
#include <string_view>

namespace brasa {
namespace {

using autograd::BackwardName;
using autograd::FormulaNode;
using autograd::variable_list;
const BackwardName kViewAsRealBackward("ViewAsRealBackward0"),
    kViewAsComplexBackward("ViewAsComplexBackward0");

void check_parts(const char* op, const Tensor& a, const Tensor& b) {
  BRASA_CHECK(a.defined() && b.defined(), op, ": expected defined tensors");
  BRASA_CHECK(a.dtype() == b.dtype(), op, ": expected both inputs to have the same dtype, got ",
              a.dtype(), " and ", b.dtype());
  BRASA_CHECK(a.dtype() == kFloat || a.dtype() == kDouble, op,
              ": expected both inputs to be Float or Double tensors (Brasa has no ComplexHalf), "
              "got ",
              a.dtype(), " and ", b.dtype());
  BRASA_CHECK(a.device() == b.device(), op, ": expected both inputs on one device, got ",
              a.device(), " and ", b.device());
}

// x as a tensor of complex dtype t (x's own when it already is one).
Tensor as_complex(const Tensor& x, ScalarType t) {
  if (x.dtype() == t) return x;
  if (x.is_complex()) return x.to(t);
  Tensor re = x.to(toRealValueType(t));
  return complex(re, zeros_like(re));
}

}  // namespace

Tensor view_as_real(const Tensor& self) {
  BRASA_CHECK(self.defined(), "view_as_real: expected a defined tensor");
  BRASA_CHECK(self.is_complex(), "view_as_real is only supported for complex tensors, got ",
              self.dtype());
  DimVector sizes(self.sizes().begin(), self.sizes().end()), strides;
  for (int64_t s : self.strides()) strides.push_back(2 * s);
  sizes.push_back(2);
  strides.push_back(1);
  // Made before the recorder (which turns grad mode off), so that in grad
  // mode the view remembers its base.
  Tensor out = detail::make_view(self, sizes, strides, 2 * self.storage_offset(),
                                 toRealValueType(self.dtype()));
  autograd::Recorder r(kViewAsRealBackward, self);
  if (r)
    r.finish(out, [](FormulaNode&, const variable_list& g) {
      return variable_list{view_as_complex(g[0].contiguous())};
    });
  return out;
}

Tensor view_as_complex(const Tensor& self) {
  BRASA_CHECK(self.defined(), "view_as_complex: expected a defined tensor");
  BRASA_CHECK(self.dtype() == kFloat || self.dtype() == kDouble,
              "view_as_complex is only supported for float and double tensors, but got a tensor "
              "of scalar type: ",
              self.dtype());
  BRASA_CHECK(self.dim() > 0, "view_as_complex: input tensor must have one or more dimensions");
  BRASA_CHECK(self.size(-1) == 2,
              "view_as_complex: tensor must have a last dimension of size 2, "
              "got shape ",
              self.sizes());
  BRASA_CHECK(self.stride(-1) == 1,
              "view_as_complex: tensor must have a last dimension with "
              "stride 1, got strides ",
              self.strides());
  DimVector sizes, strides;
  for (int64_t d = 0; d + 1 < self.dim(); ++d) {
    BRASA_CHECK(self.stride(d) % 2 == 0,
                "view_as_complex: tensor must have a stride divisible "
                "by 2 for all but last dimension, got strides ",
                self.strides());
    sizes.push_back(self.size(d));
    strides.push_back(self.stride(d) / 2);
  }
  BRASA_CHECK(self.storage_offset() % 2 == 0,
              "view_as_complex: tensor must have a "
              "storage_offset divisible by 2, got ",
              self.storage_offset());
  Tensor out = detail::make_view(self, sizes, strides, self.storage_offset() / 2,
                                 toComplexType(self.dtype()));
  autograd::Recorder r(kViewAsComplexBackward, self);
  if (r)
    r.finish(out, [](FormulaNode&, const variable_list& g) {
      return variable_list{view_as_real(g[0])};
    });
  return out;
}

Tensor view_as_real_copy(const Tensor& self) { return clone(view_as_real(self)); }
Tensor view_as_complex_copy(const Tensor& self) { return clone(view_as_complex(self)); }

Tensor complex(const Tensor& real, const Tensor& imag) {
  check_parts("complex", real, imag);
  auto both = broadcast_tensors({real, imag});
  return view_as_complex(stack(both, -1));
}

Tensor polar(const Tensor& abs, const Tensor& angle) {
  check_parts("polar", abs, angle);
  return complex(abs * cos(angle), abs * sin(angle));
}

Tensor imag(const Tensor& self) {
  BRASA_CHECK(self.defined(), "imag: expected a defined tensor");
  BRASA_CHECK(self.is_complex(),
              "imag is not implemented for tensors with non-complex dtypes (got ", self.dtype(),
              ")");
  return select(view_as_real(self), -1, 1);
}

Tensor angle(const Tensor& self) {
  BRASA_CHECK(self.defined(), "angle: expected a defined tensor");
  if (self.is_complex()) return atan2(imag(self), real(self));
  Tensor x = isIntegralType(self.dtype(), true) ? self.to(get_default_dtype()) : self;
  // pi where negative, 0 elsewhere; NaN stays (its gradient is 0 elsewhere).
  Tensor out = zeros_like(x).masked_fill(x < 0, std::numbers::pi);
  return where(x.isnan(), x, out);
}

Tensor detail::complex_add(const Tensor& a, const Tensor& b, double alpha) {
  const ScalarType t = promoteTypes(a.dtype(), b.dtype());
  Tensor sum = add(view_as_real(as_complex(a, t)), view_as_real(as_complex(b, t)), alpha);
  return view_as_complex(sum);
}

Tensor detail::complex_mul(const Tensor& a, const Tensor& b) {
  const ScalarType t = promoteTypes(a.dtype(), b.dtype());
  Tensor x = as_complex(a, t), y = as_complex(b, t);
  Tensor xr = real(x), xi = imag(x), yr = real(y), yi = imag(y);
  return complex(xr * yr - xi * yi, xr * yi + xi * yr);
}

Tensor detail::complex_div(const Tensor& a, const Tensor& b) {
  const ScalarType t = promoteTypes(a.dtype(), b.dtype());
  Tensor x = as_complex(a, t);
  if (!b.is_complex())  // [..., 2] / [..., 1]: both parts by the real divisor
    return view_as_complex(view_as_real(x) / b.to(toRealValueType(t)).unsqueeze(-1));
  Tensor y = as_complex(b, t);
  Tensor xr = real(x), xi = imag(x), yr = real(y), yi = imag(y);
  // (xr + i xi)(yr - i yi) / |y|^2; Smith's rescaling is left out, so
  // divisors beyond ~1e154 (double) or ~1e19 (float) overflow.
  Tensor d = yr * yr + yi * yi;
  return complex((xr * yr + xi * yi) / d, (xi * yr - xr * yi) / d);
}

Tensor detail::complex_eq(const Tensor& a, const Tensor& b) {
  const ScalarType t = promoteTypes(a.dtype(), b.dtype());
  return eq(view_as_real(as_complex(a, t)), view_as_real(as_complex(b, t))).all(-1);
}

Tensor detail::complex_unary(const char* op, const Tensor& x) {
  const std::string_view name(op);
  Tensor re = real(x), im = imag(x);
  if (name == "exp") {
    Tensor m = exp(re);
    return complex(m * cos(im), m * sin(im));
  }
  if (name == "log") return complex(log(complex_abs(x)), atan2(im, re));
  if (name == "reciprocal") {
    Tensor d = re * re + im * im;
    return complex(re / d, -im / d);
  }
  if (name == "square") return complex_mul(x, x);
  if (name == "sqrt") {
    // sqrt((|z| + re) / 2) + i sign(im) sqrt((|z| - re) / 2); the clamps
    // absorb rounding below zero.
    Tensor r = complex_abs(x);
    Tensor out_re = sqrt(((r + re) * 0.5).clamp_min(0));
    Tensor out_im = sqrt(((r - re) * 0.5).clamp_min(0));
    return complex(out_re, where(im < 0, -out_im, out_im));
  }
  BRASA_CHECK(name != "sign",
              "Unlike NumPy, torch.sign is not intended to support complex numbers. Please use "
              "torch.sgn instead.");
  return Tensor();
}

// One real product on the interleaved parts: with x's parts as [M, 2K]
// (x_r0, x_i0, x_r1, ...) and a [2K, 2N] matrix whose row 2k is y's row k
// as (re, im) pairs and row 2k+1 is i times it (-im, re), the product is
// x @ y as (re, im) pairs, [M, N, 2], with no pass to interleave it: one
// GEMM call of the flops of four, x read as it lies. Vectors, and shapes
// the product refuses, go by the four products of the parts (the product
// then names the caller's shapes in its error).
Tensor detail::complex_matmul(const Tensor& a, const Tensor& b,
                              Tensor (*product)(const Tensor&, const Tensor&)) {
  const ScalarType t = promoteTypes(a.dtype(), b.dtype());  // complex: a or b is
  Tensor x = as_complex(a, t), y = as_complex(b, t);
  if (x.dim() < 2 || y.dim() < 2 || x.size(-1) != y.size(-2)) {
    // The parts are strided views (stride 2); the GEMMs want them packed.
    Tensor xr = real(x).contiguous(), xi = imag(x).contiguous();
    Tensor yr = real(y).contiguous(), yi = imag(y).contiguous();
    return complex(product(xr, yr) - product(xi, yi), product(xr, yi) + product(xi, yr));
  }
  const int64_t k = x.size(-1), n = y.size(-1);
  DimVector x_shape(x.sizes().begin(), x.sizes().end() - 1);
  x_shape.push_back(2 * k);
  Tensor rows = view_as_real(x).reshape(x_shape);  // [..., M, 2K]
  Tensor yr = real(y), yi = imag(y);
  DimVector y_shape(y.sizes().begin(), y.sizes().end() - 2);
  y_shape.push_back(2 * k);
  y_shape.push_back(2 * n);
  // [..., K, 2 (y, i y), N, 2 (re, im)] -> [..., 2K, 2N]
  Tensor cols = stack({stack({yr, yi}, -1), stack({-yi, yr}, -1)}, -3).reshape(y_shape);
  Tensor pairs = product(rows, cols);  // [..., M, 2N]
  DimVector out_shape(pairs.sizes().begin(), pairs.sizes().end() - 1);
  out_shape.push_back(n);
  out_shape.push_back(2);
  return view_as_complex(pairs.view(out_shape));
}

Tensor detail::complex_prod(const Tensor& x, int64_t dim, bool keepdim,
                            std::optional<ScalarType> dtype) {
  BRASA_CHECK(!dtype || isComplexType(*dtype), "prod: the product of a complex tensor cannot be ",
              *dtype, "; give a complex dtype or none");
  const Tensor z = dtype ? x.to(*dtype) : x;
  if (z.dim() == 0) return clone(z);
  const int64_t d = maybe_wrap_dim(dim, z.dim(), "prod");
  Tensor cur = movedim(z, d, 0);
  if (cur.size(0) == 0) {  // the empty product
    Tensor one = ones(IntArrayRef(cur.sizes()).slice(1),
                      TensorOptions().dtype(toRealValueType(z.dtype())).device(z.device()));
    cur = complex(one, zeros_like(one)).unsqueeze(0);
  }
  while (cur.size(0) > 1) {
    const int64_t n = cur.size(0), half = n / 2;
    Tensor pairs = complex_mul(cur.narrow(0, 0, half), cur.narrow(0, half, half));
    if (n % 2)  // the odd one out joins the next round (cat on the real views)
      pairs = view_as_complex(
          cat({view_as_real(pairs), view_as_real(cur.narrow(0, n - 1, 1))}, 0).contiguous());
    cur = pairs;
  }
  Tensor out = cur.squeeze(0);
  return keepdim ? out.unsqueeze(d) : out;
}

Tensor& detail::complex_add_(Tensor& self, const Tensor& other, double alpha) {
  BRASA_CHECK(self.is_complex(), "add_: the result of adding a complex tensor to a ", self.dtype(),
              " tensor cannot be written into it in place");
  BRASA_CHECK(!(is_grad_enabled() && (self.requires_grad() || other.requires_grad())),
              "add_: in-place addition on complex tensors that records gradients is not "
              "supported; use the out-of-place add");
  Tensor r = view_as_real(self);
  r.add_(view_as_real(as_complex(other, self.dtype())), alpha);
  return self;
}

Tensor detail::complex_sum(const char* op, const Tensor& x, IntArrayRef dim, bool keepdim,
                           std::optional<ScalarType> dtype, bool mean) {
  BRASA_CHECK(!dtype || isComplexType(*dtype), op, ": the sum of a complex tensor cannot be ",
              *dtype, "; give a complex dtype or none");
  const Tensor z = dtype ? x.to(*dtype) : x;
  if (z.dim() == 0) return clone(z);
  // The dims of z, in its real view (whose last dim, the parts, stays).
  DimVector dims;
  if (dim.empty())
    for (int64_t d = 0; d < z.dim(); ++d) dims.push_back(d);
  for (int64_t d : dim) dims.push_back(maybe_wrap_dim(d, z.dim(), op));
  Tensor parts = view_as_real(z);
  Tensor r = mean ? parts.mean(dims, keepdim) : parts.sum(dims, keepdim);
  return view_as_complex(r.contiguous());
}

Tensor detail::complex_abs(const Tensor& self) { return hypot(real(self), imag(self)); }

Tensor detail::complex_conj(const Tensor& self) { return complex(real(self), -imag(self)); }

void detail::complex_copy(const Tensor& dst, const Tensor& src, bool non_blocking) {
  NoGradGuard no_grad;
  if (dst.is_complex() && src.is_complex()) {
    // On the CPU, values of one dtype move whole, so that transposing copies
    // take the copy kernel's blocked paths (the real views' pairs are runs
    // of 2 it copies one by one: 12x slower for a 4x101x201 transpose).
    if (dst.dtype() == src.dtype() && dst.is_cpu() && src.is_cpu()) {
      const bool same_layout = src.data_ptr() == dst.data_ptr() && src.strides() == dst.strides();
      kernel<CopyKernel>(kCPU)(dst, src.is_alias_of(dst) && !same_layout ? clone(src) : src);
    } else {
      copy_kernel(view_as_real(dst), view_as_real(src), non_blocking);
    }
  } else if (dst.is_complex()) {
    Tensor parts = view_as_real(dst);
    copy_kernel(select(parts, -1, 0), src, non_blocking);
    fill_kernel(select(parts, -1, 1), 0);
  } else {
    copy_kernel(dst, select(view_as_real(src), -1, 0), non_blocking);
  }
}

}  // namespace brasa
