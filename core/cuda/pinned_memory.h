#pragma once
// Page-locked host memory (Tensor::pin_memory): blocks from cudaHostAlloc,
// cached by size and reused, but only once the asynchronous copies that used
// a block (recorded with record_pinned_use) are done, so that freeing a
// pinned tensor right after a non_blocking copy never lets new data
// overwrite what the device has not read yet. Freeing never synchronises.
#include <brasa/tensor/storage.h>
#include <cuda_runtime_api.h>

#include <cstdint>

namespace brasa::cuda {

Allocator& pinned_allocator();
bool is_pinned(const DataPtr& d);
// Work now queued on `stream` uses the pinned block of `d`.
void record_pinned_use(const DataPtr& d, cudaStream_t stream);

struct PinnedMemoryStats {
  int64_t host_allocs = 0;    // cudaHostAlloc calls
  int64_t cached_blocks = 0;  // free blocks kept for reuse
  int64_t in_use_bytes = 0;
};
PinnedMemoryStats pinned_memory_stats();
// Frees the cached blocks whose copies are done (cudaFreeHost).
void empty_pinned_cache();

}  // namespace brasa::cuda
