#pragma once
// Intra-op parallelism: one fork-safe pool, parallel_for, and BLAS kept in step.
// With N threads configured at most N threads compute: the caller works as one
// of them, BLAS is pinned to one thread and parallelized by us, and nested
// parallel_for calls run inline.
#include <cstdint>
#include <functional>

namespace brasa {

void set_num_threads(int n);
int get_num_threads();
bool in_parallel_region();

// While alive, parallel_for on this thread runs inline (for helper threads,
// such as data-loader workers, that must not compete for the op pool).
class InlineParallelGuard {
 public:
  InlineParallelGuard();
  ~InlineParallelGuard();
  InlineParallelGuard(const InlineParallelGuard&) = delete;
  InlineParallelGuard& operator=(const InlineParallelGuard&) = delete;

 private:
  bool prev_;
};

namespace detail {
void pin_blas_threads();
void parallel_run(int64_t begin, int64_t end, int64_t grain,
                  const std::function<void(int64_t, int64_t)>& fn);
}  // namespace detail

// Runs fn(b, e) over disjoint chunks covering [begin, end), each at least `grain`
// long (but the last), on up to get_num_threads() threads. Exceptions thrown by
// fn are rethrown on the caller after every chunk finished.
template <class F>
inline void parallel_for(int64_t begin, int64_t end, int64_t grain, const F& fn) {
  if (begin >= end) return;
  if (end - begin <= grain || get_num_threads() == 1 || in_parallel_region()) {
    fn(begin, end);
    return;
  }
  detail::parallel_run(begin, end, grain, std::function<void(int64_t, int64_t)>(fn));
}

}  // namespace brasa
