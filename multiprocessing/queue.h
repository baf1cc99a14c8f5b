#pragma once
// Queue: messages between processes (torch.multiprocessing.Queue). A message
// is an IValue — a tensor, a list of tensors, a string-keyed dict of tensors
// (a state_dict), an int, a double, a bool, a string or a list of ints.
// Tensors travel by handle: their storages are moved to shared memory first
// when they are not there yet (share_memory_(), in place, as PyTorch does),
// and the receiver maps the same memory — writes on either side are seen on
// the other. Tensors of one message that share a storage arrive sharing one
// storage. A leaf's requires_grad and its .grad (shared too) travel along.
//
// Make the queue before the processes start (fork copies it into each; a
// child of the spawn start method gets it with ProcessOptions().queues and
// inherited_queue, see processes.h); any process may put and get. The transport is a Unix
// SOCK_SEQPACKET socket pair: each message is one packet (metadata only), the storages' descriptors
// ride along (SCM_RIGHTS); storages of the file_system sharing strategy travel by name, kept alive
// while in the queue by a reference in the name of the process that made it. That process drops the
// messages still queued when it destroys the queue: destroy it after the readers are done.
//
//   mp::Queue q;
//   q.put(torch::IValue(x));               // x.is_shared() afterwards
//   mp::spawn([&](int) { torch::Tensor t = q.get().toTensor(); t.add_(1); }, 2);

#include <brasa/util/ivalue.h>

#include <sys/types.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace brasa::multiprocessing {

class Queue;
namespace detail {
// What a re-executed child needs to reach a queue: its socket pair and the
// process that made it.
struct QueueEnds {
  int send_fd;
  int recv_fd;
  pid_t keeper;
};
QueueEnds queue_ends(const Queue& q);
// A queue over ends inherited from the parent (closed with it).
std::unique_ptr<Queue> adopt_queue(const QueueEnds& ends);
}  // namespace detail

class Queue {
 public:
  Queue();
  ~Queue();
  Queue(const Queue&) = delete;
  Queue& operator=(const Queue&) = delete;

  // Blocks while the queue is full; with a timeout, throws when it passes.
  void put(const IValue& message, std::optional<std::chrono::milliseconds> timeout = std::nullopt);
  // Blocks until a message arrives; with a timeout, throws when it passes.
  IValue get(std::optional<std::chrono::milliseconds> timeout = std::nullopt);
  // Non-blocking: nullopt when there is no message now.
  std::optional<IValue> get_nowait();

 private:
  void send(const std::string& bytes, const std::vector<int>& fds,
            std::optional<std::chrono::milliseconds> timeout);
  int send_fd_ = -1;
  int recv_fd_ = -1;
  pid_t keeper_ = 0;  // the process that made the queue

  struct Adopted {};
  Queue(Adopted, const detail::QueueEnds& ends);
  friend detail::QueueEnds detail::queue_ends(const Queue& q);
  friend std::unique_ptr<Queue> detail::adopt_queue(const detail::QueueEnds& ends);
};

// torch.multiprocessing.SimpleQueue: the same queue.
using SimpleQueue = Queue;

}  // namespace brasa::multiprocessing
