#pragma once
// The op codes of the elementwise families, on their own so that the CUDA
// kernels (ops/cuda/*.cu, which see no other Brasa header) share them.
#include <cstdint>

namespace brasa {

enum class BinaryOp : uint8_t {
  Add,
  Mul,
  Div,
  DivTrunc,
  DivFloor,
  Pow,
  Atan2,
  Fmod,
  Remainder,
  Minimum,
  Maximum
};
enum class CompareOp : uint8_t { Eq, Ne, Lt, Le, Gt, Ge, LogicalAnd, LogicalOr, LogicalXor };
enum class BitwiseOp : uint8_t { And, Or, Xor };

// One code per unary op, named as the op is (so that a macro defining
// Tensor::exp_() can name UnaryOp::exp); ops/unary.cpp has one row per code
// (name, dtype rule, derivative) and ops/unary_math.h the scalar function of
// each. The order is the rows' order.
enum class UnaryOp : uint8_t {
  neg,
  abs,
  sign,
  exp,
  exp2,
  expm1,
  log,
  log2,
  log10,
  log1p,
  sqrt,
  rsqrt,
  reciprocal,
  sin,
  cos,
  tan,
  asin,
  acos,
  atan,
  sinh,
  cosh,
  tanh,
  sigmoid,
  relu,
  erf,
  erfinv,
  floor,
  ceil,
  round,
  trunc,
  frac,
  square,
  logical_not,
  bitwise_not,
  isnan,
  isinf,
  isfinite,
  count
};

}  // namespace brasa
