#include "process_group_gloo.h"

#include <arpa/inet.h>
#include <brasa/comm/errors.h>
#include <brasa/comm/staging.h>
#include <brasa/comm/store/prefix_store.h>
#include <brasa/ops/factory.h>
#include <brasa/tensor/half.h>
#include <gloo/allgather.h>
#include <gloo/allreduce.h>
#include <gloo/alltoall.h>
#include <gloo/alltoallv.h>
#include <gloo/barrier.h>
#include <gloo/broadcast.h>
#include <gloo/gather.h>
#include <gloo/reduce.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/store.h>
#include <gloo/scatter.h>
#include <gloo/transport/tcp/device.h>
#include <netdb.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <mutex>
#include <thread>

#include "../ordered_jobs.h"
#include "gloo_reduce.h"

namespace brasa::distributed {

using detail::flat_cat;
using detail::scatter_back;
using detail::staged;
using detail::unstage;
using gloo_detail::dispatch;
using gloo_detail::reduce_func;

namespace {

// Our Store as Gloo's rendezvous store.
class GlooStore : public gloo::rendezvous::Store {
 public:
  explicit GlooStore(std::shared_ptr<distributed::Store> store) : store_(std::move(store)) {}
  void set(const std::string& key, const std::vector<char>& data) override {
    store_->set(key, Bytes(data.begin(), data.end()));
  }
  std::vector<char> get(const std::string& key) override {
    Bytes b = store_->get(key);
    return std::vector<char>(b.begin(), b.end());
  }
  void wait(const std::vector<std::string>& keys) override { store_->wait(keys); }
  void wait(const std::vector<std::string>& keys,
            const std::chrono::milliseconds& timeout) override {
    store_->wait(keys, timeout);
  }

 private:
  std::shared_ptr<distributed::Store> store_;
};

// The Gloo tag of a collective: its fingerprint, hashed (FNV-1a).
uint32_t tag_of(const Fingerprint& f) {
  uint32_t h = 2166136261u;
  auto mix = [&](uint64_t v) {
    for (int i = 0; i < 8; ++i) {
      h ^= static_cast<uint8_t>(v >> (8 * i));
      h *= 16777619u;
    }
  };
  mix(f.sequence);
  mix(static_cast<uint64_t>(f.kind));
  mix(static_cast<uint64_t>(f.dtype));
  mix(f.reduce_op);
  mix(static_cast<uint64_t>(f.root));
  mix(static_cast<uint64_t>(f.numel));
  return h;
}

// Point-to-point messages use their own slot range.
uint64_t p2p_slot(int tag) { return (uint64_t{1} << 56) | static_cast<uint32_t>(tag); }

void divide(const Tensor& t, int size) { const_cast<Tensor&>(t).div_(size); }

}  // namespace

struct ProcessGroupGloo::Impl {
  std::shared_ptr<Store> store;  // the group's own (prefixed) store
  std::shared_ptr<gloo::rendezvous::Context> ctx;
  int rank = 0, size = 1;

  std::mutex mu;
  std::unique_ptr<detail::OrderedJobs> jobs;  // the collectives
  // One thread per send or receive in flight, each waiting on its own Gloo
  // buffer: they complete in whatever order the peers make possible.
  struct Waiter {
    std::thread thread;
    std::shared_ptr<std::atomic<bool>> done;
  };
  std::vector<Waiter> p2p_waiters;  // under mu

  std::atomic<bool> broken{false};
  std::string broken_reason;  // under mu

  void break_group(const std::string& reason) {
    std::lock_guard<std::mutex> lock(mu);
    if (!broken.exchange(true)) broken_reason = reason;
  }
  std::string reason() {
    std::lock_guard<std::mutex> lock(mu);
    return broken_reason;
  }

  // After a Gloo failure: everyone who failed publishes what it was doing and
  // how it failed; what the others published (or did not) says whose fault it was.
  std::exception_ptr diagnose(const char* op, const Fingerprint& mine,
                              const std::string& gloo_error, std::chrono::milliseconds timeout,
                              std::chrono::steady_clock::time_point started) {
    // A connection that a peer reset or closed means that peer is gone, or
    // that its own wait timed out: Gloo closes every connection of a rank
    // whose wait times out. Which of the two it was, the peers' reports say.
    const bool peer_gone = gloo_error.find("Connection reset by peer") != std::string::npos ||
                           gloo_error.find("Connection closed by peer") != std::string::npos ||
                           gloo_error.find("Broken pipe") != std::string::npos;
    const uint8_t my_cause = peer_gone ? kConnectionBroke : kTimedOut;
    std::string mismatch, missing;
    int timed_out_peer = -1;
    std::string store_trouble;
    try {
      const std::string prefix = "failed_collective/";
      Bytes report(reinterpret_cast<const uint8_t*>(&mine),
                   reinterpret_cast<const uint8_t*>(&mine) + sizeof mine);
      report.push_back(my_cause);
      store->set(prefix + std::to_string(rank), report);
      // Live peers fail by their own timeout at the latest; wait that long
      // (and a little more), or a short while when we failed early.
      const auto soon =
          std::chrono::steady_clock::now() + std::min(timeout, std::chrono::milliseconds(3000));
      const auto deadline =
          peer_gone ? soon : std::max(soon, started + timeout + std::chrono::milliseconds(1000));
      for (int r = 0; r < size; ++r) {
        if (r == rank) continue;
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
            deadline - std::chrono::steady_clock::now());
        try {
          store->wait({prefix + std::to_string(r)}, std::max(left, std::chrono::milliseconds(1)));
          Bytes b = store->get(prefix + std::to_string(r));
          Fingerprint theirs;
          if (b.size() == sizeof theirs + 1) {
            std::memcpy(&theirs, b.data(), sizeof theirs);
            if (b.back() == kTimedOut && timed_out_peer < 0) timed_out_peer = r;
          }
          if (!(theirs == mine))
            mismatch += "; the ranks called different collectives: rank " + std::to_string(rank) +
                        " called " + mine.describe() + " but rank " + std::to_string(r) +
                        " called " + theirs.describe();
        } catch (const DistTimeoutError&) {
          missing += (missing.empty() ? "" : ", ") + std::to_string(r);
        } catch (const DistNetworkError&) {
          // The store went away while we waited for r: r did not arrive before that.
          missing += (missing.empty() ? "" : ", ") + std::to_string(r);
          throw;
        }
      }
    } catch (const std::exception& e) {
      store_trouble = "; the store is unreachable too (" + std::string(e.what()) +
                      "): rank 0, which serves it, may be gone";
    }
    // A broken connection whose peer reported a timeout is that timeout.
    const bool timed_out = !peer_gone || timed_out_peer >= 0;
    std::string text = std::string("ProcessGroupGloo.") + op + ": " + mine.describe();
    if (!peer_gone)
      text += " failed within its timeout of " + std::to_string(timeout.count()) + " ms";
    else if (timed_out)
      text += " failed: rank " + std::to_string(timed_out_peer) + " reached the timeout of " +
              std::to_string(timeout.count()) + " ms and closed its connections";
    else
      text += " failed: a peer's connection broke";
    text += " (gloo: " + gloo_error + ")" + store_trouble + mismatch;
    if (!missing.empty())
      text += "; rank(s) " + missing + " did not reach it (stuck elsewhere, or dead)";
    break_group(text);
    text += "; the group can no longer be used";
    if (!mismatch.empty()) return std::make_exception_ptr(DistError(text, "", __FILE__, __LINE__));
    if (!timed_out) return std::make_exception_ptr(DistNetworkError(text, "", __FILE__, __LINE__));
    return std::make_exception_ptr(DistTimeoutError(text, "", __FILE__, __LINE__));
  }
  // How a rank's collective failed, as it tells the others through the store.
  static constexpr uint8_t kTimedOut = 1;
  static constexpr uint8_t kConnectionBroke = 2;
};

std::string ProcessGroupGloo::local_address_toward(const std::string& host) {
  if (host.empty()) return "127.0.0.1";
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_DGRAM;
  addrinfo* found = nullptr;
  if (::getaddrinfo(host.c_str(), "9", &hints, &found) != 0 || !found) return "127.0.0.1";
  std::string result = "127.0.0.1";
  int fd = ::socket(found->ai_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  // Connecting a UDP socket sends nothing; it only picks the route.
  if (fd >= 0 && ::connect(fd, found->ai_addr, found->ai_addrlen) == 0) {
    sockaddr_storage ss{};
    socklen_t len = sizeof ss;
    char buf[INET6_ADDRSTRLEN] = {0};
    if (::getsockname(fd, reinterpret_cast<sockaddr*>(&ss), &len) == 0) {
      const void* addr =
          ss.ss_family == AF_INET6
              ? static_cast<const void*>(&reinterpret_cast<sockaddr_in6*>(&ss)->sin6_addr)
              : static_cast<const void*>(&reinterpret_cast<sockaddr_in*>(&ss)->sin_addr);
      if (::inet_ntop(ss.ss_family, addr, buf, sizeof buf)) result = buf;
    }
  }
  if (fd >= 0) ::close(fd);
  ::freeaddrinfo(found);
  return result;
}

ProcessGroupGloo::ProcessGroupGloo(std::shared_ptr<Store> store, int rank, int size)
    : ProcessGroupGloo(std::move(store), rank, size, Options()) {}

ProcessGroupGloo::ProcessGroupGloo(std::shared_ptr<Store> store, int rank, int size,
                                   const Options& options)
    : ProcessGroup(rank, size, options.timeout), impl_(std::make_unique<Impl>()) {
  BRASA_CHECK(store != nullptr, "ProcessGroupGloo: the store is null");
  // Gloo writes to its sockets without MSG_NOSIGNAL: a peer that died would
  // kill this process with SIGPIPE instead of failing the operation.
  struct sigaction current {};
  if (::sigaction(SIGPIPE, nullptr, &current) == 0 && current.sa_handler == SIG_DFL)
    ::signal(SIGPIPE, SIG_IGN);
  impl_->store = store;
  impl_->rank = rank;
  impl_->size = size;
  gloo::transport::tcp::attr attr;
  attr.hostname =
      options.hostname.empty() ? local_address_toward(options.peer_host) : options.hostname;
  try {
    auto device = gloo::transport::tcp::CreateDevice(attr);
    impl_->ctx = std::make_shared<gloo::rendezvous::Context>(rank, size);
    impl_->ctx->setTimeout(options.timeout);
    GlooStore gloo_store(std::make_shared<PrefixStore>("gloo", store));
    impl_->ctx->connectFullMesh(gloo_store, device);
  } catch (const brasa::Error&) {
    throw;
  } catch (const std::exception& e) {
    BRASA_DIST_THROW(DistNetworkError, "ProcessGroupGloo: rank ", rank, " of ", size,
                     " could not connect to the ", "others (its address for them: ", attr.hostname,
                     "): ", e.what());
  }
  impl_->jobs = std::make_unique<detail::OrderedJobs>(options.background_collectives);
}

ProcessGroupGloo::~ProcessGroupGloo() {
  impl_->jobs.reset();  // runs what is queued
  std::vector<Impl::Waiter> waiters;
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    waiters.swap(impl_->p2p_waiters);
  }
  for (auto& w : waiters) w.thread.join();
}

void ProcessGroupGloo::abort() {
  impl_->break_group("abort() was called");
  for (auto& job : impl_->jobs->take_queued()) job();  // each sees the broken flag, fails its Work
}

std::shared_ptr<Work> ProcessGroupGloo::enqueue(
    const char* op, const Fingerprint& f, std::chrono::milliseconds timeout,
    std::function<void(uint32_t, std::chrono::milliseconds)> run, std::vector<Tensor> outputs) {
  if (impl_->broken)
    BRASA_DIST_THROW(DistError, "ProcessGroupGloo.", op,
                     ": this group can no longer be used: ", impl_->reason());
  auto work = std::make_shared<Work>(op);
  work->set_outputs(std::move(outputs));
  Impl* g = impl_.get();
  auto job = [g, work, f, timeout, run = std::move(run), op]() {
    if (g->broken) {
      work->finish(std::make_exception_ptr(
          DistError(std::string("ProcessGroupGloo.") + op +
                        ": this group can no longer be used: " + g->reason(),
                    "", __FILE__, __LINE__)));
      return;
    }
    const auto started = std::chrono::steady_clock::now();
    try {
      run(tag_of(f), timeout);
      work->finish();
    } catch (const brasa::Error&) {
      work->finish(std::current_exception());
    } catch (const std::exception& e) {
      work->finish(g->diagnose(op, f, e.what(), timeout, started));
    }
  };
  impl_->jobs->run(std::move(job));
  return work;
}

// ---- collectives ----

std::shared_ptr<Work> ProcessGroupGloo::broadcast(std::vector<Tensor>& tensors,
                                                  const BroadcastOptions& opts) {
  const Tensor t = single("broadcast", tensors);
  check_rank("broadcast", "root", opts.rootRank);
  Tensor buf = staged(t);
  const int root = static_cast<int>(opts.rootRank);
  auto ctx = impl_->ctx;
  return enqueue("broadcast", next(CollectiveKind::kBroadcast, t, t.numel(), ReduceOp::SUM, root),
                 effective(opts.timeout),
                 [ctx, t, buf, root](uint32_t tag, std::chrono::milliseconds timeout) {
                   if (buf.numel() > 0) {
                     dispatch(t.scalar_type(), [&](auto v) {
                       using T = decltype(v);
                       gloo::BroadcastOptions o(ctx);
                       o.setOutput(static_cast<T*>(buf.data_ptr()),
                                   static_cast<size_t>(buf.numel()));
                       o.setRoot(root);
                       o.setTag(tag);
                       o.setTimeout(timeout);
                       gloo::broadcast(o);
                     });
                   }
                   unstage(t, buf);
                 },
                 {t});
}

namespace {
// In-place allreduce of a contiguous buffer (AVG: SUM, then divide).
void allreduce_buffer(const std::shared_ptr<gloo::Context>& ctx, const Tensor& buf, ReduceOp op,
                      uint32_t tag, std::chrono::milliseconds timeout) {
  if (buf.numel() == 0) return;
  dispatch(buf.scalar_type(), [&](auto v) {
    using T = decltype(v);
    gloo::AllreduceOptions o(ctx);
    o.setOutput(static_cast<T*>(buf.data_ptr()), static_cast<size_t>(buf.numel()));
    o.setReduceFunction(reduce_func<T>(op, buf.scalar_type() == ScalarType::Bool));
    o.setTag(tag);
    o.setTimeout(timeout);
    gloo::allreduce(o);
  });
  if (op == ReduceOp::AVG) divide(buf, ctx->size);
}
}  // namespace

std::shared_ptr<Work> ProcessGroupGloo::allreduce(std::vector<Tensor>& tensors,
                                                  const AllreduceOptions& opts) {
  const Tensor t = single("allreduce", tensors);
  check_reduce_op("allreduce", opts.reduceOp, t.scalar_type());
  Tensor buf = staged(t);
  auto ctx = impl_->ctx;
  const ReduceOp op = opts.reduceOp;
  return enqueue("allreduce", next(CollectiveKind::kAllreduce, t, t.numel(), op),
                 effective(opts.timeout),
                 [ctx, t, buf, op](uint32_t tag, std::chrono::milliseconds timeout) {
                   allreduce_buffer(ctx, buf, op, tag, timeout);
                   unstage(t, buf);
                 },
                 {t});
}

std::shared_ptr<Work> ProcessGroupGloo::allreduce_coalesced(std::vector<Tensor>& tensors,
                                                            const AllreduceCoalescedOptions& opts) {
  check_coalesced("allreduce_coalesced", tensors, opts.reduceOp);
  Tensor flat = flat_cat(tensors);
  auto ctx = impl_->ctx;
  const ReduceOp op = opts.reduceOp;
  std::vector<Tensor> targets = tensors;
  return enqueue(
      "allreduce_coalesced", next(CollectiveKind::kAllreduceCoalesced, flat, flat.numel(), op),
      effective(opts.timeout),
      [ctx, targets, flat, op](uint32_t tag, std::chrono::milliseconds timeout) {
        allreduce_buffer(ctx, flat, op, tag, timeout);
        scatter_back(targets, flat);
      },
      targets);
}

std::shared_ptr<Work> ProcessGroupGloo::reduce(std::vector<Tensor>& tensors,
                                               const ReduceOptions& opts) {
  const Tensor t = single("reduce", tensors);
  check_rank("reduce", "root", opts.rootRank);
  check_reduce_op("reduce", opts.reduceOp, t.scalar_type());
  const int root = static_cast<int>(opts.rootRank);
  const bool is_root = root == rank();
  Tensor in = staged(t);
  // Gloo uses the output of non-roots as scratch: give them a copy.
  Tensor out = is_root ? in : empty_like(in);
  auto ctx = impl_->ctx;
  const ReduceOp op = opts.reduceOp;
  return enqueue(
      "reduce", next(CollectiveKind::kReduce, t, t.numel(), op, root), effective(opts.timeout),
      [ctx, t, in, out, root, op, is_root](uint32_t tag, std::chrono::milliseconds timeout) {
        if (in.numel() > 0) {
          dispatch(t.scalar_type(), [&](auto v) {
            using T = decltype(v);
            gloo::ReduceOptions o(ctx);
            o.setInput(static_cast<T*>(in.data_ptr()), static_cast<size_t>(in.numel()));
            o.setOutput(static_cast<T*>(out.data_ptr()), static_cast<size_t>(out.numel()));
            o.setRoot(root);
            o.setReduceFunction(reduce_func<T>(op, t.scalar_type() == ScalarType::Bool));
            o.setTag(tag);
            o.setTimeout(timeout);
            gloo::reduce(o);
          });
        }
        if (!is_root) return;
        if (op == ReduceOp::AVG) divide(out, ctx->size);
        unstage(t, out);
      },
      {t});
}

std::shared_ptr<Work> ProcessGroupGloo::allgather(std::vector<std::vector<Tensor>>& outputs,
                                                  std::vector<Tensor>& inputs,
                                                  const AllgatherOptions& opts) {
  const Tensor in = staged(single("allgather", inputs, "inputs"));
  check_one_list("allgather", outputs, in, "outputs");
  Tensor gathered = empty({static_cast<int64_t>(size()) * in.numel()}, in.options());
  auto ctx = impl_->ctx;
  std::vector<Tensor> targets = outputs[0];
  return enqueue(
      "allgather", next(CollectiveKind::kAllgather, in, in.numel()), effective(opts.timeout),
      [ctx, in, gathered, targets](uint32_t tag, std::chrono::milliseconds timeout) {
        if (in.numel() > 0) {
          dispatch(in.scalar_type(), [&](auto v) {
            using T = decltype(v);
            gloo::AllgatherOptions o(ctx);
            o.setInput(static_cast<T*>(in.data_ptr()), static_cast<size_t>(in.numel()));
            o.setOutput(static_cast<T*>(gathered.data_ptr()),
                        static_cast<size_t>(gathered.numel()));
            o.setTag(tag);
            o.setTimeout(timeout);
            gloo::allgather(o);
          });
        }
        scatter_back(targets, gathered);
      },
      targets);
}

std::shared_ptr<Work> ProcessGroupGloo::allgather_into_tensor(Tensor& output, Tensor& input,
                                                              const AllgatherOptions& opts) {
  std::vector<Tensor> in_list{input};
  const Tensor in = staged(single("allgather_into_tensor", in_list, "input"));
  check_blocks("allgather_into_tensor", output, in, "output");
  Tensor target = output, out = staged(output);
  auto ctx = impl_->ctx;
  return enqueue(
      "allgather_into_tensor", next(CollectiveKind::kAllgatherIntoTensor, in, in.numel()),
      effective(opts.timeout),
      [ctx, in, out, target](uint32_t tag, std::chrono::milliseconds timeout) {
        if (in.numel() > 0) {
          dispatch(in.scalar_type(), [&](auto v) {
            using T = decltype(v);
            gloo::AllgatherOptions o(ctx);
            o.setInput(static_cast<T*>(in.data_ptr()), static_cast<size_t>(in.numel()));
            o.setOutput(static_cast<T*>(out.data_ptr()), static_cast<size_t>(out.numel()));
            o.setTag(tag);
            o.setTimeout(timeout);
            gloo::allgather(o);
          });
        }
        unstage(target, out);
      },
      {target});
}

std::shared_ptr<Work> ProcessGroupGloo::gather(std::vector<std::vector<Tensor>>& outputs,
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
  auto ctx = impl_->ctx;
  return enqueue(
      "gather", next(CollectiveKind::kGather, in, in.numel(), ReduceOp::SUM, root),
      effective(opts.timeout),
      [ctx, in, gathered, targets, root, is_root](uint32_t tag, std::chrono::milliseconds timeout) {
        if (in.numel() > 0) {
          dispatch(in.scalar_type(), [&](auto v) {
            using T = decltype(v);
            gloo::GatherOptions o(ctx);
            o.setInput(static_cast<T*>(in.data_ptr()), static_cast<size_t>(in.numel()));
            if (is_root)
              o.setOutput(static_cast<T*>(gathered.data_ptr()),
                          static_cast<size_t>(gathered.numel()));
            o.setRoot(root);
            o.setTag(tag);
            o.setTimeout(timeout);
            gloo::gather(o);
          });
        }
        if (is_root) scatter_back(targets, gathered);
      },
      targets);
}

std::shared_ptr<Work> ProcessGroupGloo::scatter(std::vector<Tensor>& outputs,
                                                std::vector<std::vector<Tensor>>& inputs,
                                                const ScatterOptions& opts) {
  const Tensor target = single("scatter", outputs, "outputs");
  const int root = static_cast<int>(opts.rootRank);
  const bool is_root = check_root_list("scatter", inputs, target, opts.rootRank, "inputs");
  std::vector<Tensor> sources;
  if (is_root) {
    for (const auto& t : inputs[0]) sources.push_back(staged(t));
  }
  Tensor out = staged(target);
  auto ctx = impl_->ctx;
  return enqueue(
      "scatter", next(CollectiveKind::kScatter, target, target.numel(), ReduceOp::SUM, root),
      effective(opts.timeout),
      [ctx, target, out, sources, root, is_root](uint32_t tag, std::chrono::milliseconds timeout) {
        if (out.numel() > 0) {
          dispatch(target.scalar_type(), [&](auto v) {
            using T = decltype(v);
            gloo::ScatterOptions o(ctx);
            if (is_root) {
              std::vector<T*> ptrs;
              for (const auto& s : sources) ptrs.push_back(static_cast<T*>(s.data_ptr()));
              o.setInputs(ptrs, static_cast<size_t>(out.numel()));
            }
            o.setOutput(static_cast<T*>(out.data_ptr()), static_cast<size_t>(out.numel()));
            o.setRoot(root);
            o.setTag(tag);
            o.setTimeout(timeout);
            gloo::scatter(o);
          });
        }
        unstage(target, out);
      },
      {target});
}

std::shared_ptr<Work> ProcessGroupGloo::reduce_scatter(std::vector<Tensor>& outputs,
                                                       std::vector<std::vector<Tensor>>& inputs,
                                                       const ReduceScatterOptions& opts) {
  const Tensor target = single("reduce_scatter", outputs, "outputs");
  check_reduce_op("reduce_scatter", opts.reduceOp, target.scalar_type());
  check_one_list("reduce_scatter", inputs, target, "inputs");
  Tensor packed = flat_cat(inputs[0]);
  auto ctx = impl_->ctx;
  const ReduceOp op = opts.reduceOp;
  const int me = rank();
  return enqueue(
      "reduce_scatter", next(CollectiveKind::kReduceScatter, target, target.numel(), op),
      effective(opts.timeout),
      [ctx, target, packed, op, me](uint32_t tag, std::chrono::milliseconds timeout) {
        allreduce_buffer(ctx, packed, op, tag, timeout);
        const_cast<Tensor&>(target).copy_(
            packed.narrow(0, me * target.numel(), target.numel()).reshape(target.sizes()));
      },
      {target});
}

std::shared_ptr<Work> ProcessGroupGloo::reduce_scatter_tensor(Tensor& output, Tensor& input,
                                                              const ReduceScatterOptions& opts) {
  std::vector<Tensor> out_list{output};
  const Tensor target = single("reduce_scatter_tensor", out_list, "output");
  check_reduce_op("reduce_scatter_tensor", opts.reduceOp, target.scalar_type());
  check_blocks("reduce_scatter_tensor", input, target, "input");
  Tensor packed =
      input.contiguous().clone();  // reduced in place; the caller's input stays as it was
  auto ctx = impl_->ctx;
  const ReduceOp op = opts.reduceOp;
  const int me = rank();
  return enqueue("reduce_scatter_tensor",
                 next(CollectiveKind::kReduceScatterTensor, target, target.numel(), op),
                 effective(opts.timeout),
                 [ctx, target, packed, op, me](uint32_t tag, std::chrono::milliseconds timeout) {
                   Tensor flat = packed.reshape({-1});
                   allreduce_buffer(ctx, flat, op, tag, timeout);
                   const_cast<Tensor&>(target).copy_(
                       flat.narrow(0, me * target.numel(), target.numel()).reshape(target.sizes()));
                 },
                 {target});
}

namespace {
void alltoallv_buffers(const std::shared_ptr<gloo::Context>& ctx, const Tensor& in,
                       const std::vector<int64_t>& send, const Tensor& out,
                       const std::vector<int64_t>& recv, uint32_t tag,
                       std::chrono::milliseconds timeout) {
  if (in.numel() == 0 && out.numel() == 0) return;
  dispatch(in.scalar_type(), [&](auto v) {
    using T = decltype(v);
    gloo::AlltoallvOptions o(ctx);
    o.setInput(static_cast<T*>(in.data_ptr()), send);
    o.setOutput(static_cast<T*>(out.data_ptr()), recv);
    o.setTag(tag);
    o.setTimeout(timeout);
    gloo::alltoallv(o);
  });
}
}  // namespace

std::shared_ptr<Work> ProcessGroupGloo::alltoall_base(Tensor& output, Tensor& input,
                                                      std::vector<int64_t>& output_split_sizes,
                                                      std::vector<int64_t>& input_split_sizes,
                                                      const AllToAllOptions& opts) {
  std::vector<int64_t> send, recv;
  check_alltoall_base(output, input, output_split_sizes, input_split_sizes, send, recv);
  const Tensor src = input, target = output;
  Tensor in = staged(src), out = staged(target);
  auto ctx = impl_->ctx;
  return enqueue(
      "alltoall_base", next(CollectiveKind::kAlltoallBase, src, -1), effective(opts.timeout),
      [ctx, in, out, target, send, recv](uint32_t tag, std::chrono::milliseconds timeout) {
        alltoallv_buffers(ctx, in, send, out, recv, tag, timeout);
        unstage(target, out);
      },
      {target});
}

std::shared_ptr<Work> ProcessGroupGloo::alltoall(std::vector<Tensor>& outputs,
                                                 std::vector<Tensor>& inputs,
                                                 const AllToAllOptions& opts) {
  std::vector<int64_t> send, recv;
  check_alltoall("alltoall", outputs, inputs, send, recv);
  int64_t recv_total = 0;
  for (int64_t c : recv) recv_total += c;
  Tensor packed = flat_cat(inputs);
  Tensor received = empty({recv_total}, inputs[0].options());
  auto ctx = impl_->ctx;
  std::vector<Tensor> targets = outputs;
  return enqueue(
      "alltoall", next(CollectiveKind::kAlltoall, packed, -1), effective(opts.timeout),
      [ctx, packed, received, targets, send, recv](uint32_t tag,
                                                   std::chrono::milliseconds timeout) {
        alltoallv_buffers(ctx, packed, send, received, recv, tag, timeout);
        scatter_back(targets, received);
      },
      targets);
}

std::shared_ptr<Work> ProcessGroupGloo::barrier(const BarrierOptions& opts) {
  auto ctx = impl_->ctx;
  return enqueue("barrier", next(CollectiveKind::kBarrier, Tensor(), 0), effective(opts.timeout),
                 [ctx](uint32_t tag, std::chrono::milliseconds timeout) {
                   gloo::BarrierOptions o(ctx);
                   o.setTag(tag);
                   o.setTimeout(timeout);
                   gloo::barrier(o);
                 },
                 {});
}

// ---- point to point: posted at once; a thread per operation waits on its
// Gloo buffer and completes the Work (Gloo's own wait timeouts close the
// connection, so a caller's shorter Work::wait timeout must not reach it).
// Waiting on them one after the other in the order they were posted would
// deadlock ranks whose receives are posted in another order than the
// matching sends.

struct ProcessGroupGloo::P2P {
  std::unique_ptr<gloo::transport::UnboundBuffer> buffer;
  bool is_send = false;
  Tensor target, staging;
  std::shared_ptr<Work> work;
  std::chrono::milliseconds timeout;
};

namespace {
void complete_p2p(ProcessGroupGloo::P2P& op) {
  try {
    int peer = -1;
    bool ok = op.is_send ? op.buffer->waitSend(&peer, op.timeout)
                         : op.buffer->waitRecv(&peer, op.timeout);
    if (!ok) BRASA_DIST_THROW(DistError, "ProcessGroupGloo.", op.work->op(), ": aborted");
    if (!op.is_send) {
      op.work->set_source_rank(peer);
      unstage(op.target, op.staging);
    }
    op.work->finish();
  } catch (const brasa::Error&) {
    op.work->finish(std::current_exception());
  } catch (const std::exception& e) {
    op.work->finish(std::make_exception_ptr(
        DistTimeoutError("ProcessGroupGloo." + op.work->op() + ": " + e.what() + " (timeout " +
                             std::to_string(op.timeout.count()) + " ms)",
                         "", __FILE__, __LINE__)));
  }
}
}  // namespace

std::shared_ptr<Work> ProcessGroupGloo::post(const char* op, bool is_send, const Tensor& target,
                                             int peer, int tag) {
  if (impl_->broken)
    BRASA_DIST_THROW(DistError, "ProcessGroupGloo.", op,
                     ": this group can no longer be used: ", impl_->reason());
  auto p = std::make_unique<P2P>();
  p->is_send = is_send;
  p->target = target;
  p->staging = staged(target);
  p->work = std::make_shared<Work>(op);
  p->work->set_outputs({target});
  p->timeout = timeout();
  p->buffer = impl_->ctx->createUnboundBuffer(p->staging.data_ptr(), p->staging.nbytes());
  if (is_send) {
    p->buffer->send(peer, p2p_slot(tag));
  } else if (peer >= 0) {
    p->buffer->recv(peer, p2p_slot(tag));
  } else {
    std::vector<int> others;
    for (int r = 0; r < size(); ++r)
      if (r != rank()) others.push_back(r);
    p->buffer->recv(others, p2p_slot(tag));
  }
  auto work = p->work;
  auto done = std::make_shared<std::atomic<bool>>(false);
  std::thread waiter([op = std::shared_ptr<P2P>(std::move(p)), done] {
    complete_p2p(*op);
    op->buffer.reset();
    done->store(true);
  });
  std::lock_guard<std::mutex> lock(impl_->mu);
  auto& waiters = impl_->p2p_waiters;
  for (auto it = waiters.begin(); it != waiters.end();) {  // the finished ones go
    if (it->done->load()) {
      it->thread.join();
      it = waiters.erase(it);
    } else {
      ++it;
    }
  }
  waiters.push_back({std::move(waiter), done});
  return work;
}

std::shared_ptr<Work> ProcessGroupGloo::send(std::vector<Tensor>& tensors, int dst_rank, int tag) {
  const Tensor t = single("send", tensors);
  check_rank("send", "destination", dst_rank);
  BRASA_CHECK(tag >= 0, name("send"), ": the tag must be >= 0, got ", tag);
  return post("send", true, t, dst_rank, tag);
}

std::shared_ptr<Work> ProcessGroupGloo::recv(std::vector<Tensor>& tensors, int src_rank, int tag) {
  const Tensor t = single("recv", tensors);
  check_rank("recv", "source", src_rank);
  BRASA_CHECK(tag >= 0, name("recv"), ": the tag must be >= 0, got ", tag);
  return post("recv", false, t, src_rank, tag);
}

std::shared_ptr<Work> ProcessGroupGloo::recv_anysource(std::vector<Tensor>& tensors, int tag) {
  const Tensor t = single("recv_anysource", tensors);
  BRASA_CHECK(tag >= 0, name("recv_anysource"), ": the tag must be >= 0, got ", tag);
  return post("recv_anysource", false, t, -1, tag);
}

}  // namespace brasa::distributed
