// Typed allocations: every allocation knows its kind; one that can be shared
// exports a handle from which another process (or this one) rebuilds it.
// The test brings a real memfd allocator of its own (the multiprocessing
// layer provides the library's) and moves a storage into it in place.
#include <brasa/device/device_runtime.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../test_util.h"

namespace brasa {
namespace {

struct Mapping {
  void* ptr;
  size_t size;
  int fd;
};
void unmap(void* ctx) {
  auto* m = static_cast<Mapping*>(ctx);
  munmap(m->ptr, m->size);
  close(m->fd);
  delete m;
}
DataPtr map_fd(int fd, size_t nbytes) {
  size_t size = nbytes ? nbytes : 1;
  void* p = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  BRASA_CHECK(p != MAP_FAILED, "test memfd: mmap failed");
  return DataPtr(p, new Mapping{p, size, fd}, unmap, Device(kCPU), AllocationKind::Memfd);
}

class MemfdAllocator final : public Allocator {
 public:
  DataPtr allocate(size_t nbytes) override {
    int fd = memfd_create("brasa-test", MFD_CLOEXEC);
    BRASA_CHECK(fd >= 0 && ftruncate(fd, nbytes ? nbytes : 1) == 0, "test memfd: create failed");
    return map_fd(fd, nbytes);
  }
  AllocationHandle export_handle(const DataPtr& d, size_t nbytes) const override {
    AllocationHandle h;
    h.kind = AllocationKind::Memfd;
    h.device = d.device();
    h.nbytes = nbytes;
    h.fd = static_cast<Mapping*>(d.context())->fd;
    return h;
  }
};
DataPtr import_memfd(const AllocationHandle& h) { return map_fd(dup(h.fd), h.nbytes); }

TEST(Allocation, KindsOfOrdinaryMemory) {
  Tensor t = zeros({4});
  EXPECT_EQ(t.storage()->kind(), AllocationKind::Plain);
  float buf[3] = {1, 2, 3};
  Tensor b = from_blob(buf, {3});
  EXPECT_EQ(b.storage()->kind(), AllocationKind::External);
  EXPECT_ERROR("plain memory on cpu cannot be shared with another process",
               t.storage()->export_handle());
  EXPECT_ERROR("(from_blob or imported) cannot be exported", b.storage()->export_handle());
  AllocationHandle h;
  h.kind = AllocationKind::CUDAIpc;
  // Without CUDA there is no importer; with it, this empty handle is malformed.
  const char* expected = find_device_runtime(kCUDA) ? "CUDA IPC import: a malformed handle (0 bytes"
                                                    : "no importer for cuda ipc allocations";
  EXPECT_ERROR(expected, Storage::from_handle(h));
}

TEST(Allocation, MoveToAnExportableAllocatorInPlaceThenRebuildFromTheHandle) {
  static MemfdAllocator memfd;
  register_allocation_importer(AllocationKind::Memfd, import_memfd);
  Tensor t = arange(12, TensorOptions().dtype(kFloat)).view({3, 4});
  Tensor row = t[1];  // a view: must follow the move
  t.storage()->move_to(&memfd);
  EXPECT_EQ(t.storage()->kind(), AllocationKind::Memfd);
  EXPECT_EQ(row.storage()->kind(), AllocationKind::Memfd);
  EXPECT_VALUES(row, {4, 5, 6, 7});

  AllocationHandle h = t.storage()->export_handle();
  EXPECT_EQ(h.nbytes, 48u);
  Storage again = Storage::from_handle(h);  // a second mapping of the same memory
  Tensor u(make_intrusive<TensorImpl>(again, kFloat, IntArrayRef{12}, IntArrayRef{1}, 0));
  u[5].fill_(50);
  EXPECT_VALUES(row, {4, 50, 6, 7});

  // A child process writes through its own rebuilt mapping; the parent sees it.
  pid_t pid = fork();
  if (pid == 0) {
    Storage s = Storage::from_handle(h);
    static_cast<float*>(s->data())[0] = 42;
    _exit(0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  EXPECT_EQ(t[0][0].item<float>(), 42);
  // The importer stays registered: the library registers this same one at
  // start-up, and later tests in this process rely on it.
}

}  // namespace
}  // namespace brasa
