#include <brasa/tensor/tensor_impl.h>
#include <brasa/util/error.h>

#include <limits>

namespace brasa {

TensorImpl::TensorImpl(Storage storage, ScalarType dtype, IntArrayRef sizes, IntArrayRef strides,
                       int64_t storage_offset)
    : storage_(std::move(storage)),
      sizes_(sizes.begin(), sizes.end()),
      strides_(strides.begin(), strides.end()),
      storage_offset_(storage_offset),
      dtype_(dtype) {
  refresh();
}

void TensorImpl::set_sizes_and_strides(IntArrayRef sizes, IntArrayRef strides) {
  sizes_.assign(sizes.begin(), sizes.end());
  strides_.assign(strides.begin(), strides.end());
  refresh();
}

void TensorImpl::refresh() {
  numel_ = compute_numel(sizes_);
  // Contiguous: strides are row-major, ignoring dims of size 1.
  is_contiguous_ = true;
  if (numel_ == 0) return;
  int64_t expected = 1;
  for (int64_t d = dim() - 1; d >= 0; --d) {
    if (sizes_[d] == 1) continue;
    if (strides_[d] != expected) {
      is_contiguous_ = false;
      return;
    }
    expected *= sizes_[d];
  }
}

DimVector contiguous_strides(IntArrayRef sizes) {
  DimVector s(sizes.size());
  int64_t acc = 1;
  for (int64_t d = static_cast<int64_t>(sizes.size()) - 1; d >= 0; --d) {
    s[d] = acc;
    // Saturates: only a tensor with no elements gets here with sizes whose
    // product overflows (compute_nbytes refuses the others), and its strides
    // address nothing (found by tests/fuzz: an IDX file of 0 images of
    // 3766845279x3766812672).
    if (__builtin_mul_overflow(acc, std::max<int64_t>(sizes[d], 1), &acc))
      acc = std::numeric_limits<int64_t>::max();
  }
  return s;
}

int64_t compute_numel(IntArrayRef sizes) {
  int64_t n = 1;
  bool overflow = false;
  for (auto s : sizes) overflow |= __builtin_mul_overflow(n, s, &n);
  // A wrapped product would make a small tensor that claims to be huge.
  BRASA_CHECK(!overflow, "numel: integer multiplication overflow: size ", sizes,
              " has more elements than int64 can count");
  return n;
}

int64_t compute_nbytes(const char* op, IntArrayRef sizes, ScalarType dtype) {
  int64_t bytes = 0;
  BRASA_CHECK(!__builtin_mul_overflow(compute_numel(sizes),
                                      static_cast<int64_t>(elementSize(dtype)), &bytes),
              op, ": a tensor of size ", sizes, " and dtype ", toString(dtype), " needs more than ",
              std::numeric_limits<int64_t>::max(), " bytes");
  return bytes;
}

}  // namespace brasa
