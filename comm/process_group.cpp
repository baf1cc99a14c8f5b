#include "process_group.h"

#include <brasa/comm/errors.h>

#include <sstream>

namespace brasa::distributed {

const char* to_string(CollectiveKind kind) {
  switch (kind) {
    case CollectiveKind::kBroadcast:
      return "broadcast";
    case CollectiveKind::kAllreduce:
      return "allreduce";
    case CollectiveKind::kAllreduceCoalesced:
      return "allreduce_coalesced";
    case CollectiveKind::kReduce:
      return "reduce";
    case CollectiveKind::kAllgather:
      return "allgather";
    case CollectiveKind::kAllgatherIntoTensor:
      return "allgather_into_tensor";
    case CollectiveKind::kGather:
      return "gather";
    case CollectiveKind::kScatter:
      return "scatter";
    case CollectiveKind::kReduceScatter:
      return "reduce_scatter";
    case CollectiveKind::kReduceScatterTensor:
      return "reduce_scatter_tensor";
    case CollectiveKind::kAlltoall:
      return "alltoall";
    case CollectiveKind::kAlltoallBase:
      return "alltoall_base";
    case CollectiveKind::kBarrier:
      return "barrier";
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
  BRASA_CHECK(size > 0 && rank >= 0 && rank < size, "ProcessGroup: rank ", rank, " is not in [0, ",
              size, ")");
  BRASA_CHECK(timeout.count() > 0, "ProcessGroup: the timeout must be positive, got ",
              timeout.count(), " ms");
}

const Tensor& ProcessGroup::single(const char* op, const std::vector<Tensor>& tensors,
                                   const char* what) const {
  BRASA_CHECK(tensors.size() == 1, name(op), ": expects exactly one tensor in ", what,
              " (one per device; ", backend_name(), " is CPU-only), got ", tensors.size());
  const Tensor& t = tensors[0];
  BRASA_CHECK(t.defined(), name(op), ": the tensor in ", what, " is undefined");
  BRASA_CHECK(t.is_cpu(), name(op), ": ", backend_name(), " takes CPU tensors, got one on ",
              t.device().str());
  return t;
}

void ProcessGroup::check_rank(const char* op, const char* what, int64_t rank) const {
  BRASA_CHECK(rank >= 0 && rank < size_, name(op), ": ", what, " ", rank,
              " is not a rank of this group (size ", size_, ")");
}

void ProcessGroup::check_reduce_op(const char* op, ReduceOp reduce_op, ScalarType dtype) const {
  const bool bitwise =
      reduce_op == ReduceOp::BAND || reduce_op == ReduceOp::BOR || reduce_op == ReduceOp::BXOR;
  BRASA_CHECK(!(bitwise && isFloatingType(dtype)), name(op), ": ReduceOp ", to_string(reduce_op),
              " needs an integer or bool tensor, got ", toString(dtype));
  BRASA_CHECK(!(reduce_op == ReduceOp::AVG && !isFloatingType(dtype)), name(op),
              ": ReduceOp AVG needs a floating-point tensor, got ", toString(dtype));
}

void ProcessGroup::check_like(const char* op, const Tensor& t, const Tensor& reference,
                              const std::string& what) const {
  BRASA_CHECK(t.defined() && t.device().type() == tensor_device_type(), name(op), ": ", what,
              " must be a defined ", tensor_device_type() == kCUDA ? "CUDA" : "CPU", " tensor");
  BRASA_CHECK(t.scalar_type() == reference.scalar_type(), name(op), ": ", what, " has dtype ",
              toString(t.scalar_type()), " but the input has ", toString(reference.scalar_type()));
  BRASA_CHECK(t.numel() == reference.numel(), name(op), ": ", what, " has ", t.numel(),
              " elements but the input has ", reference.numel());
}

void ProcessGroup::check_list(const char* op, const std::vector<Tensor>& list,
                              const Tensor& reference, const char* what) const {
  BRASA_CHECK(static_cast<int>(list.size()) == size_, name(op), ": ", what,
              " must hold one tensor per rank (", size_, "), got ", list.size());
  for (size_t r = 0; r < list.size(); ++r)
    check_like(op, list[r], reference, std::string(what) + "[" + std::to_string(r) + "]");
}

void ProcessGroup::check_coalesced(const char* op, const std::vector<Tensor>& tensors,
                                   ReduceOp reduce_op) const {
  BRASA_CHECK(!tensors.empty(), name(op), ": no tensors given");
  for (size_t i = 0; i < tensors.size(); ++i) {
    check_like(op, tensors[i], tensors[i], "tensors[" + std::to_string(i) + "]");
    BRASA_CHECK(tensors[i].scalar_type() == tensors[0].scalar_type(), name(op),
                ": all tensors must have one dtype; tensors[0] is ",
                toString(tensors[0].scalar_type()), " but tensors[", i, "] is ",
                toString(tensors[i].scalar_type()));
  }
  check_reduce_op(op, reduce_op, tensors[0].scalar_type());
}

void ProcessGroup::check_blocks(const char* op, const Tensor& whole, const Tensor& part,
                                const char* whole_name) const {
  BRASA_CHECK(whole.defined() && whole.device() == part.device() &&
                  whole.scalar_type() == part.scalar_type() &&
                  whole.numel() == static_cast<int64_t>(size_) * part.numel(),
              name(op), ": ", whole_name, " must have ", size_, " x ", part.numel(),
              " elements of ", toString(part.scalar_type()), ", got ",
              whole.defined() ? whole.numel() : 0, " elements of ",
              whole.defined() ? toString(whole.scalar_type()) : "undefined");
}

void ProcessGroup::check_one_list(const char* op, const std::vector<std::vector<Tensor>>& lists,
                                  const Tensor& like, const char* what) const {
  BRASA_CHECK(lists.size() == 1, name(op), ": expects one ", what, " list, got ", lists.size());
  check_list(op, lists[0], like, (std::string(what) + "[0]").c_str());
}

bool ProcessGroup::check_root_list(const char* op, const std::vector<std::vector<Tensor>>& lists,
                                   const Tensor& like, int64_t root, const char* what) const {
  check_rank(op, "root", root);
  if (root == rank_) {
    BRASA_CHECK(lists.size() == 1, name(op), ": the root expects one ", what, " list, got ",
                lists.size());
    check_list(op, lists[0], like, (std::string(what) + "[0]").c_str());
    return true;
  }
  BRASA_CHECK(lists.empty() || (lists.size() == 1 && lists[0].empty()), name(op),
              ": only the root (rank ", root, ") takes ", what, "; rank ", rank_, " got some");
  return false;
}

void ProcessGroup::check_alltoall(const char* op, const std::vector<Tensor>& outputs,
                                  const std::vector<Tensor>& inputs,
                                  std::vector<int64_t>& send_counts,
                                  std::vector<int64_t>& recv_counts) const {
  BRASA_CHECK(static_cast<int>(inputs.size()) == size_ && static_cast<int>(outputs.size()) == size_,
              name(op), ": expects one input and one output tensor per rank (", size_, "), got ",
              inputs.size(), " and ", outputs.size());
  const ScalarType dtype = inputs[0].defined() ? inputs[0].scalar_type() : ScalarType::Float;
  send_counts.clear();
  recv_counts.clear();
  for (int r = 0; r < size_; ++r) {
    const Tensor& i = inputs[static_cast<size_t>(r)];
    const Tensor& o = outputs[static_cast<size_t>(r)];
    BRASA_CHECK(i.defined() && o.defined() && i.is_cpu() && o.is_cpu(), name(op),
                ": every tensor must be a defined CPU tensor");
    BRASA_CHECK(i.scalar_type() == dtype && o.scalar_type() == dtype, name(op),
                ": all tensors must have dtype ", toString(dtype));
    send_counts.push_back(i.numel());
    recv_counts.push_back(o.numel());
  }
}

void ProcessGroup::check_alltoall_base(const Tensor& output, const Tensor& input,
                                       const std::vector<int64_t>& output_split_sizes,
                                       const std::vector<int64_t>& input_split_sizes,
                                       std::vector<int64_t>& send_counts,
                                       std::vector<int64_t>& recv_counts) const {
  const Tensor src = single("alltoall_base", {input}, "input");
  const Tensor target = single("alltoall_base", {output}, "output");
  BRASA_CHECK(src.scalar_type() == target.scalar_type(), name("alltoall_base"), ": input is ",
              toString(src.scalar_type()), " but output is ", toString(target.scalar_type()));
  send_counts = split_elements("alltoall_base", src, input_split_sizes, "input");
  recv_counts = split_elements("alltoall_base", target, output_split_sizes, "output");
}

std::vector<int64_t> ProcessGroup::split_elements(const char* op, const Tensor& t,
                                                  const std::vector<int64_t>& splits,
                                                  const char* what) const {
  const int64_t rows = t.dim() == 0 ? 1 : t.size(0);
  const int64_t row = rows == 0 ? 0 : t.numel() / rows;
  std::vector<int64_t> s = splits;
  if (s.empty()) {
    BRASA_CHECK(rows % size_ == 0, name(op), ": the ", what, "'s first dimension (", rows,
                ") does not split evenly over ", size_, " ranks; pass split sizes");
    s.assign(static_cast<size_t>(size_), rows / size_);
  }
  BRASA_CHECK(static_cast<int>(s.size()) == size_, name(op), ": ", what, " split sizes must have ",
              size_, " entries, got ", s.size());
  int64_t total = 0;
  for (int64_t& v : s) {
    BRASA_CHECK(v >= 0, name(op), ": negative split size ", v);
    total += v;
    v *= row;
  }
  BRASA_CHECK(total == rows, name(op), ": ", what, " split sizes add up to ", total,
              " but its first dimension is ", rows);
  return s;
}

Fingerprint ProcessGroup::next(CollectiveKind kind, const Tensor& t, int64_t numel,
                               ReduceOp reduce_op, int64_t root) {
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
