#include <brasa/comm/errors.h>
#include <brasa/comm/nccl/process_group_nccl.h>
#include <brasa/comm/nccl/watchdog.h>
#include <brasa/cuda/cuda_runtime.h>
#include <brasa/cuda/event.h>
#include <brasa/cuda/memory.h>
#include <brasa/cuda/stream.h>
#include <brasa/ops/factory.h>
#include <brasa/ops/shape.h>

#include <nccl.h>

#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <mutex>

namespace brasa::distributed {
namespace {

[[noreturn]] void throw_nccl(const std::string& what, ncclResult_t r, ncclComm_t comm) {
  const char* last = comm ? ncclGetLastError(comm) : nullptr;
  BRASA_DIST_THROW(DistBackendError, what, ": NCCL error: ", ncclGetErrorString(r),
                   last && *last ? std::string(" (") + last + ")" : std::string());
}

void nccl_check(const std::string& what, ncclResult_t r, ncclComm_t comm = nullptr) {
  if (r != ncclSuccess && r != ncclInProgress) throw_nccl(what, r, comm);
}

ncclDataType_t nccl_type(const std::string& op, ScalarType t) {
  switch (t) {
    case kFloat:
      return ncclFloat32;
    case kDouble:
      return ncclFloat64;
    case kHalf:
      return ncclFloat16;
    case kBFloat16:
      return ncclBfloat16;
    case kInt:
      return ncclInt32;
    case kLong:
      return ncclInt64;
    case kChar:
      return ncclInt8;
    case kByte:
    case kBool:
      return ncclUint8;
    default:
      BRASA_ERROR(op, ": NCCL has no type for '", t, "'");
  }
}

ncclRedOp_t nccl_op(const std::string& op, ReduceOp r, ScalarType t) {
  if (t == kBool) {  // bytes holding 0/1: "or" is max, "and" is min
    if (r == ReduceOp::SUM || r == ReduceOp::MAX) return ncclMax;
    if (r == ReduceOp::PRODUCT || r == ReduceOp::MIN) return ncclMin;
  }
  switch (r) {
    case ReduceOp::SUM:
      return ncclSum;
    case ReduceOp::PRODUCT:
      return ncclProd;
    case ReduceOp::MIN:
      return ncclMin;
    case ReduceOp::MAX:
      return ncclMax;
    case ReduceOp::AVG:
      BRASA_CHECK(t != kBool && isFloatingType(t), op,
                  ": ReduceOp.AVG needs a floating-point tensor, got ", t);
      return ncclAvg;
    default:
      BRASA_ERROR(op, ": ReduceOp.", to_string(r), " is not supported by NCCL");
  }
}

// A collective's end on NCCL's stream.
class WorkNCCL : public Work {
 public:
  WorkNCCL(std::string op, std::shared_ptr<cuda::CUDAEvent> end, int8_t device, bool host_wait)
      : Work(std::move(op)), end_(std::move(end)), device_(device), host_wait_(host_wait) {}
  bool wait(std::chrono::milliseconds timeout) override {
    if (host_wait_) return Work::wait(timeout);  // the watchdog finishes it (or fails it)
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (error_) std::rethrow_exception(error_);
    }
    end_->block(cuda::getCurrentCUDAStream(device_));
    return true;
  }

 private:
  std::shared_ptr<cuda::CUDAEvent> end_;
  int8_t device_;
  bool host_wait_;
};

class NcclOp : public WatchedOp {
 public:
  NcclOp(std::shared_ptr<Work> w, uint64_t seq, std::string type, int64_t numel,
         std::chrono::milliseconds timeout, std::shared_ptr<cuda::CUDAEvent> end)
      : WatchedOp(std::move(w), seq, std::move(type), numel, Clock::now(), timeout),
        end_(std::move(end)) {}
  bool device_done() override { return end_->query(); }

 private:
  std::shared_ptr<cuda::CUDAEvent> end_;
};

bool env_flag(const char* name) {
  const char* v = std::getenv(name);
  return v && std::strcmp(v, "1") == 0;
}

}  // namespace

struct ProcessGroupNCCL::Impl {
  struct DeviceComm {
    ncclComm_t comm = nullptr;
    cuda::CUDAStream stream{nullptr, 0};
  };
  std::shared_ptr<Store> store;
  Options opts;
  int rank = 0, size = 0;
  std::mutex mu;  // comms
  std::map<int, DeviceComm> comms;
  int comms_made = 0;
  bool aborted = false;
  std::unique_ptr<Watchdog> watchdog;

  DeviceComm& comm_for(int device, std::chrono::milliseconds timeout);
  std::string async_error();
  void abort_all();
};

ProcessGroupNCCL::Impl::DeviceComm& ProcessGroupNCCL::Impl::comm_for(
    int device, std::chrono::milliseconds timeout) {
  std::lock_guard<std::mutex> lock(mu);
  auto it = comms.find(device);
  if (it != comms.end()) return it->second;
  // Every rank makes its communicators in the same order (one device per
  // rank in the usual job), so the n-th one's id is under the n-th key.
  const std::string key = "nccl/unique_id/" + std::to_string(comms_made++);
  ncclUniqueId id;
  if (rank == 0) {
    nccl_check("ProcessGroupNCCL: ncclGetUniqueId", ncclGetUniqueId(&id));
    const auto* p = reinterpret_cast<const uint8_t*>(&id);
    store->set(key, Bytes(p, p + sizeof id));
  } else {
    store->wait({key}, timeout);
    Bytes b = store->get(key);
    BRASA_CHECK(b.size() == sizeof id, "ProcessGroupNCCL: the unique id in the store has ",
                b.size(), " bytes, expected ", sizeof id);
    std::memcpy(&id, b.data(), sizeof id);
  }
  DeviceComm dc;
  cuda::CUDAGuard guard(static_cast<cuda::DeviceIndex>(device));
  nccl_check(brasa::detail::str("ProcessGroupNCCL: ncclCommInitRank (rank ", rank, " of ", size,
                                ", device cuda:", device, ")"),
             ncclCommInitRank(&dc.comm, size, id, rank));
  dc.stream =
      cuda::getStreamFromPool(opts.is_high_priority_stream, static_cast<cuda::DeviceIndex>(device));
  return comms.emplace(device, dc).first->second;
}

std::string ProcessGroupNCCL::Impl::async_error() {
  std::lock_guard<std::mutex> lock(mu);
  for (auto& [device, dc] : comms) {
    ncclResult_t r = ncclSuccess;
    if (ncclCommGetAsyncError(dc.comm, &r) != ncclSuccess) continue;
    if (r != ncclSuccess && r != ncclInProgress)
      return brasa::detail::str("device cuda:", device, ": ", ncclGetErrorString(r));
  }
  return "";
}

void ProcessGroupNCCL::Impl::abort_all() {
  std::lock_guard<std::mutex> lock(mu);
  if (aborted) return;
  aborted = true;
  for (auto& [device, dc] : comms) ncclCommAbort(dc.comm);
}

ProcessGroupNCCL::ProcessGroupNCCL(std::shared_ptr<Store> store, int rank, int size)
    : ProcessGroupNCCL(std::move(store), rank, size, Options()) {}

ProcessGroupNCCL::ProcessGroupNCCL(std::shared_ptr<Store> store, int rank, int size,
                                   const Options& options)
    : ProcessGroup(rank, size, options.timeout), impl_(std::make_unique<Impl>()) {
  BRASA_CHECK(store != nullptr, "ProcessGroupNCCL: expected a store");
  BRASA_CHECK(size > 0 && rank >= 0 && rank < size, "ProcessGroupNCCL: invalid rank ", rank,
              " for a group of ", size);
  BRASA_CHECK(cuda::device_count_or_zero() > 0,
              "ProcessGroupNCCL: NCCL needs a CUDA device and none is available (",
              cuda::no_device_reason(), "); use the gloo, mpi or shm backend for CPU tensors");
  impl_->store = std::move(store);
  impl_->opts = options;
  impl_->opts.blocking_wait = options.blocking_wait || env_flag("BRASA_NCCL_BLOCKING_WAIT");
  impl_->rank = rank;
  impl_->size = size;
  Impl* impl = impl_.get();
  Watchdog::Hooks hooks;
  hooks.async_error = [impl] { return impl->async_error(); };
  hooks.abort = [impl](const std::string&) { impl->abort_all(); };
  impl_->watchdog = std::make_unique<Watchdog>(std::move(hooks));
  impl_->watchdog->start(options.watchdog_interval);
}

ProcessGroupNCCL::~ProcessGroupNCCL() {
  impl_->watchdog.reset();  // stops watching first
  std::lock_guard<std::mutex> lock(impl_->mu);
  for (auto& [device, dc] : impl_->comms) {
    if (impl_->aborted) continue;
    ncclCommDestroy(dc.comm);
  }
}

void ProcessGroupNCCL::abort() { impl_->abort_all(); }

namespace {

// The checks every NCCL collective makes of a tensor.
void check_cuda_tensor(const std::string& op, const Tensor& t, const char* what) {
  BRASA_CHECK(t.defined(), op, ": ", what, " is undefined");
  BRASA_CHECK(t.is_cuda(), op, ": expected CUDA tensors (NCCL works on GPU memory), but ", what,
              " is on ", t.device());
  BRASA_CHECK(t.is_contiguous(), op, ": expected contiguous tensors, but ", what,
              " is not (call .contiguous())");
}

}  // namespace

// Runs one NCCL call (or group of calls) for a collective: orders NCCL's
// stream after the caller's, keeps the tensors alive for it, records the
// end and hands the operation to the watchdog.
static std::shared_ptr<Work> run_collective(
    ProcessGroupNCCL::Impl& impl, const std::string& op, uint64_t seq, const char* op_type,
    const Tensor& ref, int64_t numel, const std::vector<Tensor>& used, std::vector<Tensor> outputs,
    std::chrono::milliseconds timeout, const std::function<void(ncclComm_t, cudaStream_t)>& call,
    bool host_wait = false) {
  const std::string failure = impl.watchdog->failure();
  if (!failure.empty())
    BRASA_DIST_THROW(DistBackendError, op, ": the process group failed earlier: ", failure);
  const int device = ref.device().has_index() ? ref.device().index() : cuda::current_device();
  auto& dc = impl.comm_for(device, timeout);
  cuda::CUDAGuard guard(static_cast<cuda::DeviceIndex>(device));
  cuda::CUDAEvent ready;
  ready.record(cuda::getCurrentCUDAStream(static_cast<cuda::DeviceIndex>(device)));
  ready.block(dc.stream);
  for (const Tensor& t : used)
    if (t.defined() && t.numel() > 0) cuda::record_stream(t.storage()->data_ptr(), dc.stream.id());
  call(dc.comm, dc.stream.stream());
  auto end = std::make_shared<cuda::CUDAEvent>();
  end->record(dc.stream);
  auto work = std::make_shared<WorkNCCL>(op, end, static_cast<int8_t>(device),
                                         host_wait || impl.opts.blocking_wait);
  work->set_outputs(std::move(outputs));
  impl.watchdog->watch(std::make_unique<NcclOp>(work, seq, op_type, numel, timeout, end));
  return work;
}

#define BRASA_NCCL(call) nccl_check(op, (call), comm)

std::shared_ptr<Work> ProcessGroupNCCL::allreduce(std::vector<Tensor>& tensors,
                                                  const AllreduceOptions& opts) {
  const std::string op = name("allreduce");
  BRASA_CHECK(tensors.size() == 1, op, ": expected one tensor per process, got ", tensors.size());
  Tensor& t = tensors[0];
  check_cuda_tensor(op, t, "the tensor");
  const auto type = nccl_type(op, t.dtype());
  const auto red = nccl_op(op, opts.reduceOp, t.dtype());
  const auto fp = next(CollectiveKind::kAllreduce, t, t.numel(), opts.reduceOp);
  return run_collective(
      *impl_, op, fp.sequence, "ALLREDUCE", t, t.numel(), {t}, {t}, effective(opts.timeout),
      [&](ncclComm_t comm, cudaStream_t s) {
        BRASA_NCCL(ncclAllReduce(t.data_ptr(), t.data_ptr(), t.numel(), type, red, comm, s));
      });
}

std::shared_ptr<Work> ProcessGroupNCCL::allreduce_coalesced(std::vector<Tensor>& tensors,
                                                            const AllreduceCoalescedOptions& opts) {
  const std::string op = name("allreduce_coalesced");
  BRASA_CHECK(!tensors.empty(), op, ": expected at least one tensor");
  int64_t numel = 0;
  for (const Tensor& t : tensors) {
    check_cuda_tensor(op, t, "a tensor");
    BRASA_CHECK(t.device() == tensors[0].device(), op, ": expected all tensors on one device, got ",
                tensors[0].device(), " and ", t.device());
    numel += t.numel();
  }
  const auto fp = next(CollectiveKind::kAllreduceCoalesced, tensors[0], numel, opts.reduceOp);
  return run_collective(
      *impl_, op, fp.sequence, "COALESCED", tensors[0], numel, tensors, tensors,
      effective(opts.timeout), [&](ncclComm_t comm, cudaStream_t s) {
        BRASA_NCCL(ncclGroupStart());
        for (Tensor& t : tensors)
          BRASA_NCCL(ncclAllReduce(t.data_ptr(), t.data_ptr(), t.numel(), nccl_type(op, t.dtype()),
                                   nccl_op(op, opts.reduceOp, t.dtype()), comm, s));
        BRASA_NCCL(ncclGroupEnd());
      });
}

std::shared_ptr<Work> ProcessGroupNCCL::broadcast(std::vector<Tensor>& tensors,
                                                  const BroadcastOptions& opts) {
  const std::string op = name("broadcast");
  BRASA_CHECK(tensors.size() == 1, op, ": expected one tensor per process, got ", tensors.size());
  check_rank(op.c_str(), "root", opts.rootRank);
  Tensor& t = tensors[0];
  check_cuda_tensor(op, t, "the tensor");
  const auto type = nccl_type(op, t.dtype());
  const auto fp = next(CollectiveKind::kBroadcast, t, t.numel(), ReduceOp::SUM, opts.rootRank);
  return run_collective(*impl_, op, fp.sequence, "BROADCAST", t, t.numel(), {t}, {t},
                        effective(opts.timeout), [&](ncclComm_t comm, cudaStream_t s) {
                          BRASA_NCCL(ncclBroadcast(t.data_ptr(), t.data_ptr(), t.numel(), type,
                                                   int(opts.rootRank), comm, s));
                        });
}

std::shared_ptr<Work> ProcessGroupNCCL::reduce(std::vector<Tensor>& tensors,
                                               const ReduceOptions& opts) {
  const std::string op = name("reduce");
  BRASA_CHECK(tensors.size() == 1, op, ": expected one tensor per process, got ", tensors.size());
  check_rank(op.c_str(), "root", opts.rootRank);
  Tensor& t = tensors[0];
  check_cuda_tensor(op, t, "the tensor");
  const auto type = nccl_type(op, t.dtype());
  const auto red = nccl_op(op, opts.reduceOp, t.dtype());
  const auto fp = next(CollectiveKind::kReduce, t, t.numel(), opts.reduceOp, opts.rootRank);
  return run_collective(*impl_, op, fp.sequence, "REDUCE", t, t.numel(), {t}, {t},
                        effective(opts.timeout), [&](ncclComm_t comm, cudaStream_t s) {
                          BRASA_NCCL(ncclReduce(t.data_ptr(), t.data_ptr(), t.numel(), type, red,
                                                int(opts.rootRank), comm, s));
                        });
}

std::shared_ptr<Work> ProcessGroupNCCL::allgather_into_tensor(Tensor& output, Tensor& input,
                                                              const AllgatherOptions& opts) {
  const std::string op = name("allgather_into_tensor");
  check_cuda_tensor(op, input, "the input");
  check_cuda_tensor(op, output, "the output");
  check_blocks("allgather_into_tensor", output, input, "output");
  const auto type = nccl_type(op, input.dtype());
  const auto fp = next(CollectiveKind::kAllgatherIntoTensor, input, input.numel());
  return run_collective(*impl_, op, fp.sequence, "_ALLGATHER_BASE", input, input.numel(),
                        {input, output}, {output}, effective(opts.timeout),
                        [&](ncclComm_t comm, cudaStream_t s) {
                          BRASA_NCCL(ncclAllGather(input.data_ptr(), output.data_ptr(),
                                                   input.numel(), type, comm, s));
                        });
}

std::shared_ptr<Work> ProcessGroupNCCL::allgather(std::vector<std::vector<Tensor>>& outputs,
                                                  std::vector<Tensor>& inputs,
                                                  const AllgatherOptions& opts) {
  const std::string op = name("allgather");
  BRASA_CHECK(inputs.size() == 1, op, ": expected one input per process, got ", inputs.size());
  Tensor& in = inputs[0];
  check_cuda_tensor(op, in, "the input");
  check_one_list("allgather", outputs, in, "outputs");
  for (const Tensor& o : outputs[0]) check_cuda_tensor(op, o, "an output");
  // Into one flat buffer, then out to the list on NCCL's stream.
  Tensor flat = empty({int64_t(size()) * in.numel()}, in.options());
  const auto type = nccl_type(op, in.dtype());
  const auto fp = next(CollectiveKind::kAllgather, in, in.numel());
  std::vector<Tensor> used = outputs[0];
  used.push_back(in);
  used.push_back(flat);
  return run_collective(
      *impl_, op, fp.sequence, "ALLGATHER", in, in.numel(), used, outputs[0],
      effective(opts.timeout), [&](ncclComm_t comm, cudaStream_t s) {
        BRASA_NCCL(ncclAllGather(in.data_ptr(), flat.data_ptr(), in.numel(), type, comm, s));
        cuda::CUDAStreamGuard on(cuda::CUDAStream(s, in.device().index()));
        for (int r = 0; r < size(); ++r)
          outputs[0][r].copy_(
              flat.slice(0, r * in.numel(), (r + 1) * in.numel()).view(outputs[0][r].sizes()));
      });
}

std::shared_ptr<Work> ProcessGroupNCCL::reduce_scatter_tensor(Tensor& output, Tensor& input,
                                                              const ReduceScatterOptions& opts) {
  const std::string op = name("reduce_scatter_tensor");
  check_cuda_tensor(op, input, "the input");
  check_cuda_tensor(op, output, "the output");
  check_blocks("reduce_scatter_tensor", input, output, "input");
  const auto type = nccl_type(op, input.dtype());
  const auto red = nccl_op(op, opts.reduceOp, input.dtype());
  const auto fp = next(CollectiveKind::kReduceScatterTensor, output, output.numel(), opts.reduceOp);
  return run_collective(*impl_, op, fp.sequence, "_REDUCE_SCATTER_BASE", output, output.numel(),
                        {input, output}, {output}, effective(opts.timeout),
                        [&](ncclComm_t comm, cudaStream_t s) {
                          BRASA_NCCL(ncclReduceScatter(input.data_ptr(), output.data_ptr(),
                                                       output.numel(), type, red, comm, s));
                        });
}

std::shared_ptr<Work> ProcessGroupNCCL::reduce_scatter(std::vector<Tensor>& outputs,
                                                       std::vector<std::vector<Tensor>>& inputs,
                                                       const ReduceScatterOptions& opts) {
  const std::string op = name("reduce_scatter");
  BRASA_CHECK(outputs.size() == 1, op, ": expected one output per process, got ", outputs.size());
  Tensor& out = outputs[0];
  check_cuda_tensor(op, out, "the output");
  check_one_list("reduce_scatter", inputs, out, "inputs");
  std::vector<Tensor> flat_parts;
  for (const Tensor& t : inputs[0]) {
    check_cuda_tensor(op, t, "an input");
    flat_parts.push_back(t.reshape({-1}));
  }
  Tensor flat = cat(flat_parts);  // on the caller's stream, before NCCL's waits for it
  const auto type = nccl_type(op, out.dtype());
  const auto red = nccl_op(op, opts.reduceOp, out.dtype());
  const auto fp = next(CollectiveKind::kReduceScatter, out, out.numel(), opts.reduceOp);
  return run_collective(*impl_, op, fp.sequence, "REDUCE_SCATTER", out, out.numel(), {flat, out},
                        {out}, effective(opts.timeout), [&](ncclComm_t comm, cudaStream_t s) {
                          BRASA_NCCL(ncclReduceScatter(flat.data_ptr(), out.data_ptr(), out.numel(),
                                                       type, red, comm, s));
                        });
}

// Point-to-point exchanges grouped in one NCCL call: (peer, send?, pointer, count).
struct P2p {
  int peer;
  bool send;
  void* data;
  int64_t count;
};

static void grouped_p2p(const std::string& op, ncclComm_t comm, cudaStream_t s, ncclDataType_t type,
                        const std::vector<P2p>& parts) {
  BRASA_NCCL(ncclGroupStart());
  for (const P2p& p : parts) {
    if (p.count == 0) continue;
    if (p.send)
      BRASA_NCCL(ncclSend(p.data, p.count, type, p.peer, comm, s));
    else
      BRASA_NCCL(ncclRecv(p.data, p.count, type, p.peer, comm, s));
  }
  BRASA_NCCL(ncclGroupEnd());
}

std::shared_ptr<Work> ProcessGroupNCCL::alltoall_base(Tensor& output, Tensor& input,
                                                      std::vector<int64_t>& output_split_sizes,
                                                      std::vector<int64_t>& input_split_sizes,
                                                      const AllToAllOptions& opts) {
  const std::string op = name("alltoall_base");
  check_cuda_tensor(op, input, "the input");
  check_cuda_tensor(op, output, "the output");
  std::vector<int64_t> send, recv;
  check_alltoall_base(output, input, output_split_sizes, input_split_sizes, send, recv);
  const auto type = nccl_type(op, input.dtype());
  const int64_t es = input.element_size();
  std::vector<P2p> parts;
  int64_t so = 0, ro = 0;
  for (int r = 0; r < size(); ++r) {
    parts.push_back({r, true, static_cast<char*>(input.data_ptr()) + so * es, send[r]});
    parts.push_back({r, false, static_cast<char*>(output.data_ptr()) + ro * es, recv[r]});
    so += send[r];
    ro += recv[r];
  }
  const auto fp = next(CollectiveKind::kAlltoallBase, input, input.numel());
  return run_collective(
      *impl_, op, fp.sequence, "ALLTOALL_BASE", input, input.numel(), {input, output}, {output},
      effective(opts.timeout),
      [&](ncclComm_t comm, cudaStream_t s) { grouped_p2p(op, comm, s, type, parts); });
}

std::shared_ptr<Work> ProcessGroupNCCL::alltoall(std::vector<Tensor>& outputs,
                                                 std::vector<Tensor>& inputs,
                                                 const AllToAllOptions& opts) {
  const std::string op = name("alltoall");
  std::vector<int64_t> send, recv;
  for (const Tensor& t : inputs) check_cuda_tensor(op, t, "an input");
  for (const Tensor& t : outputs) check_cuda_tensor(op, t, "an output");
  check_alltoall(op.c_str(), outputs, inputs, send, recv);
  const auto type = nccl_type(op, inputs[0].dtype());
  std::vector<P2p> parts;
  std::vector<Tensor> used;
  for (int r = 0; r < size(); ++r) {
    parts.push_back({r, true, inputs[r].data_ptr(), send[r]});
    parts.push_back({r, false, outputs[r].data_ptr(), recv[r]});
    used.push_back(inputs[r]);
    used.push_back(outputs[r]);
  }
  const auto fp = next(CollectiveKind::kAlltoall, inputs[0], inputs[0].numel());
  return run_collective(*impl_, op, fp.sequence, "ALLTOALL", inputs[0], inputs[0].numel(), used,
                        outputs, effective(opts.timeout), [&](ncclComm_t comm, cudaStream_t s) {
                          grouped_p2p(op, comm, s, type, parts);
                        });
}

std::shared_ptr<Work> ProcessGroupNCCL::gather(std::vector<std::vector<Tensor>>& outputs,
                                               std::vector<Tensor>& inputs,
                                               const GatherOptions& opts) {
  const std::string op = name("gather");
  BRASA_CHECK(inputs.size() == 1, op, ": expected one input per process, got ", inputs.size());
  Tensor& in = inputs[0];
  check_cuda_tensor(op, in, "the input");
  const bool root = check_root_list(op.c_str(), outputs, in, opts.rootRank, "outputs");
  std::vector<P2p> parts;
  std::vector<Tensor> used{in};
  if (root) {
    for (int r = 0; r < size(); ++r) {
      check_cuda_tensor(op, outputs[0][r], "an output");
      used.push_back(outputs[0][r]);
      if (r != rank()) parts.push_back({r, false, outputs[0][r].data_ptr(), in.numel()});
    }
  } else {
    parts.push_back({int(opts.rootRank), true, in.data_ptr(), in.numel()});
  }
  const auto type = nccl_type(op, in.dtype());
  const auto fp = next(CollectiveKind::kGather, in, in.numel(), ReduceOp::SUM, opts.rootRank);
  return run_collective(*impl_, op, fp.sequence, "GATHER", in, in.numel(), used,
                        root ? outputs[0] : std::vector<Tensor>{}, effective(opts.timeout),
                        [&](ncclComm_t comm, cudaStream_t s) {
                          grouped_p2p(op, comm, s, type, parts);
                          if (root) {
                            cuda::CUDAStreamGuard on(cuda::CUDAStream(s, in.device().index()));
                            outputs[0][rank()].copy_(in);
                          }
                        });
}

std::shared_ptr<Work> ProcessGroupNCCL::scatter(std::vector<Tensor>& outputs,
                                                std::vector<std::vector<Tensor>>& inputs,
                                                const ScatterOptions& opts) {
  const std::string op = name("scatter");
  BRASA_CHECK(outputs.size() == 1, op, ": expected one output per process, got ", outputs.size());
  Tensor& out = outputs[0];
  check_cuda_tensor(op, out, "the output");
  const bool root = check_root_list(op.c_str(), inputs, out, opts.rootRank, "inputs");
  std::vector<P2p> parts;
  std::vector<Tensor> used{out};
  if (root) {
    for (int r = 0; r < size(); ++r) {
      check_cuda_tensor(op, inputs[0][r], "an input");
      used.push_back(inputs[0][r]);
      if (r != rank()) parts.push_back({r, true, inputs[0][r].data_ptr(), out.numel()});
    }
  } else {
    parts.push_back({int(opts.rootRank), false, out.data_ptr(), out.numel()});
  }
  const auto type = nccl_type(op, out.dtype());
  const auto fp = next(CollectiveKind::kScatter, out, out.numel(), ReduceOp::SUM, opts.rootRank);
  return run_collective(*impl_, op, fp.sequence, "SCATTER", out, out.numel(), used, {out},
                        effective(opts.timeout), [&](ncclComm_t comm, cudaStream_t s) {
                          grouped_p2p(op, comm, s, type, parts);
                          if (root) {
                            cuda::CUDAStreamGuard on(cuda::CUDAStream(s, out.device().index()));
                            out.copy_(inputs[0][rank()]);
                          }
                        });
}

std::shared_ptr<Work> ProcessGroupNCCL::barrier(const BarrierOptions& opts) {
  const std::string op = name("barrier");
  const int device = opts.device_ids.empty() ? cuda::current_device() : int(opts.device_ids[0]);
  Tensor one = ones({1}, TensorOptions().device(Device(kCUDA, static_cast<int8_t>(device))));
  const auto fp = next(CollectiveKind::kBarrier, one, 1);
  // A barrier blocks the host in wait(), unlike the other collectives.
  return run_collective(
      *impl_, op, fp.sequence, "BARRIER", one, 1, {one}, {}, effective(opts.timeout),
      [&](ncclComm_t comm, cudaStream_t s) {
        BRASA_NCCL(ncclAllReduce(one.data_ptr(), one.data_ptr(), 1, ncclFloat32, ncclSum, comm, s));
      },
      /*host_wait=*/true);
}

std::shared_ptr<Work> ProcessGroupNCCL::send(std::vector<Tensor>& tensors, int dst_rank, int) {
  const std::string op = name("send");
  BRASA_CHECK(tensors.size() == 1, op, ": expected one tensor, got ", tensors.size());
  check_rank(op.c_str(), "destination", dst_rank);
  BRASA_CHECK(dst_rank != rank(), op, ": cannot send to itself (rank ", rank(), ")");
  Tensor& t = tensors[0];
  check_cuda_tensor(op, t, "the tensor");
  const auto type = nccl_type(op, t.dtype());
  return run_collective(*impl_, op, sequence_number(), "SEND", t, t.numel(), {t}, {},
                        effective(kUnsetTimeout), [&](ncclComm_t comm, cudaStream_t s) {
                          BRASA_NCCL(ncclSend(t.data_ptr(), t.numel(), type, dst_rank, comm, s));
                        });
}

std::shared_ptr<Work> ProcessGroupNCCL::recv(std::vector<Tensor>& tensors, int src_rank, int) {
  const std::string op = name("recv");
  BRASA_CHECK(tensors.size() == 1, op, ": expected one tensor, got ", tensors.size());
  check_rank(op.c_str(), "source", src_rank);
  BRASA_CHECK(src_rank != rank(), op, ": cannot receive from itself (rank ", rank(), ")");
  Tensor& t = tensors[0];
  check_cuda_tensor(op, t, "the tensor");
  const auto type = nccl_type(op, t.dtype());
  return run_collective(*impl_, op, sequence_number(), "RECV", t, t.numel(), {t}, {t},
                        effective(kUnsetTimeout), [&](ncclComm_t comm, cudaStream_t s) {
                          BRASA_NCCL(ncclRecv(t.data_ptr(), t.numel(), type, src_rank, comm, s));
                        });
}

std::shared_ptr<Work> ProcessGroupNCCL::recv_anysource(std::vector<Tensor>&, int) {
  BRASA_ERROR(name("recv_anysource"),
              ": NCCL cannot receive from any source; name the source rank (recv)");
}

}  // namespace brasa::distributed
