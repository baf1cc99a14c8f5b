#include <brasa/util/error.h>
#include <brasa/util/parallel.h>
#include <pthread.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

extern "C" void openblas_set_num_threads(int);

namespace brasa {
namespace {

thread_local bool tls_in_parallel = false;

// Between jobs, workers spin briefly (a job often follows within
// microseconds) and then sleep on a condition variable, so an idle pool costs
// no CPU. Waking a sleeping thread takes tens of microseconds on a VM, which
// would otherwise make 2 threads slower than 1 on small ops.
class ThreadPool {
 public:
  explicit ThreadPool(int workers) {
    // Each worker starts from generation 0, the pool's at construction, not
    // from whatever it reads when the thread first runs: the caller may run
    // a job alone and destroy the pool before a worker is scheduled, and a
    // worker that took the final generation as already seen would sleep
    // through the stop and hang the destructor's join.
    for (int i = 0; i < workers; ++i) threads_.emplace_back([this] { loop(0); });
  }
  ~ThreadPool() {
    {
      std::lock_guard<std::mutex> g(mu_);
      stop_ = true;
      gen_.fetch_add(1);
    }
    cv_.notify_all();
    for (auto& t : threads_) t.join();
  }
  int size() const { return static_cast<int>(threads_.size()) + 1; }

  // Runs task(0..nchunks-1); the caller takes chunks too.
  void run(int nchunks, const std::function<void(int)>& task) {
    bool wake;
    uint64_t gen;
    {
      std::lock_guard<std::mutex> g(mu_);
      task_ = &task;
      nchunks_ = nchunks;
      remaining_.store(nchunks);
      gen = gen_.fetch_add(1, std::memory_order_acq_rel) + 1;
      claim_.store((gen & 0xffffffffu) << 32, std::memory_order_release);
      wake = sleepers_ > 0;
    }
    if (wake) cv_.notify_all();
    work(task, gen, nchunks);
    // Wait for the chunks other threads took: they are already running.
    while (remaining_.load(std::memory_order_acquire) > 0) spin_pause();
  }

 private:
  static void spin_pause() { __builtin_ia32_pause(); }

  // Claims chunks of job `gen` until none are left. The claim word holds the
  // job's generation next to the chunk counter, so a worker that arrives after
  // its job ended (and a new one began) can never run the old task.
  void work(const std::function<void(int)>& task, uint64_t gen, int nchunks) {
    const uint64_t tag = (gen & 0xffffffffu) << 32;
    for (;;) {
      uint64_t v = claim_.load(std::memory_order_acquire);
      if ((v & ~uint64_t(0xffffffffu)) != tag) return;
      int c = static_cast<int>(v & 0xffffffffu);
      if (c >= nchunks) return;
      if (!claim_.compare_exchange_weak(v, v + 1, std::memory_order_acq_rel)) continue;
      task(c);
      remaining_.fetch_sub(1, std::memory_order_release);
    }
  }

  void loop(uint64_t seen) {
    for (;;) {
      auto start = std::chrono::steady_clock::now();
      while (gen_.load(std::memory_order_acquire) == seen) {
        spin_pause();
        if (std::chrono::steady_clock::now() - start > std::chrono::microseconds(300)) break;
      }
      std::unique_lock<std::mutex> lk(mu_);
      if (gen_.load() == seen) {
        ++sleepers_;
        cv_.wait(lk, [&] { return gen_.load() != seen || stop_; });
        --sleepers_;
      }
      if (stop_) return;
      seen = gen_.load();
      const auto* task = task_;
      int nchunks = nchunks_;
      lk.unlock();
      work(*task, seen, nchunks);
    }
  }

  std::vector<std::thread> threads_;
  std::mutex mu_;
  std::condition_variable cv_;
  const std::function<void(int)>* task_ = nullptr;
  int nchunks_ = 0;
  std::atomic<int> remaining_{0};
  std::atomic<uint64_t> gen_{0}, claim_{0};
  int sleepers_ = 0;
  bool stop_ = false;
};

int default_threads() {
  if (const char* env = std::getenv("OMP_NUM_THREADS")) {
    int n = std::atoi(env);
    if (n > 0) return n;
  }
  return std::max(1u, std::thread::hardware_concurrency());
}

std::mutex g_pool_mu;          // guards creation/replacement of the pool
std::mutex g_run_mu;           // one parallel job at a time on the pool
ThreadPool* g_pool = nullptr;  // leaked on purpose in forked children
std::atomic<int> g_num_threads{0};

void after_fork_in_child() {
  // The pool's threads do not exist in the child; forget them (their memory
  // is leaked, not freed, since their mutexes may be held) and run serially.
  g_pool = nullptr;
  new (&g_pool_mu) std::mutex();
  new (&g_run_mu) std::mutex();
  g_num_threads.store(1);
}

struct Init {
  Init() { pthread_atfork(nullptr, nullptr, after_fork_in_child); }
} g_init;

ThreadPool& pool_for(int n) {
  std::lock_guard<std::mutex> g(g_pool_mu);
  if (!g_pool || g_pool->size() != n) {
    delete g_pool;
    g_pool = new ThreadPool(n - 1);
  }
  return *g_pool;
}

}  // namespace

void set_num_threads(int n) {
  BRASA_CHECK(n > 0, "set_num_threads: expected a positive number of threads, got ", n);
  detail::pin_blas_threads();
  std::lock_guard<std::mutex> run(g_run_mu);
  g_num_threads.store(n);
  std::lock_guard<std::mutex> g(g_pool_mu);
  if (g_pool && g_pool->size() != n) {
    delete g_pool;
    g_pool = nullptr;
  }
}

int get_num_threads() {
  int n = g_num_threads.load(std::memory_order_relaxed);
  if (n == 0) {
    int expected = 0;
    g_num_threads.compare_exchange_strong(expected, default_threads());
    n = g_num_threads.load();
  }
  return n;
}

bool in_parallel_region() { return tls_in_parallel; }

namespace detail {
// BLAS never starts threads of its own: gemm is split across our pool. Done on
// first use rather than at load time, so that merely linking Brasa changes
// nothing for other users of OpenBLAS in the process.
void pin_blas_threads() {
  static std::once_flag once;
  std::call_once(once, [] { openblas_set_num_threads(1); });
}

void parallel_run(int64_t begin, int64_t end, int64_t grain,
                  const std::function<void(int64_t, int64_t)>& fn) {
  int n = get_num_threads();
  int64_t range = end - begin;
  int64_t max_chunks =
      std::max<int64_t>(1, (range + std::max<int64_t>(grain, 1) - 1) / std::max<int64_t>(grain, 1));
  // Up to 4 chunks per thread, taken dynamically: a worker that wakes late
  // still finds work instead of leaving everything to the caller.
  int nchunks = static_cast<int>(std::min<int64_t>(4 * n, max_chunks));
  if (nchunks <= 1) {
    fn(begin, end);
    return;
  }
  int64_t chunk = (range + nchunks - 1) / nchunks;
  std::exception_ptr err;
  std::mutex err_mu;
  std::function<void(int)> task = [&](int c) {
    int64_t b = begin + c * chunk, e = std::min(end, b + chunk);
    if (b >= e) return;
    bool prev = tls_in_parallel;
    tls_in_parallel = true;
    try {
      fn(b, e);
    } catch (...) {
      std::lock_guard<std::mutex> g(err_mu);
      if (!err) err = std::current_exception();
    }
    tls_in_parallel = prev;
  };
  {
    // Another thread already running a parallel job: run this one serially
    // rather than wait, so independent callers never block each other.
    std::unique_lock<std::mutex> run(g_run_mu, std::try_to_lock);
    if (!run.owns_lock()) {
      for (int c = 0; c < nchunks; ++c) task(c);
    } else {
      pool_for(n).run(nchunks, task);
    }
  }
  if (err) std::rethrow_exception(err);
}
}  // namespace detail
InlineParallelGuard::InlineParallelGuard() : prev_(tls_in_parallel) { tls_in_parallel = true; }
InlineParallelGuard::~InlineParallelGuard() { tls_in_parallel = prev_; }

}  // namespace brasa
