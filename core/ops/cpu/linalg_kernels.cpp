// CPU kernels of matrix products: oneDNN's sgemm or OpenBLAS for float
// (set_gemm_backend), OpenBLAS for double (large products split into row or
// column blocks on our pool, the library itself single-threaded), float32 for
// half types, a plain loop for integers.
#include <brasa/device/cpu_capability.h>
#include <brasa/ops/conv.h>
#include <brasa/ops/copy.h>
#include <brasa/ops/cpu/conv_onednn.h>
#include <brasa/ops/cpu/register.h>
#include <brasa/ops/kernels/linalg.h>
#include <brasa/ops/linalg.h>
#include <brasa/util/parallel.h>
#include <cblas.h>

#include <algorithm>
#include <cctype>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>
#ifdef BRASA_WITH_ONEDNN
#include <dnnl.h>
#endif

extern "C" char* openblas_get_corename(void);

namespace brasa {
namespace {

// BRASA_GEMM=openblas|onednn in the environment; auto otherwise.
GemmBackend backend_at_start() {
  const char* v = std::getenv("BRASA_GEMM");
  if (v == nullptr) return GemmBackend::kAuto;
  const std::string s = v;
  if (s == "openblas") return GemmBackend::kOpenBLAS;
  if (s == "onednn") return GemmBackend::kOneDNN;
  BRASA_CHECK(s.empty() || s == "auto", "BRASA_GEMM='", s,
              "' is not a GEMM backend: expected auto, openblas or onednn");
  return GemmBackend::kAuto;
}

// -1 until decided: BRASA_GEMM is read on first use, so that a bad value is
// an error of the first product, not of static initialization.
std::atomic<int> g_gemm_choice{-1};

GemmBackend chosen_backend() {
  int c = g_gemm_choice.load();
  if (c < 0) {
    int unset = -1;
    g_gemm_choice.compare_exchange_strong(unset, static_cast<int>(backend_at_start()));
    c = g_gemm_choice.load();
  }
  return static_cast<GemmBackend>(c);
}

// Whether OpenBLAS runs kernels of at least AVX2 with FMA here. Debian's
// OpenBLAS falls back to its SSE3 kernels (core "Prescott") on processors
// newer than itself unless OPENBLAS_CORETYPE names one: at a third of
// oneDNN's sgemm speed (a WaveNet step 2.7x slower with Brasa held to AVX2 on
// an Emerald Rapids Xeon).
bool openblas_runs_avx2_kernels() {
  static const bool avx2 = [] {
    const char* name = openblas_get_corename();
    std::string core;
    for (const char* c = name ? name : ""; *c; ++c)
      core += static_cast<char>(std::tolower(static_cast<unsigned char>(*c)));
    for (const char* fast :
         {"haswell", "zen", "skylakex", "cooperlake", "sapphirerapids", "excavator"})
      if (core == fast) return true;
    return false;
  }();
  return avx2;
}

}  // namespace

void set_gemm_backend(GemmBackend backend) {
  BRASA_CHECK(backend != GemmBackend::kOneDNN || has_onednn(),
              "set_gemm_backend: this build has no oneDNN (CMake BRASA_ONEDNN)");
  g_gemm_choice.store(static_cast<int>(backend));
}

GemmBackend gemm_backend() {
  const GemmBackend c = chosen_backend();  // a bad BRASA_GEMM is an error here
  if (!has_onednn()) return GemmBackend::kOpenBLAS;
  if (c != GemmBackend::kAuto) return c;
  // Measured: on an AVX2 processor OpenBLAS trains the benchmark models
  // faster (oneDNN's sgemm: 0.83-0.88x on the CNN and the MLP backward,
  // though 1.0-1.9x on isolated products) when it runs its AVX2 kernels; on
  // AVX-512 processors Debian's OpenBLAS runs those at half the core's width.
  return cpu_capability() == CpuCapability::kAvx512 || !openblas_runs_avx2_kernels()
             ? GemmBackend::kOneDNN
             : GemmBackend::kOpenBLAS;
}

}  // namespace brasa

namespace brasa::cpu {
namespace {

// A 2-D operand as BLAS sees it: row-major data, possibly transposed.
struct BlasMatrix {
  Tensor t;  // keeps the data alive
  bool trans = false;
  int64_t ld = 1;
};

// Whether an r x c matrix with strides (s0, s1) is one BLAS reads in place:
// rows contiguous (trans false) or columns contiguous (trans true), and its ld.
bool blas_layout(int64_t r, int64_t c, int64_t s0, int64_t s1, bool& trans, int64_t& ld) {
  if (s1 == 1 && (s0 >= std::max<int64_t>(1, c) || r == 1)) {
    trans = false;
    ld = std::max<int64_t>(s0, std::max<int64_t>(c, 1));
    return true;
  }
  if (s0 == 1 && (s1 >= std::max<int64_t>(1, r) || c == 1)) {
    trans = true;
    ld = std::max<int64_t>(s1, std::max<int64_t>(r, 1));
    return true;
  }
  return false;
}

BlasMatrix as_blas(const Tensor& m) {
  BlasMatrix b{m};
  if (blas_layout(m.size(0), m.size(1), m.stride(0), m.stride(1), b.trans, b.ld)) return b;
  Tensor cm = contiguous(m);
  return {cm, false, std::max<int64_t>(m.size(1), 1)};
}

template <class T>
void blas_gemm(bool ta, bool tb, int64_t M, int64_t N, int64_t K, T alpha, const T* A, int64_t lda,
               const T* B, int64_t ldb, T beta, T* C, int64_t ldc) {
#ifdef BRASA_WITH_ONEDNN
  if constexpr (std::is_same_v<T, float>) {
    if (gemm_backend() == GemmBackend::kOneDNN) {
      // One OpenMP thread per call: our pool splits large products.
      detail::onednn_use_one_thread();
      const dnnl_status_t status =
          dnnl_sgemm(ta ? 'T' : 'N', tb ? 'T' : 'N', M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
      BRASA_CHECK(status == dnnl_success, "mm: oneDNN's sgemm failed (status ", int(status),
                  ") on [", M, ", ", K, "] @ [", K, ", ", N, "]");
      return;
    }
  }
#endif
  auto TA = ta ? CblasTrans : CblasNoTrans, TB = tb ? CblasTrans : CblasNoTrans;
  if (beta == T(0)) {
    // OpenBLAS clears C for beta = 0 in a pass of its own that runs at about
    // half memset's speed (~10% of a K = 128 product); clear it here and let
    // the kernel accumulate. Same result: beta = 0 never reads C.
    for (int64_t i = 0; i < M; ++i) std::memset(C + i * ldc, 0, N * sizeof(T));
    beta = T(1);
  }
  // A row times a matrix, or a matrix times a column, is a matrix-vector
  // product: OpenBLAS's gemm packs the whole matrix first on every call (a
  // batch-1 MLP's forward took 3-4x longer through it; Haswell kernels).
  if (M == 1 || N == 1) {
    const bool row = M == 1;  // C^T = op(B)^T a^T: the matrix is op(B)
    const T* matrix = row ? B : A;
    const bool stored_trans = row ? !tb : ta;  // BLAS reads the stored [rows, cols] transposed
    const int64_t ld = row ? ldb : lda;
    const int64_t rows = row ? (tb ? N : K) : (ta ? K : M),
                  cols = row ? (tb ? K : N) : (ta ? M : K);
    const T* x = row ? A : B;
    const int64_t incx = row ? (ta ? lda : 1) : (tb ? 1 : ldb);
    const int64_t incy = row ? 1 : ldc;
    const auto trans = stored_trans ? CblasTrans : CblasNoTrans;
    if constexpr (std::is_same_v<T, float>)
      cblas_sgemv(CblasRowMajor, trans, rows, cols, alpha, matrix, ld, x, incx, beta, C, incy);
    else
      cblas_dgemv(CblasRowMajor, trans, rows, cols, alpha, matrix, ld, x, incx, beta, C, incy);
    return;
  }
  if constexpr (std::is_same_v<T, float>)
    cblas_sgemm(CblasRowMajor, TA, TB, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
  else
    cblas_dgemm(CblasRowMajor, TA, TB, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}

template <class T>
void gemm_blas(const Tensor& a, const Tensor& b, const Tensor& c, const Scalar& alpha_s,
               const Scalar& beta_s) {
  int64_t M = a.size(0), K = a.size(1), N = b.size(1);
  detail::pin_blas_threads();
  BlasMatrix A = as_blas(a), B = as_blas(b);
  const T alpha = alpha_s.to<T>(), beta = beta_s.to<T>();
  const T* ap = A.t.data_ptr<T>();
  const T* bp = B.t.data_ptr<T>();
  T* cp = c.data_ptr<T>();
  if (K == 0) {
    for (int64_t i = 0; i < M * N; ++i) cp[i] = beta == T(0) ? T(0) : beta * cp[i];
    return;
  }
  int64_t work = M * N * K;
  int nt = get_num_threads();
  if (nt == 1 || in_parallel_region() || work < (int64_t(1) << 18)) {
    blas_gemm<T>(A.trans, B.trans, M, N, K, alpha, ap, A.ld, bp, B.ld, beta, cp, N);
    return;
  }
  if (M >= N) {
    int64_t block = std::max<int64_t>(1, (M + nt - 1) / nt);
    parallel_for(0, M, block, [&](int64_t r0, int64_t r1) {
      const T* as = A.trans ? ap + r0 : ap + r0 * A.ld;
      blas_gemm<T>(A.trans, B.trans, r1 - r0, N, K, alpha, as, A.ld, bp, B.ld, beta, cp + r0 * N,
                   N);
    });
  } else {
    int64_t block = std::max<int64_t>(1, (N + nt - 1) / nt);
    parallel_for(0, N, block, [&](int64_t c0, int64_t c1) {
      const T* bs = B.trans ? bp + c0 * B.ld : bp + c0;
      blas_gemm<T>(A.trans, B.trans, M, c1 - c0, K, alpha, ap, A.ld, bs, B.ld, beta, cp + c0, N);
    });
  }
}

// C = alpha * A @ B + beta * C with C contiguous [M, N]. BLAS runs single-
// threaded; large products are split into row (or column) blocks on our pool.
void gemm_cpu(const Tensor& a, const Tensor& b, const Tensor& c, const Scalar& alpha_s,
              const Scalar& beta_s) {
  int64_t M = a.size(0), K = a.size(1), N = b.size(1);
  if (M == 0 || N == 0) return;
  ScalarType t = c.dtype();
  if (t == kFloat) return gemm_blas<float>(a, b, c, alpha_s, beta_s);
  if (t == kDouble) return gemm_blas<double>(a, b, c, alpha_s, beta_s);
  if (t == kHalf || t == kBFloat16) {
    // Compute in float32 and round once.
    Tensor cf = c.to(kFloat);
    gemm_cpu(a.to(kFloat), b.to(kFloat), cf, alpha_s, beta_s);
    detail::copy_kernel(c, cf);
    return;
  }
  BRASA_CHECK(t != kBool, "mm: not implemented for 'Bool'");
  BRASA_DISPATCH_INTEGRAL_TYPES(t, "mm", [&] {
    using T = scalar_t;
    Tensor ac = contiguous(a), bc = contiguous(b);
    const T* ap = ac.data_ptr<T>();
    const T* bp = bc.data_ptr<T>();
    T* cp = c.data_ptr<T>();
    const int64_t alpha = alpha_s.toLong(), beta = beta_s.toLong();
    parallel_for(0, M, 16, [&](int64_t r0, int64_t r1) {
      std::vector<int64_t> acc(N);
      for (int64_t i = r0; i < r1; ++i) {
        std::fill(acc.begin(), acc.end(), 0);
        for (int64_t k = 0; k < K; ++k) {
          int64_t av = ap[i * K + k];
          for (int64_t j = 0; j < N; ++j) acc[j] += av * bp[k * N + j];
        }
        for (int64_t j = 0; j < N; ++j)
          cp[i * N + j] = static_cast<T>(alpha * acc[j] + (beta == 0 ? 0 : beta * cp[i * N + j]));
      }
    });
  });
}

// c[i] = a[i] @ b[i] for the batch range [b0, b1) by a plain loop: for
// products too small for a BLAS call to pay (its setup outweighs a few
// hundred multiply-adds). Rows of c accumulate along contiguous columns.
template <class T>
void small_products(const T* a, const int64_t* as, const T* b, const int64_t* bs, T* c, int64_t M,
                    int64_t K, int64_t N, int64_t b0, int64_t b1) {
  const bool rows = as[2] == 1 && as[1] == K && bs[2] == 1 && bs[1] == N;
  for (int64_t i = b0; i < b1; ++i) {
    const T* ai = a + i * as[0];
    const T* bi = b + i * bs[0];
    T* ci = c + i * M * N;
    if (rows && N == 1) {  // matrix-vector products: a dot per row, in k order as below
      for (int64_t m = 0; m < M; ++m) {
        T acc = T(0);
        for (int64_t k = 0; k < K; ++k) acc += ai[m * K + k] * bi[k];
        ci[m] = acc;
      }
      continue;
    }
    if (rows) {  // (the same loop on unit strides, which the compiler vectorizes)
      for (int64_t m = 0; m < M; ++m) {
        T* row = ci + m * N;
        for (int64_t n = 0; n < N; ++n) row[n] = T(0);
        for (int64_t k = 0; k < K; ++k) {
          const T av = ai[m * K + k];
          const T* brow = bi + k * N;
          for (int64_t n = 0; n < N; ++n) row[n] += av * brow[n];
        }
      }
      continue;
    }
    for (int64_t m = 0; m < M; ++m) {
      T* row = ci + m * N;
      for (int64_t n = 0; n < N; ++n) row[n] = T(0);
      for (int64_t k = 0; k < K; ++k) {
        const T av = ai[m * as[1] + k * as[2]];
        const T* brow = bi + k * bs[1];
        for (int64_t n = 0; n < N; ++n) row[n] += av * brow[n * bs[2]];
      }
    }
  }
}

// Float and double batches without a tensor per product (a view per matrix
// cost more than the products of small ones: capsule routing's 184K
// [16, 8] @ [8, 1]): BLAS on pointers, or the plain loop for small products.
template <class T>
void bmm_floating(const Tensor& a_in, const Tensor& b_in, const Tensor& c) {
  const int64_t B = a_in.size(0), M = a_in.size(1), K = a_in.size(2), N = b_in.size(2);
  const int64_t per = M * N * K;
  // Each matrix as BLAS reads it (rows or columns contiguous), else a copy.
  bool ta = false, tb = false;
  int64_t lda = 1, ldb = 1;
  const Tensor a =
      blas_layout(M, K, a_in.stride(1), a_in.stride(2), ta, lda) ? a_in : contiguous(a_in);
  const Tensor b =
      blas_layout(K, N, b_in.stride(1), b_in.stride(2), tb, ldb) ? b_in : contiguous(b_in);
  if (!a.is_same(a_in)) blas_layout(M, K, a.stride(1), a.stride(2), ta, lda);
  if (!b.is_same(b_in)) blas_layout(K, N, b.stride(1), b.stride(2), tb, ldb);
  const T* ap = a.data_ptr<T>();
  const T* bp = b.data_ptr<T>();
  T* cp = c.data_ptr<T>();
  const int64_t as[3] = {a.stride(0), a.stride(1), a.stride(2)};
  const int64_t bs[3] = {b.stride(0), b.stride(1), b.stride(2)};
  if (per <= 4096) {
    const int64_t grain = std::max<int64_t>(1, 32768 / std::max<int64_t>(per, 1));
    parallel_for(0, B, grain, [&](int64_t b0, int64_t b1) {
      small_products<T>(ap, as, bp, bs, cp, M, K, N, b0, b1);
    });
    return;
  }
  detail::pin_blas_threads();
  // Many products: one per thread; few large ones: each split inside gemm_cpu.
  if (per >= (int64_t(1) << 20)) {
    for (int64_t i = 0; i < B; ++i) gemm_cpu(a.select(0, i), b.select(0, i), c.select(0, i), 1, 0);
    return;
  }
  parallel_for(0, B, 1, [&](int64_t b0, int64_t b1) {
    for (int64_t i = b0; i < b1; ++i)
      blas_gemm<T>(ta, tb, M, N, K, T(1), ap + i * as[0], lda, bp + i * bs[0], ldb, T(0),
                   cp + i * M * N, N);
  });
}

void bmm_cpu(const Tensor& a, const Tensor& b, const Tensor& c) {
  if (c.dtype() == kFloat) return bmm_floating<float>(a, b, c);
  if (c.dtype() == kDouble) return bmm_floating<double>(a, b, c);
  const int64_t B = a.size(0), per = a.size(1) * a.size(2) * b.size(2);
  // Many small products: one per thread; few large ones: each split inside gemm.
  parallel_for(0, B, per >= (int64_t(1) << 20) ? B : 1, [&](int64_t b0, int64_t b1) {
    for (int64_t i = b0; i < b1; ++i)
      gemm_cpu(a.select(0, i), b.select(0, i), c.select(0, i), 1, 0);
  });
}

}  // namespace

void register_linalg_kernels() {
  register_kernel<GemmKernel>(kCPU, gemm_cpu);
  register_kernel<BmmKernel>(kCPU, bmm_cpu);
}

}  // namespace brasa::cpu
