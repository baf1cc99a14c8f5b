#include <brasa/ops/cpu/variant.h>
#include <brasa/ops/cpu/loops.h>

#include <algorithm>

namespace brasa::cpu {
inline namespace BRASA_CPU_VARIANT {

void StridedLoop::add(const Tensor& t) {
  BRASA_INTERNAL_ASSERT(nops_ < kMaxOperands, "too many operands");
  const int nd = ndim();
  const int64_t td = t.dim();
  BRASA_INTERNAL_ASSERT(td <= nd, "operand has more dims than the loop");
  DimVector st(nd, 0);
  const int64_t es = t.element_size();
  for (int64_t d = 0; d < td; ++d) {
    int64_t ld = nd - td + d;
    int64_t sz = t.size(d);
    BRASA_INTERNAL_ASSERT(sz == shape_[ld] || sz == 1,
                          "operand does not broadcast to the loop shape");
    st[ld] = sz == 1 ? 0 : t.stride(d) * es;
  }
  strides_[nops_] = st;
  data_[nops_] = static_cast<char*>(t.data_ptr());
  ++nops_;
}

void StridedLoop::add_raw(char* data, IntArrayRef elem_strides, int64_t elem_size) {
  BRASA_INTERNAL_ASSERT(nops_ < kMaxOperands, "too many operands");
  DimVector st(ndim(), 0);
  for (int d = 0; d < ndim(); ++d) st[d] = elem_strides[d] * elem_size;
  strides_[nops_] = st;
  data_[nops_] = data;
  ++nops_;
}

void StridedLoop::order_dims_by_first_operand() {
  if (nops_ == 0) return;
  const int nd = ndim();
  DimVector order(nd);
  for (int d = 0; d < nd; ++d) order[d] = d;
  const DimVector& first = strides_[0];
  auto magnitude = [](int64_t s) { return s < 0 ? -s : s; };
  std::stable_sort(order.begin(), order.end(),
                   [&](int a, int b) { return magnitude(first[a]) > magnitude(first[b]); });
  bool moved = false;
  for (int d = 0; d < nd; ++d) moved = moved || order[d] != d;
  if (!moved) return;
  DimVector shape(nd);
  for (int d = 0; d < nd; ++d) shape[d] = shape_[order[d]];
  shape_ = shape;
  for (int k = 0; k < nops_; ++k) {
    DimVector st(nd);
    for (int d = 0; d < nd; ++d) st[d] = strides_[k][order[d]];
    strides_[k] = st;
  }
}

void StridedLoop::coalesce() {
  // Drop size-1 dims (their strides never matter).
  DimVector shape;
  DimVector strides[kMaxOperands];
  for (int d = 0; d < ndim(); ++d) {
    if (shape_[d] == 1) continue;
    shape.push_back(shape_[d]);
    for (int k = 0; k < nops_; ++k) strides[k].push_back(strides_[k][d]);
  }
  // Merge dim d into d-1 when every operand steps through them as one dim.
  DimVector cshape;
  DimVector cstrides[kMaxOperands];
  for (size_t d = 0; d < shape.size(); ++d) {
    bool merge = !cshape.empty();
    for (int k = 0; merge && k < nops_; ++k) merge = cstrides[k].back() == strides[k][d] * shape[d];
    if (merge) {
      cshape.back() *= shape[d];
      for (int k = 0; k < nops_; ++k) cstrides[k].back() = strides[k][d];
    } else {
      cshape.push_back(shape[d]);
      for (int k = 0; k < nops_; ++k) cstrides[k].push_back(strides[k][d]);
    }
  }
  if (cshape.empty()) {
    cshape.push_back(numel() == 0 ? 0 : 1);
    for (int k = 0; k < nops_; ++k) cstrides[k].push_back(0);
  }
  shape_ = cshape;
  for (int k = 0; k < nops_; ++k) strides_[k] = cstrides[k];
}

}  // namespace BRASA_CPU_VARIANT
}  // namespace brasa::cpu
