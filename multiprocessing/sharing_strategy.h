#pragma once
// How share_memory_() shares storages (torch.multiprocessing's sharing
// strategies):
//
// - "file_descriptor" (the default): a memfd per storage, passed to other
//   processes over the queue's socket. The kernel frees it when the last
//   mapping and descriptor are gone, so nothing can leak — but every shared
//   storage keeps one descriptor open (ulimit -n bounds how many).
// - "file_system": a named POSIX shared-memory segment per storage
//   (Boost.Interprocess, /dev/shm/brasa_fs_*), passed by name; it keeps no
//   descriptor open. A header in each segment counts references per process
//   (pid and start time); the last process to release its references
//   removes the name, and a sweep removes segments whose holders all died
//   (run when the strategy is chosen, at a process's first segment, and when
//   start_processes reaps a child that was killed).
//
//   mp::set_sharing_strategy("file_system");
//   x.share_memory_();          // now in /dev/shm/brasa_fs_<pid>_...
//
// Storages already shared keep the strategy they were made with.

#include <brasa/tensor/storage.h>
#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

namespace brasa::multiprocessing {

void set_sharing_strategy(const std::string& strategy);
std::string get_sharing_strategy();
std::vector<std::string> get_all_sharing_strategies();

// Removes the named segments (of any process) whose holders have all died;
// returns how many it removed.
size_t sweep_shared_memory();

namespace detail {

// The named-segment allocator behind "file_system" (AllocationKind::NamedSegment).
Allocator* named_segment_allocator();

// A process, told apart from a later one with the same pid by its start time.
struct ProcessId {
  pid_t pid = 0;
  uint64_t start = 0;
};
ProcessId this_process();

// A message in a queue keeps its segments alive between put and get by a
// reference in the name of `keeper` (the process that made the queue: while
// it lives, a receiver may still come). The sender adds it once the message
// is sent — until then its own reference keeps the segment — and the
// receiver takes it over when it maps the segment, or drops it when the
// message cannot be decoded. A receiver faster than the sender's bookkeeping
// leaves the keeper's count below zero for a moment; a sender that died in
// between never adds it, so the receiver gives it back.
void hold_for_transfer(const StorageImpl& storage, pid_t keeper);
Storage import_named_segment(const std::string& name, size_t nbytes, pid_t keeper, ProcessId sender,
                             void (*on_release)(void*), void* arg);
void drop_transfer_hold(const std::string& name, pid_t keeper, ProcessId sender);
// The same, for a segment this process has mapped already.
void drop_transfer_hold(const StorageImpl& storage, pid_t keeper, ProcessId sender);
// At exit a process gives up the references it still holds — its own, and
// those it keeps for queued messages (a receiver killed while taking a
// message leaves that one to its keeper) — removing what nobody else holds.
// Registered by the first named segment or queue of a process; children of
// start_processes call it before they exit.
void release_process_references();
void release_references_at_exit();

// The segment name behind a NamedSegment storage.
std::string segment_name(const StorageImpl& storage);

}  // namespace detail

}  // namespace brasa::multiprocessing
