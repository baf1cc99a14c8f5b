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

}  // namespace
