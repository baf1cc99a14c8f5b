// cuBLAS is loaded by the first GPU matrix product, not when a program
// starts; loading it and calling into it needs no device.
#include <brasa/cuda/cublas_library.h>
#include <gtest/gtest.h>

#include <fstream>
#include <string>

namespace {

bool mapped_into_this_process(const std::string& name) {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line))
    if (line.find(name) != std::string::npos) return true;
  return false;
}

// Taken while the program starts (the shared libraries are initialized by
// then), whatever the tests that run before this file's do.
const bool g_cublas_at_start = brasa::cuda::cublas_library_loaded();
const bool g_cublas_lt_mapped_at_start = mapped_into_this_process("libcublasLt");

TEST(CublasLibrary, IsNotLoadedWhenAProgramStarts) {
  EXPECT_FALSE(g_cublas_at_start);
  EXPECT_FALSE(g_cublas_lt_mapped_at_start);
}

TEST(CublasLibrary, LoadsOnFirstUseWithoutADevice) {
  const brasa::cuda::CublasLibrary& cublas = brasa::cuda::cublas_library();
  EXPECT_TRUE(brasa::cuda::cublas_library_loaded());
  EXPECT_TRUE(mapped_into_this_process("libcublasLt"));
  EXPECT_NE(cublas.create, nullptr);
  EXPECT_NE(cublas.destroy, nullptr);
  EXPECT_NE(cublas.set_stream, nullptr);
  EXPECT_NE(cublas.gemm_ex, nullptr);
  EXPECT_NE(cublas.gemm_strided_batched_ex, nullptr);
  ASSERT_NE(cublas.status_string, nullptr);
  EXPECT_STREQ(cublas.status_string(CUBLAS_STATUS_SUCCESS), "success");
  EXPECT_STREQ(cublas.status_string(CUBLAS_STATUS_NOT_INITIALIZED),
               "the library was not initialized");
  // Loaded once: the same entry points again.
  EXPECT_EQ(&brasa::cuda::cublas_library(), &cublas);
}

// The loader's errors: no such library (both places named), and a library
// without cuBLAS's entry points (zlib stands in for an old cuBLAS).
TEST(CublasLibrary, ALibraryThatCannotBeLoadedIsAClearError) {
  try {
    brasa::cuda::detail::load_cublas_library("libbrasa-no-such-cublas.so.0",
                                             "/nonexistent/libbrasa-no-such-cublas.so.0");
    FAIL() << "no error";
  } catch (const std::exception& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("CUDA: cannot load cuBLAS for matrix products on the GPU: "),
              std::string::npos)
        << what;
    EXPECT_NE(what.find("libbrasa-no-such-cublas.so.0"), std::string::npos) << what;
    EXPECT_NE(what.find("/nonexistent/libbrasa-no-such-cublas.so.0"), std::string::npos) << what;
  }
  try {
    brasa::cuda::detail::load_cublas_library("libz.so.1", "libz.so.1");
    FAIL() << "no error";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find(
                  "CUDA: the cuBLAS library libz.so.1 has no entry point cublasCreate_v2"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
