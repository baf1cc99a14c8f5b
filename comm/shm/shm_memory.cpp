#include "shm_memory.h"

#include <brasa/comm/errors.h>
#include <brasa/tensor/shared_memory.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif

namespace brasa::distributed::shm_detail {

Storage create_segment(size_t bytes) { return Storage::allocate(bytes, memfd_allocator()); }

int segment_fd(const Storage& segment) { return segment->export_handle().fd; }

Storage map_peer_segment(pid_t pid, int fd, size_t bytes, const std::string& what) {
  const std::string path = "/proc/" + std::to_string(pid) + "/fd/" + std::to_string(fd);
  int mine = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (mine < 0) {
    const int err = errno;
    BRASA_DIST_THROW(DistError, "ProcessGroupShm: cannot open the shared memory of ", what, " (",
                     path, ": ", std::strerror(err),
                     "); the shm backend needs every rank on one host, in one PID namespace, "
                     "under one user");
  }
  return import_shared_memory(mine, bytes, nullptr, nullptr);  // owns `mine` now
}

void futex_wait(std::atomic<uint32_t>* word, uint32_t expected, std::chrono::nanoseconds timeout) {
  const auto ns = timeout.count() > 0 ? timeout.count() : 0;
  timespec ts{static_cast<time_t>(ns / 1000000000), static_cast<long>(ns % 1000000000)};
  // Shared (not FUTEX_PRIVATE): the word lives in memory other processes map.
  ::syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), FUTEX_WAIT, expected, &ts, nullptr, 0);
}

void futex_wake_all(std::atomic<uint32_t>* word) {
  ::syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), FUTEX_WAKE, INT_MAX, nullptr, nullptr, 0);
}

PeerProcess::PeerProcess(pid_t pid) : pid_(pid) {
  pidfd_ = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
}

PeerProcess::~PeerProcess() {
  if (pidfd_ >= 0) ::close(pidfd_);
}

PeerProcess::PeerProcess(PeerProcess&& o) noexcept : pid_(o.pid_), pidfd_(o.pidfd_) {
  o.pidfd_ = -1;
}

PeerProcess& PeerProcess::operator=(PeerProcess&& o) noexcept {
  if (this != &o) {
    if (pidfd_ >= 0) ::close(pidfd_);
    pid_ = o.pid_;
    pidfd_ = o.pidfd_;
    o.pidfd_ = -1;
  }
  return *this;
}

bool PeerProcess::alive() const {
  if (pid_ <= 0) return true;
  if (pidfd_ >= 0) {  // readable once the process has exited
    pollfd p{pidfd_, POLLIN, 0};
    return ::poll(&p, 1, 0) == 0;
  }
  return !(::kill(pid_, 0) != 0 && errno == ESRCH);
}

int usable_cpus() {
  cpu_set_t set;
  if (::sched_getaffinity(0, sizeof set, &set) == 0) return CPU_COUNT(&set);
  const long n = ::sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? static_cast<int>(n) : 1;
}

}  // namespace brasa::distributed::shm_detail
