#pragma once
// TensorImpl: storage + sizes + strides + offset + dtype, plus the autograd
// fields. Tensor is a refcounted handle to one of these.
#include <brasa/tensor/scalar_type.h>
#include <brasa/tensor/storage.h>
#include <brasa/util/array_ref.h>

#include <memory>

namespace brasa {

// Filled in by the autograd library; the tensor core only carries the pointer.
struct AutogradMetaInterface {
  virtual ~AutogradMetaInterface() = default;
};

class TensorImpl : public intrusive_ptr_target {
 public:
  TensorImpl(Storage storage, ScalarType dtype, IntArrayRef sizes, IntArrayRef strides,
             int64_t storage_offset);

  IntArrayRef sizes() const { return sizes_; }
  IntArrayRef strides() const { return strides_; }
  int64_t dim() const { return static_cast<int64_t>(sizes_.size()); }
  int64_t numel() const { return numel_; }
  ScalarType dtype() const { return dtype_; }
  Device device() const { return storage_->device(); }
  const Storage& storage() const { return storage_; }
  int64_t storage_offset() const { return storage_offset_; }
  bool is_contiguous() const { return is_contiguous_; }
  char* data() const {
    return static_cast<char*>(storage_->data()) +
           storage_offset_ * static_cast<int64_t>(elementSize(dtype_));
  }

  void set_sizes_and_strides(IntArrayRef sizes, IntArrayRef strides);
  void set_storage_offset(int64_t off) { storage_offset_ = off; }
  void set_storage(Storage s) { storage_ = std::move(s); }
  void set_dtype(ScalarType t) { dtype_ = t; }

  // A view made while grad mode was on requires grad when its base does.
  bool requires_grad() const {
    return requires_grad_ || (view_base_ && view_base_->requires_grad_);
  }
  bool requires_grad_flag() const { return requires_grad_; }
  // The tensor this one is a view of (the root: never itself a view), or null.
  TensorImpl* view_base() const { return view_base_.get(); }
  void set_view_base(intrusive_ptr<TensorImpl> base) { view_base_ = std::move(base); }
  void set_requires_grad(bool r) { requires_grad_ = r; }
  AutogradMetaInterface* autograd_meta() const { return autograd_meta_.get(); }
  void set_autograd_meta(std::unique_ptr<AutogradMetaInterface> m) {
    autograd_meta_ = std::move(m);
  }

 private:
  void refresh();
  Storage storage_;
  DimVector sizes_, strides_;
  int64_t storage_offset_ = 0;
  int64_t numel_ = 0;
  ScalarType dtype_;
  bool is_contiguous_ = true;
  bool requires_grad_ = false;
  std::unique_ptr<AutogradMetaInterface> autograd_meta_;
  intrusive_ptr<TensorImpl> view_base_;
};

// Row-major strides for `sizes`.
DimVector contiguous_strides(IntArrayRef sizes);
// The product of `sizes`; an error when it overflows int64.
int64_t compute_numel(IntArrayRef sizes);
// The bytes of a contiguous tensor of `sizes` and `dtype`; an error naming
// `op` on overflow.
int64_t compute_nbytes(const char* op, IntArrayRef sizes, ScalarType dtype);

}  // namespace brasa
