// The torch.distributed-style free functions on the backend under test
// (BRASA_TEST_BACKEND, default mpi), and the libtorch spellings
// (c10d::ProcessGroupMPI::createProcessGroupMPI, getRank, getSize,
// ProcessGroup::Work) a ported libtorch program uses.

#include <brasa/comm/store/prefix_store.h>
#include <brasa/comm/store/tcp_store.h>
#include <unistd.h>

#include <thread>
#include <brasa/torch.h>
#include <gtest/gtest.h>

#include <cstdlib>

#include "../core/test_util.h"
#include "test_backend.h"

namespace {

namespace dist = brasa::distributed;
using brasa::testing::values;
using namespace brasa;

using dist::testing::backend;

const auto* leave_together = ::testing::AddGlobalTestEnvironment(new dist::testing::LeaveTogether);

// The gloo and shm runs share the rendezvous of the other tests in this
// program (its store holds MASTER_PORT); the mpi runs need none.
void init() {
  if (backend() == "mpi") return dist::init_process_group("mpi");
  const auto& r = dist::testing::shared_rendezvous();
  dist::init_process_group(backend(), std::make_shared<dist::PrefixStore>("dist_test", r.store),
                           r.world_size, r.rank);
}

TEST(Distributed, FreeFunctions) {
  ASSERT_FALSE(dist::is_initialized());
  EXPECT_ERROR("the default process group is not initialized", dist::get_rank());
  init();
  ASSERT_TRUE(dist::is_initialized());
  EXPECT_ERROR("already initialized (backend " + backend() + ")", init());
  const int r = dist::get_rank(), n = dist::get_world_size();
  EXPECT_EQ(dist::get_backend(), backend());

  Tensor t = full({3}, r + 1.0);
  dist::all_reduce(t);
  EXPECT_EQ(values(t), std::vector<double>(3, n * (n + 1) / 2.0));

  Tensor b = full({2}, r == n - 1 ? 5.0 : 0.0);
  dist::broadcast(b, n - 1);
  EXPECT_EQ(values(b), std::vector<double>(2, 5.0));

  std::vector<Tensor> list;
  for (int i = 0; i < n; ++i) list.push_back(zeros({2}));
  Tensor mine = full({2}, r * 2.0);
  dist::all_gather(list, mine);
  for (int i = 0; i < n; ++i) EXPECT_EQ(values(list[i]), std::vector<double>(2, i * 2.0));

  Tensor m = full({1}, r == 0 ? 1.0 : 0.0);
  auto w = dist::all_reduce(m, dist::ReduceOp::MAX, nullptr, /*async_op=*/true);
  w->wait();
  EXPECT_EQ(values(m)[0], 1.0);

  if (n > 1) {
    Tensor msg = full({4}, r == 1 ? 7.0 : 0.0);
    if (r == 1) dist::send(msg, 0, nullptr, 5);
    if (r == 0) {
      EXPECT_EQ(dist::recv(msg, -1, nullptr, 5), 1);
      EXPECT_EQ(values(msg), std::vector<double>(4, 7.0));
    }
  }
  dist::monitored_barrier();

  // A subgroup of the even ranks; every rank takes part in creating it.
  std::vector<int> evens;
  for (int i = 0; i < n; i += 2) evens.push_back(i);
  auto g = dist::new_group(evens);
  EXPECT_EQ(g != nullptr, r % 2 == 0);
  if (g) {
    Tensor s = full({1}, 1.0);
    dist::all_reduce(s, dist::ReduceOp::SUM, g);
    EXPECT_EQ(values(s)[0], static_cast<double>(evens.size()));
    EXPECT_EQ(dist::get_rank(g), r / 2);
  }
  dist::barrier();

  // monitored_barrier with a rank that stays away: rank 0 names it; the
  // others learn that rank 0 did not release them. (gloo: store-based; mpi:
  // its barrier names missing ranks the same way, tested in process_group_test.)
  if (backend() != "mpi" && n > 1) {
    if (r != n - 1) {
      try {
        dist::monitored_barrier(nullptr, std::chrono::milliseconds(1000), /*wait_all_ranks=*/true);
        ADD_FAILURE() << "monitored_barrier returned without rank " << n - 1;
      } catch (const dist::DistTimeoutError& e) {
        const std::string what = e.what();
        if (r == 0)
          EXPECT_NE(
              what.find("rank(s) " + std::to_string(n - 1) + " did not arrive within 1000 ms"),
              std::string::npos)
              << what;
        else
          EXPECT_NE(what.find("was not released by rank 0"), std::string::npos) << what;
      }
    }
    dist::barrier();
  }
  dist::destroy_process_group();
  EXPECT_FALSE(dist::is_initialized());
}

// tcp://host:port and file://path, with rank and world size given: the
// address and the path are agreed on through the shared store first.
TEST(Distributed, InitMethodsTcpAndFile) {
  if (backend() == "mpi")
    GTEST_SKIP() << "the mpi backend takes rank and size from MPI, not an init_method";
  const auto& r = dist::testing::shared_rendezvous();
  static int round = 0;
  const std::string key = "init_methods/" + std::to_string(round++);
  if (r.rank == 0) {
    auto probe = std::make_shared<dist::TCPStore>("127.0.0.1", [] {
      dist::TCPStoreOptions o;
      o.port = 0;
      o.isServer = true;
      return o;
    }());
    const int port = probe->port();
    probe.reset();  // free again for init_process_group's server
    r.store->set(key + "/port", std::to_string(port));
    r.store->set(key + "/file",
                 ::testing::TempDir() + "brasa_init_file_" + std::to_string(::getpid()));
  }
  const std::string port = dist::to_string(r.store->get(key + "/port"));
  const std::string file = dist::to_string(r.store->get(key + "/file"));
  for (const std::string& method : {"tcp://127.0.0.1:" + port, "file://" + file}) {
    SCOPED_TRACE(method);
    dist::init_process_group("gloo", method, r.world_size, r.rank);
    Tensor t = full({4}, r.rank + 1.0);
    dist::all_reduce(t);
    EXPECT_EQ(values(t), std::vector<double>(4, r.world_size * (r.world_size + 1) / 2.0));
    dist::barrier();
    dist::destroy_process_group();
    r.store->add(key + "/done/" + method, 1);
    r.store->wait({key + "/done/" + method}, std::chrono::seconds(30));
    // Everyone is through before rank 0's server (tcp) goes away.
    while (r.store->add(key + "/done/" + method, 0) < r.world_size)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  EXPECT_ERROR("needs world_size > 0 and 0 <= rank < world_size",
               dist::init_process_group("gloo", "file://" + file));
  EXPECT_ERROR("is not env://, tcp://host:port or file://path",
               dist::init_process_group("gloo", "udp://x"));
}

TEST(Distributed, LibtorchSpellingsCompileAndWork) {
  if (backend() != "mpi")
    GTEST_SKIP() << "the libtorch example uses ProcessGroupMPI; this run tests " << backend();
  auto pg = c10d::ProcessGroupMPI::createProcessGroupMPI();
  const int numranks = pg->getSize();
  const int rank = pg->getRank();
  std::vector<torch::Tensor> tmp = {torch::ones({2, 2}) * (rank + 1)};
  std::vector<std::shared_ptr<c10d::ProcessGroup::Work>> works;
  works.push_back(pg->allreduce(tmp));
  for (auto& work : works) {
    work->wait();
    EXPECT_TRUE(work->isSuccess());
  }
  EXPECT_EQ(values(tmp[0]), std::vector<double>(4, numranks * (numranks + 1) / 2.0));
  EXPECT_EQ(pg->getBackendName(), "mpi");
  c10d::AllreduceOptions opts;
  opts.reduceOp = c10d::ReduceOp::MIN;
  pg->allreduce(tmp, opts)->wait();
  EXPECT_EQ(values(tmp[0])[0], numranks * (numranks + 1) / 2.0);
}

}  // namespace
