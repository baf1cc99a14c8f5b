#include "../test_util.h"

#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <future>
#include <thread>

using namespace brasa;

TEST(Parallel, CoversRangeExactlyOnce) {
  set_num_threads(2);
  std::vector<std::atomic<int>> hits(100000);
  parallel_for(0, 100000, 1000, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) hits[i]++;
  });
  for (auto& h : hits) ASSERT_EQ(h.load(), 1);
  EXPECT_EQ(get_num_threads(), 2);
}

TEST(Parallel, PropagatesExceptions) {
  set_num_threads(2);
  EXPECT_THROW(parallel_for(0, 100, 1,
                            [](int64_t b, int64_t) {
                              if (b > 0) BRASA_ERROR("boom");
                            }),
               Error);
  // The pool still works afterwards.
  std::atomic<int64_t> sum{0};
  parallel_for(0, 1000, 10, [&](int64_t b, int64_t e) { sum += e - b; });
  EXPECT_EQ(sum.load(), 1000);
}

TEST(Parallel, ManyBackToBackJobs) {
  // Workers that arrive late to a finished job must never run its task once
  // the next job has started.
  set_num_threads(2);
  int64_t total = 0;
  for (int job = 0; job < 20000; ++job) {
    std::atomic<int64_t> sum{0};
    parallel_for(0, 8, 1, [&](int64_t b, int64_t e) { sum += e - b; });
    total += sum.load();
  }
  EXPECT_EQ(total, 20000 * 8);
}

TEST(Parallel, SwitchingThreadCountsNeverHangs) {
  // A pool made for one small job and replaced before its worker ever ran
  // once hung set_num_threads in the worker's join. A watchdog turns a hang
  // into a failure instead of waiting for the CTest timeout.
  const int saved = get_num_threads();
  std::promise<int64_t> done;
  auto result = done.get_future();
  std::thread([&done] {
    int64_t total = 0;
    for (int round = 0; round < 2000; ++round) {
      set_num_threads(2);
      std::atomic<int64_t> sum{0};
      parallel_for(0, 64, 1, [&](int64_t b, int64_t e) { sum += e - b; });
      total += sum.load();
      set_num_threads(1);
    }
    done.set_value(total);
  }).detach();
  if (result.wait_for(std::chrono::seconds(60)) != std::future_status::ready) {
    ADD_FAILURE() << "set_num_threads hung while replacing the pool";
    std::fflush(stdout);
    std::_Exit(1);
  }
  EXPECT_EQ(result.get(), 2000 * 64);
  set_num_threads(saved);
}

TEST(Parallel, NestedCallsRunInline) {
  set_num_threads(2);
  std::atomic<int> inner{0}, outer{0};
  parallel_for(0, 4, 1, [&](int64_t, int64_t) {
    EXPECT_TRUE(in_parallel_region());
    ++outer;
    parallel_for(0, 10, 1, [&](int64_t b, int64_t e) { inner += static_cast<int>(e - b); });
  });
  EXPECT_EQ(inner.load(), 10 * outer.load());
  EXPECT_FALSE(in_parallel_region());
}

TEST(Parallel, ConcurrentCallersDoNotDeadlock) {
  set_num_threads(2);
  std::vector<std::thread> ts;
  std::atomic<int64_t> total{0};
  for (int k = 0; k < 4; ++k)
    ts.emplace_back([&] {
      for (int r = 0; r < 50; ++r) total += ones({5000}).sum().item<int64_t>();
    });
  for (auto& t : ts) t.join();
  EXPECT_EQ(total.load(), 4 * 50 * 5000);
}

TEST(Parallel, ForkedChildRunsSingleThreadedAndWorks) {
  set_num_threads(2);
  ones({100000}).sum();  // the pool exists in the parent
  pid_t pid = fork();
  if (pid == 0) {
    bool ok = get_num_threads() == 1 && ones({100000}).sum().item<int64_t>() == 100000;
    set_num_threads(2);  // re-creates threads in the child
    ok = ok && ones({100000}).mul(2).sum().item<int64_t>() == 200000;
    _exit(ok ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

TEST(Parallel, ResultsIndependentOfThreadCount) {
  manual_seed(3);
  auto x = randn({1 << 20});
  set_num_threads(1);
  auto s1 = x.sum().item<double>();
  set_num_threads(2);
  auto s2 = x.sum().item<double>();
  EXPECT_EQ(s1, s2);
  EXPECT_THROW(set_num_threads(0), Error);
}
