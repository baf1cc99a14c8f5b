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
Allocator* shared_memory_allocator();

// Whether `kind` is memory another process can map (memfd, named segment, CUDA).
bool is_shareable_kind(AllocationKind kind);

// Maps a received memfd `fd` (the storage owns it from now on) of `nbytes`.
// `on_release(arg)` runs when the storage's memory is released, before it
// is unmapped (a cache of received storages forgets it there).
Storage import_shared_memory(int fd, size_t nbytes, void (*on_release)(void*), void* arg);

}  // namespace brasa
