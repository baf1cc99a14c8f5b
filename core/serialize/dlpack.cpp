#include <brasa/ops/factory.h>
#include <brasa/serialize/dlpack.h>

#include <vector>

namespace brasa {
namespace {

struct Holder {
  Tensor t;
  std::vector<int64_t> shape, strides;
  DLManagedTensor m;
};

void delete_holder(DLManagedTensor* m) { delete static_cast<Holder*>(m->manager_ctx); }

DLDataType dl_type(ScalarType t) {
  DLDataType d;
  d.lanes = 1;
  d.bits = static_cast<uint8_t>(elementSize(t) * 8);
  switch (t) {
    case kFloat:
    case kDouble:
    case kHalf:
      d.code = kDLFloat;
      break;
    case kBFloat16:
      d.code = kDLBfloat;
      break;
    case kByte:
      d.code = kDLUInt;
      break;
    case kBool:
      d.code = kDLUInt;
      d.bits = 8;
      break;
    default:
      d.code = kDLInt;
      break;
  }
  return d;
}

ScalarType from_dl(DLDataType d) {
  BRASA_CHECK(d.lanes == 1, "from_dlpack: vector types (lanes=", d.lanes, ") are not supported");
  switch (d.code) {
    case kDLFloat:
      if (d.bits == 16) return kHalf;
      if (d.bits == 32) return kFloat;
      if (d.bits == 64) return kDouble;
      break;
    case kDLBfloat:
      if (d.bits == 16) return kBFloat16;
      break;
    case kDLInt:
      if (d.bits == 8) return kChar;
      if (d.bits == 16) return kShort;
      if (d.bits == 32) return kInt;
      if (d.bits == 64) return kLong;
      break;
    case kDLUInt:
      if (d.bits == 8) return kByte;
      break;
  }
  BRASA_ERROR("from_dlpack: unsupported DLPack dtype (code ", int(d.code), ", ", int(d.bits),
              " bits)");
}

}  // namespace

DLManagedTensor* to_dlpack(const Tensor& t) {
  BRASA_CHECK(t.device().is_cpu(), "to_dlpack: only CPU tensors are supported in this build");
  auto* h = new Holder;
  h->t = t;
  h->shape.assign(t.sizes().begin(), t.sizes().end());
  h->strides.assign(t.strides().begin(), t.strides().end());
  DLTensor& d = h->m.dl_tensor;
  d.data = t.data_ptr();
  d.device = DLDevice{kDLCPU, 0};
  d.ndim = static_cast<int32_t>(t.dim());
  d.dtype = dl_type(t.dtype());
  d.shape = h->shape.data();
  d.strides = h->strides.data();
  d.byte_offset = 0;
  h->m.manager_ctx = h;
  h->m.deleter = delete_holder;
  return &h->m;
}

Tensor from_dlpack(DLManagedTensor* src) {
  BRASA_CHECK(src != nullptr, "from_dlpack: null DLManagedTensor");
  const DLTensor& d = src->dl_tensor;
  if (d.device.device_type != kDLCPU) {
    if (src->deleter) src->deleter(src);
    BRASA_ERROR("from_dlpack: only CPU tensors are supported in this build (device type ",
                int(d.device.device_type), ")");
  }
  ScalarType t;
  try {
    t = from_dl(d.dtype);
  } catch (...) {
    if (src->deleter) src->deleter(src);
    throw;
  }
  std::vector<int64_t> sizes(d.shape, d.shape + d.ndim);
  DimVector dense = contiguous_strides(sizes);
  std::vector<int64_t> strides = d.strides ? std::vector<int64_t>(d.strides, d.strides + d.ndim)
                                           : std::vector<int64_t>(dense.begin(), dense.end());
  void* data = static_cast<char*>(d.data) + d.byte_offset;
  return from_blob(
      data, sizes, strides,
      [src](void*) {
        if (src->deleter) src->deleter(src);
      },
      TensorOptions().dtype(t));
}

}  // namespace brasa
