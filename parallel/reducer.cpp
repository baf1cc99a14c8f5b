#include <brasa/autograd/engine.h>
#include <brasa/autograd/grad_mode.h>
#include <brasa/autograd/node.h>
#include <brasa/autograd/variable.h>
#include <brasa/ops/factory.h>
#include <brasa/parallel/comm_hooks.h>
#include <brasa/parallel/reducer.h>
#include <brasa/util/parallel.h>

#include <algorithm>
#include <sstream>
#include <unordered_set>

namespace brasa::nn::parallel {

namespace {

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

int64_t mb_to_bytes(double mb) { return static_cast<int64_t>(mb * 1024 * 1024); }

}  // namespace

std::vector<Tensor> GradBucket::gradients() const {
  std::vector<Tensor> out;
  for (size_t i = 0; i < parameters_.size(); ++i)
    out.push_back(
        buffer_.narrow(0, offsets_[i], parameters_[i].numel()).view(parameters_[i].sizes()));
  return out;
}

std::shared_ptr<Reducer> Reducer::create(std::vector<Tensor> params, std::vector<std::string> names,
                                         distributed::GroupPtr group,
                                         const DistributedDataParallelOptions& options) {
  std::shared_ptr<Reducer> r(
      new Reducer(std::move(params), std::move(names), std::move(group), options));
  r->install_hooks();
  return r;
}

Reducer::Reducer(std::vector<Tensor> params, std::vector<std::string> names,
                 distributed::GroupPtr group, const DistributedDataParallelOptions& options)
    : params_(std::move(params)),
      names_(std::move(names)),
      group_(std::move(group)),
      options_(options) {
  const size_t n = params_.size();
  ready_.assign(n, false);
  locally_used_.assign(n, false);
  hook_count_.assign(n, 0);
  std::vector<size_t> order(n);
  for (size_t i = 0; i < n; ++i) order[i] = n - 1 - i;
  build_buckets(order);
  comm_thread_ = std::thread([this] { comm_loop(); });
}

Reducer::~Reducer() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  comm_thread_.join();
}

void Reducer::install_hooks() {
  std::weak_ptr<Reducer> weak = shared_from_this();
  for (size_t i = 0; i < params_.size(); ++i) {
    accumulators_.push_back(autograd::grad_accumulator(params_[i]));
    params_[i].register_post_accumulate_grad_hook([weak, i](const Tensor&) {
      if (auto r = weak.lock()) r->mark_ready(i, true);
    });
  }
}

std::string Reducer::where() const {
  return "DistributedDataParallel (rank " + std::to_string(group_->rank()) + ")";
}

// ---- buckets ----

void Reducer::build_buckets(const std::vector<size_t>& order) {
  const int64_t first_cap = mb_to_bytes(options_.first_bucket_mb());
  const int64_t cap = mb_to_bytes(options_.bucket_cap_mb());
  // Buckets still taking parameters, one per dtype and device.
  struct Open {
    ScalarType dtype;
    Device device;
    size_t bucket;
    int64_t bytes;
  };
  std::vector<Open> open;
  std::vector<std::vector<size_t>> groups;
  std::vector<bool> had_first;  // per open key: its first bucket was closed
  std::vector<std::pair<ScalarType, Device>> closed_keys;
  for (size_t p : order) {
    const Tensor& t = params_[p];
    auto it = std::find_if(open.begin(), open.end(), [&](const Open& o) {
      return o.dtype == t.scalar_type() && o.device == t.device();
    });
    if (it == open.end()) {
      open.push_back({t.scalar_type(), t.device(), groups.size(), 0});
      groups.emplace_back();
      it = open.end() - 1;
    }
    groups[it->bucket].push_back(p);
    it->bytes += t.numel() * t.element_size();
    const bool first = std::find(closed_keys.begin(), closed_keys.end(),
                                 std::make_pair(t.scalar_type(), t.device())) == closed_keys.end();
    if (it->bytes >= (first ? first_cap : cap)) {
      closed_keys.emplace_back(t.scalar_type(), t.device());
      open.erase(it);
    }
  }

  NoGradGuard no_grad;
  std::vector<Bucket> buckets(groups.size());
  bucket_of_.assign(params_.size(), 0);
  index_in_bucket_.assign(params_.size(), 0);
  for (size_t b = 0; b < groups.size(); ++b) {
    Bucket& bk = buckets[b];
    bk.params = groups[b];
    int64_t total = 0;
    for (size_t k = 0; k < bk.params.size(); ++k) {
      bk.offsets.push_back(total);
      total += params_[bk.params[k]].numel();
      bucket_of_[bk.params[k]] = b;
      index_in_bucket_[bk.params[k]] = k;
    }
    const Tensor& first = params_[bk.params[0]];
    bk.buffer = zeros({total}, TensorOptions().dtype(first.scalar_type()).device(first.device()));
    // The shm backend reduces straight between the ranks' buckets when they
    // are in shared memory.
    if (bk.buffer.is_cpu() && group_->backend_name() == "shm") bk.buffer.share_memory_();
    bk.pending = bk.params.size();
  }
  buckets_ = std::move(buckets);
  // With gradient_as_bucket_view, gradients that exist move into the buffers.
  if (options_.gradient_as_bucket_view()) {
    for (size_t p = 0; p < params_.size(); ++p) {
      Tensor& g = params_[p].mutable_grad();
      if (!g.defined()) continue;
      Tensor view = bucket_view(p);
      view.copy_(g);
      g = view;
    }
  }
}

Tensor Reducer::bucket_view(size_t p) const {
  const Bucket& b = buckets_[bucket_of_[p]];
  return b.buffer.narrow(0, b.offsets[index_in_bucket_[p]], params_[p].numel())
      .view(params_[p].sizes());
}

// ---- one iteration ----

void Reducer::reset_iteration() {
  std::fill(ready_.begin(), ready_.end(), false);
  std::fill(hook_count_.begin(), hook_count_.end(), 0);
  std::lock_guard<std::mutex> lock(mu_);
  for (Bucket& b : buckets_) {
    b.pending = b.params.size();
    b.launched = b.done = false;
    b.error = nullptr;
  }
  next_to_launch_ = 0;
  comm_ms_this_iteration_ = 0;
  started_ = false;
}

std::string Reducer::unready_names() const {
  std::ostringstream names, indices;
  bool any = false;
  for (size_t p = 0; p < params_.size(); ++p) {
    if (ready_[p]) continue;
    names << (any ? ", " : "") << names_[p];
    indices << (any ? " " : "") << p;
    any = true;
  }
  return "Parameters which did not receive grad for rank " + std::to_string(group_->rank()) + ": " +
         names.str() + "\nParameter indices which did not receive grad for rank " +
         std::to_string(group_->rank()) + ": " + indices.str();
}

void Reducer::prepare_for_forward() {
  if (expect_hooks_ && !finalized_) {
    const bool started = started_;
    const std::string unready = unready_names();
    // Buckets already handed to communication finish (every rank launched
    // the same ones) before the state is reset.
    wait_for_launched();
    expect_hooks_ = false;
    finalized_ = true;
    reset_iteration();
    if (started)
      BRASA_ERROR(
          where(),
          ": Expected to have finished reduction in the prior iteration before starting a new "
          "one. This error indicates that your module has parameters that were not used in "
          "producing loss. You can enable unused parameter detection by passing "
          "find_unused_parameters(true) in DistributedDataParallelOptions, and by making sure "
          "all forward function outputs participate in calculating loss. If you already have "
          "done the above, then DistributedDataParallel was not able to locate the output "
          "tensors in the return value of your module's forward (it finds a Tensor, and Tensors "
          "in std::vector, std::tuple and std::pair).\n",
          unready);
  }
  if (will_rebuild()) shadow_rebuild();
}

bool Reducer::will_rebuild() const {
  // As in PyTorch: not when the set of used parameters may change per iteration.
  return !rebuilt_ && sync_iterations_ >= 1 &&
         (!options_.find_unused_parameters() || options_.static_graph());
}

// Rank 0's arrival order (completed with the parameters that never arrived)
// goes to everyone; every rank rebuilds its buckets in it.
void Reducer::shadow_rebuild() {
  const size_t n = params_.size();
  Tensor order = zeros({static_cast<int64_t>(n)}, TensorOptions().dtype(kLong));
  if (group_->rank() == 0) {
    std::vector<bool> seen(n, false);
    std::vector<size_t> full;
    for (size_t p : arrival_)
      if (!seen[p]) seen[p] = true, full.push_back(p);
    for (size_t i = 0; i < n; ++i)
      if (!seen[n - 1 - i]) full.push_back(n - 1 - i);
    int64_t* o = order.data_ptr<int64_t>();
    for (size_t i = 0; i < n; ++i) o[i] = static_cast<int64_t>(full[i]);
  }
  if (group_->size() > 1) {
    std::vector<Tensor> ts{order};
    group_->broadcast(ts)->wait();
  }
  std::vector<size_t> rank0_order(n);
  const int64_t* o = order.data_ptr<int64_t>();
  for (size_t i = 0; i < n; ++i) {
    BRASA_CHECK(o[i] >= 0 && o[i] < static_cast<int64_t>(n), where(),
                ": rank 0 sent a bucket order naming parameter ", o[i], " of ", n);
    rank0_order[i] = static_cast<size_t>(o[i]);
  }
  build_buckets(rank0_order);
  reset_iteration();
  rebuilt_ = true;
  arrival_.clear();
}

namespace {
// The autograd nodes reachable from `outputs`.
std::unordered_set<const autograd::Node*> reachable(const std::vector<Tensor>& outputs) {
  std::unordered_set<const autograd::Node*> seen;
  std::vector<autograd::Node*> stack;
  for (const Tensor& t : outputs) {
    if (!t.defined() || !t.requires_grad()) continue;
    autograd::Edge e = autograd::gradient_edge(t);
    if (e.function && seen.insert(e.function.get()).second) stack.push_back(e.function.get());
  }
  while (!stack.empty()) {
    autograd::Node* n = stack.back();
    stack.pop_back();
    for (const autograd::Edge& e : n->next_edges())
      if (e.function && seen.insert(e.function.get()).second) stack.push_back(e.function.get());
  }
  return seen;
}
}  // namespace

void Reducer::prepare_for_backward(const std::vector<Tensor>& outputs, bool sync) {
  forward_end_ = std::chrono::steady_clock::now();
  // With gradient_as_bucket_view, a cleared gradient (zero_grad's default)
  // restarts as its zeroed bucket view, so that backward accumulates into the
  // bucket directly (matrix products write there): no copies in or out.
  // Not when unused parameters must keep an undefined gradient.
  if (options_.gradient_as_bucket_view() && !options_.find_unused_parameters() &&
      !options_.static_graph()) {
    NoGradGuard no_grad;
    for (size_t p = 0; p < params_.size(); ++p) {
      Tensor& g = params_[p].mutable_grad();
      if (g.defined()) continue;
      g = bucket_view(p);
      g.zero_();
    }
  }
  if (!sync) {
    expect_hooks_ = false;
    return;
  }
  reset_iteration();
  expect_hooks_ = true;
  finalized_ = false;
  const bool static_graph = options_.static_graph();
  if (static_graph) {
    if (sync_iterations_ == 0) return;  // iteration 0 records, reduces at its end
    for (size_t p = 0; p < params_.size(); ++p)
      if (expected_hooks_[p] == 0) {
        copy_grad_in(p);
        mark_ready(p, false);
      }
    return;
  }
  if (!options_.find_unused_parameters()) return;
  const auto seen = reachable(outputs);
  for (size_t p = 0; p < params_.size(); ++p) {
    locally_used_[p] = seen.count(accumulators_[p].get()) > 0;
    if (!locally_used_[p]) {
      copy_grad_in(p);
      mark_ready(p, false);
    }
  }
}

// The gradient (or zero, when it has none) into the bucket; with
// gradient_as_bucket_view the gradient becomes the bucket's view.
void Reducer::copy_grad_in(size_t p) {
  NoGradGuard no_grad;
  Tensor& g = params_[p].mutable_grad();
  Tensor view = bucket_view(p);
  if (!g.defined()) {
    view.zero_();
    return;
  }
  if (g.data_ptr() == view.data_ptr() && g.sizes() == view.sizes()) return;
  BRASA_CHECK(g.sizes() == view.sizes() && g.scalar_type() == view.scalar_type(), where(),
              ": the gradient of parameter '", names_[p], "' has shape ", g.sizes(), " (",
              g.scalar_type(), "), expected ", view.sizes(), " (", view.scalar_type(), ")");
  view.copy_(g);
  if (options_.gradient_as_bucket_view()) g = view;
}

void Reducer::mark_ready(size_t p, bool from_hook) {
  if (from_hook) {
    if (!expect_hooks_) return;  // no_sync, or no forward of ours
    if (!started_) {
      started_ = true;
      // Finalize once at the end of this backward pass.
      std::weak_ptr<Reducer> weak = shared_from_this();
      autograd::Engine::get_default_engine().queue_callback([weak] {
        if (auto r = weak.lock()) r->finalize();
      });
    }
    if (sync_iterations_ == 0 && hook_count_[p] == 0) arrival_.push_back(p);
    ++hook_count_[p];
    if (options_.static_graph()) {
      if (sync_iterations_ == 0) {
        locally_used_[p] = true;
        return;  // reduced at the end of the backward
      }
      BRASA_CHECK(expected_hooks_[p] > 0, where(), ": with static_graph, parameter '", names_[p],
                  "' received a gradient although it was unused in the first iteration "
                  "(the graph is not static)");
      if (hook_count_[p] < expected_hooks_[p]) return;
    }
    BRASA_CHECK(!ready_[p], where(),
                ": Expected to mark a variable ready only once. This error is caused by one of "
                "the following reasons: 1) Use of a module parameter outside the forward "
                "function, or several backward passes over one forward; 2) Reused parameters "
                "in multiple reentrant backward passes. Parameter '",
                names_[p], "' (index ", p,
                ") has been marked as ready twice. Use static_graph(true) when a parameter "
                "takes part in several backward passes of one iteration.");
    copy_grad_in(p);
  }
  ready_[p] = true;
  Bucket& b = buckets_[bucket_of_[p]];
  if (--b.pending == 0) launch_ready_buckets();
}

void Reducer::launch_ready_buckets() {
  bool wake = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    while (next_to_launch_ < buckets_.size() && buckets_[next_to_launch_].pending == 0) {
      buckets_[next_to_launch_].launched = true;
      queue_.push_back(next_to_launch_++);
    }
    // The last bucket completes at the end of backward: the end-of-backward
    // callback reduces it itself unless the communication thread, still
    // busy with earlier ones, takes it first. Other buckets wake that thread.
    wake = next_to_launch_ < buckets_.size() || queue_.size() > 1;
  }
  if (wake) cv_.notify_all();
}

void Reducer::wait_for_launched() {
  std::exception_ptr error;
  {
    std::unique_lock<std::mutex> lock(mu_);
    for (;;) {
      bool pending = false;
      for (const Bucket& b : buckets_) pending |= b.launched && !b.done;
      if (!pending) break;
      // A bucket the communication thread has not picked up yet is reduced
      // here: waking that thread only to wait for it costs two wake-ups.
      if (!busy_ && !queue_.empty())
        run_queued(lock);
      else
        cv_.wait(lock);
    }
    for (const Bucket& b : buckets_)
      if (b.error && !error) error = b.error;
  }
  if (error) std::rethrow_exception(error);
}

void Reducer::finalize() {
  started_ = false;
  if (!expect_hooks_ || finalized_) return;
  const bool recording = options_.static_graph() && sync_iterations_ == 0;
  if (recording) {
    expected_hooks_ = hook_count_;
    for (size_t p = 0; p < params_.size(); ++p)
      if (!ready_[p]) {
        copy_grad_in(p);  // no gradient: zero (or what no_sync accumulated)
        mark_ready(p, false);
      }
  }
  for (size_t p = 0; p < params_.size(); ++p)
    if (!ready_[p]) {
      started_ = true;  // the next forward reports the parameters that got no gradient
      return;
    }
  const auto t_wait = std::chrono::steady_clock::now();
  try {
    wait_for_launched();
  } catch (...) {
    expect_hooks_ = false;
    finalized_ = true;
    throw;
  }
  const double exposed = ms_since(t_wait);

  // Parameters no rank used keep their gradient as it was (undefined).
  std::vector<bool> globally_used(params_.size(), true);
  if (reduces_used_bitmap()) {
    Tensor used = zeros({static_cast<int64_t>(params_.size())}, TensorOptions().dtype(kInt));
    int32_t* u = used.data_ptr<int32_t>();
    for (size_t p = 0; p < params_.size(); ++p)
      u[p] = options_.static_graph() ? hook_count_[p] > 0 : locally_used_[p];
    if (group_->size() > 1) {
      std::vector<Tensor> ts{used};
      group_->allreduce(ts)->wait();
    }
    for (size_t p = 0; p < params_.size(); ++p) globally_used[p] = u[p] != 0;
    if (options_.static_graph()) static_globally_used_ = globally_used;
  } else if (options_.static_graph()) {
    globally_used = static_globally_used_;
  }
  write_back(globally_used);

  expect_hooks_ = false;
  finalized_ = true;
  ++sync_iterations_;
  sum_backward_ms_ += ms_since(forward_end_);
  sum_exposed_ms_ += exposed;
  std::lock_guard<std::mutex> lock(mu_);
  sum_comm_ms_ += comm_ms_this_iteration_;
}

void Reducer::write_back(const std::vector<bool>& globally_used) {
  NoGradGuard no_grad;
  for (size_t p = 0; p < params_.size(); ++p) {
    if (!globally_used[p]) continue;
    Tensor view = bucket_view(p);
    Tensor& g = params_[p].mutable_grad();
    if (options_.gradient_as_bucket_view()) {
      if (!g.defined() || g.data_ptr() != view.data_ptr()) g = view;
    } else if (g.defined()) {
      g.copy_(view);
    } else {
      g = view.clone();
    }
  }
}

// Whether this iteration ends with an allreduce of which parameters were
// used: with find_unused_parameters every iteration, with static_graph the
// first (recording) one only.
bool Reducer::reduces_used_bitmap() const {
  if (options_.static_graph()) return sync_iterations_ == 0;
  return options_.find_unused_parameters();
}

void Reducer::shadow_backward() {
  NoGradGuard no_grad;
  for (size_t b = 0; b < buckets_.size(); ++b) {
    buckets_[b].buffer.zero_();
    reduce_bucket(b);
  }
  if (reduces_used_bitmap() && group_->size() > 1) {
    std::vector<Tensor> ts{
        zeros({static_cast<int64_t>(params_.size())}, TensorOptions().dtype(kInt))};
    group_->allreduce(ts)->wait();
  }
  ++sync_iterations_;
}

// ---- the communication thread ----

void Reducer::comm_loop() {
  // Reductions are small and run beside backward: they take no op-pool threads.
  InlineParallelGuard inline_ops;
  NoGradGuard no_grad;
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    cv_.wait(lock, [&] { return stop_ || (!busy_ && !queue_.empty()); });
    if (queue_.empty()) return;
    run_queued(lock);
  }
}

// Buckets are reduced one at a time (busy_), in queue order, by whichever
// thread takes them, so every rank issues its collectives in the same order.
void Reducer::run_queued(std::unique_lock<std::mutex>& lock) {
  const size_t b = queue_.front();
  queue_.pop_front();
  busy_ = true;
  lock.unlock();
  const auto t0 = std::chrono::steady_clock::now();
  std::exception_ptr error;
  try {
    reduce_bucket(b);
  } catch (...) {
    error = std::current_exception();
  }
  const double ms = ms_since(t0);
  lock.lock();
  buckets_[b].done = true;
  buckets_[b].error = error;
  buckets_[b].comm_ms_sum += ms;
  ++buckets_[b].reductions;
  comm_ms_this_iteration_ += ms;
  busy_ = false;
  cv_.notify_all();
}

void Reducer::reduce_bucket(size_t b) {
  Bucket& bk = buckets_[b];
  std::vector<Tensor> params;
  for (size_t p : bk.params) params.push_back(params_[p]);
  GradBucket bucket(b, buckets_.size(), bk.buffer, std::move(params), bk.offsets);
  std::shared_ptr<distributed::Work> work;
  if (has_hook_) {
    work = hook_(bucket);
    BRASA_CHECK(work, where(), ": the communication hook returned no Work for bucket ", b);
  } else {
    work = default_hooks::allreduce_divided_by(group_, bucket, divisor_);
  }
  work->wait();
  const auto& result = work->result();
  if (result.empty() || !result[0].defined()) return;
  const Tensor& r = result[0];
  if (r.data_ptr() == bk.buffer.data_ptr()) return;
  BRASA_CHECK(r.numel() == bk.buffer.numel(), where(), ": the communication hook returned ",
              r.numel(), " elements for bucket ", b, " of ", bk.buffer.numel());
  bk.buffer.copy_(r.reshape({-1}));
}

void Reducer::register_comm_hook(CommHook hook) {
  BRASA_CHECK(!has_hook_, where(), ": register_comm_hook can only be called once.");
  BRASA_CHECK(sync_iterations_ == 0 && !started_, where(),
              ": register_comm_hook must be called before the first backward.");
  BRASA_CHECK(hook, where(), ": register_comm_hook got an empty hook");
  hook_ = std::move(hook);
  has_hook_ = true;
}

void Reducer::record_forward_time(double ms) {
  sum_forward_ms_ += ms;
  ++forward_count_;
}

DistributedDataParallelStats Reducer::stats() const {
  DistributedDataParallelStats s;
  s.iterations = sync_iterations_;
  if (forward_count_ > 0) s.avg_forward_compute_time_ms = sum_forward_ms_ / forward_count_;
  if (sync_iterations_ > 0) {
    const double n = static_cast<double>(sync_iterations_);
    s.avg_backward_compute_time_ms = sum_backward_ms_ / n;
    std::lock_guard<std::mutex> lock(mu_);
    s.avg_backward_comm_time_ms = sum_comm_ms_ / n;
    s.avg_exposed_comm_time_ms = sum_exposed_ms_ / n;
  }
  for (const Bucket& b : buckets_) {
    s.bucket_sizes.push_back(b.buffer.numel() * b.buffer.element_size());
    s.bucket_param_count.push_back(static_cast<int64_t>(b.params.size()));
    std::lock_guard<std::mutex> lock(mu_);
    s.avg_bucket_comm_time_ms.push_back(b.reductions ? b.comm_ms_sum / b.reductions : 0.0);
  }
  s.buckets_rebuilt = rebuilt_;
  s.world_size = group_->size();
  s.backend = group_->backend_name();
  s.comm_hook = has_hook_;
  return s;
}

}  // namespace brasa::nn::parallel
