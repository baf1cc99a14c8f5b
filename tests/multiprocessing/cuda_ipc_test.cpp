// CUDA tensors through multiprocessing::Queue (CUDA IPC). The processes that
// use CUDA are forked children of a parent that never touches CUDA itself (a
// child forked after its parent initialised CUDA cannot use it), so even the
// "is there a device" question is asked in a child. Without a device every
// test skips with "no CUDA device".
#include <brasa/cuda/memory.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include "../core/test_util.h"
#include "mp_test_util.h"

namespace brasa {
namespace {

namespace mp = brasa::multiprocessing;
using testing::require;

// Asked in a forked child so that this process stays free of CUDA.
bool cuda_device_in_a_child() {
  try {
    mp::spawn(
        [](int) {
          if (!cuda::is_available()) _exit(77);
        },
        1);
    return true;
  } catch (const mp::ProcessExitedException& e) {
    if (e.exit_code != 77) throw;
    return false;
  }
}

#define REQUIRE_CUDA_IN_CHILDREN() \
  if (!cuda_device_in_a_child()) GTEST_SKIP() << "no CUDA device"

bool mentions(const Error& e, const std::string& needle) {
  return e.message().find(needle) != std::string::npos;
}

TEST(CudaIpc, ConsumerWritesAreSeenByTheProducerAndViewsKeepTheirOffset) {
  REQUIRE_CUDA_IN_CHILDREN();
  mp::Queue to_consumer, to_producer;
  mp::spawn(
      [&](int rank) {
        if (rank == 0) {
          Tensor x = arange(1000, TensorOptions().dtype(kFloat)).cuda();
          Tensor part = x.slice(0, 10, 20);  // a view at an offset inside the block
          to_consumer.put(IValue(std::vector<Tensor>{x, part}));
          require(to_producer.get().toInt() == 1, "the consumer's acknowledgement");
          // The consumer added 1 to every element of the shared block.
          require(x.sum().item<double>() == 999.0 * 1000 / 2 + 1000, "consumer's writes seen");
          require(x[10].item<float>() == 11, "element 10");
          return;
        }
        std::vector<Tensor> v = to_consumer.get().toTensorVector();
        require(v.size() == 2 && v[0].is_cuda() && v[1].is_cuda(), "two CUDA tensors");
        require(v[1].numel() == 10 && v[1][0].item<float>() == 10, "the view's offset");
        v[0].add_(1);
        require(v[1][0].item<float>() == 11, "the view aliases the block in the consumer too");
        bool refused = false;
        try {
          to_producer.put(IValue(v[1]));
        } catch (const Error& e) {
          refused = mentions(e, "cannot be sent again");
        }
        require(refused, "a received CUDA tensor cannot be re-sent");
        cuda::synchronize();  // the add is done before the producer looks
        to_producer.put(IValue(int64_t(1)));
      },
      2);
}

TEST(CudaIpc, AProducerThatDropsItsTensorEarlyKeepsTheBlockForTheConsumer) {
  REQUIRE_CUDA_IN_CHILDREN();
  mp::Queue to_consumer, to_producer;
  mp::spawn(
      [&](int rank) {
        if (rank == 0) {
          const int64_t before = cuda::memory_allocated();
          {
            Tensor y = full({1 << 20}, 7.0, TensorOptions().device(kCUDA));
            to_consumer.put(IValue(y));
          }  // dropped before the consumer even received it
          cuda::empty_cache();
          require(cuda::ipc_collect() == 1, "the block waits in limbo for its consumer");
          // Still allocated: a new tensor does not get its memory.
          Tensor other = full({1 << 20}, -1.0, TensorOptions().device(kCUDA));
          to_consumer.put(IValue(int64_t(0)));  // now read it
          require(to_producer.get().toInt() == 1, "the consumer's acknowledgement");
          other.reset();
          cuda::empty_cache();  // collects the limbo: the consumer released it
          require(cuda::ipc_collect() == 0, "nothing waits any more");
          require(cuda::memory_allocated() == before, "the block is freed once released");
          return;
        }
        Tensor t = to_consumer.get().toTensor();
        require(to_consumer.get().toInt() == 0, "the go-ahead");
        require(t.sum().item<double>() == 7.0 * (1 << 20), "the values survived the producer");
        t.reset();  // released: the producer may free the block
        to_producer.put(IValue(int64_t(1)));
      },
      2);
}

TEST(CudaIpc, ManyTensorsFromOneBlockOpenItsHandleOnce) {
  REQUIRE_CUDA_IN_CHILDREN();
  mp::Queue to_consumer, to_producer;
  mp::spawn(
      [&](int rank) {
        if (rank == 0) {
          Tensor x = arange(64, TensorOptions().dtype(kFloat)).cuda();
          for (int i = 0; i < 64; ++i) to_consumer.put(IValue(x.slice(0, i, i + 1)));
          require(to_producer.get().toInt() == 2016, "the consumer's sum");
          return;
        }
        double sum = 0;
        std::vector<Tensor> keep;
        for (int i = 0; i < 64; ++i) {
          keep.push_back(to_consumer.get().toTensor());
          sum += keep.back().item<float>();
        }
        to_producer.put(IValue(int64_t(sum)));
      },
      2);
}

// Last in the file: this one initialises CUDA in the parent.
TEST(CudaIpc, CudaInAChildForkedAfterTheParentUsedItIsAClearError) {
  if (!cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  Tensor x = ones({4}).cuda();
  try {
    mp::spawn(
        [](int) {
          try {
            ones({4}).cuda();
          } catch (const Error& e) {
            require(mentions(e, "spawn"),
                    "the error points to the spawn start method: " + e.message());
            return;
          }
          require(false, "CUDA in a forked child must fail");
        },
        1);
  } catch (const mp::ProcessException& e) {
    FAIL() << e.what();
  }
  EXPECT_EQ(x.sum().item<float>(), 4) << "the parent still works";
}

}  // namespace
}  // namespace brasa
