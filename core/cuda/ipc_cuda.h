#pragma once
// CUDA tensors between processes (the CUDA side of ipc_sharing.h): the
// producer exports a block as its segment's IPC handle, the offset, an
// interprocess event recorded on its current stream and its consumer slot;
// the consumer (import, registered for AllocationKind::CUDAIpc) opens the
// segment once, makes its current stream wait for the event, and on release
// waits for its own stream before handing the reference back.
#include <brasa/cuda/ipc_sharing.h>
#include <brasa/tensor/storage.h>

namespace brasa::cuda {

IpcProducer& ipc_producer();
// The handle of memory from the CUDA caching allocator (Allocator::export_handle).
AllocationHandle export_ipc_handle(const DataPtr& data, size_t nbytes);

}  // namespace brasa::cuda
