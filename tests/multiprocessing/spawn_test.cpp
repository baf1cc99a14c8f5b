// The spawn start method: children are fresh copies of this program (not
// forks), run a registered entry, and report failures as forked ones do.
// This test has its own main() because a spawned child must reach
// multiprocessing::spawn_main() before anything else.

#include <brasa/torch.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

#include "../core/test_util.h"

namespace {

using namespace brasa;
namespace mp = brasa::multiprocessing;
namespace fs = std::filesystem;

// Set by the parent before it spawns: a fork would copy it, a fresh program
// starts with 0.
int g_marker = 0;

// Children report through files in the directory the parent names.
std::string report_path(int rank) {
  return std::string(std::getenv("SPAWN_TEST_DIR")) + "/rank" + std::to_string(rank);
}

mp::Entry report_entry("report", [](int rank) {
  Tensor t = arange(4, TensorOptions().dtype(kFloat)) * (rank + 1);  // the library works
  std::ofstream(report_path(rank)) << g_marker << " " << t.sum().item<double>() << " " << getpid();
});
mp::Entry raise_entry("raise", [](int rank) {
  if (rank == 1) throw std::runtime_error("boom from rank 1");
  std::this_thread::sleep_for(std::chrono::seconds(60));  // stopped by the parent
});
// Takes one tensor from the parent's first queue, adds 1 to it in place (the
// parent sees it: the storage is shared), and answers on the second queue
// with a tensor of its own making.
mp::Entry queue_entry("queue_worker", [](int rank) {
  Tensor t = mp::inherited_queue(0).get(std::chrono::seconds(30)).toTensor();
  t.add_(1);
  mp::inherited_queue(1).put(IValue(full({3}, static_cast<double>(g_marker + rank + 1))));
});
mp::Entry exit_entry("exit3", [](int) { _exit(3); });
mp::Entry segv_entry("segv", [](int) { raise(SIGSEGV); });

class Spawn : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("brasa_spawn_" + std::to_string(getpid()));
    fs::create_directories(dir_);
    setenv("SPAWN_TEST_DIR", dir_.c_str(), 1);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(Spawn, ChildrenAreFreshProgramsRunningTheirEntry) {
  g_marker = 42;
  mp::spawn("report", 2);
  for (int rank = 0; rank < 2; ++rank) {
    std::ifstream in(report_path(rank));
    int marker = -1;
    double sum = 0;
    pid_t pid = 0;
    ASSERT_TRUE(in >> marker >> sum >> pid) << "rank " << rank << " wrote nothing";
    EXPECT_EQ(marker, 0) << "a spawned child starts from a fresh program, not a fork";
    EXPECT_EQ(sum, 6.0 * (rank + 1));
    EXPECT_NE(pid, getpid());
  }
  // The same entry with the fork start method sees the parent's memory.
  mp::start_processes("report", 1, mp::ProcessOptions().start_method("fork"));
  std::ifstream in(report_path(0));
  int marker = -1;
  in >> marker;
  EXPECT_EQ(marker, 42);
}

TEST_F(Spawn, AnExceptionReachesTheParentAndSiblingsStop) {
  const auto start = std::chrono::steady_clock::now();
  try {
    mp::start_processes(
        "raise", 2,
        mp::ProcessOptions().start_method("spawn").grace_period(std::chrono::milliseconds(500)));
    ADD_FAILURE() << "no exception";
  } catch (const mp::ProcessRaisedException& e) {
    EXPECT_EQ(e.error_index, 1);
    EXPECT_NE(std::string(e.what()).find("boom from rank 1"), std::string::npos) << e.what();
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(20));
}

TEST_F(Spawn, ExitCodesAndSignalsReachTheParent) {
  try {
    mp::spawn("exit3", 1);
    ADD_FAILURE() << "no exception";
  } catch (const mp::ProcessExitedException& e) {
    EXPECT_EQ(e.exit_code, 3);
    EXPECT_NE(std::string(e.what()).find("exit code 3"), std::string::npos) << e.what();
  }
  try {
    mp::spawn("segv", 1);
    ADD_FAILURE() << "no exception";
  } catch (const mp::ProcessExitedException& e) {
    EXPECT_EQ(e.signal_name, "SIGSEGV");
    EXPECT_EQ(e.exit_code, -SIGSEGV);
  }
}

// PyTorch's spawn(fn, args=(q,)): queues made by the parent reach children
// that are fresh programs, in both directions, with shared storages.
TEST_F(Spawn, QueuesReachSpawnedChildren) {
  g_marker = 100;
  for (const std::string method : {"spawn", "fork"}) {
    SCOPED_TRACE(method);
    Tensor x = zeros({4, 3});
    x.share_memory_();
    mp::Queue to_children, from_children;
    auto ctx = mp::start_processes("queue_worker", 2,
                                   mp::ProcessOptions().start_method(method).join(false).queues(
                                       {&to_children, &from_children}));
    to_children.put(IValue(x));
    to_children.put(IValue(x[2]));
    std::vector<double> answers;
    for (int i = 0; i < 2; ++i)
      answers.push_back(
          from_children.get(std::chrono::seconds(30)).toTensor().sum().item<double>());
    ctx.join();
    std::sort(answers.begin(), answers.end());
    // A spawned child's g_marker is 0 (a fresh program); a forked one's is 100.
    const double marker = method == "spawn" ? 0 : 100;
    EXPECT_EQ(answers, (std::vector<double>{3 * (marker + 1), 3 * (marker + 2)}));
    EXPECT_TRUE(allclose(x, tensor({1.f, 1, 1, 1, 1, 1, 2, 2, 2, 1, 1, 1}).view({4, 3}))) << x;
  }
  g_marker = 0;
}

TEST_F(Spawn, MisuseGetsClearErrors) {
  EXPECT_ERROR(
      "inherited_queue: index 0 is out of range: this process's parent passed it 0 queue(s)",
      mp::inherited_queue(0));
  mp::Queue q;
  EXPECT_ERROR("start_processes: queues()[1] is null",
               mp::start_processes("report", 1, mp::ProcessOptions().queues({&q, nullptr})));
  EXPECT_ERROR("start_processes: no entry named 'nope' is registered in this program",
               mp::spawn("nope", 1));
  EXPECT_ERROR(
      "the spawn start method re-executes the program, where a std::function cannot "
      "follow",
      mp::start_processes([](int) {}, 1, mp::ProcessOptions().start_method("spawn")));
  EXPECT_ERROR("start_processes: unknown start method 'forkserver'",
               mp::start_processes([](int) {}, 1, mp::ProcessOptions().start_method("forkserver")));
  EXPECT_ERROR("multiprocessing::Entry 'empty': the function is empty",
               mp::Entry("empty", std::function<void(int)>()));
  EXPECT_ERROR("multiprocessing::Entry: 'report' is registered twice",
               mp::Entry("report", [](int) {}));
  // A spawned child whose main() skipped spawn_main() must not start children of its own.
  mp::spawn(
      [](int) {
        setenv("BRASA_MP_SPAWN_ENTRY", "report", 1);
        try {
          mp::spawn("report", 1);
        } catch (const Error& e) {
          if (std::string(e.what()).find("was started by the spawn start method to run entry "
                                         "'report', but main() did not call "
                                         "multiprocessing::spawn_main() first") !=
              std::string::npos)
            return;
          throw;
        }
        throw std::runtime_error("no error");
      },
      1);
}

}  // namespace

int main(int argc, char** argv) {
  brasa::multiprocessing::spawn_main();
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
