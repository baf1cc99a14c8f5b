#pragma once
// Helpers of the multiprocessing tests.
#include <brasa/torch.h>
#include <dirent.h>
#include <signal.h>

#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace brasa::testing {

// Checks inside children throw: spawn turns that into an exception in the
// parent, naming the child, so a failed check fails the test.
inline void require(bool ok, const std::string& what) {
  if (!ok) throw std::runtime_error("check failed in the child: " + what);
}

// The descriptors this process has open.
inline int open_fds() {
  int n = 0;
  DIR* d = opendir("/proc/self/fd");
  while (readdir(d)) ++n;
  closedir(d);
  return n;
}

// Starts `kills` children one after another that send and receive shared
// tensors in a tight loop, SIGKILLs each at a random point and drains what
// it sent (received, or gone with it when it died in the middle of a put
// of a named segment). Returns the children's pids.
inline std::vector<pid_t> kill_children_while_sharing(int kills, unsigned seed) {
  namespace mp = brasa::multiprocessing;
  std::mt19937 rng(seed);
  std::vector<pid_t> pids;
  for (int i = 0; i < kills; ++i) {
    mp::Queue q, back;
    auto ctx = mp::start_processes(
        [&](int) {
          for (int k = 0;; ++k) {
            back.put(IValue(full({256}, 1.0 * k)));
            if (auto v = q.get_nowait()) v->toTensor().add_(1);
          }
        },
        1, mp::ProcessOptions().join(false));
    pids.push_back(ctx.pids()[0]);
    q.put(IValue(zeros({1024})));
    std::this_thread::sleep_for(std::chrono::microseconds(rng() % 3000));
    kill(ctx.pids()[0], SIGKILL);
    try {
      ctx.join();
    } catch (const mp::ProcessExitedException& e) {
      require(e.signal_name == "SIGKILL", "killed by SIGKILL, not " + e.signal_name);
    }
    for (;;) {
      try {
        if (!back.get_nowait()) break;
      } catch (const Error& e) {
        require(std::string(e.what()).find("no longer exists") != std::string::npos, e.what());
      }
    }
  }
  return pids;
}

}  // namespace brasa::testing
