#pragma once
// The operating-system pieces of the shared-memory backend: each rank's
// segment (a memfd, so that a killed process leaks nothing: the kernel frees
// it with the last mapping), the peers' segments mapped through
// /proc/PID/fd/FD, futex sleeping on words inside them, and telling whether a
// peer process still lives (a pidfd). Internal to brasa_comm.

#include <brasa/tensor/storage.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <sys/types.h>

namespace brasa::distributed::shm_detail {

// A zero-filled memfd segment of `bytes` this process owns and maps.
Storage create_segment(size_t bytes);
// The descriptor of a segment create_segment made (valid while it lives).
int segment_fd(const Storage& segment);
// Maps the segment process `pid` holds open as descriptor `fd`. `what`
// names the peer in errors.
Storage map_peer_segment(pid_t pid, int fd, size_t bytes, const std::string& what);

// Sleeps while *word == expected, at most `timeout`, across processes.
void futex_wait(std::atomic<uint32_t>* word, uint32_t expected, std::chrono::nanoseconds timeout);
// Wakes every process sleeping on `word`.
void futex_wake_all(std::atomic<uint32_t>* word);

// A peer process, watched through a pidfd (or kill(pid, 0) where the kernel
// has no pidfds).
class PeerProcess {
 public:
  PeerProcess() = default;
  explicit PeerProcess(pid_t pid);
  ~PeerProcess();
  PeerProcess(PeerProcess&& o) noexcept;
  PeerProcess& operator=(PeerProcess&& o) noexcept;
  PeerProcess(const PeerProcess&) = delete;
  PeerProcess& operator=(const PeerProcess&) = delete;

  pid_t pid() const { return pid_; }
  bool alive() const;

 private:
  pid_t pid_ = -1;
  int pidfd_ = -1;
};

// The number of CPUs this process may run on.
int usable_cpus();

// Spins one short pause (a PAUSE instruction where there is one).
inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

}  // namespace brasa::distributed::shm_detail
