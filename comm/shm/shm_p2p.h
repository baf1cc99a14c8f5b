#pragma once
// Point-to-point messages of ProcessGroupShm: one byte ring per ordered pair
// of ranks, in the sender's segment. A message is a 16-byte header (tag,
// size) and its bytes, streamed through the ring as room frees up. One
// thread per group moves them: it writes the queued sends, reads every
// incoming ring, matches messages to posted receives by source and tag (in
// order), and keeps the unmatched ones until a receive asks. It sleeps on
// this rank's doorbell, which peers ring when they move a ring's ends.
// Internal to brasa_comm.

#include <brasa/comm/shm/process_group_shm.h>

#include <condition_variable>
#include <deque>
#include <list>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "shm_impl.h"

namespace brasa::distributed {

struct ProcessGroupShm::P2P {
  explicit P2P(shm_detail::Group& group);
  ~P2P();

  struct Op {
    std::shared_ptr<Work> work;
    Tensor target, staging;  // staging: the contiguous bytes sent or received
    int peer = -1;           // -1: any source
    int tag = 0;
    uint64_t done = 0;  // bytes moved (sends: header included)
  };
  // A message that arrived before a receive asked for it.
  struct Early {
    int source = -1, tag = 0;
    std::vector<char> bytes;
    uint64_t got = 0;
    std::shared_ptr<Op> waiting;  // a receive matched while it still arrives
  };
  // The message being read from one source.
  struct Incoming {
    bool active = false;
    int tag = 0;
    uint64_t size = 0, got = 0;
    std::shared_ptr<Op> recv;          // where it goes, or
    std::list<Early>::iterator early;  // (when recv is null) kept here
    bool discard = false;              // a receive refused it (size mismatch)
  };

  void post(const std::shared_ptr<Op>& op, bool is_send);
  void abort(const std::string& reason);
  shm_detail::Group* group() { return &g; }

 private:
  void loop();
  bool pump_send(int dst);
  bool pump_receive(int src);
  void fail_stranded();
  void ring_own_bell();
  void finish(const std::shared_ptr<Op>& op, std::exception_ptr error = nullptr);
  std::shared_ptr<Op> match_posted(int source, int tag, uint64_t size, bool& refused);

  shm_detail::Group& g;
  std::mutex mu;
  std::vector<std::deque<std::shared_ptr<Op>>> sends;  // per destination
  std::deque<std::shared_ptr<Op>> receives;            // posted, unmatched
  std::list<Early> early;
  std::vector<Incoming> incoming;  // per source
  bool stop = false;
  std::thread thread;  // started with the first message
};

}  // namespace brasa::distributed
