#include "process_group.h"

#include <brasa/comm/errors.h>

#include <sstream>

namespace brasa::distributed {

const char* to_string(CollectiveKind kind) {
  switch (kind) {
    case CollectiveKind::kBroadcast: return "broadcast";
    case CollectiveKind::kAllreduce: return "allreduce";
    case CollectiveKind::kAllreduceCoalesced: return "allreduce_coalesced";
    case CollectiveKind::kReduce: return "reduce";
    case CollectiveKind::kAllgather: return "allgather";
    case CollectiveKind::kAllgatherIntoTensor: return "allgather_into_tensor";
    case CollectiveKind::kGather: return "gather";
    case CollectiveKind::kScatter: return "scatter";
    case CollectiveKind::kReduceScatter: return "reduce_scatter";
    case CollectiveKind::kReduceScatterTensor: return "reduce_scatter_tensor";
    case CollectiveKind::kAlltoall: return "alltoall";
    case CollectiveKind::kAlltoallBase: return "alltoall_base";
    case CollectiveKind::kBarrier: return "barrier";
  }
  return "?";
}

std::string Fingerprint::describe() const {
  std::ostringstream os;
  os << to_string(kind) << "(";
  if (dtype >= 0) os << toString(static_cast<ScalarType>(dtype)) << ", " << numel << " elements";
  switch (kind) {
    case CollectiveKind::kAllreduce:
    case CollectiveKind::kAllreduceCoalesced:
    case CollectiveKind::kReduce:
    case CollectiveKind::kReduceScatter:
    case CollectiveKind::kReduceScatterTensor:
      os << ", " << to_string(static_cast<ReduceOp>(reduce_op));
      break;
    default:
      break;
  }
  if (root >= 0) os << ", root " << root;
  os << ") #" << sequence;
  return os.str();
}

ProcessGroup::ProcessGroup(int rank, int size, std::chrono::milliseconds timeout)
    : rank_(rank), size_(size), timeout_(timeout) {
  BRASA_CHECK(size > 0 && rank >= 0 && rank < size, "ProcessGroup: rank ", rank, " is not in [0, ", size, ")");
  BRASA_CHECK(timeout.count() > 0, "ProcessGroup: the timeout must be positive, got ", timeout.count(), " ms");
}

const Tensor& ProcessGroup::single(const char* op, const std::vector<Tensor>& tensors, const char* what) const {
  BRASA_CHECK(tensors.size() == 1, name(op), ": expects exactly one tensor in ", what, " (one per device; ",
              backend_name(), " is CPU-only), got ", tensors.size());
  const Tensor& t = tensors[0];
  BRASA_CHECK(t.defined(), name(op), ": the tensor in ", what, " is undefined");
  BRASA_CHECK(t.is_cpu(), name(op), ": ", backend_name(), " takes CPU tensors, got one on ", t.device().str());
  return t;
}

void ProcessGroup::check_rank(const char* op, const char* what, int64_t rank) const {
  BRASA_CHECK(rank >= 0 && rank < size_, name(op), ": ", what, " ", rank, " is not a rank of this group (size ",
              size_, ")");
}

void ProcessGroup::check_reduce_op(const char* op, ReduceOp reduce_op, ScalarType dtype) const {
  const bool bitwise = reduce_op == ReduceOp::BAND || reduce_op == ReduceOp::BOR || reduce_op == ReduceOp::BXOR;
  BRASA_CHECK(!(bitwise && isFloatingType(dtype)), name(op), ": ReduceOp ", to_string(reduce_op),
              " needs an integer or bool tensor, got ", toString(dtype));
  BRASA_CHECK(!(reduce_op == ReduceOp::AVG && !isFloatingType(dtype)), name(op),
              ": ReduceOp AVG needs a floating-point tensor, got ", toString(dtype));
}

void ProcessGroup::check_like(const char* op, const Tensor& t, const Tensor& reference, const std::string& what) const {
  BRASA_CHECK(t.defined() && t.is_cpu(), name(op), ": ", what, " must be a defined CPU tensor");
  BRASA_CHECK(t.scalar_type() == reference.scalar_type(), name(op), ": ", what, " has dtype ",
              toString(t.scalar_type()), " but the input has ", toString(reference.scalar_type()));
  BRASA_CHECK(t.numel() == reference.numel(), name(op), ": ", what, " has ", t.numel(),
              " elements but the input has ", reference.numel());
}

void ProcessGroup::check_list(const char* op, const std::vector<Tensor>& list, const Tensor& reference,
                              const char* what) const {
  BRASA_CHECK(static_cast<int>(list.size()) == size_, name(op), ": ", what, " must hold one tensor per rank (",
              size_, "), got ", list.size());
  for (size_t r = 0; r < list.size(); ++r) check_like(op, list[r], reference, std::string(what) + "[" + std::to_string(r) + "]");
}

Fingerprint ProcessGroup::next(CollectiveKind kind, const Tensor& t, int64_t numel, ReduceOp reduce_op, int64_t root) {
  Fingerprint f;
  f.sequence = ++sequence_;
  f.kind = kind;
  f.dtype = t.defined() ? static_cast<int8_t>(t.scalar_type()) : -1;
  f.reduce_op = static_cast<uint8_t>(reduce_op);
  f.root = static_cast<int32_t>(root);
  f.numel = numel;
  return f;
}

}  // namespace brasa::distributed
