// Shared-memory tensors, the tensor Queue and spawn, with real processes
// (fork). Checks inside children throw: spawn turns that into an exception
// in the parent, naming the child, so a failed check fails the test.

#include <brasa/torch.h>
#include <dirent.h>
#include <sys/stat.h>
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <random>
#include <thread>

#include "../core/test_util.h"
#include "mp_test_util.h"

namespace {

using namespace brasa;
namespace mp = brasa::multiprocessing;
using brasa::testing::values;

using brasa::testing::open_fds;
using brasa::testing::require;

TEST(SharedMemory, ShareMemoryMovesTheStorageInPlace) {
  Tensor x = arange(12, TensorOptions().dtype(kFloat)).view({4, 3});
  Tensor row = x[2];
  EXPECT_FALSE(x.is_shared());
  EXPECT_TRUE(x.share_memory_().is_shared());
  EXPECT_TRUE(row.is_shared());  // the view shares the moved storage
  EXPECT_EQ(values(row), (std::vector<double>{6, 7, 8}));
  row.fill_(-1);
  EXPECT_EQ(values(x[2]), (std::vector<double>{-1, -1, -1}));
  const void* before = x.data_ptr();
  x.share_memory_();  // already shared: nothing moves
  EXPECT_EQ(x.data_ptr(), before);
  Tensor empty = zeros({0, 3});
  EXPECT_TRUE(empty.share_memory_().is_shared());
  EXPECT_ERROR("share_memory_: the tensor is undefined", Tensor().share_memory_());
}

// Storages born shareable: share_memory_ moves nothing, and they travel.
TEST(SharedMemory, LargeAllocationsCanBeBornShareable) {
  set_shareable_cpu_allocations(size_t{1} << 20);
  Tensor big = zeros({1 << 18});  // 1 MiB
  Tensor small = zeros({1000});
  set_shareable_cpu_allocations(0);
  EXPECT_TRUE(big.is_shared());
  EXPECT_FALSE(small.is_shared());
  const void* before = big.data_ptr();
  big.share_memory_();
  EXPECT_EQ(big.data_ptr(), before);  // nothing moved
  mp::Queue q;
  q.put(IValue(big));
  mp::spawn([&](int) { q.get().toTensor().fill_(5); }, 1);
  EXPECT_EQ(big.sum().item<double>(), 5.0 * (1 << 18));
  EXPECT_FALSE(zeros({1 << 18}).is_shared());  // off again
}

// Shared memory that never left the process is reused after free (no new
// pages); memory another process may map (exported, or alive at a fork)
// never is.
TEST(SharedMemory, FreedBlocksAreReusedOnlyWhenNoOtherProcessCanMapThem) {
  release_cached_shared_memory();
  EXPECT_EQ(cached_shared_memory(), 0u);
  const int64_t n = 1 << 18;  // 1 MiB of floats
  const void* first = nullptr;
  {
    Tensor a = full({n}, 3.0f);
    first = a.share_memory_().data_ptr();
  }
  EXPECT_EQ(cached_shared_memory(), size_t{1} << 20);
  Tensor b = arange(n, TensorOptions().dtype(kFloat));
  b.share_memory_();
  EXPECT_EQ(b.data_ptr(), first);  // the same pages, b's values copied in
  EXPECT_EQ(cached_shared_memory(), 0u);
  EXPECT_EQ(b[n - 1].item<double>(), double(n - 1));
  EXPECT_EQ(b.sum().item<double>(), double(n) * (n - 1) / 2);
  // A slightly smaller request takes the block too; a much smaller one does not.
  b = Tensor();
  Tensor c = zeros({n - 1000}).share_memory_();
  EXPECT_EQ(c.data_ptr(), first);
  c = Tensor();
  Tensor tiny = zeros({1000}).share_memory_();
  EXPECT_NE(tiny.data_ptr(), first);
  EXPECT_EQ(cached_shared_memory(), size_t{1} << 20);
  release_cached_shared_memory();
  EXPECT_EQ(cached_shared_memory(), 0u);

  // Exported (its descriptor sent to a child): not kept.
  {
    Tensor sent = zeros({n}).share_memory_();
    mp::Queue q;
    q.put(IValue(sent));
    mp::spawn([&](int) { q.get().toTensor().fill_(1); }, 1);
    EXPECT_EQ(sent.sum().item<double>(), double(n));
  }
  EXPECT_EQ(cached_shared_memory(), 0u);
  // Alive when the process forked (the child maps it too): not kept.
  {
    Tensor inherited = zeros({n}).share_memory_();
    mp::spawn([&](int) { inherited.fill_(2); }, 1);
    EXPECT_EQ(inherited.sum().item<double>(), 2.0 * n);
  }
  EXPECT_EQ(cached_shared_memory(), 0u);
  // Made after the fork: kept again.
  zeros({n}).share_memory_();
  EXPECT_EQ(cached_shared_memory(), size_t{1} << 20);
  release_cached_shared_memory();
}

// A child never gets the parent's free blocks: what each process makes after
// the fork is its own.
TEST(SharedMemory, AChildDoesNotReuseTheParentsFreeBlocks) {
  release_cached_shared_memory();
  const int64_t n = 1 << 18;
  zeros({n}).share_memory_();  // freed: kept by the parent
  ASSERT_EQ(cached_shared_memory(), size_t{1} << 20);
  Tensor out = zeros({2}).share_memory_();
  mp::spawn(
      [&](int) {
        out[0].fill_(static_cast<double>(cached_shared_memory()));
        Tensor mine = full({n}, 7.0f).share_memory_();
        out[1].fill_(mine.sum().item<double>());
      },
      1);
  EXPECT_EQ(out[0].item<double>(), 0.0);  // the child started with an empty pool
  EXPECT_EQ(out[1].item<double>(), 7.0 * n);
  Tensor parent_again =
      full({n}, 1.0f).share_memory_();  // the parent's block, untouched by the child
  EXPECT_EQ(parent_again.sum().item<double>(), double(n));
  release_cached_shared_memory();
}

TEST(SharedMemory, ChildWritesThroughForkAreVisible) {
  Tensor x = zeros({4, 3});
  x.share_memory_();
  Tensor col = x.select(1, 1);
  mp::spawn(
      [&](int rank) {
        x[rank].add_(rank + 1);
        col.add_(10);
      },
      2);
  EXPECT_EQ(values(x[0]), (std::vector<double>{1, 21, 1}));
  EXPECT_EQ(values(x[1]), (std::vector<double>{2, 22, 2}));
  EXPECT_EQ(values(x[2]), (std::vector<double>{0, 20, 0}));
}

// Spelled as the issue spells it.
TEST(Queue, TheIssueExample) {
  auto x = torch::zeros({4, 3});
  x.share_memory_();
  EXPECT_TRUE(x.is_shared());
  mp::Queue q;
  q.put(torch::IValue(x));
  q.put(torch::IValue(x[2]));
  // Both children add into row 2: two unsynchronized read-modify-writes of
  // one memory could lose an update, so they take turns with a token.
  mp::Queue turn;
  turn.put(torch::IValue(int64_t{0}));
  mp::spawn(
      [&](int rank) {
        (void)rank;
        torch::Tensor t = q.get().toTensor();
        torch::IValue token = turn.get(std::chrono::seconds(30));
        t.add_(1);
        turn.put(token);
      },
      /*nprocs=*/2);
  EXPECT_EQ(values(x[2]), std::vector<double>(3, 2.0));
  EXPECT_EQ(values(x[0]), std::vector<double>(3, 1.0));
}

TEST(Queue, UnsharedTensorsMoveToSharedMemoryAndAliasingSurvives) {
  Tensor x = arange(12, TensorOptions().dtype(kFloat)).view({4, 3});
  mp::Queue to_child, to_parent;
  to_child.put(IValue(std::vector<Tensor>{x, x[2], x.select(1, 1)}));
  EXPECT_TRUE(x.is_shared());  // moved by put
  mp::spawn(
      [&](int) {
        auto list = to_child.get(std::chrono::seconds(10)).toTensorVector();
        require(list.size() == 3, "three tensors");
        require(list[1].is_alias_of(list[0]) && list[2].is_alias_of(list[0]), "one storage");
        require(list[1].storage_offset() == 6 && list[2].stride(0) == 3, "views keep their layout");
        list[1].fill_(100);  // through the view
        require(list[0][2][0].item<double>() == 100, "the base sees the view's write");
        list[2].mul_(-1);
        to_parent.put(IValue(list[0]));
      },
      1);
  EXPECT_EQ(values(x[2]), (std::vector<double>{100, -100, 100}));
  EXPECT_EQ(values(x.select(1, 1)), (std::vector<double>{-1, -4, -100, -10}));
  Tensor back = to_parent.get(std::chrono::seconds(10)).toTensor();
  EXPECT_TRUE(back.equal(x));
  back[0][0].fill_(7);
  EXPECT_EQ(x[0][0].item<double>(), 7);  // the same memory, mapped twice here
}

TEST(Queue, AStorageSentAgainIsNotMappedAgain) {
  Tensor x = ones({1000});
  mp::Queue q;
  q.put(IValue(x));
  q.put(IValue(x[5]));
  Tensor first = q.get().toTensor(), second = q.get().toTensor();
  EXPECT_TRUE(second.is_alias_of(first));  // one mapping while the first is held
  EXPECT_EQ(second.data_ptr(), static_cast<float*>(first.data_ptr()) + 5);
  EXPECT_FALSE(first.is_alias_of(x));  // the sender's own mapping is another
  const int fds = open_fds();
  first = Tensor();
  second = Tensor();
  EXPECT_EQ(open_fds(), fds - 1);  // released: the cache keeps nothing alive
  q.put(IValue(x));
  EXPECT_EQ(q.get().toTensor().sum().item<double>(), 1000);
}

// A producer that dies is an error for the process waiting on its queue,
// within a fraction of a second, not a hang (get has no timeout here).
TEST(Queue, AGetWithoutTimeoutFailsWhenTheProducerDies) {
  mp::Queue q;
  auto ctx = mp::start_processes(
      [&](int) {
        q.put(IValue(int64_t{1}));
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        raise(SIGKILL);
      },
      1, mp::ProcessOptions().join(false));
  EXPECT_EQ(q.get().toInt(), 1);
  const auto start = std::chrono::steady_clock::now();
  EXPECT_ERROR("Queue.get: process 0 (pid " + std::to_string(ctx.pids()[0]) +
                   ") was killed by signal SIGKILL while this process waited for a message",
               q.get());
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
  EXPECT_THROW(ctx.join(), mp::ProcessExitedException);  // still reported to join
}

TEST(Queue, BadUseGetsClearErrors) {
  mp::Queue q;
  std::vector<Tensor> many;
  for (int i = 0; i < 251; ++i) many.push_back(zeros({1}));
  EXPECT_ERROR("a message may hold at most 250 distinct storages", q.put(IValue(many)));
  // Nobody reads: the queue fills, and a put with a timeout says so.
  bool full = false;
  for (int i = 0; i < 1000000 && !full; ++i) {
    try {
      q.put(IValue(int64_t{i}), std::chrono::milliseconds(20));
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("Queue.put: timed out after 20 ms: the queue is full"),
                std::string::npos)
          << e.what();
      full = true;
    }
  }
  EXPECT_TRUE(full);
  EXPECT_ERROR("start_processes: the function is empty", mp::spawn(std::function<void(int)>(), 1));
  Tensor x = arange(4, TensorOptions().dtype(kFloat));
  data::TensorDataset ds(x, x);
  EXPECT_ERROR(
      "workers and prefetch_factor must be positive, got 2 and 0",
      data::make_data_loader<data::samplers::SequentialSampler>(
          ds, data::DataLoaderOptions(2).workers(2).process_workers(true).prefetch_factor(0))
          ->begin());
}

TEST(Queue, ValuesOfEveryKindRoundTrip) {
  mp::Queue q;
  auto linear = nn::Linear(3, 2);
  q.put(IValue(linear->state_dict()));
  q.put(IValue(int64_t{42}));
  q.put(IValue(2.5));
  q.put(IValue(std::string("hello")));
  q.put(IValue(true));
  q.put(IValue(std::vector<int64_t>{1, 2, 3}));
  q.put(IValue());
  q.put(IValue(zeros({0, 5})));
  q.put(IValue(full({}, 3.0, TensorOptions().dtype(kDouble))));
  q.put(IValue(ones({2, 3}, TensorOptions().dtype(kLong)).t()));
  Tensor spectrum = view_as_complex(arange(8.0, TensorOptions().dtype(kDouble)).view({2, 2, 2}));
  q.put(IValue(spectrum.select(1, 1)));  // a strided complex view
  auto state = q.get().toTensorDict();
  EXPECT_EQ(state.size(), 2u);
  EXPECT_TRUE(state.at("weight").equal(linear->weight));
  {
    NoGradGuard no_grad;
    state.at("bias").fill_(5);  // the same memory, mapped a second time
  }
  EXPECT_EQ(values(linear->bias), (std::vector<double>{5, 5}));
  EXPECT_EQ(q.get().toInt(), 42);
  EXPECT_EQ(q.get().toDouble(), 2.5);
  EXPECT_EQ(q.get().toStringRef(), "hello");
  EXPECT_TRUE(q.get().toBool());
  EXPECT_EQ(q.get().toIntVector(), (std::vector<int64_t>{1, 2, 3}));
  EXPECT_TRUE(q.get().isNone());
  Tensor empty = q.get().toTensor();
  EXPECT_EQ(empty.sizes().vec(), (std::vector<int64_t>{0, 5}));
  Tensor scalar = q.get().toTensor();
  EXPECT_EQ(scalar.dim(), 0);
  EXPECT_EQ(scalar.scalar_type(), kDouble);
  EXPECT_EQ(scalar.item<double>(), 3.0);
  Tensor transposed = q.get().toTensor();
  EXPECT_EQ(transposed.sizes().vec(), (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(transposed.stride(0), 1);
  Tensor column = q.get().toTensor();
  EXPECT_EQ(column.scalar_type(), kComplexDouble);
  EXPECT_EQ(column.sizes().vec(), (std::vector<int64_t>{2}));
  EXPECT_EQ(column.stride(0), 2);
  EXPECT_TRUE(view_as_real(column).equal(tensor({2.0, 3, 6, 7}, kDouble).view({2, 2})));
  real(column).fill_(-1);  // put moved the storage to shared memory: the same memory
  EXPECT_EQ(real(spectrum)[1][1].item<double>(), -1.0);
  EXPECT_FALSE(q.get_nowait().has_value());
  EXPECT_ERROR("Queue.get: timed out after 20 ms", q.get(std::chrono::milliseconds(20)));
}

TEST(Queue, RequiresGradAndGradTravelAndNonLeavesAreRefused) {
  mp::Queue q, back;
  Tensor w = randn({3}).requires_grad_(true);
  (w * 2).sum().backward();
  q.put(IValue(w));
  mp::spawn(
      [&](int) {
        Tensor t = q.get(std::chrono::seconds(10)).toTensor();
        require(t.requires_grad() && t.is_leaf(), "a leaf that requires grad");
        require(t.grad().defined() && t.grad().allclose(full({3}, 2.0)), "its gradient");
        t.grad().add_(1);  // shared: the parent sees it
        back.put(IValue(int64_t{1}));
      },
      1);
  EXPECT_EQ(back.get().toInt(), 1);
  EXPECT_EQ(values(w.grad()), std::vector<double>(3, 3.0));
  EXPECT_ERROR("Cowardly refusing to serialize non-leaf tensor which requires_grad",
               q.put(IValue(w * 2)));
  q.put(IValue((w * 2).detach()));  // the data alone is fine
  EXPECT_FALSE(q.get().toTensor().requires_grad());
}

// parent -> A -> B -> parent, 10,000 tensors, each +1 per hop; at most 64 in
// flight (descriptors in flight count against the sender's limits).
TEST(Queue, AThreeProcessChainPassesTenThousandTensors) {
  mp::Queue a_in, b_in, out;
  auto ctx = mp::start_processes(
      [&](int rank) {
        mp::Queue& in = rank == 0 ? a_in : b_in;
        mp::Queue& next = rank == 0 ? b_in : out;
        for (;;) {
          IValue v = in.get(std::chrono::seconds(30));
          if (v.isNone()) {
            next.put(IValue());
            return;
          }
          Tensor t = v.toTensor();
          t.add_(1);
          next.put(IValue(t));
        }
      },
      2, mp::ProcessOptions().join(false));
  const int n = 10000, window = 64;
  double sum = 0, expected = 0;
  int received = 0;
  for (int i = 0; i < n; ++i) {
    a_in.put(IValue(full({4}, static_cast<double>(i))));
    expected += 4.0 * (i + 2);
    if (i >= window) {
      sum += out.get(std::chrono::seconds(30)).toTensor().sum().item<double>();
      ++received;
    }
  }
  a_in.put(IValue());
  for (;;) {
    IValue v = out.get(std::chrono::seconds(30));
    if (v.isNone()) break;
    sum += v.toTensor().sum().item<double>();
    ++received;
  }
  EXPECT_TRUE(ctx.join(std::chrono::seconds(30)));
  EXPECT_EQ(received, n);
  EXPECT_EQ(sum, expected);
}

TEST(Spawn, AChildsExceptionExitCodeOrSignalReachesTheParentAndSiblingsStop) {
  const auto t0 = std::chrono::steady_clock::now();
  try {
    mp::spawn(
        [](int rank) {
          if (rank == 1) throw std::runtime_error("boom in rank 1");
          std::this_thread::sleep_for(std::chrono::seconds(60));  // stopped by the parent
        },
        3);
    ADD_FAILURE() << "no exception";
  } catch (const mp::ProcessRaisedException& e) {
    EXPECT_EQ(e.error_index, 1);
    EXPECT_NE(std::string(e.what()).find("process 1 (pid"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("boom in rank 1"), std::string::npos) << e.what();
  }
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 10);
  try {
    mp::spawn(
        [](int rank) {
          if (rank == 0) _exit(3);
        },
        2);
    ADD_FAILURE() << "no exception";
  } catch (const mp::ProcessExitedException& e) {
    EXPECT_EQ(e.exit_code, 3);
    EXPECT_NE(std::string(e.what()).find("with exit code 3"), std::string::npos) << e.what();
  }
  try {
    mp::spawn([](int) { raise(SIGSEGV); }, 1);
    ADD_FAILURE() << "no exception";
  } catch (const mp::ProcessExitedException& e) {
    EXPECT_EQ(e.exit_code, -SIGSEGV);
    EXPECT_EQ(e.signal_name, "SIGSEGV");
    EXPECT_NE(std::string(e.what()).find("with signal SIGSEGV (Segmentation fault)"),
              std::string::npos)
        << e.what();
  }
  EXPECT_ERROR("nprocs must be at least 1", mp::spawn([](int) {}, 0));
}

TEST(Spawn, TheParentFeedsAQueueWhileChildrenRun) {
  mp::Queue work, results;
  auto ctx = mp::start_processes(
      [&](int) {
        for (;;) {
          IValue v = work.get(std::chrono::seconds(30));
          if (v.isNone()) return;
          results.put(IValue(v.toTensor().sum()));
        }
      },
      2, mp::ProcessOptions().join(false));
  EXPECT_EQ(ctx->pids().size(), 2u);
  for (int i = 0; i < 20; ++i) work.put(IValue(full({10}, 1.0 * i)));
  work.put(IValue());
  work.put(IValue());
  double total = 0;
  for (int i = 0; i < 20; ++i)
    total += results.get(std::chrono::seconds(30)).toTensor().item<double>();
  EXPECT_TRUE(ctx.join());
  EXPECT_EQ(total, 10.0 * 190);
}

// Children killed at random points while sharing: the parent keeps no
// extra descriptor, and memfd memory leaves nothing in /dev/shm. (Other
// tests running at the same time, MPI's among them, make and remove their own
// files there: only entries named by Brasa count.)
TEST(SharedMemory, SigkilledChildrenLeakNothing) {
  auto shm_entries = [] {
    int n = 0;
    if (DIR* d = opendir("/dev/shm")) {
      while (dirent* e = readdir(d)) {
        const std::string name = e->d_name;  // (brasa_fs_*: the file_system tests' segments)
        n += name.find("brasa") != std::string::npos && name.rfind("brasa_fs_", 0) != 0;
      }
      closedir(d);
    }
    return n;
  };
  const int fds_before = open_fds(), shm_before = shm_entries();
  brasa::testing::kill_children_while_sharing(100, 5);
  EXPECT_EQ(open_fds(), fds_before);
  EXPECT_EQ(shm_entries(), shm_before);
}

TEST(SharedMemory, RunningOutOfDescriptorsNamesTheLimit) {
  mp::spawn(
      [](int) {
        rlimit r{64, 64};
        require(setrlimit(RLIMIT_NOFILE, &r) == 0, "setrlimit");
        std::vector<Tensor> kept;
        try {
          for (int i = 0; i < 200; ++i) kept.push_back(zeros({8}).share_memory_());
        } catch (const Error& e) {
          require(std::string(e.what()).find("out of file descriptors") != std::string::npos &&
                      std::string(e.what()).find("64 (ulimit -n)") != std::string::npos,
                  std::string("the message names the limit: ") + e.what());
          return;
        }
        require(false, "no error after 200 shared storages with 64 descriptors");
      },
      1);
}

// A memory cgroup of 64 MiB (made here, as root) and 256 MiB to share: the
// error says so. Without the check the kernel's OOM killer would SIGKILL the
// process inside fallocate.
TEST(SharedMemory, AFullMemoryLimitIsAnErrorNotAKill) {
  std::ifstream cgroups("/proc/self/cgroup");
  std::string line, dir;
  while (std::getline(cgroups, line))
    if (line.find(":memory:") != std::string::npos)
      dir = "/sys/fs/cgroup/memory" + line.substr(line.find(":memory:") + 8);
  if (dir.empty()) GTEST_SKIP() << "no cgroup v1 memory controller here";
  dir += "/brasa_test_" + std::to_string(getpid());
  if (mkdir(dir.c_str(), 0755) != 0)
    GTEST_SKIP() << "cannot make a memory cgroup (" << dir << "): " << std::strerror(errno);
  std::ofstream(dir + "/memory.limit_in_bytes") << (64 << 20);
  try {
    mp::spawn(
        [&](int) {
          std::ofstream(dir + "/cgroup.procs") << getpid();
          try {
            // 256 MiB of shared memory, as share_memory_ of such a tensor asks for
            // (an ordinary 256 MiB tensor would not fit in the cgroup to begin with).
            shared_memory_allocator()->allocate(size_t{256} << 20);
          } catch (const Error& e) {
            require(std::string(e.what()).find("cannot reserve 268435456 bytes of shared memory: "
                                               "only") != std::string::npos,
                    std::string("the message: ") + e.what());
            return;
          }
          require(false, "no error sharing 256 MiB in a 64 MiB cgroup");
        },
        1);
  } catch (...) {
    rmdir(dir.c_str());
    throw;
  }
  rmdir(dir.c_str());
}

TEST(SharedMemory, ModuleShareMemoryServesForkedWorkers) {
  auto net = nn::Linear(4, 2);
  net->share_memory();
  for (const Tensor& p : net->parameters()) EXPECT_TRUE(p.is_shared());
  mp::spawn(
      [&](int rank) {
        NoGradGuard no_grad;
        net->bias[rank].fill_(rank + 10.0);
      },
      2);
  EXPECT_EQ(values(net->bias), (std::vector<double>{10, 11}));
}

}  // namespace
