// The NCCL watchdog's logic over fake operations and a fake clock.
#include <brasa/comm/errors.h>
#include <brasa/comm/nccl/watchdog.h>
#include <gtest/gtest.h>

#include <atomic>

namespace brasa::distributed {
namespace {

using namespace std::chrono_literals;
using Clock = Watchdog::Clock;

struct FakeOp : WatchedOp {
  FakeOp(std::shared_ptr<Work> w, uint64_t seq, Clock::time_point start, bool* done,
         std::chrono::milliseconds timeout = 1000ms)
      : WatchedOp(std::move(w), seq, "ALLREDUCE", 256, start, timeout), done(done) {}
  bool device_done() override { return *done; }
  bool* done;
};

struct Fixture {
  Clock::time_point t0 = Clock::time_point{} + 1h, now = t0;
  std::string async;
  int aborts = 0;
  std::string abort_reason;
  Watchdog dog{Watchdog::Hooks{[this] { return now; }, [this] { return async; },
                               [this](const std::string& r) {
                                 ++aborts;
                                 abort_reason = r;
                               }}};
  std::shared_ptr<Work> add(uint64_t seq, bool* done, std::chrono::milliseconds timeout = 1000ms) {
    auto w = std::make_shared<Work>("allreduce");
    dog.watch(std::make_unique<FakeOp>(w, seq, now, done, timeout));
    return w;
  }
};

std::string error_of(const std::shared_ptr<Work>& w) {
  try {
    w->wait();
  } catch (const Error& e) {
    return e.message();
  }
  return "";
}

TEST(NcclWatchdog, CompletesOperationsInOrderAsTheDeviceFinishesThem) {
  Fixture f;
  bool d1 = false, d2 = false;
  auto w1 = f.add(1, &d1), w2 = f.add(2, &d2);
  EXPECT_EQ(f.dog.poll(), 2u);
  d2 = true;  // the later one is done, the earlier is not: nothing completes out of order
  EXPECT_EQ(f.dog.poll(), 2u);
  EXPECT_FALSE(w2->is_completed());
  d1 = true;
  EXPECT_EQ(f.dog.poll(), 0u);
  EXPECT_TRUE(w1->is_success());
  EXPECT_TRUE(w2->is_success());
  EXPECT_EQ(f.aborts, 0);
}

TEST(NcclWatchdog, ATimeoutAbortsTheCommunicatorAndFailsEveryOperation) {
  Fixture f;
  bool d1 = false, d2 = false;
  auto w1 = f.add(7, &d1), w2 = f.add(8, &d2);
  f.now += 999ms;
  EXPECT_EQ(f.dog.poll(), 2u) << "not yet past the timeout";
  f.now += 2ms;
  EXPECT_EQ(f.dog.poll(), 0u);
  EXPECT_EQ(f.aborts, 1);
  const std::string expected =
      "Watchdog caught collective operation timeout: WorkNCCL(SeqNum=7, OpType=ALLREDUCE, "
      "NumelIn=256, Timeout(ms)=1000) ran for 1001 milliseconds before timing out.";
  EXPECT_EQ(f.abort_reason, expected);
  EXPECT_EQ(error_of(w1), expected);
  EXPECT_EQ(error_of(w2), expected) << "the operations after it fail with it";
  try {
    w1->wait();
  } catch (const DistTimeoutError&) {
  } catch (...) {
    ADD_FAILURE() << "a timeout is a DistTimeoutError";
  }
  // The group refuses further work, naming the first failure.
  bool d3 = true;
  auto w3 = f.add(9, &d3);
  EXPECT_NE(error_of(w3).find("refused: the process group failed earlier: Watchdog caught"),
            std::string::npos)
      << error_of(w3);
  EXPECT_EQ(f.dog.failure(), expected);
  f.now += 1h;
  f.dog.poll();
  EXPECT_EQ(f.aborts, 1) << "aborted once";
}

TEST(NcclWatchdog, EachOperationHasItsOwnTimeout) {
  Fixture f;
  bool d1 = false, d2 = false;
  auto w1 = f.add(1, &d1, 10000ms);
  auto w2 = f.add(2, &d2, 50ms);
  f.now += 60ms;
  f.dog.poll();
  EXPECT_NE(f.abort_reason.find("WorkNCCL(SeqNum=2"), std::string::npos) << f.abort_reason;
  EXPECT_FALSE(w1->is_success());
}

TEST(NcclWatchdog, AnAsynchronousCommunicatorErrorFailsTheGroup) {
  Fixture f;
  bool d1 = false;
  auto w1 = f.add(3, &d1);
  f.async = "remote process exited or there was a network error";
  f.dog.poll();
  EXPECT_EQ(f.aborts, 1);
  const std::string m = error_of(w1);
  EXPECT_NE(m.find("NCCL communicator error while WorkNCCL(SeqNum=3, OpType=ALLREDUCE"),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("remote process exited"), std::string::npos);
  try {
    w1->wait();
  } catch (const DistBackendError&) {
  } catch (...) {
    ADD_FAILURE() << "a communicator error is a DistBackendError";
  }
}

TEST(NcclWatchdog, TheThreadCompletesWorkAndDestructionFailsWhatIsLeft) {
  std::shared_ptr<Work> done_work, stuck_work;
  {
    std::atomic<bool> finished{false};
    struct AtomicOp : WatchedOp {
      AtomicOp(std::shared_ptr<Work> w, std::atomic<bool>* d)
          : WatchedOp(std::move(w), 1, "BROADCAST", 4, Clock::now(), 60000ms), d(d) {}
      bool device_done() override { return d->load(); }
      std::atomic<bool>* d;
    };
    Watchdog dog{Watchdog::Hooks{}};
    dog.start(1ms);
    done_work = std::make_shared<Work>("broadcast");
    dog.watch(std::make_unique<AtomicOp>(done_work, &finished));
    finished = true;
    EXPECT_TRUE(done_work->wait(10000ms));
    static std::atomic<bool> never{false};
    stuck_work = std::make_shared<Work>("broadcast");
    dog.watch(std::make_unique<AtomicOp>(stuck_work, &never));
  }
  EXPECT_TRUE(done_work->is_success());
  EXPECT_NE(error_of(stuck_work).find("destroyed with the operation in flight"), std::string::npos);
}

}  // namespace
}  // namespace brasa::distributed
