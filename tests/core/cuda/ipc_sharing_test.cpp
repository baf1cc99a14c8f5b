// The reference counting of CUDA tensors shared between processes, without a
// GPU: the counters live in shared memory, so a forked consumer's release is
// seen by the producer.
#include <brasa/cuda/ipc_sharing.h>

#include "../test_util.h"

#include <sys/wait.h>
#include <unistd.h>

namespace brasa::cuda {
namespace {

// What a consumer receives: its own descriptor of the counter file.
IpcSlot received(const IpcSlot& s) { return {dup(s.fd), s.file_bytes, s.index}; }

TEST(CudaIpcSharing, ABlockDroppedByItsProducerWaitsForItsConsumers) {
  IpcProducer p;
  int block = 0;
  IpcSlot s1 = p.add_consumer(&block);
  IpcSlot s2 = p.add_consumer(&block);  // sent twice
  EXPECT_EQ(s1.index, s2.index) << "one slot per block";
  EXPECT_EQ(p.consumers(&block), 2);
  auto c1 = std::make_unique<IpcConsumerRef>(received(s1));
  auto c2 = std::make_unique<IpcConsumerRef>(received(s2));
  int released = 0;
  EXPECT_FALSE(p.producer_done(&block, [&] { ++released; })) << "consumers still hold it";
  EXPECT_EQ(p.in_limbo(), 1u);
  c1.reset();
  EXPECT_EQ(p.collect(), 1u);
  EXPECT_EQ(released, 0);
  c2.reset();
  EXPECT_EQ(p.collect(), 0u);
  EXPECT_EQ(released, 1) << "freed once the last consumer let go";
  EXPECT_EQ(p.collect(), 0u);
  EXPECT_EQ(released, 1);
  EXPECT_FALSE(p.exported(&block));
}

TEST(CudaIpcSharing, ABlockWhoseConsumersAreDoneIsFreedAtOnce) {
  IpcProducer p;
  int block = 0, never_sent = 0;
  { IpcConsumerRef c(received(p.add_consumer(&block))); }
  EXPECT_EQ(p.consumers(&block), 0);
  EXPECT_TRUE(p.producer_done(&block, [] { ADD_FAILURE() << "not through limbo"; }));
  EXPECT_TRUE(p.producer_done(&never_sent, [] {}));
  EXPECT_EQ(p.in_limbo(), 0u);
}

TEST(CudaIpcSharing, AConsumerInAnotherProcessReleasesThroughSharedMemory) {
  IpcProducer p;
  int block = 0;
  IpcSlot s = p.add_consumer(&block);
  int released = 0;
  ASSERT_FALSE(p.producer_done(&block, [&] { ++released; }));
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    { IpcConsumerRef c(received(s)); }  // maps the counters and decrements
    _exit(0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  EXPECT_EQ(p.collect(), 0u);
  EXPECT_EQ(released, 1);
}

TEST(CudaIpcSharing, SlotsSpillIntoNewCounterFiles) {
  IpcProducer p;
  std::vector<char> blocks(IpcProducer::kSlotsPerFile + 1);
  IpcSlot first = p.add_consumer(&blocks[0]);
  IpcSlot last{};
  for (size_t i = 1; i < blocks.size(); ++i) last = p.add_consumer(&blocks[i]);
  EXPECT_EQ(last.index, 0) << "the 1025th block starts a new file";
  EXPECT_NE(last.fd, first.fd);
  EXPECT_EQ(first.file_bytes, IpcProducer::kSlotsPerFile * sizeof(int64_t));
  EXPECT_ERROR("CUDA IPC: a malformed reference slot",
               IpcConsumerRef(IpcSlot{dup(first.fd), first.file_bytes, 1 << 20}));
}

TEST(CudaIpcSharing, EachHandleIsOpenedOnceAndClosedAfterItsLastUser) {
  std::map<std::string, int> opens;
  std::vector<void*> closed;
  char segment_a = 0, segment_b = 0;
  IpcHandleCache cache(
      [&](const std::string& h) -> void* {
        if (h == "bad") BRASA_ERROR("cudaIpcOpenMemHandle failed");
        ++opens[h];
        return h == "a" ? &segment_a : &segment_b;
      },
      [&](void* base) { closed.push_back(base); });
  EXPECT_EQ(cache.acquire("a"), &segment_a);
  EXPECT_EQ(cache.acquire("a"), &segment_a);
  EXPECT_EQ(cache.acquire("b"), &segment_b);
  EXPECT_EQ(opens["a"], 1);
  EXPECT_EQ(cache.open_handles(), 2u);
  cache.release("a");
  EXPECT_TRUE(closed.empty());
  cache.release("a");
  ASSERT_EQ(closed.size(), 1u);
  EXPECT_EQ(closed[0], &segment_a);
  EXPECT_ERROR("cudaIpcOpenMemHandle failed", cache.acquire("bad"));
  EXPECT_EQ(cache.open_handles(), 1u) << "a failed open leaves nothing behind";
  cache.release("b");
  EXPECT_EQ(cache.open_handles(), 0u);
}

}  // namespace
}  // namespace brasa::cuda
