// The process groups, part two (see process_group_test.cpp for how they
// run): shared-memory tensors, large direct collectives, coalescing,
// asynchronous and background operations, several groups at once, and the
// errors: mismatched collectives, missing ranks, timeouts, bad arguments.

#include "process_group_util.h"

namespace brasa::distributed {
namespace {

using namespace std::chrono_literals;
using namespace pg_test;

// Tensors in shared memory (the shm backend reduces straight between them,
// with no staging), tensors in private memory, and a mix of both.
TEST(ProcessGroup, AllreduceOfSharedMemoryTensors) {
  auto pg = world();
  const int n = N(), me = R();
  const int64_t count = 300007;  // 1.2 MB: above the shm backend's zero-copy threshold
  auto make = [&](bool shared, int64_t offset) {
    Tensor base = empty({count + offset}, TensorOptions().dtype(kFloat));
    if (shared) base.share_memory_();
    Tensor t = base.narrow(0, offset, count);
    float* p = t.data_ptr<float>();
    for (int64_t i = 0; i < count; ++i) p[i] = static_cast<float>(i % 9 + me);
    return t;
  };
  auto check = [&](const Tensor& t, const std::string& what) {
    const float* p = t.data_ptr<float>();
    for (int64_t i = 0; i < count; ++i)
      ASSERT_EQ(p[i], static_cast<float>(n * (i % 9) + n * (n - 1) / 2)) << what << " at " << i;
  };
  auto* shm = dynamic_cast<ProcessGroupShm*>(pg.get());
  const uint64_t zero_copy_before = shm ? shm->zero_copy_allreduces() : 0;
  for (int rep = 0; rep < 3; ++rep) {  // new storages each time: mappings must follow
    std::vector<Tensor> all_shared{make(true, rep * 16)};
    pg->allreduce(all_shared)->wait();
    check(all_shared[0], "every rank shared, rep " + std::to_string(rep));
  }
  Tensor kept = make(true, 0);
  for (int rep = 0; rep < 3; ++rep) {  // the same storage again and again
    float* p = kept.data_ptr<float>();
    for (int64_t i = 0; i < count; ++i) p[i] = static_cast<float>(i % 9 + me);
    std::vector<Tensor> v{kept};
    pg->allreduce(v)->wait();
    check(kept, "the same shared tensor, rep " + std::to_string(rep));
  }
  if (shm) {
    EXPECT_EQ(shm->zero_copy_allreduces() - zero_copy_before, 6u);
  }
  const uint64_t cross_before = shm ? shm->cross_memory_allreduces() : 0;
  std::vector<Tensor> mixed{make(me % 2 == 0, 3)};
  pg->allreduce(mixed)->wait();
  check(mixed[0], "shared on even ranks only");
  std::vector<Tensor> private_tensor{make(false, 5)};
  pg->allreduce(private_tensor)->wait();
  check(private_tensor[0], "private on every rank");
  if (shm) {
    EXPECT_EQ(shm->zero_copy_allreduces() - zero_copy_before, 6u);
    // Where the system allows cross-memory attach (it does for same-user
    // processes unless a seccomp profile forbids it), both went straight
    // between the ranks' memory.
    EXPECT_EQ(shm->cross_memory_allreduces() - cross_before,
              shm->uses_cross_memory_attach() ? 2u : 0u);
    // Where this process may read its own memory that way, no seccomp
    // profile forbids it, and the group must have found it usable.
    float probe = 1.5f, read_back = 0;
    iovec local{&read_back, sizeof read_back}, remote{&probe, sizeof probe};
    if (::process_vm_readv(::getpid(), &local, 1, &remote, 1, 0) == sizeof probe) {
      EXPECT_EQ(read_back, 1.5f);
      EXPECT_TRUE(shm->uses_cross_memory_attach());
    }
  }
  std::vector<Tensor> avg{make(true, 0)};
  AllreduceOptions o;
  o.reduceOp = ReduceOp::MAX;
  pg->allreduce(avg, o)->wait();
  EXPECT_EQ(avg[0].data_ptr<float>()[count - 1], static_cast<float>((count - 1) % 9 + n - 1));
}

// Broadcasts, gathers and reduce-scatters large enough for the shm backend
// to copy straight between the ranks' tensors (a broadcast's receivers copy
// most, the root writes the rest), from every root, with tensors private,
// shared, or a mix of both.
TEST(ProcessGroup, LargeDirectCollectivesSharedAndPrivate) {
  auto pg = world();
  const int n = N(), me = R();
  const int64_t count = 70001;  // 280 KB, not a multiple of any rank count
  for (int root = 0; root < n; ++root)
    for (int sharing = 0; sharing < 3; ++sharing) {  // none, every rank, every other rank
      Tensor t = empty({count}, TensorOptions().dtype(kFloat));
      if (sharing == 1 || (sharing == 2 && me % 2 == 0)) t.share_memory_();
      float* p = t.data_ptr<float>();
      for (int64_t i = 0; i < count; ++i)
        p[i] = me == root ? static_cast<float>(i % 1000 + root) : -1.0f;
      std::vector<Tensor> v{t};
      BroadcastOptions o;
      o.rootRank = root;
      pg->broadcast(v, o)->wait();
      for (int64_t i = 0; i < count; ++i)
        ASSERT_EQ(p[i], static_cast<float>(i % 1000 + root))
            << "root " << root << ", sharing " << sharing << ", element " << i;

      // The same tensors gathered to the root, and reduce-scattered.
      for (int64_t i = 0; i < count; ++i) p[i] = static_cast<float>(i % 7 + 10 * me);
      std::vector<Tensor> in{t};
      std::vector<std::vector<Tensor>> out(me == root ? 1 : 0);
      if (me == root)
        for (int r = 0; r < n; ++r) out[0].push_back(full({count}, -1.0));
      GatherOptions go;
      go.rootRank = root;
      pg->gather(out, in, go)->wait();
      if (me == root)
        for (int r = 0; r < n; ++r) {
          const float* q = out[0][static_cast<size_t>(r)].data_ptr<float>();
          for (int64_t i = 0; i < count; ++i)
            ASSERT_EQ(q[i], static_cast<float>(i % 7 + 10 * r))
                << "gather to " << root << " from " << r << ", sharing " << sharing;
        }
    }
  // allgather_into_tensor in place (the input is this rank's block of the
  // output), large and small.
  for (int64_t k : {int64_t{50000}, int64_t{100}}) {
    Tensor all = full({n * k}, -1.0);
    Tensor mine = all.narrow(0, me * k, k);
    mine.fill_(static_cast<double>(me + 1));
    pg->allgather_into_tensor(all, mine)->wait();
    const float* a = all.data_ptr<float>();
    for (int64_t i = 0; i < n * k; ++i)
      ASSERT_EQ(a[i], static_cast<float>(i / k + 1)) << "in-place allgather of " << k;
  }
  const int64_t block = 40000;  // 160 KB per rank
  Tensor rs_in = empty({n * block}, TensorOptions().dtype(kFloat));
  if (me % 2 == 0) rs_in.share_memory_();
  float* q = rs_in.data_ptr<float>();
  for (int64_t i = 0; i < n * block; ++i) q[i] = static_cast<float>(i / block + i % 3 + me);
  Tensor rs_out = empty({block}, TensorOptions().dtype(kFloat));
  pg->reduce_scatter_tensor(rs_out, rs_in)->wait();
  const float* r = rs_out.data_ptr<float>();
  for (int64_t i = 0; i < block; ++i)
    ASSERT_EQ(r[i], static_cast<float>(n * (me + (me * block + i) % 3) + n * (n - 1) / 2))
        << "element " << i;
}

// The shm backend's own errors: sends to itself, a message larger or
// smaller than the receiving tensor (posted before and after it arrives),
// and alltoall splits the sender and the receiver disagree on.
TEST(ProcessGroup, ShmPointToPointAndSplitErrors) {
  if (backend() != "shm") GTEST_SKIP() << "shm's own checks; this run tests " << backend();
  auto pg = world();
  const int me = R(), n = N();
  std::vector<Tensor> four{filled({4}, kFloat, 1)}, five{filled({5}, kFloat, 0)};
  EXPECT_ERROR("shm.send: rank " + std::to_string(me) + " cannot send to itself",
               pg->send(four, me, 1));
  if (me == 0) {
    pg->send(four, 1, 77)->wait();  // arrives before its receive (the barrier below)
    pg->send(four, 1, 78)->wait();
  }
  pg->barrier()->wait();
  if (me == 1) {
    EXPECT_ERROR(
        "ProcessGroupShm.recv: rank 0 sent 16 bytes with tag 77 but the receiving "
        "tensor holds 20",
        pg->recv(five, 0, 77)->wait());
    auto early = pg->recv(five, 0, 79);  // posted before the message
    pg->barrier()->wait();
    EXPECT_ERROR(
        "ProcessGroupShm.recv: rank 0 sent 16 bytes with tag 79 but the receiving "
        "tensor holds 20",
        early->wait());
    std::vector<Tensor> right{filled({4}, kFloat, 0)};
    pg->recv(right, 0, 78)->wait();  // the next message is untouched
    expect_all(right[0], 1, "message after a refused one");
  } else {
    pg->barrier()->wait();
    if (me == 0) pg->send(four, 1, 79)->wait();
  }
  pg->barrier()->wait();

  // Rank 0 expects 2 elements from rank 1, which sends 1.
  static auto broken = make_group({}, 5s);
  std::vector<int64_t> in_splits(n, 1), out_splits(n, 1);
  if (me == 0) out_splits[1] = 2;
  Tensor in = filled({n}, kFloat, me), out = filled({me == 0 ? n + 1 : n}, kFloat, -1);
  try {
    broken->alltoall_base(out, in, out_splits, in_splits)->wait();
    EXPECT_NE(me, 0) << "rank 0 took a mismatched split";
  } catch (const DistError& e) {
    if (me == 0) {
      EXPECT_NE(std::string(e.what()).find("rank 1 sends 1 elements to rank 0, which expects 2"),
                std::string::npos)
          << e.what();
    }
  }
  world()->barrier()->wait();
}

TEST(ProcessGroup, AllreduceCoalesced) {
  std::vector<Tensor> ts{filled({2, 2}, kFloat, R() + 1), filled({3}, kFloat, 2 * (R() + 1)),
                         filled({4, 6}, kFloat, 1).t()};
  AllreduceCoalescedOptions o;
  o.reduceOp = ReduceOp::AVG;
  world()->allreduce_coalesced(ts, o)->wait();
  expect_all(ts[0], (N() + 1) / 2.0, "coalesced 0");
  expect_all(ts[1], N() + 1.0, "coalesced 1");
  expect_all(ts[2], 1, "coalesced 2");
  std::vector<Tensor> mixed{filled({2}, kFloat, 1), filled({2}, kLong, 1)};
  EXPECT_ERROR("all tensors must have one dtype; tensors[0] is Float but tensors[1] is Long",
               world()->allreduce_coalesced(mixed));
}

TEST(ProcessGroup, ThousandAsyncOpsInFlight) {
  auto pg = world();
  std::vector<std::vector<Tensor>> bufs;
  std::vector<std::shared_ptr<Work>> works;
  for (int i = 0; i < 1000; ++i) {
    bufs.push_back({filled({16}, kFloat, i + R())});
    works.push_back(pg->allreduce(bufs.back()));
  }
  for (auto& w : works) w->wait();
  const int n = N();
  for (int i = 0; i < 1000; ++i)
    expect_all(bufs[i][0], n * i + n * (n - 1) / 2.0, "op " + std::to_string(i));
  for (auto& w : works) EXPECT_TRUE(w->is_success());
}

TEST(ProcessGroup, BackgroundCollectivesOverlapAndStayInOrder) {
  static auto pg = make_group({}, 30s, /*background=*/true);
  const int n = N();
  std::vector<std::vector<Tensor>> bufs;
  std::vector<std::shared_ptr<Work>> works;
  for (int i = 0; i < 200; ++i) {
    bufs.push_back({filled({64}, i % 2 ? kDouble : kHalf, i % 7 + R())});
    AllreduceOptions o;
    o.reduceOp = i % 3 ? ReduceOp::SUM : ReduceOp::MAX;
    works.push_back(pg->allreduce(bufs.back(), o));
  }
  std::vector<Tensor> b{filled({8}, kLong, R() == 0 ? 3 : 0)};
  works.push_back(pg->broadcast(b));
  for (auto& w : works) w->wait();
  for (int i = 0; i < 200; ++i) {
    double want = i % 3 ? n * (i % 7) + n * (n - 1) / 2.0 : i % 7 + n - 1;
    expect_all(bufs[i][0], want, "background op " + std::to_string(i));
  }
  expect_all(b[0], 3, "background broadcast");
  pg->barrier()->wait();
}

TEST(ProcessGroup, SeveralGroupsAtOnce) {
  // Every process joins the creation of each group (as in c10d).
  std::vector<int> evens;
  for (int r = 0; r < N(); r += 2) evens.push_back(r);
  auto even_group = make_group(evens, 30s);
  auto all_group = make_group({}, 30s);
  ASSERT_NE(all_group, nullptr);
  EXPECT_EQ(even_group != nullptr, R() % 2 == 0);
  // Both used at the same time from two threads.
  Tensor a = filled({64}, kLong, 1), b = filled({64}, kLong, R());
  std::thread t1([&] {
    for (int i = 0; i < 50; ++i) {
      std::vector<Tensor> ts{filled({64}, kLong, 1)};
      all_group->allreduce(ts)->wait();
      if (i == 49) a = ts[0];
    }
  });
  if (even_group) {
    EXPECT_EQ(even_group->size(), static_cast<int>(evens.size()));
    EXPECT_EQ(even_group->rank(), R() / 2);
    for (int i = 0; i < 50; ++i) {
      std::vector<Tensor> ts{filled({64}, kLong, R())};
      even_group->allreduce(ts)->wait();
      if (i == 49) b = ts[0];
    }
  }
  t1.join();
  expect_all(a, N(), "all group");
  if (even_group) {
    double sum = 0;
    for (int r : evens) sum += r;
    expect_all(b, sum, "even group");
  }
  all_group->barrier()->wait();
}

TEST(ProcessGroup, MismatchedCollectivesNameBothSides) {
  // Kept alive to the end: a failed group's messages must not meet a freed one.
  static auto pg = make_group({}, 1500ms);
  std::vector<Tensor> ts{filled({8}, kFloat, 1)};
  try {
    if (R() == 0) {
      pg->allreduce(ts)->wait();
    } else {
      pg->broadcast(ts)->wait();
    }
    ADD_FAILURE() << "no error";
  } catch (const DistError& e) {
    std::string what = e.what();
    EXPECT_NE(what.find("the ranks called different collectives"), std::string::npos) << what;
    if (R() == 0) {
      EXPECT_NE(what.find("rank 0 called allreduce(Float, 8 elements, SUM)"), std::string::npos)
          << what;
      EXPECT_NE(what.find("called broadcast(Float, 8 elements, root 0)"), std::string::npos)
          << what;
    } else {
      EXPECT_NE(what.find("called broadcast(Float, 8 elements, root 0)"), std::string::npos)
          << what;
      EXPECT_NE(what.find("but rank 0 called allreduce(Float, 8 elements, SUM)"), std::string::npos)
          << what;
    }
  }
  if (backend() == "mpi") {
    // MPI compares before starting: nothing was started, so the group still works.
    std::vector<Tensor> sized{filled({R() == 0 ? 4 : 5}, kFloat, 1)};
    EXPECT_ERROR("the ranks called different collectives", pg->allreduce(sized));
    pg->barrier()->wait();
    std::vector<Tensor> ok{filled({2}, kFloat, 1)};
    pg->allreduce(ok)->wait();
    expect_all(ok[0], N(), "after mismatch");
  } else {
    // Gloo learns of it by the failure; the group is done for.
    EXPECT_ERROR("this group can no longer be used", pg->barrier());
  }
  world()->barrier()->wait();
}

TEST(ProcessGroup, MissingRankIsNamedWhenTheTimeoutPasses) {
  // Kept alive to the end: its unmatched messages must not meet a freed communicator.
  static auto pg = make_group({}, 500ms);
  const int last = N() - 1;
  if (R() != last) {
    // Rank 1 comes 200 ms late, so rank 0's wait ends first: on Gloo that
    // closes rank 0's connections, and rank 1 must still report the timeout.
    if (R() == 1) std::this_thread::sleep_for(200ms);
    std::vector<Tensor> ts{filled({4}, kFloat, 1)};
    auto t0 = std::chrono::steady_clock::now();
    try {
      pg->allreduce(ts)->wait();
      ADD_FAILURE() << "no timeout";
    } catch (const DistTimeoutError& e) {
      std::string what = e.what();
      EXPECT_NE(what.find("rank(s) " + std::to_string(last) + " did not reach it"),
                std::string::npos)
          << what;
      EXPECT_NE(what.find("500 ms"), std::string::npos) << what;
    } catch (const std::exception& e) {
      // Caught so that this rank still reaches the barrier below.
      ADD_FAILURE() << "expected a DistTimeoutError, got: " << e.what();
    }
    double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    EXPECT_GE(waited, 0.45);
    EXPECT_LT(waited, 10.0);
    EXPECT_ERROR("this group can no longer be used", pg->allreduce(ts));
  }
  world()->barrier()->wait();
}

TEST(ProcessGroup, WaitWithATimeoutReturnsControl) {
  auto pg = world();
  // Rank 0 waits for a message that comes 300 ms later.
  std::vector<Tensor> t{filled({1}, kFloat, -1)};
  if (R() == 0) {
    auto w = pg->recv(t, N() - 1, 9);
    EXPECT_THROW(w->wait(50ms), DistTimeoutError);
    EXPECT_FALSE(w->is_completed());
    w->wait();
    EXPECT_EQ(values(t[0])[0], 42);
  } else if (R() == N() - 1) {
    std::this_thread::sleep_for(300ms);
    std::vector<Tensor> s{filled({1}, kFloat, 42)};
    pg->send(s, 0, 9)->wait();
  }
  pg->barrier()->wait();
}

TEST(ProcessGroup, ArgumentErrors) {
  auto pg = world();
  std::vector<Tensor> two{filled({1}, kFloat, 1), filled({1}, kFloat, 1)};
  EXPECT_ERROR(backend() + ".allreduce: expects exactly one tensor in tensors", pg->allreduce(two));
  std::vector<Tensor> one{filled({1}, kFloat, 1)};
  BroadcastOptions b;
  b.rootRank = N();
  EXPECT_ERROR(
      backend() + ".broadcast: root " + std::to_string(N()) + " is not a rank of this group",
      pg->broadcast(one, b));
  std::vector<std::vector<Tensor>> short_list(1);
  short_list[0].push_back(filled({1}, kFloat, 1));
  if (N() > 1)
    EXPECT_ERROR("outputs[0] must hold one tensor per rank", pg->allgather(short_list, one));
  std::vector<std::vector<Tensor>> wrong(1);
  for (int r = 0; r < N(); ++r) wrong[0].push_back(filled({2}, kFloat, 1));
  EXPECT_ERROR("outputs[0][0] has 2 elements but the input has 1", pg->allgather(wrong, one));
  EXPECT_ERROR(backend() + ".send: destination -1 is not a rank of this group",
               pg->send(one, -1, 0));
  Tensor odd = filled({N() * 2 + 1}, kFloat, 0), out = filled({N() * 2 + 1}, kFloat, 0);
  std::vector<int64_t> none;
  if (N() > 1) EXPECT_ERROR("does not split evenly over", pg->alltoall_base(out, odd, none, none));
}

}  // namespace
}  // namespace brasa::distributed
