#include <brasa/autograd/record.h>
#include <brasa/autograd/grad_mode.h>
#include <brasa/device/device_runtime.h>
#include <brasa/ops/complex.h>
#include <brasa/ops/copy.h>
#include <brasa/ops/elementwise.h>
#include <brasa/ops/factory.h>
#include <brasa/ops/kernel_table.h>
#include <brasa/ops/kernels/copy.h>
#include <brasa/ops/shape.h>
#include <brasa/tensor/tensor.h>

#include <cmath>

namespace brasa {
namespace {

Tensor& copy_checked(Tensor& dst, const Tensor& src, bool non_blocking) {
  BRASA_CHECK(dst.defined() && src.defined(), "copy_: expected defined tensors");
  check_device_available("copy_", dst.device());
  check_device_available("copy_", src.device());
  bool fits = src.dim() <= dst.dim();
  for (int64_t i = 0; fits && i < src.dim(); ++i) {
    int64_t s = src.size(src.dim() - 1 - i), d = dst.size(dst.dim() - 1 - i);
    fits = s == d || s == 1;
  }
  BRASA_CHECK(fits, "copy_: source of shape ", src.sizes(),
              " cannot be broadcast to destination of shape ", dst.sizes());
  if (dst.numel() == 0 || dst.is_same(src)) return dst;
  detail::check_no_internal_overlap("copy_", dst);
  // A source that shares memory with the destination (x[1:].copy_(x[:-1]))
  // is read whole before anything is written.
  if (detail::may_overlap(dst, src) && !detail::same_view(dst, src))
    detail::copy_kernel(dst, clone(src));
  else
    detail::copy_kernel(dst, src, non_blocking);
  dst.bump_version();
  return dst;
}

using autograd::BackwardName;
using autograd::FormulaNode;
using autograd::variable_list;
const BackwardName kCopyBackwards("CopyBackwards"), kCloneBackward("CloneBackward0");

}  // namespace

// With grad, copy_ is "self := src" recorded as an op of (old self, src):
// the old value gets a zero gradient, src the incoming one (the engine casts
// and un-broadcasts it to src's dtype and shape).
Tensor& copy_(Tensor& dst, const Tensor& src, bool non_blocking) {
  return autograd::inplace(
      "copy_", dst, [&] { copy_checked(dst, src, non_blocking); },
      [&](const Tensor& old) {
        autograd::Recorder r(kCopyBackwards, old, src);
        Tensor value = empty(old.sizes(), old.options());
        copy_checked(value, src, non_blocking);
        if (r)
          r.finish(value, [](FormulaNode& n, const variable_list& g) {
            variable_list d(2);
            if (n.needs(0)) d[0] = zeros_like(g[0]);
            if (n.needs(1)) d[1] = g[0];
            return d;
          });
        return value;
      },
      src);
}

// Between devices: converted and laid out on the source's device, moved as
// bytes, and placed on the destination's device. non_blocking does not wait
// for the move when the host side is the caller's own pinned memory (no
// temporary that could be freed, or read, before the copy is done).
static void copy_across_devices(const Tensor& dst, const Tensor& src, bool non_blocking) {
  NoGradGuard no_grad;
  Tensor staged = contiguous(src.to(dst.dtype()).expand(dst.sizes()));
  Tensor landing = dst.is_contiguous() ? dst : empty(dst.sizes(), dst.options());
  const Tensor& host = dst.is_cpu() ? landing : staged;
  const bool direct = landing.is_same(dst) && (src.is_cpu() ? staged.is_alias_of(src) : true);
  copy_bytes(landing.data_ptr(), dst.device(), staged.data_ptr(), src.device(), staged.nbytes(),
             non_blocking && direct, &host.storage()->data_ptr());
  if (!landing.is_same(dst)) kernel<CopyKernel>(dst.device())(dst, landing);
}

void detail::copy_kernel(const Tensor& dst, const Tensor& src, bool non_blocking) {
  if (dst.is_complex() || src.is_complex()) return complex_copy(dst, src, non_blocking);
  if (dst.device() != src.device()) return copy_across_devices(dst, src, non_blocking);
  Tensor source = src;
  // Overlapping memory with a different layout: copy through a temporary.
  if (src.is_alias_of(dst) && !(src.data_ptr() == dst.data_ptr() && src.strides() == dst.strides()))
    source = clone(src);
  kernel<CopyKernel>(dst.device())(dst, source);
}

// +0 in every dtype (a -0.0 real part must keep its sign). The CPU fill
// kernel asks the same to memset (copy_kernels.cpp); it is compiled once per
// instruction set and shares no header with this file.
static bool is_positive_zero(const Scalar& v) {
  if (v.isFloatingPoint()) return v.toDouble() == 0.0 && !std::signbit(v.toDouble());
  return v.toLong() == 0;
}

void detail::fill_kernel(const Tensor& dst, const Scalar& v) {
  if (dst.is_complex()) {  // v is real: the real parts, and zero imaginary parts
    NoGradGuard no_grad;
    Tensor parts = view_as_real(dst);
    // zeros_like: both parts at once (a memset when dst is contiguous).
    if (is_positive_zero(v)) return fill_kernel(parts, 0);
    fill_kernel(select(parts, -1, 0), v);
    fill_kernel(select(parts, -1, 1), 0);
    return;
  }
  kernel<FillKernel>(dst.device())(dst, v);
}

Tensor clone(const Tensor& t) {
  autograd::Recorder r(kCloneBackward, t);
  Tensor out = empty(t.sizes(), t.options());
  detail::copy_kernel(out, t);
  if (r) r.finish(out, [](FormulaNode&, const variable_list& g) { return variable_list{g[0]}; });
  return out;
}

Tensor contiguous(const Tensor& t) { return t.is_contiguous() ? t : clone(t); }

// ---- Tensor::to and fill_ (methods whose work is a copy or a fill) ----
static const autograd::BackwardName kToCopyBackward("ToCopyBackward0"),
    kFillBackward("FillBackward0");

Tensor Tensor::to(ScalarType t, bool, bool copy) const {
  if (t == dtype() && !copy) return *this;
  autograd::Recorder r(kToCopyBackward, *this);
  Tensor out = empty(sizes(), options().dtype(t));
  detail::copy_kernel(out, *this);
  // The engine casts the gradient back to the input's dtype.
  if (r) r.finish(out, [](autograd::FormulaNode&, const autograd::variable_list& g) { return g; });
  return out;
}
// To another device (and dtype): a copy, whose gradient goes back to this
// tensor's device and dtype (the engine casts it; the backward moves it).
Tensor Tensor::to(Device d, ScalarType t, bool nb, bool copy) const {
  check_device_available("to", d);
  if (d == device() || (!d.has_index() && d.type() == device().type())) return to(t, nb, copy);
  autograd::Recorder r(kToCopyBackward, *this);
  Tensor out = empty(sizes(), options().dtype(t).device(d));
  detail::copy_kernel(out, *this, nb);
  if (r) {
    const Device back = device();
    r.finish(out, [back](autograd::FormulaNode&, const autograd::variable_list& g) {
      return autograd::variable_list{g[0].to(back)};
    });
  }
  return out;
}
Tensor Tensor::to(Device d, bool nb, bool copy) const { return to(d, dtype(), nb, copy); }
Tensor Tensor::to(const TensorOptions& o, bool nb, bool copy) const {
  return to(o.has_device() ? o.device() : device(), o.has_dtype() ? o.dtype() : dtype(), nb, copy);
}
Tensor Tensor::to(const Tensor& other, bool nb, bool copy) const {
  return to(other.dtype(), nb, copy);
}
// With grad, fill_ records a node whose gradient for the old value is zero
// (and, for a tensor value, the sum of the incoming gradient).
static Tensor& fill_ad(Tensor& self, const Scalar& v, const Tensor& value_tensor) {
  return autograd::inplace(
      "fill_", self,
      [&] {
        detail::fill_kernel(self, v);
        self.bump_version();
      },
      [&](const Tensor& old) {
        autograd::Recorder r(kFillBackward, old, value_tensor);
        Tensor out = empty(old.sizes(), old.options());
        detail::fill_kernel(out, v);
        if (r)
          r.finish(out, [](autograd::FormulaNode& n, const autograd::variable_list& g) {
            autograd::variable_list d(2);
            if (n.needs(0)) d[0] = zeros_like(g[0]);
            if (n.needs(1)) d[1] = g[0].sum();
            return d;
          });
        return out;
      },
      value_tensor);
}
Tensor& Tensor::fill_(const Scalar& v) {
  detail::check_no_internal_overlap("fill_", *this);
  return fill_ad(*this, v, Tensor());
}
Tensor& Tensor::fill_(const Tensor& v) {
  BRASA_CHECK(v.dim() == 0, "fill_: only supports 0-dimension value tensor but got tensor with ",
              v.dim(), " dimensions.");
  detail::check_no_internal_overlap("fill_", *this);
  return fill_ad(*this, v.item(), v);
}
Tensor& Tensor::zero_() { return fill_(0); }

// ---- pinned memory (the CUDA runtime's page-locked host memory) ----
bool Tensor::is_pinned() const {
  if (!defined() || !device().is_cpu() || !storage()) return false;
  DeviceRuntime* rt = find_device_runtime(kCUDA);
  return rt && rt->is_pinned(storage()->data_ptr());
}

Tensor Tensor::pin_memory() const {
  BRASA_CHECK(defined(), "pin_memory: the tensor is undefined");
  BRASA_CHECK(device().is_cpu(), "pin_memory: only CPU tensors can be pinned, got one on ",
              device());
  if (is_pinned()) return *this;
  DeviceRuntime* rt = find_device_runtime(kCUDA);
  Allocator* pinned = rt ? rt->pinned_allocator() : nullptr;
  BRASA_CHECK(pinned && rt->device_count() > 0,
              "pin_memory: pinned memory needs a CUDA device and none is available (",
              rt ? rt->no_device_reason() : std::string("this build has no CUDA"), ")");
  const size_t n = static_cast<size_t>(compute_nbytes("pin_memory", sizes(), dtype()));
  Tensor out(make_intrusive<TensorImpl>(Storage::allocate(n, pinned), dtype(), sizes(),
                                        contiguous_strides(sizes()), 0));
  detail::copy_kernel(out, *this);
  return out;
}

}  // namespace brasa
