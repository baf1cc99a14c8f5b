#pragma once
// Shared memory for tensors (torch.multiprocessing's file_descriptor
// strategy): storages moved here by share_memory_() live in a memfd — an
// anonymous file the kernel frees when the last mapping and descriptor are
// gone, so a process killed at any point leaks nothing — and travel to
// other processes as that descriptor (multiprocessing::Queue passes it over
// a Unix socket). Space is reserved when the memory is made (fallocate), so
// a full shared-memory limit is an error here, never a SIGBUS later.
#include <brasa/tensor/storage.h>

namespace brasa {

// Allocates memfd-backed host memory (AllocationKind::Memfd); exports it as
// a handle holding the descriptor. Every such allocation keeps one
// descriptor open (ulimit -n bounds how many storages can be shared).
Allocator* memfd_allocator();

// The allocator share_memory_() moves storages to: memfd_allocator() unless
// the multiprocessing layer's set_sharing_strategy("file_system") installed
// its named-segment allocator (nullptr restores memfd).
Allocator* shared_memory_allocator();
void set_shared_memory_allocator(Allocator* allocator);

// Born-shareable storages: CPU allocations of at least `min_bytes` come from
// memfd memory (no transparent huge pages), so that share_memory_() on them
// moves nothing; 0 turns it off (the default; the environment variable
// BRASA_SHAREABLE_CPU_MB sets it at start-up).
void set_shareable_cpu_allocations(size_t min_bytes);
size_t shareable_cpu_allocations();

// Shared memory this process made and never handed to another process
// (exported, or present at a fork) is kept after free for reuse, up to
// BRASA_SHM_CACHE_MB (default 512) MiB; this gives it back to the kernel.
void release_cached_shared_memory();
size_t cached_shared_memory();

// Refuses (brasa::Error) a shared allocation larger than what the memory
// cgroup or the machine has left: the kernel would OOM-kill the process
// while reserving it instead of failing.
void check_shared_memory_room(size_t nbytes);

// Whether `kind` is memory another process can map (memfd, named segment, CUDA).
bool is_shareable_kind(AllocationKind kind);

// Maps a received memfd `fd` (the storage owns it from now on) of `nbytes`.
// `on_release(arg)` runs when the storage's memory is released, before it
// is unmapped (a cache of received storages forgets it there).
Storage import_shared_memory(int fd, size_t nbytes, void (*on_release)(void*), void* arg);

}  // namespace brasa
