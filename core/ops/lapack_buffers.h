#pragma once
// What the LAPACK-backed linear-algebra ops share (decompositions.cpp,
// linalg_solvers.cpp): argument checks, and the round trip of a batch of
// matrices through column-major float64 CPU buffers that LAPACK works in.
#include <brasa/tensor/tensor.h>

#include <string>
#include <vector>

namespace brasa::lapack_buffers {

inline Tensor mT(const Tensor& t) { return t.transpose(-2, -1); }

// A defined floating-point tensor of at least 2 dims (square ones if asked).
void check_matrix(const char* op, const Tensor& t, bool square);
// v as a LAPACK int, or an error naming op.
int lapack_int(const char* op, int64_t v);

// The precision LAPACK works in: float for float inputs (its s routines, as
// PyTorch), double for everything else.
ScalarType working_type(const Tensor& t);
ScalarType working_type(const Tensor& a, const Tensor& b);  // float only if both are

// f(T{}) with T the C++ type of a working type (float or double): one body
// written as a generic lambda serves both precisions.
template <class F>
void dispatch_real(ScalarType type, F&& f) {
  if (type == kFloat)
    f(float{});
  else
    f(double{});
}

// The matrices of t as column-major buffers of the working type on the CPU,
// one after another: the returned tensor is [..., n, m] (row-major), each
// matrix's buffer being the m x n matrix in LAPACK's layout. Always a fresh
// buffer (LAPACK overwrites it).
Tensor column_major(const Tensor& t);
Tensor column_major(const Tensor& t, ScalarType type);
// Back from column_major's layout to a row-major tensor of like's dtype and device.
Tensor from_column_major(const Tensor& cm, const Tensor& like);
// The number of matrices in t.
int64_t batch_count(const Tensor& t);
// " (batch element b)" when there are several matrices, else "".
std::string batch_name(int64_t b, int64_t count);
// The batch shape (all but the last two dims).
std::vector<int64_t> batch_shape(const Tensor& A);

// LU of each column-major buffer in place; pivots [count, min(m, n)].
// Returns per matrix LAPACK's info (> 0: U[info-1, info-1] is zero).
std::vector<int> lu_in_place(const char* op, Tensor& cm, Tensor& pivots);

}  // namespace brasa::lapack_buffers
