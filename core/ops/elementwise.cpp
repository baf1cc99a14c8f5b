#include <brasa/ops/copy.h>
#include <brasa/autograd/grad_mode.h>
#include <brasa/autograd/view_grad.h>
#include <brasa/device/device_runtime.h>
#include <brasa/ops/elementwise.h>
#include <brasa/ops/factory.h>

namespace brasa::detail {

void check_defined(const char* op, const Tensor& t) {
  BRASA_CHECK(t.defined(), op, ": expected a defined tensor");
}
namespace {

ScalarType skip_undefined_promote(ScalarType a, ScalarType b) {
  if (a == ScalarType::Undefined) return b;
  if (b == ScalarType::Undefined) return a;
  return promoteTypes(a, b);
}

// A lower-priority operand only matters when it is of a higher category.
ScalarType combine_categories(ScalarType higher, ScalarType lower) {
  if (isComplexType(higher)) return higher;
  if (isComplexType(lower)) return skip_undefined_promote(higher, lower);
  if (isFloatingType(higher)) return higher;
  if (higher == kBool || isFloatingType(lower)) return skip_undefined_promote(higher, lower);
  if (higher != ScalarType::Undefined) return higher;
  return lower;
}

}  // namespace

bool same_view(const Tensor& a, const Tensor& b) {
  return a.data_ptr() == b.data_ptr() && a.sizes() == b.sizes() && a.strides() == b.strides() &&
         a.dtype() == b.dtype();
}

void check_no_internal_overlap(const char* op, const Tensor& o) {
  for (int64_t d = 0; d < o.dim(); ++d)
    BRASA_CHECK(o.size(d) <= 1 || o.stride(d) != 0, op,
                ": unsupported operation: more than one element of the written-to tensor refers "
                "to a single memory location. Please clone() the tensor before performing the "
                "operation. (Output of shape ",
                o.sizes(), " and strides ", o.strides(), ")");
}

bool may_overlap(const Tensor& a, const Tensor& b) {
  if (!a.is_alias_of(b) || a.numel() == 0 || b.numel() == 0) return false;
  // The byte extent [first, last] of each view within the storage.
  auto extent = [](const Tensor& t) {
    int64_t lo = t.storage_offset(), hi = t.storage_offset();
    for (int64_t d = 0; d < t.dim(); ++d) {
      const int64_t span = (t.size(d) - 1) * t.stride(d);
      (span < 0 ? lo : hi) += span;
    }
    return std::pair<int64_t, int64_t>(lo * t.element_size(), (hi + 1) * t.element_size() - 1);
  };
  const auto [a_lo, a_hi] = extent(a);
  const auto [b_lo, b_hi] = extent(b);
  return a_lo <= b_hi && b_lo <= a_hi;
}

ScalarType result_type(std::initializer_list<TypedOperand> ops) {
  ScalarType dim = ScalarType::Undefined, zero = ScalarType::Undefined,
             number = ScalarType::Undefined;
  for (const auto& o : ops) {
    ScalarType t = o.dtype;
    switch (o.priority) {
      case Priority::Dim:
        dim = skip_undefined_promote(dim, t);
        break;
      case Priority::ZeroDim:
        zero = skip_undefined_promote(zero, t);
        break;
      case Priority::Number:
        // A Python-style float number counts as the default dtype.
        if (isFloatingType(t)) t = get_default_dtype();
        number = skip_undefined_promote(number, t);
        break;
    }
  }
  return combine_categories(dim, combine_categories(zero, number));
}

ScalarType result_type(const Tensor& a, const Tensor& b) {
  return result_type({operand(a), operand(b)});
}
ScalarType result_type(const Tensor& a, const Scalar& b) {
  return result_type({operand(a), operand(b)});
}

bool can_cast(ScalarType from, ScalarType to) {
  if (isFloatingType(from) && isIntegralType(to, true)) return false;
  if (from != kBool && to == kBool) return false;
  return true;
}

DimVector broadcast_shapes(const char* op, IntArrayRef a, IntArrayRef b) {
  size_t n = std::max(a.size(), b.size());
  DimVector out(n);
  for (size_t i = 0; i < n; ++i) {
    int64_t da = i < n - a.size() ? 1 : a[i - (n - a.size())];
    int64_t db = i < n - b.size() ? 1 : b[i - (n - b.size())];
    BRASA_CHECK(da == db || da == 1 || db == 1, op, ": shapes ", a, " and ", b,
                " are not broadcastable (size ", da, " vs ", db, " at dim ", i, ")");
    out[i] = da == 1 ? db : da;
  }
  return out;
}

Tensor scalar_tensor_of(const Scalar& s, ScalarType t) {
  return scalar_tensor(s, TensorOptions().dtype(t));
}

// On the CPU whatever self's device: the op takes it as a CPU scalar (a
// kernel argument on CUDA), so no device memory or copy is spent on it.
Tensor wrap_number(const Tensor& self, const Scalar& s) {
  return scalar_tensor(s, TensorOptions().dtype(result_type(self, s)));
}

namespace {

// Whether `in` has exactly the shape and layout of `out` (size-1 dims
// aside): then the two run as one 1-D block.
bool same_dense_layout(const Tensor& out, const Tensor& in) {
  if (in.dim() != out.dim() || in.sizes() != out.sizes()) return false;
  for (int64_t d = 0; d < out.dim(); ++d)
    if (out.size(d) != 1 && in.stride(d) != out.stride(d)) return false;
  return true;
}

}  // namespace

Elementwise& Elementwise::input(const Tensor& t, ScalarType dtype) {
  BRASA_CHECK(t.defined(), op_, ": expected a defined tensor as input ", n_inputs_);
  BRASA_INTERNAL_ASSERT(n_inputs_ + 1 < size_t(kMaxOperands), op_, ": too many operands");
  inputs_[n_inputs_++] = t.dtype() == dtype ? t : t.to(dtype);
  return *this;
}

// A 0-dim CPU tensor may take part in an op on another device (as in
// PyTorch): CUDA kernels take it as an argument (ops/cuda/loop.h), other
// devices get it moved there. Any other mix of devices is an error.
static bool is_cpu_scalar(const Tensor& t) { return t.dim() == 0 && t.is_cpu(); }

// The mixed-device case, out of line so that the common one stays small.
[[gnu::noinline]] static Device place_mixed_inputs(const char* op, Tensor* inputs, size_t n) {
  Device device = inputs[0].device();
  for (size_t k = 0; k < n; ++k)
    if (!is_cpu_scalar(inputs[k])) {
      device = inputs[k].device();
      break;
    }
  for (size_t k = 0; k < n; ++k) {
    Tensor& in = inputs[k];
    if (in.device() == device || (device.is_cuda() && is_cpu_scalar(in))) continue;
    BRASA_CHECK(is_cpu_scalar(in), op,
                ": expected all tensors to be on the same device, but found at least two devices, ",
                device, " and ", in.device(), "!");
    in = in.to(device);
  }
  return device;
}

void Elementwise::place_inputs() {
  device_ = inputs_[0].device();
  for (size_t k = 1; k < n_inputs_; ++k)
    if (inputs_[k].device() != device_) {
      device_ = place_mixed_inputs(op_, inputs_, n_inputs_);
      return;
    }
}

Elementwise& Elementwise::build() {
  place_inputs();  // empty() checks that the device is available
  shape_.assign(inputs_[0].sizes().begin(), inputs_[0].sizes().end());
  for (size_t i = 1; i < n_inputs_; ++i) shape_ = broadcast_shapes(op_, shape_, inputs_[i].sizes());
  bool need_temp = false;
  if (user_out_ && user_out_->defined()) {
    const Tensor& o = *user_out_;
    if (!inplace_ && is_grad_enabled())
      for (const auto& in : inputs())
        BRASA_CHECK(!in.requires_grad() && !o.requires_grad(), op_,
                    "(): functions with out=... arguments don't support automatic differentiation, "
                    "but one of the "
                    "arguments requires grad.");
    if (!(o.sizes() == IntArrayRef(shape_))) {
      BRASA_CHECK(!inplace_ && o.numel() == 0, op_, ": output with shape ", o.sizes(),
                  " doesn't match the broadcast shape ", IntArrayRef(shape_));
      // An empty out= tensor is resized, as PyTorch does.
      o.unsafeGetTensorImpl()->storage()->resize(compute_numel(shape_) * o.element_size());
      o.unsafeGetTensorImpl()->set_sizes_and_strides(shape_, contiguous_strides(shape_));
    }
    check_no_internal_overlap(op_, o);
    BRASA_CHECK(can_cast(out_dtype_, o.dtype()), op_, ": result type ", out_dtype_,
                " can't be cast to the desired output type ", o.dtype());
    need_temp = o.dtype() != out_dtype_;
    // An output that overlaps an input other than elementwise-identically
    // would read values it already overwrote: compute into a temporary.
    for (const auto& in : inputs())
      if (in.is_alias_of(o) && !same_view(in, o) && in.numel() > 0) need_temp = true;
    BRASA_CHECK(o.device() == device_, op_, ": expected the output on ", device_, ", got it on ",
                o.device());
    out_ = need_temp ? empty(shape_, TensorOptions().dtype(out_dtype_).device(device_)) : o;
  } else {
    out_ = allocate_output();
  }
  const int64_t n = out_.numel();
  if (out_.is_contiguous()) {
    flat_ = true;
    for (const auto& in : inputs())
      flat_ = flat_ && ((in.is_contiguous() && in.numel() == n) || in.numel() == 1);
  } else {
    // A dense output in another order (channels-last, permuted): one block
    // when every input has its layout.
    flat_ = autograd::is_non_overlapping_and_dense(out_);
    for (const auto& in : inputs())
      flat_ = flat_ && (same_dense_layout(out_, in) || in.numel() == 1);
  }
  if (flat_) {
    flat_data_[0] = static_cast<char*>(out_.data_ptr());
    flat_strides_[0] = out_.element_size();
    for (size_t k = 0; k < n_inputs_; ++k) {
      flat_data_[k + 1] = static_cast<char*>(inputs_[k].data_ptr());
      flat_strides_[k + 1] = inputs_[k].numel() == 1 && n != 1 ? 0 : inputs_[k].element_size();
    }
  }
  return *this;
}

// As PyTorch does, the output takes the memory layout of the first input of
// the full shape (not broadcast) when that one is dense: an op on a
// channels-last or permuted tensor gives one laid out alike, and runs over
// memory in order.
Tensor Elementwise::allocate_output() const {
  const TensorOptions options = TensorOptions().dtype(out_dtype_).device(device_);
  for (const auto& in : inputs()) {
    // A broadcast input (an expanded gradient) says nothing of a layout.
    if (!(in.sizes() == IntArrayRef(shape_)) || autograd::has_internal_overlap(in)) continue;
    if (in.is_contiguous() || !autograd::is_non_overlapping_and_dense(in)) break;
    return empty_strided(shape_, in.strides(), options);  // (dense strides of this shape)
  }
  return empty(shape_, options);
}

void Elementwise::finish() {
  if (user_out_ && user_out_->defined()) {
    result_ = *user_out_;
    if (!out_.is_same(result_))
      result_.copy_(out_);
    else
      result_.bump_version();
  } else {
    result_ = out_;
  }
}

}  // namespace brasa::detail
