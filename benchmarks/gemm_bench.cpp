// float32 matrix products at 1 thread: Brasa's mm (on the backend its rule
// picks, and on each backend forced) beside raw cblas_sgemm (OpenBLAS) and
// dnnl_sgemm (oneDNN) on the same shapes, in one process. Prints GFLOP/s and
// `ratio` lines: Brasa's mm over the faster library.
#include <brasa/brasa.h>
#include <brasa/util/cli.h>
#include <cblas.h>
#include <dnnl.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

extern "C" void omp_set_num_threads(int);

using namespace brasa;

namespace {

struct Shape {
  int64_t M, N, K;
  bool ta, tb;  // A is stored [K, M], B is stored [N, K]
};

// The best of 7 runs, each of enough repetitions for ~0.1 s of work at 100 GFLOP/s.
template <class F>
double gflops(const Shape& s, const F& f) {
  const double flop = 2.0 * s.M * s.N * s.K;
  const int reps = std::max(1, static_cast<int>(1e10 / 100 / flop));
  double best = 1e30;
  for (int r = 0; r < 7; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < reps; ++i) f();
    const double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    best = std::min(best, t / reps);
  }
  return flop / best / 1e9;
}

}  // namespace

int main(int argc, char** argv) {
  cli::Parser("gemm_bench",
              "float32 products at 1 thread: Brasa's mm beside OpenBLAS and oneDNN's sgemm.")
      .parse_or_exit(argc, argv);
  set_num_threads(1);
  omp_set_num_threads(1);
  std::printf("cpu capability %s, default GEMM backend %s\n", get_cpu_capability().c_str(),
              gemm_backend() == GemmBackend::kOneDNN ? "onednn" : "openblas");
  // The shapes (square, linear-layer forward and both gradients),
  // the small ones of the classic MNIST CNN and an LSTM step, and a conv's.
  const std::vector<Shape> shapes = {
      {1024, 1024, 1024, false, false},
      {128, 512, 784, false, true},
      {128, 256, 512, false, true},
      {512, 784, 128, true, false},
      {256, 512, 128, true, false},
      {128, 784, 512, false, false},
      {64, 50, 320, false, true},
      {64, 320, 50, false, false},
      {20, 800, 200, false, true},
      {1568, 20, 250, false, false},
      // A 3x3 64->64 convolution on 16x64x32x32 (the ResNet block of
      // ops_bench) as im2col runs it: forward, input and weight gradients.
      {64, 16384, 576, false, false},
      {576, 16384, 64, true, false},
      {64, 576, 16384, false, true}};
  manual_seed(0);
  for (const Shape& s : shapes) {
    Tensor a = s.ta ? randn({s.K, s.M}).t() : randn({s.M, s.K});
    Tensor b = s.tb ? randn({s.N, s.K}).t() : randn({s.K, s.N});
    Tensor c = empty({s.M, s.N});
    const float* ap = a.data_ptr<float>();
    const float* bp = b.data_ptr<float>();
    float* cp = c.data_ptr<float>();
    const int64_t lda = s.ta ? s.M : s.K, ldb = s.tb ? s.K : s.N;
    const double openblas = gflops(s, [&] {
      cblas_sgemm(CblasRowMajor, s.ta ? CblasTrans : CblasNoTrans, s.tb ? CblasTrans : CblasNoTrans,
                  s.M, s.N, s.K, 1.0f, ap, lda, bp, ldb, 0.0f, cp, s.N);
    });
    const double onednn = gflops(s, [&] {
      dnnl_sgemm(s.ta ? 'T' : 'N', s.tb ? 'T' : 'N', s.M, s.N, s.K, 1.0f, ap, lda, bp, ldb, 0.0f,
                 cp, s.N);
    });
    const double brasa = gflops(s, [&] { mm_out(c, a, b); });
    set_gemm_backend(GemmBackend::kOpenBLAS);
    const double brasa_openblas = gflops(s, [&] { mm_out(c, a, b); });
    set_gemm_backend(GemmBackend::kOneDNN);
    const double brasa_onednn = gflops(s, [&] { mm_out(c, a, b); });
    set_gemm_backend(GemmBackend::kAuto);
    std::printf(
        "%4ld x %4ld x %4ld %c%c  GFLOP/s: openblas %6.1f  onednn %6.1f  brasa mm %6.1f "
        "(on openblas %6.1f, on onednn %6.1f)\n",
        static_cast<long>(s.M), static_cast<long>(s.N), static_cast<long>(s.K), s.ta ? 'T' : 'N',
        s.tb ? 'T' : 'N', openblas, onednn, brasa, brasa_openblas, brasa_onednn);
    std::printf("ratio gemm %ldx%ldx%ld: brasa mm / faster library speed %.3f (/onednn %.3f)\n",
                static_cast<long>(s.M), static_cast<long>(s.N), static_cast<long>(s.K),
                brasa / std::max(openblas, onednn), brasa / onednn);
  }
  return 0;
}
