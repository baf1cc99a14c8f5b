// The shared-memory backend's own pieces: its many-input reduction, and what
// happens when a rank is SIGKILLed in the middle of collectives (its ranks
// are forked here, rendezvousing through a FileStore). The collectives
// themselves run in comm_pg_tests with 2, 3 and 4 ranks.

#include <brasa/comm/shm/process_group_shm.h>
#include <brasa/comm/shm/shm_reduce.h>
#include <brasa/comm/store/file_store.h>
#include <brasa/ops/factory.h>
#include <brasa/tensor/half.h>
#include <dirent.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <set>
#include <string>
#include <thread>

#include "../../core/test_util.h"

namespace brasa::distributed {
namespace {

using namespace std::chrono_literals;
using shm_detail::reduce_into;

TEST(ShmReduce, ManyInputsInOnePass) {
  const float a[] = {1, -2, 3}, b[] = {4, 5, -6}, c[] = {-7, 8, 9};
  const void* in[] = {a, b, c};
  float out[3];
  reduce_into(out, in, 3, 3, kFloat, ReduceOp::SUM);
  EXPECT_EQ(std::vector<float>(out, out + 3), (std::vector<float>{-2, 11, 6}));
  reduce_into(out, in, 3, 3, kFloat, ReduceOp::MIN);
  EXPECT_EQ(std::vector<float>(out, out + 3), (std::vector<float>{-7, -2, -6}));
  reduce_into(out, in, 3, 3, kFloat, ReduceOp::AVG);
  EXPECT_FLOAT_EQ(out[1], 11.0f / 3);
  // The output may be one of the inputs.
  float x[] = {1, 2, 3};
  const void* in2[] = {x, b};
  reduce_into(x, in2, 2, 3, kFloat, ReduceOp::PRODUCT);
  EXPECT_EQ(std::vector<float>(x, x + 3), (std::vector<float>{4, 10, -18}));
}

TEST(ShmReduce, HalfIsAccumulatedInFloatAndRoundedOnce) {
  // 2048 + 1 + 1 in fp16: pairwise rounding loses both ones (2049 is not a
  // half), one rounding at the end keeps them (2050 is).
  Half a(2048.0f), b(1.0f), c(1.0f), out;
  const void* in[] = {&a, &b, &c};
  reduce_into(&out, in, 3, 1, kHalf, ReduceOp::SUM);
  EXPECT_EQ(static_cast<float>(out), 2050.0f);
}

TEST(ShmReduce, IntegersAndBools) {
  const int64_t a[] = {6, INT64_MAX}, b[] = {3, 1};
  const void* in[] = {a, b};
  int64_t out[2];
  reduce_into(out, in, 2, 2, kLong, ReduceOp::BXOR);
  EXPECT_EQ(out[0], 5);
  reduce_into(out, in, 2, 2, kLong, ReduceOp::SUM);  // wraps, as the other backends
  EXPECT_EQ(out[1], INT64_MIN);
  const uint8_t t[] = {1, 0, 1}, f[] = {0, 0, 1};
  const void* bin[] = {t, f};
  uint8_t any[3], all[3];
  reduce_into(any, bin, 2, 3, kBool, ReduceOp::SUM);
  reduce_into(all, bin, 2, 3, kBool, ReduceOp::PRODUCT);
  EXPECT_EQ(std::vector<int>(any, any + 3), (std::vector<int>{1, 0, 1}));
  EXPECT_EQ(std::vector<int>(all, all + 3), (std::vector<int>{0, 0, 1}));
  EXPECT_ERROR("ReduceOp BAND is not defined", reduce_into(out, in, 2, 2, kFloat, ReduceOp::BAND));
}

TEST(ProcessGroupShm, BadOptionsAreRefused) {
  auto dir =
      std::filesystem::temp_directory_path() / ("brasa_shm_opts_" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  auto store = std::make_shared<FileStore>((dir / "store").string(), 1);
  ProcessGroupShm::Options o;
  o.chunk_bytes = 100;
  EXPECT_ERROR("chunk_bytes must be from 4096 to 1 GiB, got 100", ProcessGroupShm(store, 0, 1, o));
  EXPECT_ERROR("ProcessGroupShm: the store is null", ProcessGroupShm(nullptr, 0, 1));
  // A group of one works (everything is local).
  ProcessGroupShm one(store, 0, 1);
  std::vector<Tensor> t{full({3}, 2.0)};
  one.allreduce(t)->wait();
  EXPECT_VALUES(t[0], {2, 2, 2});
  std::filesystem::remove_all(dir);
}

std::set<std::string> dev_shm_entries() {
  std::set<std::string> names;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator("/dev/shm", ec))
    names.insert(e.path().filename().string());
  return names;
}

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// One rank: allreduces until it fails; writes "<time ns> <message>" to `out`.
[[noreturn]] void run_rank(int rank, const std::string& store_path, int out) {
  try {
    auto store = std::make_shared<FileStore>(store_path, 3);
    ProcessGroupShm::Options o;
    o.timeout = 30s;  // far longer than the death must take to be noticed
    ProcessGroupShm pg(store, rank, 3, o);
    pg.barrier()->wait();
    if (rank == 2)
      std::thread([] {
        std::this_thread::sleep_for(100ms);
        ::kill(::getpid(), SIGKILL);
      }).detach();
    Tensor t = ones({1 << 20});
    for (;;) {
      std::vector<Tensor> v{t};
      pg.allreduce(v)->wait();
    }
  } catch (const std::exception& e) {
    const std::string line = std::to_string(now_ns()) + " " + e.what();
    if (::write(out, line.data(), line.size()) < 0) ::_exit(3);
    ::_exit(0);
  }
}

TEST(ProcessGroupShm, ARankKilledMidCollectiveIsNamedWithinASecond) {
  const auto before = dev_shm_entries();
  auto dir =
      std::filesystem::temp_directory_path() / ("brasa_shm_kill_" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  int pipes[2][2];
  pid_t pids[3];
  for (int r = 0; r < 3; ++r) {
    if (r < 2) {
      ASSERT_EQ(::pipe(pipes[r]), 0);
    }
    pids[r] = ::fork();
    ASSERT_GE(pids[r], 0);
    if (pids[r] == 0) run_rank(r, (dir / "store").string(), r < 2 ? pipes[r][1] : -1);
    if (r < 2) ::close(pipes[r][1]);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pids[2], &status, 0), pids[2]);
  const int64_t died = now_ns();
  ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << "rank 2 was not killed";
  for (int r = 0; r < 2; ++r) {
    std::string text;
    char buf[4096];
    ssize_t n;
    while ((n = ::read(pipes[r][0], buf, sizeof buf)) > 0) text.append(buf, static_cast<size_t>(n));
    ::close(pipes[r][0]);
    ASSERT_EQ(::waitpid(pids[r], &status, 0), pids[r]);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "rank " << r;
    ASSERT_FALSE(text.empty()) << "rank " << r << " reported nothing";
    const double delay = (std::stod(text.substr(0, text.find(' '))) - died) / 1e9;
    const std::string message = text.substr(text.find(' ') + 1);
    std::printf("rank %d failed %.3f s after rank 2 died: %s\n", r, delay, message.c_str());
    EXPECT_LT(delay, 1.0) << "rank " << r << ": " << message;
    // Either it saw rank 2 gone itself, or it heard so from the other survivor.
    EXPECT_NE(message.find("rank 2 (pid " + std::to_string(pids[2]) + ") has exited"),
              std::string::npos)
        << "rank " << r << ": " << message;
  }
  // memfd segments have no name: nothing is left in /dev/shm.
  EXPECT_EQ(dev_shm_entries(), before);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace brasa::distributed
