// torch::fft: the transforms as three differentiable ops along one dim
// — complex to complex, real to one-sided complex, one-sided complex to
// real — run by FftKernel (ops/cpu/fft_kernels.cpp), and everything else
// (dims, lengths, normalization, Hermitian forms) composed from them.
#include <brasa/autograd/grad_mode.h>
#include <brasa/autograd/record.h>
#include <brasa/nn/functional.h>
#include <brasa/ops/complex.h>
#include <brasa/ops/factory.h>
#include <brasa/ops/fft.h>
#include <brasa/ops/kernel_table.h>
#include <brasa/ops/kernels/spectral.h>
#include <brasa/ops/shape.h>
#include <brasa/ops/type_queries.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

namespace brasa::fft {

namespace {

const autograd::BackwardName kFftC2CBackward("FftC2CBackward0");
const autograd::BackwardName kFftR2CBackward("FftR2CBackward0");
const autograd::BackwardName kFftC2RBackward("FftC2RBackward0");

// The factor on a transform of length n. `forward` is the direction the
// norm names: fft, rfft, hfft and their n-d forms; the inverses are not.
double scale_of(const char* op, Norm norm, int64_t n, bool forward) {
  const std::string_view mode = norm.value_or("backward");
  if (mode == "backward") return forward ? 1.0 : 1.0 / static_cast<double>(n);
  if (mode == "forward") return forward ? 1.0 / static_cast<double>(n) : 1.0;
  BRASA_CHECK(mode == "ortho", op, ": Invalid normalization mode: \"", std::string(mode),
              "\" (expected \"backward\", \"forward\" or \"ortho\")");
  return 1.0 / std::sqrt(static_cast<double>(n));
}

void check_length(const char* op, int64_t n) {
  BRASA_CHECK(n >= 1, op, ": Invalid number of data points (", n, ") specified");
}

// Integers and bool become the default float type; half precision is
// refused (the CPU kernel runs float and double).
Tensor floating(const char* op, const Tensor& x) {
  BRASA_CHECK(x.defined(), op, ": expected a defined tensor");
  const ScalarType t = x.scalar_type();
  BRASA_CHECK(t != kHalf && t != kBFloat16, op, ": expected a float, double or complex input, got ",
              toString(t), " (half-precision transforms are not supported)");
  if (isIntegralType(t, /*includeBool=*/true)) return x.to(get_default_dtype());
  return x;
}

Tensor as_complex(const char* op, const Tensor& x) {
  Tensor f = floating(op, x);
  return f.is_complex() ? f : complex(f, zeros_like(f));
}

Tensor as_real(const char* op, const Tensor& x) {
  BRASA_CHECK(x.defined() && !x.is_complex(), op, " expects a real input tensor, but got ",
              x.defined() ? toString(x.scalar_type()) : std::string("an undefined tensor"));
  return floating(op, x);
}

// x with dim `dim` trimmed or zero-padded to n (complex ones through their
// real view, so that autograd sees real ops).
Tensor resize(const Tensor& x, int64_t dim, int64_t n) {
  const int64_t size = x.size(dim);
  if (size == n) return x;
  Tensor t = x.is_complex() ? view_as_real(x) : x;
  if (size > n) {
    t = t.narrow(dim, 0, n);
  } else {
    // F::pad's pairs run from the last dim back: dim's pair is the last.
    std::vector<int64_t> p(static_cast<size_t>(2 * (t.dim() - dim)), 0);
    p.back() = n - size;
    t = nn::functional::pad(t, p, 0.0);
  }
  return x.is_complex() ? view_as_complex(t) : t;
}

// The kernel along `dim` of x, into a new tensor whose `dim` has out_len
// elements of out_dtype. Not recorded by autograd.
Tensor run_kernel(const Tensor& x, int64_t dim, FftKind kind, int64_t n, bool inverse, double scale,
                  int64_t out_len, ScalarType out_dtype) {
  NoGradGuard no_grad;
  Tensor in = x.contiguous();
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < in.dim(); ++d)
    if (d < dim)
      outer *= in.size(d);
    else if (d > dim)
      inner *= in.size(d);
  DimVector shape(in.sizes().begin(), in.sizes().end());
  shape[static_cast<size_t>(dim)] = out_len;
  Tensor out = empty(shape, in.options().dtype(out_dtype));
  // Rows of a last dim (inner = 1) are staged into the kernel's vector
  // lanes by the kernel itself, by register transposes (a transposing copy
  // before and after measured twice as slow, Zen 5).
  kernel<FftKernel>(in.device())(in, out, kind, n, inverse, scale, outer, inner);
  return out;
}

// The three transforms along `dim`: complex to complex of its length, real
// to the n / 2 + 1 non-negative frequencies, and those back to n reals.
Tensor c2c(const Tensor& x, int64_t dim, bool inverse, double scale);
Tensor r2c(const Tensor& x, int64_t dim, double scale);
Tensor c2r(const Tensor& x, int64_t dim, int64_t n, double scale);

Tensor c2c(const Tensor& x, int64_t dim, bool inverse, double scale) {
  autograd::Recorder r(kFftC2CBackward, x);
  const int64_t n = x.size(dim);
  Tensor out = run_kernel(x, dim, FftKind::C2C, n, inverse, scale, n, x.scalar_type());
  // The adjoint of a transform is the opposite one with the same factor.
  if (r)
    r.finish(out, [dim, inverse, scale](autograd::FormulaNode&, const autograd::variable_list& g) {
      return autograd::variable_list{c2c(g[0], dim, !inverse, scale)};
    });
  return out;
}

Tensor r2c(const Tensor& x, int64_t dim, double scale) {
  autograd::Recorder r(kFftR2CBackward, x);
  const int64_t n = x.size(dim);
  Tensor out =
      run_kernel(x, dim, FftKind::R2C, n, false, scale, n / 2 + 1, toComplexType(x.scalar_type()));
  // The adjoint: the missing frequencies are zero, the inverse transform
  // of the whole spectrum, its real part.
  if (r)
    r.finish(out, [dim, n, scale](autograd::FormulaNode&, const autograd::variable_list& g) {
      return autograd::variable_list{real(c2c(resize(g[0], dim, n), dim, true, scale))};
    });
  return out;
}

Tensor c2r(const Tensor& x, int64_t dim, int64_t n, double scale) {
  autograd::Recorder r(kFftC2RBackward, x);
  Tensor out =
      run_kernel(x, dim, FftKind::C2R, n, true, scale, n, toRealValueType(x.scalar_type()));
  // Each frequency but 0 and (even n) n / 2 stands for itself and its
  // mirror: the forward transform, those doubled.
  if (r)
    r.finish(out, [dim, n, scale](autograd::FormulaNode&, const autograd::variable_list& g) {
      const int64_t bins = n / 2 + 1;
      DimVector shape(static_cast<size_t>(g[0].dim()), 1);
      shape[static_cast<size_t>(dim)] = bins;
      Tensor weight = full({bins}, 2.0, g[0].options());
      {
        NoGradGuard no_grad;
        weight.narrow(0, 0, 1).fill_(1.0);
        if (n % 2 == 0) weight.narrow(0, bins - 1, 1).fill_(1.0);
      }
      return autograd::variable_list{r2c(g[0], dim, scale) * weight.view(shape)};
    });
  return out;
}

// One-dimensional transforms.
enum class Kind { C2C, R2C, C2R };
struct OneDim {
  const char* op;
  Kind kind;
  bool inverse;      // C2C only
  bool forward;      // the norm's direction
  bool conj_input;   // hfft
  bool conj_output;  // ihfft
};

Tensor one_dim(const OneDim& spec, const Tensor& self, std::optional<int64_t> n, int64_t dim,
               Norm norm) {
  Tensor x = spec.kind == Kind::R2C ? as_real(spec.op, self) : as_complex(spec.op, self);
  BRASA_CHECK(x.dim() >= 1, spec.op, ": expected a tensor with at least one dimension");
  const int64_t d = maybe_wrap_dim(dim, x.dim(), spec.op);
  const int64_t length = n.value_or(spec.kind == Kind::C2R ? 2 * (x.size(d) - 1) : x.size(d));
  check_length(spec.op, length);
  const double scale = scale_of(spec.op, norm, length, spec.forward);
  if (spec.kind == Kind::C2C) return c2c(resize(x, d, length), d, spec.inverse, scale);
  if (spec.kind == Kind::R2C) {
    Tensor y = r2c(resize(x, d, length), d, scale);
    return spec.conj_output ? conj(y) : y;
  }
  Tensor half = resize(x, d, length / 2 + 1);
  return c2r(spec.conj_input ? conj(half) : half, d, length, scale);
}

// The dims of an n-d transform and their lengths, as PyTorch settles them.
struct Plan {
  std::vector<int64_t> dims, sizes;
};

Plan settle(const char* op, const Tensor& x, OptionalIntArrayRef s, OptionalIntArrayRef dim,
            bool half_input) {
  Plan p;
  if (dim) {
    for (int64_t d : *dim) p.dims.push_back(maybe_wrap_dim(d, x.dim(), op));
    std::vector<int64_t> sorted = p.dims;
    std::sort(sorted.begin(), sorted.end());
    BRASA_CHECK(std::adjacent_find(sorted.begin(), sorted.end()) == sorted.end(), op,
                ": FFT dims must be unique, got ", *dim);
  }
  if (s) {
    if (dim)
      BRASA_CHECK(s->size() == dim->size(), op,
                  ": When given, dim and shape arguments must have the same length (got s=", *s,
                  " and dim=", *dim, ")");
    else {
      BRASA_CHECK(static_cast<int64_t>(s->size()) <= x.dim(), op, ": Got shape with ", s->size(),
                  " values but input tensor only has ", x.dim(), " dimensions.");
      for (int64_t d = x.dim() - static_cast<int64_t>(s->size()); d < x.dim(); ++d)
        p.dims.push_back(d);
    }
  } else if (!dim) {
    for (int64_t d = 0; d < x.dim(); ++d) p.dims.push_back(d);
  }
  for (size_t i = 0; i < p.dims.size(); ++i) {
    int64_t size = x.size(p.dims[i]);
    if (s && (*s)[i] != -1)
      size = (*s)[i];
    else if (half_input && i + 1 == p.dims.size())
      size = 2 * (size - 1);
    check_length(op, size);
    p.sizes.push_back(size);
  }
  return p;
}

// Complex to complex over every dim of p.
Tensor c2c_dims(const char* op, Tensor x, const Plan& p, bool inverse, bool forward, Norm norm) {
  for (size_t i = 0; i < p.dims.size(); ++i) {
    const int64_t n = p.sizes[i];
    const double scale = scale_of(op, norm, n, forward);
    x = c2c(resize(x, p.dims[i], n), p.dims[i], inverse, scale);
  }
  return x;
}

// The dims but the last of p.
Plan leading(const Plan& p) {
  Plan lead = p;
  if (!lead.dims.empty()) {
    lead.dims.pop_back();
    lead.sizes.pop_back();
  }
  return lead;
}

// rfftn and ihfftn: real to one-sided over the last dim, then complex.
Tensor real_n(const char* op, const Tensor& self, OptionalIntArrayRef s, OptionalIntArrayRef dim,
              Norm norm, bool forward) {
  Tensor x = as_real(op, self);
  const Plan p = settle(op, x, s, dim, false);
  BRASA_CHECK(!p.dims.empty(), op, ": must transform at least one axis");
  const int64_t n = p.sizes.back();
  const double scale = scale_of(op, norm, n, forward);
  Tensor y = r2c(resize(x, p.dims.back(), n), p.dims.back(), scale);
  y = c2c_dims(op, y, leading(p), false, forward, norm);
  return forward ? y : conj(y);
}

// irfftn and hfftn: complex over the leading dims, then one-sided to real.
Tensor half_n(const char* op, const Tensor& self, OptionalIntArrayRef s, OptionalIntArrayRef dim,
              Norm norm, bool forward) {
  Tensor x = as_complex(op, self);
  const Plan p = settle(op, x, s, dim, true);
  BRASA_CHECK(!p.dims.empty(), op, ": must transform at least one axis");
  if (forward) x = conj(x);
  x = c2c_dims(op, x, leading(p), true, forward, norm);
  const int64_t n = p.sizes.back();
  const double scale = scale_of(op, norm, n, forward);
  return c2r(resize(x, p.dims.back(), n / 2 + 1), p.dims.back(), n, scale);
}

Tensor shift(const Tensor& x, OptionalIntArrayRef dim, bool inverse) {
  BRASA_CHECK(x.defined(), inverse ? "ifftshift" : "fftshift", ": expected a defined tensor");
  std::vector<int64_t> dims, shifts;
  if (dim)
    for (int64_t d : *dim) dims.push_back(maybe_wrap_dim(d, x.dim(), "fftshift"));
  else
    for (int64_t d = 0; d < x.dim(); ++d) dims.push_back(d);
  for (int64_t d : dims) shifts.push_back(inverse ? (x.size(d) + 1) / 2 : x.size(d) / 2);
  if (dims.empty()) return x.clone();
  return roll(x, shifts, dims);
}

}  // namespace

Tensor fft(const Tensor& self, std::optional<int64_t> n, int64_t dim, Norm norm) {
  return one_dim({"fft", Kind::C2C, false, true, false, false}, self, n, dim, norm);
}
Tensor ifft(const Tensor& self, std::optional<int64_t> n, int64_t dim, Norm norm) {
  return one_dim({"ifft", Kind::C2C, true, false, false, false}, self, n, dim, norm);
}
Tensor rfft(const Tensor& self, std::optional<int64_t> n, int64_t dim, Norm norm) {
  return one_dim({"rfft", Kind::R2C, false, true, false, false}, self, n, dim, norm);
}
Tensor irfft(const Tensor& self, std::optional<int64_t> n, int64_t dim, Norm norm) {
  return one_dim({"irfft", Kind::C2R, true, false, false, false}, self, n, dim, norm);
}
// hfft(x) = the real transform of the whole Hermitian signal, which is
// irfft(conj(x)) scaled as a forward transform; ihfft its inverse.
Tensor hfft(const Tensor& self, std::optional<int64_t> n, int64_t dim, Norm norm) {
  return one_dim({"hfft", Kind::C2R, true, true, true, false}, self, n, dim, norm);
}
Tensor ihfft(const Tensor& self, std::optional<int64_t> n, int64_t dim, Norm norm) {
  return one_dim({"ihfft", Kind::R2C, false, false, false, true}, self, n, dim, norm);
}

Tensor fftn(const Tensor& self, OptionalIntArrayRef s, OptionalIntArrayRef dim, Norm norm) {
  Tensor x = as_complex("fftn", self);
  return c2c_dims("fftn", x, settle("fftn", x, s, dim, false), false, true, norm);
}
Tensor ifftn(const Tensor& self, OptionalIntArrayRef s, OptionalIntArrayRef dim, Norm norm) {
  Tensor x = as_complex("ifftn", self);
  return c2c_dims("ifftn", x, settle("ifftn", x, s, dim, false), true, false, norm);
}
Tensor rfftn(const Tensor& self, OptionalIntArrayRef s, OptionalIntArrayRef dim, Norm norm) {
  return real_n("rfftn", self, s, dim, norm, true);
}
Tensor irfftn(const Tensor& self, OptionalIntArrayRef s, OptionalIntArrayRef dim, Norm norm) {
  return half_n("irfftn", self, s, dim, norm, false);
}
Tensor hfftn(const Tensor& self, OptionalIntArrayRef s, IntArrayRef dim, Norm norm) {
  return half_n("hfftn", self, s, dim, norm, true);
}
Tensor ihfftn(const Tensor& self, OptionalIntArrayRef s, IntArrayRef dim, Norm norm) {
  return real_n("ihfftn", self, s, dim, norm, false);
}

Tensor fft2(const Tensor& self, OptionalIntArrayRef s, IntArrayRef dim, Norm norm) {
  return fftn(self, s, dim, norm);
}
Tensor ifft2(const Tensor& self, OptionalIntArrayRef s, IntArrayRef dim, Norm norm) {
  return ifftn(self, s, dim, norm);
}
Tensor rfft2(const Tensor& self, OptionalIntArrayRef s, IntArrayRef dim, Norm norm) {
  return rfftn(self, s, dim, norm);
}
Tensor irfft2(const Tensor& self, OptionalIntArrayRef s, IntArrayRef dim, Norm norm) {
  return irfftn(self, s, dim, norm);
}
Tensor hfft2(const Tensor& self, OptionalIntArrayRef s, IntArrayRef dim, Norm norm) {
  return hfftn(self, s, dim, norm);
}
Tensor ihfft2(const Tensor& self, OptionalIntArrayRef s, IntArrayRef dim, Norm norm) {
  return ihfftn(self, s, dim, norm);
}

Tensor fftfreq(int64_t n, double d, const TensorOptions& options) {
  check_length("fftfreq", n);
  Tensor k = arange(n, options.dtype(options.dtype()));  // the default float type unless given
  // The upper half are the negative frequencies.
  const int64_t positive = (n + 1) / 2;
  {
    NoGradGuard no_grad;
    k.narrow(0, positive, n - positive).sub_(static_cast<double>(n));
  }
  return k * (1.0 / (static_cast<double>(n) * d));
}
Tensor fftfreq(int64_t n, const TensorOptions& options) { return fftfreq(n, 1.0, options); }
Tensor rfftfreq(int64_t n, double d, const TensorOptions& options) {
  check_length("rfftfreq", n);
  return arange(n / 2 + 1, options.dtype(options.dtype())) * (1.0 / (static_cast<double>(n) * d));
}
Tensor rfftfreq(int64_t n, const TensorOptions& options) { return rfftfreq(n, 1.0, options); }

Tensor fftshift(const Tensor& x, OptionalIntArrayRef dim) { return shift(x, dim, false); }
Tensor ifftshift(const Tensor& x, OptionalIntArrayRef dim) { return shift(x, dim, true); }

}  // namespace brasa::fft
