#include <brasa/ops/factory.h>
#include <brasa/ops/from_file.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace brasa {

Tensor from_file(const std::string& filename, std::optional<bool> shared,
                 std::optional<int64_t> size, const TensorOptions& options) {
  const int64_t count = size.value_or(0);
  BRASA_CHECK(count >= 0, "from_file: size must be non-negative, got ", count);
  BRASA_CHECK(options.device().is_cpu(), "from_file: reads into CPU memory only, got device ",
              options.device());
  const ScalarType dtype = options.dtype();
  const auto bytes = static_cast<size_t>(count) * elementSize(dtype);
  const bool writable = shared.value_or(false);
  if (bytes == 0) return empty({0}, options);
  const int fd = ::open(filename.c_str(), (writable ? O_RDWR : O_RDONLY) | O_CLOEXEC);
  BRASA_CHECK(fd >= 0, "from_file: cannot open ", filename, ": ", std::strerror(errno));
  struct stat st {};
  if (fstat(fd, &st) != 0 || static_cast<size_t>(st.st_size) < bytes) {
    const auto have = static_cast<int64_t>(st.st_size);
    ::close(fd);
    BRASA_ERROR("from_file: ", filename, " holds ", have, " bytes, fewer than the ", bytes, " of ",
                count, " elements of ", dtype);
  }
  void* data =
      mmap(nullptr, bytes, PROT_READ | PROT_WRITE, writable ? MAP_SHARED : MAP_PRIVATE, fd, 0);
  const int err = errno;
  ::close(fd);  // the mapping keeps the file
  BRASA_CHECK(data != MAP_FAILED, "from_file: unable to mmap ", bytes, " bytes from file ",
              filename, ": ", std::strerror(err));
  return from_blob(
             data, {count}, [bytes](void* p) { munmap(p, bytes); }, options.requires_grad(false))
      .requires_grad_(options.requires_grad());
}

}  // namespace brasa
