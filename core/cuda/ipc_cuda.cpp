#include <brasa/cuda/cuda_check.h>
#include <brasa/cuda/cuda_runtime.h>
#include <brasa/cuda/event.h>
#include <brasa/cuda/ipc_cuda.h>
#include <brasa/cuda/memory.h>
#include <brasa/cuda/stream.h>

#include <unistd.h>

#include <cstring>

namespace brasa::cuda {
namespace {

// What travels in AllocationHandle::name.
struct IpcPayload {
  cudaIpcMemHandle_t memory;
  cudaIpcEventHandle_t event;
  int64_t slot_index;
  uint64_t slot_file_bytes;
};

IpcHandleCache& handle_cache() {
  static IpcHandleCache* cache = new IpcHandleCache(
      [](const std::string& handle) -> void* {
        cudaIpcMemHandle_t h;
        std::memcpy(&h, handle.data(), sizeof h);
        void* base = nullptr;
        BRASA_CUDA_CHECK("CUDA IPC import",
                         cudaIpcOpenMemHandle(&base, h, cudaIpcMemLazyEnablePeerAccess));
        return base;
      },
      [](void* base) { cudaIpcCloseMemHandle(base); });
  return *cache;
}

// A received tensor's memory: its reference and the segment it lies in.
struct Imported {
  std::string handle;
  std::unique_ptr<IpcConsumerRef> ref;
  int8_t device;
};

void release_imported(void* ctx) {
  std::unique_ptr<Imported> im(static_cast<Imported*>(ctx));
  // Work queued here on the memory must finish before the producer may reuse it.
  cudaSetDevice(im->device);
  cudaStreamSynchronize(getCurrentCUDAStream(im->device).stream());
  im->ref.reset();
  handle_cache().release(im->handle);
}

DataPtr import_ipc(const AllocationHandle& h) {
  if (h.name.size() != sizeof(IpcPayload) && h.fd >= 0) close(h.fd);
  BRASA_CHECK(h.name.size() == sizeof(IpcPayload), "CUDA IPC import: a malformed handle (",
              h.name.size(), " bytes, expected ", sizeof(IpcPayload), ")");
  lazy_init("CUDA IPC import");
  IpcPayload p;
  std::memcpy(&p, h.name.data(), sizeof p);
  const int8_t device = h.device.has_index() ? h.device.index() : 0;
  CUDAGuard guard(device);
  auto im = std::make_unique<Imported>();
  im->device = device;
  // The descriptor is owned from here on, even when opening the memory fails.
  im->ref = std::make_unique<IpcConsumerRef>(IpcSlot{h.fd, p.slot_file_bytes, p.slot_index});
  im->handle.assign(reinterpret_cast<const char*>(&p.memory), sizeof p.memory);
  char* base = static_cast<char*>(handle_cache().acquire(im->handle));
  try {
    CUDAEvent produced(device, p.event);
    produced.block(getCurrentCUDAStream(device));
  } catch (...) {
    handle_cache().release(im->handle);
    throw;
  }
  char* data = base + h.offset;
  return DataPtr(data, im.release(), &release_imported, Device(kCUDA, device),
                 AllocationKind::CUDAIpc);
}

struct RegisterImporter {
  RegisterImporter() { register_allocation_importer(AllocationKind::CUDAIpc, import_ipc); }
} register_importer;

}  // namespace

IpcProducer& ipc_producer() {
  static IpcProducer* p = new IpcProducer;  // never destroyed: frees run until exit
  return *p;
}

AllocationHandle export_ipc_handle(const DataPtr& data, size_t nbytes) {
  Block* b = block_of(data);
  BRASA_CHECK(b != nullptr, "CUDA IPC: only memory of the CUDA caching allocator can be shared");
  CUDAGuard guard(static_cast<DeviceIndex>(b->device));
  char* base = caching_allocator().segment_base(b);
  IpcPayload p;
  BRASA_CUDA_CHECK("CUDA IPC export", cudaIpcGetMemHandle(&p.memory, base));
  // The consumer's stream waits for the work queued so far on ours.
  auto event = std::make_shared<CUDAEvent>(false, false, /*interprocess=*/true);
  event->record(getCurrentCUDAStream(static_cast<DeviceIndex>(b->device)));
  p.event = event->ipc_handle();
  ipc_producer().collect();
  const IpcSlot slot = ipc_producer().add_consumer(b, event);
  p.slot_index = slot.index;
  p.slot_file_bytes = slot.file_bytes;
  AllocationHandle h;
  h.kind = AllocationKind::CUDAIpc;
  h.device = Device(kCUDA, static_cast<int8_t>(b->device));
  h.nbytes = nbytes;
  h.offset = static_cast<size_t>(static_cast<char*>(data.get()) - base);
  h.fd = slot.fd;
  h.name.assign(reinterpret_cast<const char*>(&p), sizeof p);
  return h;
}

}  // namespace brasa::cuda
