#pragma once
// The caching allocator's figures and controls, as torch.cuda has them
// (memory_allocated, memory_stats, empty_cache, ...). -1 names the current
// device. BRASA_NO_CUDA_MEMORY_CACHING=1 turns caching off (every block is
// its own cudaMalloc, for compute-sanitizer and other memory checkers).
#include <brasa/cuda/caching_allocator_core.h>
#include <brasa/tensor/storage.h>

#include <cstdint>
#include <map>
#include <string>

namespace brasa::cuda {

int64_t memory_allocated(int device = -1);
int64_t max_memory_allocated(int device = -1);
int64_t memory_reserved(int device = -1);
int64_t max_memory_reserved(int device = -1);
// "allocated_bytes.all.current", "num_alloc_retries", ... as in PyTorch.
std::map<std::string, int64_t> memory_stats(int device = -1);
void reset_peak_memory_stats(int device = -1);
void reset_accumulated_memory_stats(int device = -1);
// Also frees the blocks sent to other processes whose consumers are all done.
void empty_cache();
// Frees those blocks now (torch.cuda.ipc_collect); returns how many still wait.
size_t ipc_collect();
void set_per_process_memory_fraction(double fraction, int device = -1);
// Free and total memory of the device, as cudaMemGetInfo gives them.
std::pair<size_t, size_t> mem_get_info(int device = -1);
// The caching allocator itself (for record_stream and the IPC layer).
CachingAllocatorCore& caching_allocator();
// Marks the memory of `data` (from the CUDA allocator) as used by `stream`.
void record_stream(const DataPtr& data, int64_t stream_id);
// The block behind a CUDA allocation (null for memory of another allocator).
Block* block_of(const DataPtr& data);

}  // namespace brasa::cuda
