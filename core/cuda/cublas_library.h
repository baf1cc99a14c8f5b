#pragma once
// cuBLAS, loaded by the first matrix product on a GPU instead of at program
// start. Linked, it ran its static initializers in every Brasa process (each
// rank, each worker, each test), GPU or not: 0.3 s of CPU and 200 MB of
// memory before main, most of a small program's start-up.
#include <cublas_v2.h>

namespace brasa::cuda {

// The entry points Brasa calls (their exported names: cublasCreate and its
// kin are macros for the _v2 functions).
struct CublasLibrary {
  decltype(&cublasCreate_v2) create;
  decltype(&cublasDestroy_v2) destroy;
  decltype(&cublasSetStream_v2) set_stream;
  decltype(&cublasGetStatusString) status_string;
  // (C++ sees overloads of these two, the compute type given as a
  // cudaDataType: the signatures are spelled out.)
  cublasStatus_t (*gemm_ex)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int m, int n,
                            int k, const void* alpha, const void* a, cudaDataType a_type, int lda,
                            const void* b, cudaDataType b_type, int ldb, const void* beta, void* c,
                            cudaDataType c_type, int ldc, cublasComputeType_t, cublasGemmAlgo_t);
  cublasStatus_t (*gemm_strided_batched_ex)(cublasHandle_t, cublasOperation_t, cublasOperation_t,
                                            int m, int n, int k, const void* alpha, const void* a,
                                            cudaDataType a_type, int lda, long long stride_a,
                                            const void* b, cudaDataType b_type, int ldb,
                                            long long stride_b, const void* beta, void* c,
                                            cudaDataType c_type, int ldc, long long stride_c,
                                            int batch_count, cublasComputeType_t, cublasGemmAlgo_t);
};

// The library, loaded on the first call (thread-safe). A brasa::Error names
// the file and the loader's reason when it cannot be loaded, or an entry
// point that it lacks.
const CublasLibrary& cublas_library();
// Whether this process has loaded it (through cublas_library() or otherwise).
bool cublas_library_loaded();

namespace detail {
// What cublas_library() does once: opens `soname`, else `path`, and resolves
// the entry points (a separate function so that its errors can be tested).
CublasLibrary load_cublas_library(const char* soname, const char* path);
}  // namespace detail

}  // namespace brasa::cuda
