#include <brasa/cuda/cublas_library.h>
#include <brasa/util/error.h>

#include <dlfcn.h>

#include <string>

// BRASA_CUBLAS_SONAME and BRASA_CUBLAS_PATH come from core/CMakeLists.txt: the
// library's name for the loader's search path (ld.so.conf, the program's
// RUNPATH), and where the build found it.

namespace brasa::cuda {
namespace {

void* open_cublas(const char* soname, const char* path) {
  if (void* h = dlopen(soname, RTLD_NOW | RTLD_LOCAL)) return h;
  const std::string by_name = dlerror();
  if (void* h = dlopen(path, RTLD_NOW | RTLD_LOCAL)) return h;
  BRASA_ERROR("CUDA: cannot load cuBLAS for matrix products on the GPU: ", by_name,
              "; and from where the build found it: ", dlerror());
}

template <class F>
void resolve(void* lib, const char* soname, F& out, const char* name) {
  out = reinterpret_cast<F>(dlsym(lib, name));
  BRASA_CHECK(out != nullptr, "CUDA: the cuBLAS library ", soname, " has no entry point ", name,
              " (a cuBLAS older than the one Brasa was built with?)");
}

}  // namespace

CublasLibrary detail::load_cublas_library(const char* soname, const char* path) {
  void* lib = open_cublas(soname, path);  // kept open for the life of the process
  CublasLibrary l{};
  resolve(lib, soname, l.create, "cublasCreate_v2");
  resolve(lib, soname, l.destroy, "cublasDestroy_v2");
  resolve(lib, soname, l.set_stream, "cublasSetStream_v2");
  resolve(lib, soname, l.status_string, "cublasGetStatusString");
  resolve(lib, soname, l.gemm_ex, "cublasGemmEx");
  resolve(lib, soname, l.gemm_strided_batched_ex, "cublasGemmStridedBatchedEx");
  return l;
}

const CublasLibrary& cublas_library() {
  static const CublasLibrary library = detail::load_cublas_library(
      BRASA_CUBLAS_SONAME, BRASA_CUBLAS_PATH);  // a throw leaves it to the next call
  return library;
}

bool cublas_library_loaded() {
  void* h = dlopen(BRASA_CUBLAS_SONAME, RTLD_NOW | RTLD_NOLOAD);
  if (!h) return false;
  dlclose(h);  // RTLD_NOLOAD took a reference
  return true;
}

}  // namespace brasa::cuda
