// ProcessGroupNCCL in one process (CUDA builds): without a device its
// construction says why; with one, a group of one rank runs every
// collective (more ranks need more GPUs).
#include <brasa/comm/errors.h>
#include <brasa/comm/nccl/process_group_nccl.h>
#include <brasa/comm/store/hash_store.h>

#include "../../core/test_util.h"

namespace brasa::distributed {
namespace {

TEST(ProcessGroupNCCL, WithoutADeviceConstructionSaysWhy) {
  if (cuda::is_available()) GTEST_SKIP() << "a CUDA device is present";
  EXPECT_ERROR("ProcessGroupNCCL: NCCL needs a CUDA device and none is available (",
               ProcessGroupNCCL(std::make_shared<HashStore>(), 0, 1));
}

TEST(ProcessGroupNCCL, OneRankRunsTheCollectives) {
  if (!cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  ProcessGroupNCCL pg(std::make_shared<HashStore>(), 0, 1);
  std::vector<Tensor> t{arange(6, TensorOptions().dtype(kFloat)).cuda()};
  pg.allreduce(t)->wait();
  EXPECT_VALUES(t[0].cpu(), {0, 1, 2, 3, 4, 5});
  AllreduceOptions avg;
  avg.reduceOp = ReduceOp::MAX;
  pg.allreduce(t, avg)->wait();
  pg.broadcast(t)->wait();
  Tensor out = empty({6}, TensorOptions().device(kCUDA));
  pg.allgather_into_tensor(out, t[0])->wait();
  EXPECT_VALUES(out.cpu(), {0, 1, 2, 3, 4, 5});
  std::vector<std::vector<Tensor>> outs{{empty({6}, TensorOptions().device(kCUDA))}};
  pg.allgather(outs, t)->wait();
  EXPECT_VALUES(outs[0][0].cpu(), {0, 1, 2, 3, 4, 5});
  Tensor part = empty({6}, TensorOptions().device(kCUDA));
  pg.reduce_scatter_tensor(part, t[0])->wait();  // one rank: its own input
  EXPECT_VALUES(part.cpu(), {0, 1, 2, 3, 4, 5});
  std::vector<Tensor> several{ones({3}).cuda(), full({2}, 2.0).cuda()};
  pg.allreduce_coalesced(several)->wait();
  EXPECT_VALUES(several[1].cpu(), {2, 2});
  Tensor short_output = empty({5}, TensorOptions().device(kCUDA));
  EXPECT_ERROR("nccl.allgather_into_tensor: output must have 1 x 6 elements of Float, got 5",
               pg.allgather_into_tensor(short_output, t[0]));
  pg.barrier()->wait();
  EXPECT_ERROR("expected CUDA tensors", [&] {
    std::vector<Tensor> cpu{ones({2})};
    pg.allreduce(cpu);
  }());
  AllreduceOptions band;
  band.reduceOp = ReduceOp::BAND;
  EXPECT_ERROR("ReduceOp.BAND is not supported by NCCL", pg.allreduce(t, band));
  std::vector<Tensor> r{ones({1}).cuda()};
  EXPECT_ERROR("NCCL cannot receive from any source", pg.recv_anysource(r, 0));
}

}  // namespace
}  // namespace brasa::distributed
