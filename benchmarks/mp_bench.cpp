// Tensors between processes (scripts/bench mp runs it beside
// mp_bench_torch.py, torch.multiprocessing 1.13). Rank-free: the program
// forks its own child. Prints `result brasa <what> <bytes> <ms>`:
//   handoff_shared   put of an already-shared tensor until the child has it
//                    mapped (measured as a round trip with a one-int reply)
//   handoff_unshared the same for a fresh ordinary tensor (moved to shared
//                    memory by put)
//   share_memory     share_memory_() of a fresh ordinary tensor, in a loop
//                    (from the second on, the shared pages the previous
//                    one freed are reused, up to BRASA_SHM_CACHE_MB)
//   share_memory_fresh  the same with no pages to reuse (the cache emptied
//                    before each): what the first one costs
//   shm_pages        making as many fresh shared pages alone (the memfd
//                    allocator, nothing copied, nothing reused): the
//                    kernel's cost that share_memory_fresh cannot go below
#include <brasa/torch.h>
#include <brasa/util/cli.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

using namespace brasa;
namespace mp = brasa::multiprocessing;

namespace {

double now_ms() {
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

double best(std::vector<double> v) { return *std::min_element(v.begin(), v.end()); }

}  // namespace

int main(int argc, char** argv) {
  brasa::cli::Parser(
      "mp_bench", "Tensors between processes: queue handoff and share_memory_ (see scripts/bench).")
      .parse_or_exit(argc, argv);
  // The default thread count (the machine's cores): share_memory_ builds the
  // shared pages on the op pool. (torch's share_memory_ is one memcpy on one
  // thread whatever its thread count.)
  mp::Queue to_child, to_parent;
  auto child = mp::start_processes(
      [&](int) {
        for (;;) {
          IValue v = to_child.get();
          if (v.isNone()) return;
          Tensor t = v.toTensor();
          to_parent.put(IValue(static_cast<int64_t>(t.numel())));
        }
      },
      1, mp::ProcessOptions().join(false));
  for (int64_t mib : {1, 64, 1024}) {
    const int64_t n = mib * 1024 * 1024 / 4;
    const int reps = mib >= 1024 ? 3 : 10;
    Tensor shared = ones({n});
    shared.share_memory_();
    std::vector<double> handoff, unshared, share, share_fresh, pages;
    for (int r = 0; r < reps + 1; ++r) {
      double t0 = now_ms();
      to_child.put(IValue(shared));
      to_parent.get();
      if (r > 0) handoff.push_back(now_ms() - t0);
    }
    for (int r = 0; r < reps; ++r) {
      Tensor fresh = ones({n});
      double t0 = now_ms();
      to_child.put(IValue(fresh));
      to_parent.get();
      unshared.push_back(now_ms() - t0);
    }
    for (int r = 0; r < reps; ++r) {
      Tensor fresh = ones({n});
      double t0 = now_ms();
      fresh.share_memory_();
      share.push_back(now_ms() - t0);
    }
    for (int r = 0; r < reps; ++r) {
      Tensor fresh = ones({n});
      release_cached_shared_memory();
      double t0 = now_ms();
      fresh.share_memory_();
      share_fresh.push_back(now_ms() - t0);
    }
    const int64_t bytes = n * 4;
    for (int r = 0; r < reps; ++r) {
      release_cached_shared_memory();
      double t0 = now_ms();
      DataPtr fresh = memfd_allocator()->allocate(static_cast<size_t>(bytes));
      pages.push_back(now_ms() - t0);
    }
    std::printf("result brasa handoff_shared %ld %.3f\n", static_cast<long>(bytes), best(handoff));
    std::printf("result brasa handoff_unshared %ld %.3f\n", static_cast<long>(bytes),
                best(unshared));
    std::printf("result brasa share_memory %ld %.3f\n", static_cast<long>(bytes), best(share));
    std::printf("result brasa share_memory_fresh %ld %.3f\n", static_cast<long>(bytes),
                best(share_fresh));
    std::printf("result brasa shm_pages %ld %.3f\n", static_cast<long>(bytes), best(pages));
    std::fflush(stdout);
  }
  to_child.put(IValue());
  child.join();
  return 0;
}
