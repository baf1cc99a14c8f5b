// The file_system sharing strategy: named segments in /dev/shm, passed by
// name, counted per process, removed by the last holder or by the sweep
// when their holders died. Real processes (fork), real /dev/shm.

#include <brasa/torch.h>
#include <dirent.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
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

// Named segments whose names start with `prefix` (other tests may be making
// their own at the same time: count a process's by its pid).
int segments(const std::string& prefix) {
  int n = 0;
  if (DIR* d = opendir("/dev/shm")) {
    while (dirent* e = readdir(d)) n += std::strncmp(e->d_name, prefix.c_str(), prefix.size()) == 0;
    closedir(d);
  }
  return n;
}
int my_segments(pid_t pid = getpid()) { return segments("brasa_fs_" + std::to_string(pid) + "_"); }
int all_segments() { return segments("brasa_fs_"); }

// Sets the strategy for one test and restores the default after it.
struct Strategy {
  explicit Strategy(const std::string& s) { mp::set_sharing_strategy(s); }
  ~Strategy() { mp::set_sharing_strategy("file_descriptor"); }
};

TEST(SharingStrategy, NamesAsInPyTorch) {
  EXPECT_EQ(mp::get_all_sharing_strategies(),
            (std::vector<std::string>{"file_descriptor", "file_system"}));
  EXPECT_EQ(mp::get_sharing_strategy(), "file_descriptor");
  {
    Strategy s("file_system");
    EXPECT_EQ(mp::get_sharing_strategy(), "file_system");
  }
  EXPECT_EQ(mp::get_sharing_strategy(), "file_descriptor");
  EXPECT_ERROR(
      "set_sharing_strategy: unknown strategy 'shm' (expected 'file_descriptor' or "
      "'file_system')",
      mp::set_sharing_strategy("shm"));
}

TEST(SharingStrategy, SegmentsHoldNoDescriptorAndGoWithTheLastReference) {
  Strategy s("file_system");
  const int fds = open_fds(), before = my_segments();
  std::vector<Tensor> kept;
  for (int i = 0; i < 50; ++i) kept.push_back(full({100}, i).share_memory_());
  EXPECT_EQ(open_fds(), fds);
  EXPECT_EQ(my_segments(), before + 50);
  EXPECT_TRUE(kept[7].is_shared());
  EXPECT_EQ(kept[7].storage()->kind(), AllocationKind::NamedSegment);
  EXPECT_EQ(values(kept[7][3]), std::vector<double>{7});
  Tensor empty = zeros({0}).share_memory_();
  EXPECT_TRUE(empty.is_shared());
  kept.clear();
  empty = Tensor();
  EXPECT_EQ(my_segments(), before);
  // A storage shared before the switch keeps its kind.
  mp::set_sharing_strategy("file_descriptor");
  Tensor m = ones({4}).share_memory_();
  mp::set_sharing_strategy("file_system");
  EXPECT_EQ(m.storage()->kind(), AllocationKind::Memfd);
}

TEST(SharingStrategy, QueueCarriesSegmentsByNameAndAliasingSurvives) {
  Strategy s("file_system");
  Tensor x = arange(12, TensorOptions().dtype(kFloat)).view({4, 3});
  mp::Queue to_child, to_parent;
  to_child.put(IValue(std::vector<Tensor>{x, x[2], x.select(1, 1)}));
  EXPECT_EQ(x.storage()->kind(), AllocationKind::NamedSegment);
  mp::spawn(
      [&](int) {
        auto list = to_child.get(std::chrono::seconds(10)).toTensorVector();
        require(list.size() == 3, "three tensors");
        require(list[0].storage()->kind() == AllocationKind::NamedSegment, "a named segment");
        require(list[1].is_alias_of(list[0]) && list[2].is_alias_of(list[0]), "one storage");
        list[1].fill_(100);
        list[2].mul_(-1);
        to_parent.put(IValue(list[0]));
      },
      1);
  EXPECT_EQ(values(x[2]), (std::vector<double>{100, -100, 100}));
  Tensor back = to_parent.get(std::chrono::seconds(10)).toTensor();
  back[0][0].fill_(7);
  EXPECT_EQ(x[0][0].item<double>(), 7);
}

TEST(SharingStrategy, AQueuedMessageOutlivesItsSender) {
  Strategy s("file_system");
  mp::Queue q;
  mp::spawn([&](int) { q.put(IValue(full({1000}, 3.0))); }, 1);  // the child is gone
  Tensor t = q.get(std::chrono::seconds(10)).toTensor();
  EXPECT_EQ(t.sum().item<double>(), 3000);
  // Sent again while held: the same mapping.
  q.put(IValue(t));
  EXPECT_TRUE(q.get(std::chrono::seconds(10)).toTensor().is_alias_of(t));
}

TEST(SharingStrategy, ManyStoragesUnderASmallDescriptorLimit) {
  Strategy s("file_system");
  mp::spawn(
      [](int) {
        rlimit r{64, 64};
        require(setrlimit(RLIMIT_NOFILE, &r) == 0, "setrlimit");
        std::vector<Tensor> kept;
        for (int i = 0; i < 200; ++i) kept.push_back(full({8}, i).share_memory_());
        require(kept[199][0].item<double>() == 199, "values");
      },
      1);
}

// A process that dies holding segments leaves them for the sweep, which
// start_processes runs when it reaps a killed child.
TEST(SharingStrategy, SegmentsOfKilledProcessesAreSwept) {
  Strategy s("file_system");
  int pipe_fds[2];
  ASSERT_EQ(pipe(pipe_fds), 0);
  pid_t pid = fork();
  if (pid == 0) {
    std::vector<Tensor> kept;
    for (int i = 0; i < 3; ++i) kept.push_back(ones({64}).share_memory_());
    char c = 1;
    (void)!write(pipe_fds[1], &c, 1);
    pause();
    _exit(0);
  }
  char c;
  ASSERT_EQ(read(pipe_fds[0], &c, 1), 1);
  close(pipe_fds[0]);
  close(pipe_fds[1]);
  EXPECT_EQ(my_segments(pid), 3);
  // Other tests run beside this one and sweep too, so the counts the sweep
  // returns may include their dead processes' segments or miss ours (taken
  // by their sweep): what is asserted is whose segments are left.
  mp::sweep_shared_memory();
  EXPECT_EQ(my_segments(pid), 3);  // alive: its segments stay
  kill(pid, SIGKILL);
  int status;
  waitpid(pid, &status, 0);
  mp::sweep_shared_memory();
  EXPECT_EQ(my_segments(pid), 0);

  // Through start_processes: the killed child's segments go when it is reaped.
  pid_t child = 0;
  try {
    mp::spawn(
        [](int) {
          std::vector<Tensor> kept;
          for (int i = 0; i < 3; ++i) kept.push_back(ones({64}).share_memory_());
          raise(SIGKILL);
        },
        1);
  } catch (const mp::ProcessExitedException& e) {
    child = e.pid;
    EXPECT_EQ(e.signal_name, "SIGKILL");
  }
  ASSERT_NE(child, 0);
  EXPECT_EQ(my_segments(child), 0);
}

// Children killed at random points of sending and receiving, by a process
// that then exits: nothing of theirs or its is left in /dev/shm, and it kept
// no extra descriptor. (While it lives, a child killed in the middle of
// taking a message leaves that message's reference with it, the queue's
// maker: it gives it up when it exits.)
TEST(SharingStrategy, SigkilledChildrenLeakNothing) {
  Strategy s("file_system");
  constexpr int kKills = 100;
  Tensor pids = zeros({kKills + 1}, TensorOptions().dtype(kLong)).share_memory_();
  mp::spawn(
      [&](int) {
        pids[kKills].fill_(static_cast<int64_t>(getpid()));
        const int fds_before = open_fds();
        auto children = brasa::testing::kill_children_while_sharing(kKills, 11);
        for (int i = 0; i < kKills; ++i) pids[i].fill_(static_cast<int64_t>(children[i]));
        require(open_fds() == fds_before, "no descriptor left behind");
      },
      1);
  const auto* p = pids.data_ptr<int64_t>();
  for (int i = 0; i <= kKills; ++i)
    EXPECT_EQ(my_segments(static_cast<pid_t>(p[i])), 0) << "process " << p[i];
}

// /dev/shm replaced by a 1 MiB tmpfs in a private mount namespace: sharing
// 4 MiB is an error that says the limit is reached, not a SIGBUS later.
TEST(SharingStrategy, AFullDevShmIsAnError) {
  Strategy s("file_system");
  try {
    mp::spawn(
        [](int) {
          if (unshare(CLONE_NEWNS) != 0 ||
              mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0 ||
              mount("tmpfs", "/dev/shm", "tmpfs", 0, "size=1m") != 0)
            _exit(77);  // not permitted here
          try {
            zeros({1 << 20}).share_memory_();
          } catch (const Error& e) {
            require(std::string(e.what()).find("the shared-memory limit (tmpfs size or memory "
                                               "cgroup) is reached") != std::string::npos,
                    std::string("the message: ") + e.what());
            require(all_segments() == 0, "the failed segment is removed");
            return;
          }
          require(false, "no error sharing 4 MiB in a 1 MiB /dev/shm");
        },
        1);
  } catch (const mp::ProcessExitedException& e) {
    if (e.exit_code == 77) GTEST_SKIP() << "cannot mount a tmpfs in a private namespace here";
    throw;
  }
}

}  // namespace
