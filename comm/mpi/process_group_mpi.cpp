// The operations of ProcessGroupMPI; the machinery they run on is in
// mpi_group.{h,cpp}.
#include <brasa/comm/errors.h>
#include <brasa/comm/staging.h>
#include <brasa/ops/factory.h>
#include <brasa/ops/shape.h>

#include "mpi_group.h"

namespace brasa::distributed {

using detail::flat_cat;
using detail::scatter_back;
using detail::staged;
using detail::unstage;
using namespace mpi_detail;

std::shared_ptr<Work> ProcessGroupMPI::broadcast(std::vector<Tensor>& tensors,
                                                 const BroadcastOptions& opts) {
  const Tensor t = single("broadcast", tensors);
  check_rank("broadcast", "root", opts.rootRank);
  Tensor buf = staged(t);
  const int n = count_of("broadcast", t.numel());
  Fingerprint f = next(CollectiveKind::kBroadcast, t, t.numel(), ReduceOp::SUM, opts.rootRank);
  MPI_Comm comm = impl_->comm;
  const int root = static_cast<int>(opts.rootRank);
  return start(
      *impl_, "broadcast", &f, effective(opts.timeout),
      [&](std::vector<MPI_Request>* r) {
        if (!r)
          return mpi_check(MPI_Bcast(buf.data_ptr(), n, mpi_type(t.scalar_type()), root, comm),
                           "MPI_Bcast");
        r->resize(1);
        mpi_check(MPI_Ibcast(buf.data_ptr(), n, mpi_type(t.scalar_type()), root, comm, &(*r)[0]),
                  "MPI_Ibcast");
      },
      [t, buf](const auto&) { unstage(t, buf); }, {buf}, {t});
}

std::shared_ptr<Work> ProcessGroupMPI::allreduce(std::vector<Tensor>& tensors,
                                                 const AllreduceOptions& opts) {
  const Tensor t = single("allreduce", tensors);
  check_reduce_op("allreduce", opts.reduceOp, t.scalar_type());
  Tensor buf = staged(t);
  const int n = count_of("allreduce", t.numel());
  Fingerprint f = next(CollectiveKind::kAllreduce, t, t.numel(), opts.reduceOp);
  MPI_Comm comm = impl_->comm;
  const bool avg = opts.reduceOp == ReduceOp::AVG;
  const int size = this->size();
  return start(
      *impl_, "allreduce", &f, effective(opts.timeout),
      [&](std::vector<MPI_Request>* r) {
        if (!r)
          return mpi_check(MPI_Allreduce(MPI_IN_PLACE, buf.data_ptr(), n, mpi_type(t.scalar_type()),
                                         mpi_op(opts.reduceOp, t.scalar_type()), comm),
                           "MPI_Allreduce");
        r->resize(1);
        mpi_check(MPI_Iallreduce(MPI_IN_PLACE, buf.data_ptr(), n, mpi_type(t.scalar_type()),
                                 mpi_op(opts.reduceOp, t.scalar_type()), comm, &(*r)[0]),
                  "MPI_Iallreduce");
      },
      [t, buf, avg, size](const auto&) {
        if (avg) const_cast<Tensor&>(buf).div_(size);
        unstage(t, buf);
      },
      {buf}, {t});
}

std::shared_ptr<Work> ProcessGroupMPI::allreduce_coalesced(std::vector<Tensor>& tensors,
                                                           const AllreduceCoalescedOptions& opts) {
  check_coalesced("allreduce_coalesced", tensors, opts.reduceOp);
  Tensor flat = flat_cat(tensors);
  const int n = count_of("allreduce_coalesced", flat.numel());
  Fingerprint f = next(CollectiveKind::kAllreduceCoalesced, flat, flat.numel(), opts.reduceOp);
  MPI_Comm comm = impl_->comm;
  const bool avg = opts.reduceOp == ReduceOp::AVG;
  const int size = this->size();
  std::vector<Tensor> targets = tensors;
  return start(
      *impl_, "allreduce_coalesced", &f, effective(opts.timeout),
      [&](std::vector<MPI_Request>* r) {
        if (!r)
          return mpi_check(
              MPI_Allreduce(MPI_IN_PLACE, flat.data_ptr(), n, mpi_type(flat.scalar_type()),
                            mpi_op(opts.reduceOp, flat.scalar_type()), comm),
              "MPI_Allreduce");
        r->resize(1);
        mpi_check(MPI_Iallreduce(MPI_IN_PLACE, flat.data_ptr(), n, mpi_type(flat.scalar_type()),
                                 mpi_op(opts.reduceOp, flat.scalar_type()), comm, &(*r)[0]),
                  "MPI_Iallreduce");
      },
      [targets, flat, avg, size](const auto&) {
        if (avg) const_cast<Tensor&>(flat).div_(size);
        scatter_back(targets, flat);
      },
      {flat}, targets);
}

std::shared_ptr<Work> ProcessGroupMPI::reduce(std::vector<Tensor>& tensors,
                                              const ReduceOptions& opts) {
  const Tensor t = single("reduce", tensors);
  check_rank("reduce", "root", opts.rootRank);
  check_reduce_op("reduce", opts.reduceOp, t.scalar_type());
  Tensor buf = staged(t);
  const int n = count_of("reduce", t.numel());
  Fingerprint f = next(CollectiveKind::kReduce, t, t.numel(), opts.reduceOp, opts.rootRank);
  MPI_Comm comm = impl_->comm;
  const int root = static_cast<int>(opts.rootRank);
  const bool is_root = root == rank();
  const bool avg = opts.reduceOp == ReduceOp::AVG;
  const int size = this->size();
  return start(
      *impl_, "reduce", &f, effective(opts.timeout),
      [&](std::vector<MPI_Request>* r) {
        if (!r)
          return mpi_check(
              MPI_Reduce(is_root ? MPI_IN_PLACE : buf.data_ptr(),
                         is_root ? buf.data_ptr() : nullptr, n, mpi_type(t.scalar_type()),
                         mpi_op(opts.reduceOp, t.scalar_type()), root, comm),
              "MPI_Reduce");
        r->resize(1);
        mpi_check(MPI_Ireduce(is_root ? MPI_IN_PLACE : buf.data_ptr(),
                              is_root ? buf.data_ptr() : nullptr, n, mpi_type(t.scalar_type()),
                              mpi_op(opts.reduceOp, t.scalar_type()), root, comm, &(*r)[0]),
                  "MPI_Ireduce");
      },
      [t, buf, is_root, avg, size](const auto&) {
        if (!is_root) return;
        if (avg) const_cast<Tensor&>(buf).div_(size);
        unstage(t, buf);
      },
      {buf}, {t});
}

std::shared_ptr<Work> ProcessGroupMPI::allgather(std::vector<std::vector<Tensor>>& outputs,
                                                 std::vector<Tensor>& inputs,
                                                 const AllgatherOptions& opts) {
  const Tensor in = staged(single("allgather", inputs, "inputs"));
  check_one_list("allgather", outputs, in, "outputs");
  const int n = count_of("allgather", in.numel());
  Tensor gathered = empty({static_cast<int64_t>(size()) * in.numel()}, in.options());
  Fingerprint f = next(CollectiveKind::kAllgather, in, in.numel());
  MPI_Comm comm = impl_->comm;
  std::vector<Tensor> targets = outputs[0];
  MPI_Datatype type = mpi_type(in.scalar_type());
  return start(
      *impl_, "allgather", &f, effective(opts.timeout),
      [&](std::vector<MPI_Request>* r) {
        if (!r)
          return mpi_check(
              MPI_Allgather(in.data_ptr(), n, type, gathered.data_ptr(), n, type, comm),
              "MPI_Allgather");
        r->resize(1);
        mpi_check(
            MPI_Iallgather(in.data_ptr(), n, type, gathered.data_ptr(), n, type, comm, &(*r)[0]),
            "MPI_Iallgather");
      },
      [targets, gathered](const auto&) { scatter_back(targets, gathered); }, {in, gathered},
      targets);
}

std::shared_ptr<Work> ProcessGroupMPI::allgather_into_tensor(Tensor& output, Tensor& input,
                                                             const AllgatherOptions& opts) {
  std::vector<Tensor> in_list{input};
  const Tensor in = staged(single("allgather_into_tensor", in_list, "input"));
  check_blocks("allgather_into_tensor", output, in, "output");
  Tensor out = staged(output);
  const int n = count_of("allgather_into_tensor", in.numel());
  Fingerprint f = next(CollectiveKind::kAllgatherIntoTensor, in, in.numel());
  MPI_Comm comm = impl_->comm;
  MPI_Datatype type = mpi_type(in.scalar_type());
  Tensor target = output;
  return start(
      *impl_, "allgather_into_tensor", &f, effective(opts.timeout),
      [&](std::vector<MPI_Request>* r) {
        if (!r)
          return mpi_check(MPI_Allgather(in.data_ptr(), n, type, out.data_ptr(), n, type, comm),
                           "MPI_Allgather");
        r->resize(1);
        mpi_check(MPI_Iallgather(in.data_ptr(), n, type, out.data_ptr(), n, type, comm, &(*r)[0]),
                  "MPI_Iallgather");
      },
      [target, out](const auto&) { unstage(target, out); }, {in, out}, {target});
}

std::shared_ptr<Work> ProcessGroupMPI::gather(std::vector<std::vector<Tensor>>& outputs,
                                              std::vector<Tensor>& inputs,
                                              const GatherOptions& opts) {
  const Tensor in = staged(single("gather", inputs, "inputs"));
  const int root = static_cast<int>(opts.rootRank);
  const bool is_root = check_root_list("gather", outputs, in, opts.rootRank, "outputs");
  Tensor gathered;
  std::vector<Tensor> targets;
  if (is_root) {
    gathered = empty({static_cast<int64_t>(size()) * in.numel()}, in.options());
    targets = outputs[0];
  }
  const int n = count_of("gather", in.numel());
  Fingerprint f = next(CollectiveKind::kGather, in, in.numel(), ReduceOp::SUM, root);
  MPI_Comm comm = impl_->comm;
  MPI_Datatype type = mpi_type(in.scalar_type());
  return start(
      *impl_, "gather", &f, effective(opts.timeout),
      [&](std::vector<MPI_Request>* r) {
        if (!r)
          return mpi_check(
              MPI_Gather(in.data_ptr(), n, type, is_root ? gathered.data_ptr() : nullptr,
                         is_root ? n : 0, type, root, comm),
              "MPI_Gather");
        r->resize(1);
        mpi_check(MPI_Igather(in.data_ptr(), n, type, is_root ? gathered.data_ptr() : nullptr,
                              is_root ? n : 0, type, root, comm, &(*r)[0]),
                  "MPI_Igather");
      },
      [targets, gathered](const auto&) {
        if (gathered.defined()) scatter_back(targets, gathered);
      },
      {in, gathered.defined() ? gathered : in}, targets);
}

std::shared_ptr<Work> ProcessGroupMPI::scatter(std::vector<Tensor>& outputs,
                                               std::vector<std::vector<Tensor>>& inputs,
                                               const ScatterOptions& opts) {
  const Tensor target = single("scatter", outputs, "outputs");
  const int root = static_cast<int>(opts.rootRank);
  const bool is_root = check_root_list("scatter", inputs, target, opts.rootRank, "inputs");
  Tensor packed;
  if (is_root) {
    packed = flat_cat(inputs[0]);
  }
  Tensor out = staged(target);
  const int n = count_of("scatter", target.numel());
  Fingerprint f = next(CollectiveKind::kScatter, target, target.numel(), ReduceOp::SUM, root);
  MPI_Comm comm = impl_->comm;
  MPI_Datatype type = mpi_type(target.scalar_type());
  return start(
      *impl_, "scatter", &f, effective(opts.timeout),
      [&](std::vector<MPI_Request>* r) {
        if (!r)
          return mpi_check(MPI_Scatter(is_root ? packed.data_ptr() : nullptr, is_root ? n : 0, type,
                                       out.data_ptr(), n, type, root, comm),
                           "MPI_Scatter");
        r->resize(1);
        mpi_check(MPI_Iscatter(is_root ? packed.data_ptr() : nullptr, is_root ? n : 0, type,
                               out.data_ptr(), n, type, root, comm, &(*r)[0]),
                  "MPI_Iscatter");
      },
      [target, out](const auto&) { unstage(target, out); }, {out, packed.defined() ? packed : out},
      {target});
}

namespace {
// Both reduce_scatter forms: `in` holds size() blocks, block r reduced into
// rank r's `target`.
std::shared_ptr<Work> reduce_scatter_blocks(ProcessGroupMPI::Impl& g, const char* op,
                                            const Fingerprint& f, std::chrono::milliseconds timeout,
                                            const Tensor& in, const Tensor& target,
                                            ReduceOp reduce_op, int size) {
  Tensor out = staged(target);
  const int n = count_of(op, target.numel());
  MPI_Comm comm = g.comm;
  const bool avg = reduce_op == ReduceOp::AVG;
  MPI_Datatype type = mpi_type(target.scalar_type());
  MPI_Op mop = mpi_op(reduce_op, target.scalar_type());
  return start(
      g, op, &f, timeout,
      [&](std::vector<MPI_Request>* r) {
        if (!r)
          return mpi_check(
              MPI_Reduce_scatter_block(in.data_ptr(), out.data_ptr(), n, type, mop, comm),
              "MPI_Reduce_scatter_block");
        r->resize(1);
        mpi_check(
            MPI_Ireduce_scatter_block(in.data_ptr(), out.data_ptr(), n, type, mop, comm, &(*r)[0]),
            "MPI_Ireduce_scatter_block");
      },
      [target, out, avg, size](const auto&) {
        if (avg) const_cast<Tensor&>(out).div_(size);
        unstage(target, out);
      },
      {in, out}, {target});
}
}  // namespace

std::shared_ptr<Work> ProcessGroupMPI::reduce_scatter(std::vector<Tensor>& outputs,
                                                      std::vector<std::vector<Tensor>>& inputs,
                                                      const ReduceScatterOptions& opts) {
  const Tensor target = single("reduce_scatter", outputs, "outputs");
  check_reduce_op("reduce_scatter", opts.reduceOp, target.scalar_type());
  check_one_list("reduce_scatter", inputs, target, "inputs");
  Fingerprint f = next(CollectiveKind::kReduceScatter, target, target.numel(), opts.reduceOp);
  return reduce_scatter_blocks(*impl_, "reduce_scatter", f, effective(opts.timeout),
                               flat_cat(inputs[0]), target, opts.reduceOp, size());
}

std::shared_ptr<Work> ProcessGroupMPI::reduce_scatter_tensor(Tensor& output, Tensor& input,
                                                             const ReduceScatterOptions& opts) {
  std::vector<Tensor> out_list{output};
  const Tensor target = single("reduce_scatter_tensor", out_list, "output");
  check_reduce_op("reduce_scatter_tensor", opts.reduceOp, target.scalar_type());
  check_blocks("reduce_scatter_tensor", input, target, "input");
  Fingerprint f = next(CollectiveKind::kReduceScatterTensor, target, target.numel(), opts.reduceOp);
  return reduce_scatter_blocks(*impl_, "reduce_scatter_tensor", f, effective(opts.timeout),
                               staged(input), target, opts.reduceOp, size());
}

namespace {
// MPI's int counts and displacements from element counts per rank.
void to_counts(const char* op, const std::vector<int64_t>& elements, std::vector<int>& counts,
               std::vector<int>& displs) {
  int64_t total = 0;
  counts.clear();
  displs.clear();
  for (int64_t e : elements) {
    displs.push_back(count_of(op, total));
    counts.push_back(count_of(op, e));
    total += e;
  }
}
}  // namespace

std::shared_ptr<Work> ProcessGroupMPI::alltoall_base(Tensor& output, Tensor& input,
                                                     std::vector<int64_t>& output_split_sizes,
                                                     std::vector<int64_t>& input_split_sizes,
                                                     const AllToAllOptions& opts) {
  std::vector<int64_t> send, recv;
  check_alltoall_base(output, input, output_split_sizes, input_split_sizes, send, recv);
  const Tensor src = input, target = output;
  std::vector<int> send_counts, send_displs, recv_counts, recv_displs;
  to_counts("alltoall_base", send, send_counts, send_displs);
  to_counts("alltoall_base", recv, recv_counts, recv_displs);
  Tensor in = staged(src), out = staged(target);
  // Sizes may differ between ranks; only the kind and dtype are compared.
  Fingerprint f = next(CollectiveKind::kAlltoallBase, src, -1);
  MPI_Comm comm = impl_->comm;
  MPI_Datatype type = mpi_type(src.scalar_type());
  return start(
      *impl_, "alltoall_base", &f, effective(opts.timeout),
      [&](std::vector<MPI_Request>* r) {
        if (!r)
          return mpi_check(
              MPI_Alltoallv(in.data_ptr(), send_counts.data(), send_displs.data(), type,
                            out.data_ptr(), recv_counts.data(), recv_displs.data(), type, comm),
              "MPI_Alltoallv");
        r->resize(1);
        mpi_check(MPI_Ialltoallv(in.data_ptr(), send_counts.data(), send_displs.data(), type,
                                 out.data_ptr(), recv_counts.data(), recv_displs.data(), type, comm,
                                 &(*r)[0]),
                  "MPI_Ialltoallv");
      },
      [target, out](const auto&) { unstage(target, out); }, {in, out}, {target});
}

std::shared_ptr<Work> ProcessGroupMPI::alltoall(std::vector<Tensor>& outputs,
                                                std::vector<Tensor>& inputs,
                                                const AllToAllOptions& opts) {
  std::vector<int64_t> send, recv;
  check_alltoall("alltoall", outputs, inputs, send, recv);
  std::vector<int> send_counts, send_displs, recv_counts, recv_displs;
  to_counts("alltoall", send, send_counts, send_displs);
  to_counts("alltoall", recv, recv_counts, recv_displs);
  int64_t recv_total = 0;
  for (int64_t c : recv) recv_total += c;
  const ScalarType dtype = inputs[0].scalar_type();
  Tensor packed = flat_cat(inputs);
  Tensor received = empty({recv_total}, inputs[0].options());
  Fingerprint f = next(CollectiveKind::kAlltoall, packed, -1);
  MPI_Comm comm = impl_->comm;
  MPI_Datatype type = mpi_type(dtype);
  std::vector<Tensor> targets = outputs;
  return start(
      *impl_, "alltoall", &f, effective(opts.timeout),
      [&](std::vector<MPI_Request>* r) {
        if (!r)
          return mpi_check(MPI_Alltoallv(packed.data_ptr(), send_counts.data(), send_displs.data(),
                                         type, received.data_ptr(), recv_counts.data(),
                                         recv_displs.data(), type, comm),
                           "MPI_Alltoallv");
        r->resize(1);
        mpi_check(MPI_Ialltoallv(packed.data_ptr(), send_counts.data(), send_displs.data(), type,
                                 received.data_ptr(), recv_counts.data(), recv_displs.data(), type,
                                 comm, &(*r)[0]),
                  "MPI_Ialltoallv");
      },
      [targets, received](const auto&) { scatter_back(targets, received); }, {packed, received},
      targets);
}

std::shared_ptr<Work> ProcessGroupMPI::barrier(const BarrierOptions& opts) {
  Fingerprint f = next(CollectiveKind::kBarrier, Tensor(), 0);
  MPI_Comm comm = impl_->comm;
  return start(*impl_, "barrier", &f, effective(opts.timeout),
               [&](std::vector<MPI_Request>* r) {
                 if (!r) return mpi_check(MPI_Barrier(comm), "MPI_Barrier");
                 r->resize(1);
                 mpi_check(MPI_Ibarrier(comm, &(*r)[0]), "MPI_Ibarrier");
               },
               nullptr, {}, {});
}

std::shared_ptr<Work> ProcessGroupMPI::send(std::vector<Tensor>& tensors, int dst_rank, int tag) {
  const Tensor t = single("send", tensors);
  check_rank("send", "destination", dst_rank);
  BRASA_CHECK(tag >= 0, name("send"), ": the tag must be >= 0, got ", tag);
  Tensor buf = staged(t);
  const int n = count_of("send", t.numel());
  MPI_Comm comm = impl_->comm;
  return start(*impl_, "send", nullptr, timeout(),
               [&](std::vector<MPI_Request>* r) {
                 r->resize(1);
                 mpi_check(MPI_Isend(buf.data_ptr(), n, mpi_type(t.scalar_type()), dst_rank, tag,
                                     comm, &(*r)[0]),
                           "MPI_Isend");
               },
               nullptr, {buf}, {t});
}

namespace {
std::shared_ptr<Work> post_recv(ProcessGroupMPI::Impl& g, const char* op, const Tensor& t, int src,
                                int tag, std::chrono::milliseconds timeout) {
  Tensor buf = staged(t);
  const int n = count_of(op, t.numel());
  MPI_Comm comm = g.comm;
  return start(
      g, op, nullptr, timeout,
      [&](std::vector<MPI_Request>* r) {
        r->resize(1);
        mpi_check(MPI_Irecv(buf.data_ptr(), n, mpi_type(t.scalar_type()), src, tag, comm, &(*r)[0]),
                  "MPI_Irecv");
      },
      [t, buf](const std::vector<MPI_Status>&) { unstage(t, buf); }, {buf}, {t},
      /*record_source=*/true);
}
}  // namespace

std::shared_ptr<Work> ProcessGroupMPI::recv(std::vector<Tensor>& tensors, int src_rank, int tag) {
  const Tensor t = single("recv", tensors);
  check_rank("recv", "source", src_rank);
  BRASA_CHECK(tag >= 0, name("recv"), ": the tag must be >= 0, got ", tag);
  return post_recv(*impl_, "recv", t, src_rank, tag, timeout());
}

std::shared_ptr<Work> ProcessGroupMPI::recv_anysource(std::vector<Tensor>& tensors, int tag) {
  const Tensor t = single("recv_anysource", tensors);
  BRASA_CHECK(tag >= 0, name("recv_anysource"), ": the tag must be >= 0, got ", tag);
  return post_recv(*impl_, "recv_anysource", t, MPI_ANY_SOURCE, tag, timeout());
}

}  // namespace brasa::distributed
