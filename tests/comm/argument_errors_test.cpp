// The argument errors of the process groups and of init_process_group, on a
// one-rank Gloo group over a HashStore (no other process needed): every
// message names the operation and what was expected.

#include <brasa/device/device_runtime.h>
#include <brasa/comm/distributed.h>
#include <brasa/comm/gloo/process_group_gloo.h>
#include <brasa/comm/shm/process_group_hierarchical.h>
#include <brasa/comm/store/hash_store.h>
#include <gtest/gtest.h>

#include <cstdlib>

#include "../core/test_util.h"

namespace brasa::distributed {
namespace {

std::shared_ptr<ProcessGroupGloo> solo() {
  static auto pg = std::make_shared<ProcessGroupGloo>(std::make_shared<HashStore>(), 0, 1);
  return pg;
}

Tensor f(std::vector<int64_t> shape) { return zeros(shape); }

TEST(ProcessGroupArguments, WorkOnOneRank) {
  std::vector<Tensor> t{full({3}, 2.0)};
  AllreduceOptions o;
  o.reduceOp = ReduceOp::AVG;
  solo()->allreduce(t, o)->wait();
  EXPECT_VALUES(t[0], {2, 2, 2});
}

TEST(ProcessGroupArguments, MessagesNameTheProblem) {
  auto pg = solo();
  Tensor out = f({3}), in = f({2});
  EXPECT_ERROR(
      "gloo.allgather_into_tensor: output must have 1 x 2 elements of Float, got 3 elements of "
      "Float",
      pg->allgather_into_tensor(out, in));
  Tensor whole = f({5}), part = f({2});
  EXPECT_ERROR("gloo.reduce_scatter_tensor: input must have 1 x 2 elements of Float, got 5",
               pg->reduce_scatter_tensor(part, whole));
  std::vector<Tensor> one{f({2})};
  std::vector<std::vector<Tensor>> two_lists{{f({2})}, {f({2})}};
  EXPECT_ERROR("gloo.allgather: expects one outputs list, got 2", pg->allgather(two_lists, one));
  GatherOptions go;
  go.rootRank = 1;
  std::vector<std::vector<Tensor>> none;
  EXPECT_ERROR("gloo.gather: root 1 is not a rank of this group (size 1)",
               pg->gather(none, one, go));
  std::vector<Tensor> outs{f({2}), f({2})}, ins{f({2})};
  EXPECT_ERROR("gloo.alltoall: expects one input and one output tensor per rank (1), got 1 and 2",
               pg->alltoall(outs, ins));
  std::vector<Tensor> o1{f({2})}, i1{zeros({2}, TensorOptions().dtype(kLong))};
  EXPECT_ERROR("gloo.alltoall: all tensors must have dtype Long", pg->alltoall(o1, i1));
  Tensor a = f({4, 2}), b = f({4, 2});
  std::vector<int64_t> bad_sum{3}, negative{-1}, none_split;
  EXPECT_ERROR("gloo.alltoall_base: input split sizes add up to 3 but its first dimension is 4",
               pg->alltoall_base(b, a, none_split, bad_sum));
  EXPECT_ERROR("gloo.alltoall_base: negative split size -1",
               pg->alltoall_base(b, a, negative, none_split));
  EXPECT_ERROR("gloo.send: the tag must be >= 0, got -3", pg->send(one, 0, -3));
  std::vector<Tensor> mixed{f({1}), zeros({1}, TensorOptions().dtype(kInt))};
  EXPECT_ERROR("gloo.allreduce_coalesced: all tensors must have one dtype",
               pg->allreduce_coalesced(mixed));
  std::vector<Tensor> empty_list;
  EXPECT_ERROR("gloo.allreduce_coalesced: no tensors given", pg->allreduce_coalesced(empty_list));
  EXPECT_ERROR("ProcessGroup: rank 2 is not in [0, 2)",
               ProcessGroupGloo(std::make_shared<HashStore>(), 2, 2));
  ProcessGroupGloo::Options zero;
  zero.timeout = std::chrono::milliseconds(0);
  EXPECT_ERROR("ProcessGroup: the timeout must be positive, got 0 ms",
               ProcessGroupGloo(std::make_shared<HashStore>(), 0, 1, zero));
  EXPECT_ERROR("ProcessGroupGloo: the store is null", ProcessGroupGloo(nullptr, 0, 1));
}

TEST(InitProcessGroup, Errors) {
  for (const char* v : {"RANK", "WORLD_SIZE", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE",
                        "PMI_RANK", "PMI_SIZE"})
    unsetenv(v);
  EXPECT_ERROR("init_process_group(env://): RANK and WORLD_SIZE are not set",
               init_process_group("gloo"));
  EXPECT_ERROR(
      "init_process_group: unknown backend 'ucc' (this build has: mpi, gloo, shm, shm+gloo, "
      "shm+mpi",
      init_process_group("ucc", std::make_shared<HashStore>(), 1, 0));
  // "needs a CUDA build" without CUDA; with CUDA but no device, ProcessGroupNCCL says so.
  const char* no_nccl =
      find_device_runtime(kCUDA) ? "NCCL needs a CUDA device" : "needs a CUDA build";
  if (!cuda::is_available())
    EXPECT_ERROR(no_nccl, init_process_group("nccl", std::make_shared<HashStore>(), 1, 0));
  EXPECT_ERROR("init_process_group: the store is null",
               init_process_group("gloo", std::shared_ptr<Store>(), 1, 0));
  EXPECT_FALSE(is_initialized());
  init_process_group("gloo", std::make_shared<HashStore>(), 1, 0);
  EXPECT_EQ(get_world_size(), 1);
  EXPECT_ERROR("already initialized (backend gloo)",
               init_process_group("gloo", std::make_shared<HashStore>(), 1, 0));
  destroy_process_group();
  ProcessGroupHierarchical::Options h;
  h.inter_node = "tcp";
  EXPECT_ERROR("ProcessGroupHierarchical: the network backend must be gloo or mpi, got 'tcp'",
               ProcessGroupHierarchical(std::make_shared<HashStore>(), 0, 1, h));
  // A world of one on shared memory, and a hierarchical one of one node.
  for (const char* backend : {"shm", "shm+gloo"}) {
    init_process_group(backend, std::make_shared<HashStore>(), 1, 0);
    Tensor t = full({4}, 3.0);
    all_reduce(t);
    EXPECT_VALUES(t, {3, 3, 3, 3});
    EXPECT_EQ(get_backend(), backend);
    destroy_process_group();
  }
}

}  // namespace
}  // namespace brasa::distributed
