#pragma once
// Op codes of the indexing family (ops/indexing.cpp), shared with the
// devices' kernels (ops/cpu/indexing_kernels.cpp).
#include <brasa/tensor/tensor.h>
#include <brasa/util/error.h>

#include <cstdint>
#include <vector>

namespace brasa {

// An index v into a dim of `size`, wrapped (negative counts from the end),
// or an error naming op and dim.
inline int64_t wrap_index(const char* op, int64_t v, int64_t size, int64_t dim) {
  BRASA_CHECK(v >= -size && v < size, op, ": index ", v, " is out of bounds for dimension ", dim,
              " with size ", size);
  return v < 0 ? v + size : v;
}

// An index v into a dim of `size` for the ops that take no negative index
// (index_select, index_add_, index_copy_, as PyTorch), or an error naming op
// and dim.
inline int64_t check_index(const char* op, int64_t v, int64_t size, int64_t dim) {
  BRASA_CHECK(v >= 0 && v < size, op, ": index ", v, " is out of bounds for dimension ", dim,
              " with size ", size, " (index out of range in self)");
  return v;
}

// Padding by index tables (F::pad's reflect, replicate and circular modes):
// out[..., i1, .., ik] = x[..., t1[i1], .., tk[ik]] over the last k = 1 to 3
// dims, one table per dim (its size the padded size), outermost first.
using PadTables = std::vector<std::vector<int64_t>>;
// out <- x gathered by the tables; x and out contiguous, of any dtype.
struct PadByIndexKernel {
  static constexpr const char* name = "pad";
  using Fn = void (*)(const Tensor& x, const PadTables& tables, const Tensor& out);
};
// grad_x[..., t1[i1], .., tk[ik]] += grad_out[..., i1, .., ik] (the adjoint);
// both contiguous, of one floating dtype (float, double, half, bfloat16).
struct PadByIndexBackwardKernel {
  static constexpr const char* name = "pad backward";
  using Fn = void (*)(const Tensor& grad_out, const PadTables& tables, const Tensor& grad_x);
};

// Advanced indexing of `self` by index tensors on some of its dims. The
// result is laid out B-first: the broadcast shape of the indices, then the
// dims that are not indexed (ops/indexing.cpp permutes it to PyTorch's order).
struct AdvancedIndex {
  std::vector<int64_t> dims;    // indexed dims of self, in order
  std::vector<Tensor> indices;  // one per indexed dim: long or int, expanded to bshape, contiguous
  std::vector<int64_t> rest;    // the other dims
  DimVector bshape;             // broadcast shape of the index tensors
  bool adjacent = true;         // the indexed dims are next to each other
  DimVector result_shape;       // bshape + the sizes of the rest dims
};

// out (result_shape, contiguous) <- self at the indices.
struct AdvancedIndexKernel {
  static constexpr const char* name = "index";
  using Fn = void (*)(const Tensor& self, const AdvancedIndex& plan, const Tensor& out);
};
// self at the indices <- values (result_shape, contiguous), or += with accumulate;
// repeated indices accumulate (or the last one wins) deterministically.
struct AdvancedIndexPutKernel {
  static constexpr const char* name = "index_put_";
  using Fn = void (*)(const Tensor& self, const AdvancedIndex& plan, const Tensor& values,
                      bool accumulate);
};
// self[..., index[i], ...] (= or +=) src[i] along dim, for every position of
// index (int64); src has self's dtype and is 0-dim or at least index's size.
struct ScatterKernel {
  static constexpr const char* name = "scatter_";
  using Fn = void (*)(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src,
                      bool add);
};
// out[i] = self[..., index[i], ...] along dim (out has index's shape).
struct GatherKernel {
  static constexpr const char* name = "gather";
  using Fn = void (*)(const Tensor& out, const Tensor& self, int64_t dim, const Tensor& index);
};
// out = the slices of self (dim > 0-dim) at the wrapped indices `index`
// (a contiguous int64 vector already in range).
struct IndexSelectKernel {
  static constexpr const char* name = "index_select";
  using Fn = void (*)(const Tensor& out, const Tensor& self, int64_t dim, const Tensor& index);
};
// The elements of `self` where `mask` (bool, same shape, both contiguous) is set.
struct MaskedSelectKernel {
  static constexpr const char* name = "masked_select";
  using Fn = Tensor (*)(const Tensor& self, const Tensor& mask);
};
// self's elements at the true places of `mask` (bool, self's shape, both
// contiguous), in order, <- the elements of `values` (contiguous, self's
// dtype), or += with `accumulate`. values is [k, trailing dims...] for a
// mask over self's leading dims broadcast over the trailing ones; a count
// of true places other than its numel() is index_put_'s shape error.
struct MaskedPutKernel {
  static constexpr const char* name = "masked_put";
  using Fn = void (*)(const Tensor& self, const Tensor& mask, const Tensor& values,
                      bool accumulate);
};
// [count, dim] int64 coordinates of the nonzero elements of a contiguous tensor.
struct NonzeroKernel {
  static constexpr const char* name = "nonzero";
  using Fn = Tensor (*)(const Tensor& self);
};
// The class targets of nll_loss (int64, contiguous): safe[i] <- target[i],
// or 0 where it is ignore_index or outside [0, C); valid[i] <- 1, or 0
// there (valid: a floating dtype). A target outside [0, C) is an error: on
// the CPU at once; on CUDA the kernel reports it and the error is raised at
// the host's next synchronisation with the device (cuda/device_error.h), so
// the loss costs no synchronisation.
struct ClassTargetKernel {
  static constexpr const char* name = "nll_loss";
  using Fn = void (*)(const Tensor& target, int64_t C, int64_t ignore_index, const Tensor& safe,
                      const Tensor& valid);
};

// How nll_loss reduces its per-element losses.
enum class LossReduction { None, Mean, Sum };
// nll_loss in one pass: log-probabilities logp [N, C, inner] (contiguous, a
// floating dtype; [C] for one sample) and class targets [N, inner] (int64,
// contiguous), per-class weights (C of logp's dtype, or undefined for ones).
// Each element's loss is -weight[t] * logp[n, t, i], 0 where t is
// ignore_index. None: the losses into `out` (the targets' shape); Sum and
// Mean: their sum into `out` (0-dim), divided for Mean by the sum of the
// weights of the elements not ignored, which goes to `total_weight` (0-dim,
// kept for the backward). Targets outside [0, C) are errors as in
// ClassTargetKernel.
struct NllLossKernel {
  static constexpr const char* name = "nll_loss";
  using Fn = void (*)(const Tensor& logp, const Tensor& target, const Tensor& weight,
                      int64_t ignore_index, LossReduction reduction, const Tensor& out,
                      const Tensor& total_weight);
};
// Its gradient: grad_input (logp's shape, contiguous) <- -weight[t] * grad
// (grad of the targets' shape for None, 0-dim otherwise, divided for Mean by
// total_weight) at each element's target class, 0 everywhere else.
struct NllLossBackwardKernel {
  static constexpr const char* name = "nll_loss backward";
  using Fn = void (*)(const Tensor& grad, const Tensor& target, const Tensor& weight,
                      int64_t ignore_index, LossReduction reduction, const Tensor& total_weight,
                      const Tensor& grad_input);
};

// While one lives on this thread, the caller vouches that the indices it
// passes to gather/scatter are in range (made in range by a kernel, or
// checked by the forward whose backward this is), so a device whose range
// check costs a synchronisation (CUDA) skips it.
class IndicesInRangeGuard {
 public:
  IndicesInRangeGuard() : prev_(vouched()) { vouched() = true; }
  ~IndicesInRangeGuard() { vouched() = prev_; }
  IndicesInRangeGuard(const IndicesInRangeGuard&) = delete;
  IndicesInRangeGuard& operator=(const IndicesInRangeGuard&) = delete;
  static bool active() { return vouched(); }

 private:
  static bool& vouched() {
    thread_local bool v = false;
    return v;
  }
  bool prev_;
};

}  // namespace brasa
