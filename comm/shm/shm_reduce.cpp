#include "shm_reduce.h"

#include <brasa/ops/kernel_table.h>
#include <brasa/ops/kernels/reduction.h>
#include <brasa/tensor/half.h>
#include <brasa/util/error.h>

#include <algorithm>
#include <type_traits>

namespace brasa::distributed::shm_detail {
namespace {

// Blocks of this many elements are accumulated in a local array: the inputs
// are read in order, each once, and `out` may alias one of them.
constexpr int64_t kBlock = 512;

template <class T, class Acc, class Op>
void reduce_blocks(T* out, const void* const* inputs, int count, int64_t n, bool average, Op op) {
  Acc acc[kBlock];
  for (int64_t start = 0; start < n; start += kBlock) {
    const int64_t m = std::min(kBlock, n - start);
    const T* first = static_cast<const T*>(inputs[0]) + start;
    for (int64_t i = 0; i < m; ++i) acc[i] = static_cast<Acc>(first[i]);
    for (int k = 1; k < count; ++k) {
      const T* in = static_cast<const T*>(inputs[k]) + start;
      for (int64_t i = 0; i < m; ++i) acc[i] = op(acc[i], static_cast<Acc>(in[i]));
    }
    if (average) {
      const Acc divisor = static_cast<Acc>(count);
      for (int64_t i = 0; i < m; ++i) acc[i] /= divisor;
    }
    T* o = out + start;
    for (int64_t i = 0; i < m; ++i) o[i] = static_cast<T>(acc[i]);
  }
}

template <class T>
void reduce_typed(void* out_raw, const void* const* inputs, int count, int64_t n, ReduceOp op,
                  bool is_bool) {
  T* out = static_cast<T*>(out_raw);
  using Acc = std::conditional_t<std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>, float, T>;
  if constexpr (std::is_integral_v<T>) {
    if (is_bool) {
      switch (op) {
        case ReduceOp::SUM:
        case ReduceOp::MAX:
        case ReduceOp::BOR:
          return reduce_blocks<T, Acc>(out, inputs, count, n, false,
                                       [](Acc a, Acc b) { return Acc(a | b); });
        case ReduceOp::PRODUCT:
        case ReduceOp::MIN:
        case ReduceOp::BAND:
          return reduce_blocks<T, Acc>(out, inputs, count, n, false,
                                       [](Acc a, Acc b) { return Acc(a & b); });
        case ReduceOp::BXOR:
          return reduce_blocks<T, Acc>(out, inputs, count, n, false,
                                       [](Acc a, Acc b) { return Acc(a ^ b); });
        default:
          break;
      }
    }
    switch (op) {
      case ReduceOp::BAND:
        return reduce_blocks<T, Acc>(out, inputs, count, n, false,
                                     [](Acc a, Acc b) { return Acc(a & b); });
      case ReduceOp::BOR:
        return reduce_blocks<T, Acc>(out, inputs, count, n, false,
                                     [](Acc a, Acc b) { return Acc(a | b); });
      case ReduceOp::BXOR:
        return reduce_blocks<T, Acc>(out, inputs, count, n, false,
                                     [](Acc a, Acc b) { return Acc(a ^ b); });
      default:
        break;
    }
  }
  switch (op) {
    case ReduceOp::SUM:
    case ReduceOp::AVG:
      // Integers wrap as in the other backends (through unsigned arithmetic).
      if constexpr (std::is_integral_v<T>) {
        using U = std::make_unsigned_t<Acc>;
        return reduce_blocks<T, Acc>(out, inputs, count, n, false,
                                     [](Acc a, Acc b) { return Acc(U(a) + U(b)); });
      } else {
        return reduce_blocks<T, Acc>(out, inputs, count, n, op == ReduceOp::AVG,
                                     [](Acc a, Acc b) { return a + b; });
      }
    case ReduceOp::PRODUCT:
      if constexpr (std::is_integral_v<T>) {
        using U = std::make_unsigned_t<Acc>;
        return reduce_blocks<T, Acc>(out, inputs, count, n, false,
                                     [](Acc a, Acc b) { return Acc(U(a) * U(b)); });
      } else {
        return reduce_blocks<T, Acc>(out, inputs, count, n, false,
                                     [](Acc a, Acc b) { return a * b; });
      }
    case ReduceOp::MIN:
      return reduce_blocks<T, Acc>(out, inputs, count, n, false,
                                   [](Acc a, Acc b) { return b < a ? b : a; });
    case ReduceOp::MAX:
      return reduce_blocks<T, Acc>(out, inputs, count, n, false,
                                   [](Acc a, Acc b) { return a < b ? b : a; });
    default:
      break;
  }
  BRASA_ERROR("ProcessGroupShm: ReduceOp ", to_string(op), " is not defined for this dtype");
}

}  // namespace

void reduce_into(void* out, const void* const* inputs, int count, int64_t n, ScalarType dtype,
                 ReduceOp op) {
  if (n <= 0 || count <= 0) return;
  // Float sums (gradients) take the core's vectorized kernel.
  if ((dtype == ScalarType::Float || dtype == ScalarType::Double) &&
      (op == ReduceOp::SUM || op == ReduceOp::AVG)) {
    return kernel<SumArraysKernel>(kCPU)(out, inputs, count, n, dtype, op == ReduceOp::AVG);
  }
  switch (dtype) {
    case ScalarType::Float:
      return reduce_typed<float>(out, inputs, count, n, op, false);
    case ScalarType::Double:
      return reduce_typed<double>(out, inputs, count, n, op, false);
    case ScalarType::Half:
      return reduce_typed<Half>(out, inputs, count, n, op, false);
    case ScalarType::BFloat16:
      return reduce_typed<BFloat16>(out, inputs, count, n, op, false);
    case ScalarType::Long:
      return reduce_typed<int64_t>(out, inputs, count, n, op, false);
    case ScalarType::Int:
      return reduce_typed<int32_t>(out, inputs, count, n, op, false);
    case ScalarType::Short:
      return reduce_typed<int16_t>(out, inputs, count, n, op, false);
    case ScalarType::Char:
      return reduce_typed<int8_t>(out, inputs, count, n, op, false);
    case ScalarType::Byte:
      return reduce_typed<uint8_t>(out, inputs, count, n, op, false);
    case ScalarType::Bool:
      return reduce_typed<uint8_t>(out, inputs, count, n, op, true);
    default:
      break;
  }
  BRASA_ERROR("ProcessGroupShm: dtype ", toString(dtype), " cannot be reduced");
}

}  // namespace brasa::distributed::shm_detail
