#pragma once
// DistributedDataParallel: data parallelism over processes with PyTorch's
// semantics (torch.nn.parallel.DistributedDataParallel; libtorch has none).
//
//   dist::init_process_group("gloo");                     // or "mpi"
//   auto ddp = nn::parallel::DistributedDataParallel(
//       net, nn::parallel::DistributedDataParallelOptions().bucket_cap_mb(25));
//   optim::SGD opt(ddp->parameters(), optim::SGDOptions(0.1));
//   loss_fn(ddp->forward(x), y).backward();               // gradients averaged over ranks
//   opt.step();
//   { auto guard = ddp->no_sync(); /* backward accumulates locally */ }
//
// Construction checks that every rank holds the same parameters (same
// count, order, shapes and dtypes; a difference fails on every rank naming
// the first differing parameter and the ranks) and broadcasts parameters
// and buffers from rank 0. forward() takes and returns what the wrapped
// module's forward does; the gradients of the next backward are averaged
// over the group by the Reducer (parallel/reducer.h), overlapping with
// backward.
//
// Names: parameters(), named_parameters(), buffers() and state_dict() are
// the wrapped module's, with the same names (no "module." prefix, unlike
// PyTorch): a checkpoint written from the DDP loads into the bare module
// and back. Move the module to its device and dtype before wrapping it.

#include <brasa/nn/module.h>
#include <brasa/parallel/comm_hooks.h>
#include <brasa/parallel/options.h>
#include <brasa/parallel/reducer.h>

#include <chrono>
#include <memory>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

namespace brasa::nn::parallel {

namespace detail {
// The tensors in a forward's return value, for the unused-parameter walk.
inline void collect_tensors(const Tensor& t, std::vector<Tensor>& out) { out.push_back(t); }
template <class T>
void collect_tensors(const std::vector<T>& v, std::vector<Tensor>& out);
template <class A, class B>
void collect_tensors(const std::pair<A, B>& p, std::vector<Tensor>& out);
template <class... Ts>
void collect_tensors(const std::tuple<Ts...>& t, std::vector<Tensor>& out);
template <class T>
void collect_tensors(const T&, std::vector<Tensor>&) {}  // holds no tensors we know of
template <class T>
void collect_tensors(const std::vector<T>& v, std::vector<Tensor>& out) {
  for (const auto& x : v) collect_tensors(x, out);
}
template <class A, class B>
void collect_tensors(const std::pair<A, B>& p, std::vector<Tensor>& out) {
  collect_tensors(p.first, out);
  collect_tensors(p.second, out);
}
template <class... Ts>
void collect_tensors(const std::tuple<Ts...>& t, std::vector<Tensor>& out) {
  std::apply([&](const auto&... x) { (collect_tensors(x, out), ...); }, t);
}
}  // namespace detail

class Join;

// What does not depend on the wrapped module's type.
class DistributedDataParallelBase : public Module {
 public:
  DistributedDataParallelBase(std::shared_ptr<Module> module,
                              const DistributedDataParallelOptions& options);
  ~DistributedDataParallelBase() override;

  // While alive, backward passes accumulate gradients locally; the first
  // backward after it reduces the sum (PyTorch's no_sync()).
  class NoSyncGuard {
   public:
    explicit NoSyncGuard(DistributedDataParallelBase& ddp);
    ~NoSyncGuard();
    NoSyncGuard(NoSyncGuard&& o) noexcept : ddp_(o.ddp_), prev_(o.prev_) { o.ddp_ = nullptr; }
    NoSyncGuard(const NoSyncGuard&) = delete;
    NoSyncGuard& operator=(const NoSyncGuard&) = delete;

   private:
    DistributedDataParallelBase* ddp_;
    bool prev_;
  };
  NoSyncGuard no_sync() { return NoSyncGuard(*this); }
  bool require_backward_grad_sync() const { return require_backward_grad_sync_; }

  // Replaces the bucket allreduce (see grad_bucket.h, comm_hooks.h). Call
  // before the first backward, once. The state is passed to every call;
  // a std::shared_ptr<State> is passed as State&.
  void register_comm_hook(CommHook hook);
  template <class State, class Hook>
  void register_comm_hook(State state, Hook hook) {
    register_comm_hook(CommHook([s = std::move(state), h = std::move(hook)](
                                    GradBucket& bucket) mutable { return call(h, s, bucket); }));
  }

  DistributedDataParallelStats stats() const;
  const DistributedDataParallelOptions& options() const { return options_; }
  const distributed::GroupPtr& process_group() const { return group_; }

  // train()/eval() reach the wrapped module itself, not only its children.
  void train(bool on = true) override;
  void to(ScalarType dtype) override;
  void to(Device device, bool non_blocking = false) override;
  std::shared_ptr<Module> clone(const std::optional<Device>& device = std::nullopt) const override;
  void pretty_print(std::ostream& os) const override;

 protected:
  void pre_forward();
  void post_forward(const std::vector<Tensor>& outputs);
  template <class Out>
  void post_forward_of(const Out& out) {
    std::vector<Tensor> tensors;
    detail::collect_tensors(out, tensors);
    post_forward(tensors);
  }

 private:
  friend class Join;
  template <class H, class S>
  static std::shared_ptr<distributed::Work> call(H& h, S& s, GradBucket& b) {
    return h(s, b);
  }
  template <class H, class S>
  static std::shared_ptr<distributed::Work> call(H& h, std::shared_ptr<S>& s, GradBucket& b) {
    if constexpr (std::is_invocable_v<H&, std::shared_ptr<S>&, GradBucket&>)
      return h(s, b);  // the state is a pointer (a process group)
    else
      return h(*s, b);
  }
  void check_same_parameters_on_all_ranks();
  // The root's values of `tensors` to every rank, one broadcast per dtype.
  void broadcast_coalesced(const std::vector<Tensor>& tensors, int root = 0);

  // Join (join.h): at each forward, the number of ranks that still have
  // inputs; on a rank that has none, the collectives of one iteration of the
  // others; at the end, the model of the rank that ran longest to everyone.
  int64_t join_notify_active();
  void join_shadow_iteration();
  void join_sync_final_model();
  Join* join_ = nullptr;

  std::shared_ptr<Module> module_;
  DistributedDataParallelOptions options_;
  distributed::GroupPtr group_;
  std::vector<Tensor> params_;  // those that require grad, in registration order
  std::vector<std::string> param_names_;
  std::shared_ptr<Reducer> reducer_;
  bool require_backward_grad_sync_ = true;
  std::chrono::steady_clock::time_point forward_start_;
};

template <class M>
class DistributedDataParallelImpl : public DistributedDataParallelBase {
 public:
  explicit DistributedDataParallelImpl(std::shared_ptr<M> module,
                                       const DistributedDataParallelOptions& options = {})
      : DistributedDataParallelBase(module, options), typed_module_(std::move(module)) {}

  template <class... Args>
  auto forward(Args&&... args) {
    pre_forward();
    auto out = typed_module_->forward(std::forward<Args>(args)...);
    post_forward_of(out);
    return out;
  }
  // The wrapped module.
  const std::shared_ptr<M>& module() const { return typed_module_; }

 private:
  std::shared_ptr<M> typed_module_;
};

// The holder: DistributedDataParallel(net, options) with net a
// std::shared_ptr<Net> or a module holder (nn::Sequential, nn::Linear ...).
template <class M>
class DistributedDataParallel : public ModuleHolder<DistributedDataParallelImpl<M>> {
 public:
  using Impl = DistributedDataParallelImpl<M>;
  DistributedDataParallel(std::nullptr_t) : ModuleHolder<Impl>(nullptr) {}
  DistributedDataParallel(std::shared_ptr<M> module,
                          const DistributedDataParallelOptions& options = {})
      : ModuleHolder<Impl>(std::make_shared<Impl>(std::move(module), options)) {}
  template <class H, class = std::enable_if_t<std::is_same_v<typename H::ContainedType, M>>>
  DistributedDataParallel(const H& holder, const DistributedDataParallelOptions& options = {})
      : DistributedDataParallel(holder.ptr(), options) {}
};
template <class M>
DistributedDataParallel(std::shared_ptr<M>) -> DistributedDataParallel<M>;
template <class M>
DistributedDataParallel(std::shared_ptr<M>, DistributedDataParallelOptions)
    -> DistributedDataParallel<M>;
template <class H, class = typename H::ContainedType>
DistributedDataParallel(H) -> DistributedDataParallel<typename H::ContainedType>;
template <class H, class = typename H::ContainedType>
DistributedDataParallel(H, DistributedDataParallelOptions)
    -> DistributedDataParallel<typename H::ContainedType>;

}  // namespace brasa::nn::parallel
