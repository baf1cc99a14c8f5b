#include <brasa/ops/cpu/lapack.h>
#include <brasa/ops/lapack_buffers.h>
#include <brasa/ops/factory.h>

#include <algorithm>
#include <limits>

namespace brasa::lapack_buffers {

void check_matrix(const char* op, const Tensor& t, bool square) {
  BRASA_CHECK(t.defined(), op, ": expected a defined tensor");
  BRASA_CHECK(t.dim() >= 2, op, ": The input tensor A must have at least 2 dimensions, got shape ",
              t.sizes());
  BRASA_CHECK(t.is_floating_point(), op, ": Expected a floating point tensor as input. Got ",
              t.scalar_type());
  if (square)
    BRASA_CHECK(t.size(-1) == t.size(-2), op,
                ": A must be batches of square matrices, but they are ", t.size(-2), " by ",
                t.size(-1), " matrices");
}

int lapack_int(const char* op, int64_t v) {
  BRASA_CHECK(v <= std::numeric_limits<int>::max(), op, ": a matrix dim of ", v,
              " exceeds LAPACK's 32-bit sizes");
  return static_cast<int>(v);
}

// The transpose of a contiguous float64 CPU input is already contiguous
// (contiguous() would alias it), hence the clone.
ScalarType working_type(const Tensor& t) { return t.scalar_type() == kFloat ? kFloat : kDouble; }
ScalarType working_type(const Tensor& a, const Tensor& b) {
  return working_type(a) == kFloat && working_type(b) == kFloat ? kFloat : kDouble;
}

Tensor column_major(const Tensor& t) { return column_major(t, working_type(t)); }
Tensor column_major(const Tensor& t, ScalarType type) {
  Tensor c = t.detach().to(kCPU).to(type).transpose(-2, -1);
  return c.is_contiguous() ? c.clone() : c.contiguous();
}

Tensor from_column_major(const Tensor& cm, const Tensor& like) {
  return cm.transpose(-2, -1).contiguous().to(like.scalar_type()).to(like.device());
}

int64_t batch_count(const Tensor& t) {
  int64_t count = 1;  // the batch dims' product (numel / matrix size fails for empty matrices)
  for (int64_t d = 0; d + 2 < t.dim(); ++d) count *= t.size(d);
  return count;
}

std::string batch_name(int64_t b, int64_t count) {
  return count > 1 ? " (batch element " + std::to_string(b) + ")" : "";
}

std::vector<int64_t> batch_shape(const Tensor& A) {
  return std::vector<int64_t>(A.sizes().begin(), A.sizes().end() - 2);
}

std::vector<int> lu_in_place(const char* op, Tensor& cm, Tensor& pivots) {
  const int64_t count = batch_count(cm);
  const int m = lapack_int(op, cm.size(-1)), n = lapack_int(op, cm.size(-2));
  const int k = std::min(m, n);
  pivots = empty({count, k}, TensorOptions().dtype(kInt));
  std::vector<int> infos(count, 0);
  if (m == 0 || n == 0) return infos;  // nothing to factor (and LAPACK rejects lda = 0)
  dispatch_real(cm.scalar_type(), [&](auto zero) {
    using T = decltype(zero);
    T* a = cm.data_ptr<T>();
    for (int64_t b = 0; b < count; ++b) {
      int info = 0;
      lapack::getrf(&m, &n, a + b * m * n, &m, pivots.data_ptr<int32_t>() + b * k, &info);
      BRASA_CHECK(info >= 0, op, ": LAPACK getrf rejected argument ", -info);
      infos[b] = info;
    }
  });
  return infos;
}

}  // namespace brasa::lapack_buffers
