#pragma once
// What the process-group tests share (process_group_test.cpp and
// process_group_more_test.cpp, one program): the groups every rank makes in
// the same order, and the inputs and expected results of the reductions.
// Inline, not file-local: both files must use the one world group and the
// one group counter (each group's store prefix).
#include <brasa/comm/distributed.h>
#include <brasa/comm/gloo/process_group_gloo.h>
#include <brasa/comm/mpi/process_group_mpi.h>
#include <brasa/comm/shm/process_group_shm.h>
#include <brasa/comm/store/prefix_store.h>
#include <gtest/gtest.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cstdlib>
#include <thread>

#include "../core/test_util.h"
#include "test_backend.h"

namespace brasa::distributed::pg_test {

using namespace std::chrono_literals;
using brasa::testing::values;

using testing::backend;

// A group of `ranks` (all when empty) with its own timeout. Every process
// calls it; non-members get null.
// `cross_memory`: whether the shm backend may reach private tensors with
// process_vm_readv/writev (false: it stages them through its slots).
inline std::shared_ptr<ProcessGroup> make_group(std::vector<int> ranks,
                                                std::chrono::milliseconds timeout,
                                                bool background = false, bool cross_memory = true) {
  static int groups = 0;
  if (backend() == "mpi") {
    ProcessGroupMPI::Options o;
    o.timeout = timeout;
    o.background_collectives = background;
    return ProcessGroupMPI::create(ranks, o);
  }
  const Rendezvous& rdv = testing::shared_rendezvous();
  const int index = groups++;
  if (ranks.empty())
    for (int r = 0; r < rdv.world_size; ++r) ranks.push_back(r);
  auto it = std::find(ranks.begin(), ranks.end(), rdv.rank);
  if (it == ranks.end()) return nullptr;
  auto store = std::make_shared<PrefixStore>("test_group_" + std::to_string(index), rdv.store);
  const int group_rank = static_cast<int>(it - ranks.begin());
  if (backend() == "shm") {
    ProcessGroupShm::Options o;
    o.timeout = timeout;
    o.background_collectives = background;
    // Small rounds, so that the tests' tensors take several.
    o.chunk_bytes = 4096;
    o.cross_memory_attach = cross_memory;
    return std::make_shared<ProcessGroupShm>(store, group_rank, static_cast<int>(ranks.size()), o);
  }
  ProcessGroupGloo::Options o;
  o.timeout = timeout;
  o.background_collectives = background;
  o.peer_host = rdv.master_addr;
  return std::make_shared<ProcessGroupGloo>(store, group_rank, static_cast<int>(ranks.size()), o);
}

inline std::shared_ptr<ProcessGroup> world() {
  static std::shared_ptr<ProcessGroup> pg = make_group({}, 30s);
  return pg;
}

inline int R() { return world()->rank(); }
inline int N() { return world()->size(); }

inline const std::vector<ScalarType> kAllTypes = {kFloat, kDouble, kHalf, kBFloat16, kLong,
                                                  kInt,   kShort,  kChar, kByte,     kBool};
inline const std::vector<ReduceOp> kAllOps = {ReduceOp::SUM, ReduceOp::AVG, ReduceOp::PRODUCT,
                                              ReduceOp::MIN, ReduceOp::MAX, ReduceOp::BAND,
                                              ReduceOp::BOR, ReduceOp::BXOR};

inline bool valid(ReduceOp op, ScalarType t) {
  bool bitwise = op == ReduceOp::BAND || op == ReduceOp::BOR || op == ReduceOp::BXOR;
  if (bitwise && isFloatingType(t)) return false;
  if (op == ReduceOp::AVG && !isFloatingType(t)) return false;
  return true;
}

// This rank's input value and the reduction of all ranks' inputs.
inline double input_value(ScalarType t, int rank) {
  return t == kBool ? (rank % 2 == 0) : rank + 1;
}

inline double expected(ReduceOp op, ScalarType t, int n) {
  double sum = 0, prod = 1, mn = 1e9, mx = -1e9;
  int64_t band = ~0LL, bor = 0, bxor = 0;
  for (int r = 0; r < n; ++r) {
    double v = input_value(t, r);
    sum += v;
    prod *= v;
    mn = std::min(mn, v);
    mx = std::max(mx, v);
    band &= static_cast<int64_t>(v);
    bor |= static_cast<int64_t>(v);
    bxor ^= static_cast<int64_t>(v);
  }
  if (t == kBool) {  // SUM/MAX: any; PRODUCT/MIN: all
    if (op == ReduceOp::SUM) return sum > 0;
    if (op == ReduceOp::PRODUCT) return prod != 0;
  }
  switch (op) {
    case ReduceOp::SUM:
      return sum;
    case ReduceOp::AVG:
      return sum / n;
    case ReduceOp::PRODUCT:
      return prod;
    case ReduceOp::MIN:
      return mn;
    case ReduceOp::MAX:
      return mx;
    case ReduceOp::BAND:
      return static_cast<double>(band);
    case ReduceOp::BOR:
      return static_cast<double>(bor);
    case ReduceOp::BXOR:
      return static_cast<double>(bxor);
  }
  return 0;
}

inline Tensor filled(std::vector<int64_t> shape, ScalarType t, double v) {
  return full(shape, v, TensorOptions().dtype(t));
}

inline void expect_all(const Tensor& t, double v, const std::string& what) {
  for (double x : values(t)) {
    ASSERT_DOUBLE_EQ(x, v) << what;
  }
}

}  // namespace brasa::distributed::pg_test
