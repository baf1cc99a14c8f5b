#include <brasa/autograd/record.h>
#include <brasa/ops/binary.h>
#include <brasa/ops/elementwise.h>
#include <brasa/ops/factory.h>
#include <brasa/ops/indexing.h>
#include <brasa/ops/scatter_reduce.h>
#include <brasa/ops/shape.h>
#include <brasa/ops/unary.h>

#include <cmath>
#include <limits>
#include <vector>

namespace brasa {

namespace {

using autograd::FormulaNode;
using autograd::variable_list;

const autograd::BackwardName kScatterReduceBackward("ScatterReduceBackward0");

enum class Reduce { Sum, Prod, Mean, Amax, Amin };

Reduce parse_reduce(const std::string& reduce, const char* op) {
  if (reduce == "sum") return Reduce::Sum;
  if (reduce == "prod") return Reduce::Prod;
  if (reduce == "mean") return Reduce::Mean;
  if (reduce == "amax") return Reduce::Amax;
  if (reduce == "amin") return Reduce::Amin;
  BRASA_ERROR(op, ": reduce argument must be either sum, prod, mean, amax or amin, got ", reduce);
}

double identity_of(Reduce r) {
  switch (r) {
    case Reduce::Prod:
      return 1;
    case Reduce::Amax:
      return -std::numeric_limits<double>::infinity();
    case Reduce::Amin:
      return std::numeric_limits<double>::infinity();
    default:
      return 0;
  }
}

double combine(Reduce r, double acc, double v) {
  switch (r) {
    case Reduce::Sum:
    case Reduce::Mean:
      return acc + v;
    case Reduce::Prod:
      return acc * v;
    case Reduce::Amax:
      return std::isnan(acc) || std::isnan(v) ? std::numeric_limits<double>::quiet_NaN()
                                              : std::max(acc, v);
    case Reduce::Amin:
      return std::isnan(acc) || std::isnan(v) ? std::numeric_limits<double>::quiet_NaN()
                                              : std::min(acc, v);
  }
  return acc;
}

bool is_integral_type(ScalarType t) {
  return t == kByte || t == kChar || t == kShort || t == kInt || t == kLong;
}

// Checks the operands (src already cut to index's shape) and returns the dim.
int64_t check_operands(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src) {
  const char* op = "scatter_reduce";
  detail::check_defined(op, self);
  detail::check_defined(op, index);
  detail::check_defined(op, src);
  BRASA_CHECK(index.scalar_type() == kLong, op, "(): Expected dtype int64 for index, got ",
              index.scalar_type());
  BRASA_CHECK(self.scalar_type() == src.scalar_type(), op,
              "(): Expected self.dtype to be equal to src.dtype, got ", self.scalar_type(), " and ",
              src.scalar_type());
  BRASA_CHECK(self.device() == index.device() && self.device() == src.device(), op,
              ": expected self, index and src on one device, got ", self.device(), ", ",
              index.device(), " and ", src.device());
  BRASA_CHECK(index.dim() == self.dim() && src.dim() == self.dim(), op,
              ": Index tensor must have the same number of dimensions as self and src tensors, "
              "got self ",
              self.sizes(), ", index ", index.sizes(), " and src ", src.sizes());
  const int64_t d = maybe_wrap_dim(dim, std::max<int64_t>(self.dim(), 1), op);
  for (int64_t k = 0; k < index.dim(); ++k) {
    BRASA_CHECK(index.size(k) <= src.size(k), op, ": Expected index ", index.sizes(),
                " to be smaller than src ", src.sizes(), " apart from dimension ", d,
                " (at dimension ", k, ")");
    BRASA_CHECK(k == d || index.size(k) <= self.size(k), op, ": Expected index ", index.sizes(),
                " to be smaller than self ", self.sizes(), " apart from dimension ", d,
                " (at dimension ", k, ")");
  }
  return d;
}

// The forward on the host in double: self's values combined with src's at
// the indexed positions.
Tensor scatter_reduce_values(const Tensor& self, int64_t d, const Tensor& index, const Tensor& src,
                             Reduce reduce, bool include_self) {
  Tensor out = self.detach().to(kCPU).to(kDouble).contiguous().clone();
  Tensor idx = index.to(kCPU).contiguous();
  Tensor s = src.detach().to(kCPU).to(kDouble).contiguous();
  if (idx.numel() == 0) return out.to(self.scalar_type()).to(self.device());
  const int64_t nd = std::max<int64_t>(self.dim(), 1);
  std::vector<int64_t> isize(nd, 1), ostride(nd, 1), sstride(nd, 1);
  for (int64_t k = 0; k < self.dim(); ++k) {
    isize[k] = idx.size(k);
    ostride[k] = out.stride(k);
    sstride[k] = s.stride(k);
  }
  const int64_t limit = self.dim() == 0 ? 1 : self.size(d);
  double* po = out.data_ptr<double>();
  const double* ps = s.data_ptr<double>();
  const int64_t* pi = idx.data_ptr<int64_t>();
  // Each position that receives something starts from the reduction's
  // identity without include_self; mean counts its contributions.
  std::vector<int64_t> count(out.numel(), include_self ? 1 : 0);
  std::vector<char> touched(out.numel(), 0);
  std::vector<int64_t> at(nd, 0);
  for (int64_t i = 0; i < idx.numel(); ++i) {
    const int64_t j = pi[i];
    BRASA_CHECK(j >= 0 && j < limit, "scatter_reduce: index ", j,
                " is out of bounds for dimension ", d, " with size ", limit);
    int64_t o = 0, so = 0;
    for (int64_t k = 0; k < nd; ++k) {
      o += (k == d ? j : at[k]) * ostride[k];
      so += at[k] * sstride[k];
    }
    if (!include_self && !touched[o]) po[o] = identity_of(reduce);
    touched[o] = 1;
    po[o] = combine(reduce, po[o], ps[so]);
    ++count[o];
    for (int64_t k = nd - 1; k >= 0 && ++at[k] == isize[k]; --k) at[k] = 0;
  }
  if (reduce == Reduce::Mean) {
    const bool integral = is_integral_type(self.scalar_type());
    for (int64_t o = 0; o < out.numel(); ++o)
      if (touched[o] && count[o] > 0)
        po[o] = integral ? std::floor(po[o] / count[o]) : po[o] / count[o];
  }
  return out.to(self.scalar_type()).to(self.device());
}

// Gradients of self and src (src of index's shape) for `reduce`.
variable_list scatter_reduce_grads(const Tensor& g, const Tensor& self, int64_t d,
                                   const Tensor& index, const Tensor& src, const Tensor& result,
                                   Reduce reduce, const std::string& name, bool include_self) {
  // The positions that receive something.
  Tensor targeted = zeros_like(self).scatter(d, index, 1.0) > 0;
  Tensor grad_self, grad_src;
  switch (reduce) {
    case Reduce::Sum:
      grad_self = include_self ? g : g.masked_fill(targeted, 0.0);
      grad_src = gather(g, d, index);
      break;
    case Reduce::Mean: {
      Tensor n =
          scatter_add(include_self ? ones_like(self) : zeros_like(self), d, index, ones_like(src))
              .clamp_min(1);
      Tensor share = g / n;
      grad_self = include_self ? share : share.masked_fill(targeted, 0.0);
      grad_src = gather(share, d, index);
      break;
    }
    case Reduce::Prod: {
      // Away from zeros, d result / d x = result / x. A zero's gradient is
      // the product of the others (recomputed with the zero replaced by 1);
      // with two zeros in a position both get 0.
      Tensor self_zero = self == 0;
      Tensor masked_self = self.masked_fill(self_zero, 1.0);
      Tensor without_self_zero = scatter_reduce(masked_self, d, index, src, name, include_self);
      grad_self = where(self_zero, g * without_self_zero, g * result / masked_self);
      if (!include_self) grad_self = grad_self.masked_fill(targeted, 0.0);
      Tensor src_zero = src == 0;
      Tensor zeros_in_position = gather(
          scatter_add(zeros_like(self), d, index, src_zero.to(self.scalar_type())), d, index);
      Tensor single_zero = src_zero.logical_and(zeros_in_position == 1);
      Tensor masked_src = src.masked_fill(single_zero, 1.0);
      Tensor without_src_zero = scatter_reduce(self, d, index, masked_src, name, include_self);
      Tensor safe_src = src.masked_fill(src_zero, 1.0);
      grad_src = where(single_zero, gather(g * without_src_zero, d, index),
                       gather(g * result, d, index) / safe_src)
                     .masked_fill(src_zero.logical_and(single_zero.logical_not()), 0.0);
      break;
    }
    case Reduce::Amax:
    case Reduce::Amin: {
      // The gradient is shared evenly by every element equal to the result.
      Tensor self_is_result = self == result;
      if (!include_self) self_is_result = self_is_result.logical_and(targeted.logical_not());
      Tensor src_is_result = src == gather(result, d, index);
      Tensor n = scatter_add(self_is_result.to(self.scalar_type()), d, index,
                             src_is_result.to(self.scalar_type()));
      Tensor share = g / n.clamp_min(1);
      grad_self = share.masked_fill(self_is_result.logical_not(), 0.0);
      grad_src = gather(share, d, index).masked_fill(src_is_result.logical_not(), 0.0);
      break;
    }
  }
  return {grad_self, grad_src};
}

}  // namespace

Tensor scatter_reduce(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src,
                      const std::string& reduce, bool include_self) {
  const Reduce r = parse_reduce(reduce, "scatter_reduce");
  const int64_t d = check_operands(self, dim, index, src);
  // Only src's elements at index's positions take part.
  Tensor used = src;
  for (int64_t k = 0; k < index.dim(); ++k)
    if (used.size(k) != index.size(k)) used = used.narrow(k, 0, index.size(k));
  autograd::Recorder rec(kScatterReduceBackward, self, used);
  Tensor out = scatter_reduce_values(self, d, index, used, r, include_self);
  if (rec)
    rec.save(self, index, used, out)
        .finish(out, [d, r, reduce, include_self](FormulaNode& n, const variable_list& g) {
          return scatter_reduce_grads(g[0], n.saved(0), d, n.saved(1), n.saved(2), n.saved(3), r,
                                      reduce, include_self);
        });
  return out;
}

Tensor index_reduce(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& source,
                    const std::string& reduce, bool include_self) {
  const char* op = "index_reduce";
  detail::check_defined(op, self);
  detail::check_defined(op, index);
  detail::check_defined(op, source);
  BRASA_CHECK(reduce == "prod" || reduce == "mean" || reduce == "amax" || reduce == "amin", op,
              "(): Expected reduce to be one of prod, mean, amax or amin but got ", reduce, ".");
  BRASA_CHECK(index.dim() <= 1, op, "_(): Index is supposed to be a vector, got ", index.dim(),
              " dims");
  BRASA_CHECK(index.scalar_type() == kLong || index.scalar_type() == kInt, op,
              "_(): Expected dtype int32/int64 for index but got ", index.scalar_type());
  const int64_t d = maybe_wrap_dim(dim, std::max<int64_t>(self.dim(), 1), op);
  BRASA_CHECK(source.dim() == self.dim() || (source.dim() <= 1 && self.dim() <= 1), op,
              "_(): Source/destination tensor must have same slice shapes. Destination slice "
              "shape: ",
              self.sizes(), " at dimension ", d, " and source slice shape: ", source.sizes());
  for (int64_t k = 0; k < self.dim(); ++k)
    BRASA_CHECK(k == d || source.size(k) == self.size(k), op,
                "_(): Source/destination tensor must have same slice shapes. Destination slice "
                "shape: ",
                self.sizes(), " at dimension ", d, " and source slice shape: ", source.sizes());
  const int64_t slices = source.dim() == 0 ? 1 : source.size(d);
  BRASA_CHECK(index.numel() == slices, op, "_(): Number of indices (", index.numel(),
              ") should be equal to source.size(dim) (", slices, ")");
  if (self.dim() == 0)
    return scatter_reduce(self, 0, index.reshape({}).to(kLong), source.reshape({}), reduce,
                          include_self);
  // index_reduce is scatter_reduce with the index repeated across each slice.
  std::vector<int64_t> view(self.dim(), 1);
  view[d] = slices;
  Tensor spread = index.to(kLong).reshape(view).expand(source.sizes()).contiguous();
  return scatter_reduce(self, d, spread, source.dim() == 0 ? source.reshape({1}) : source, reduce,
                        include_self);
}

}  // namespace brasa
