#include <brasa/autograd/grad_mode.h>
#include <brasa/ops/factory.h>
#include <brasa/ops/shape.h>
#include <brasa/parallel/distributed_data_parallel.h>
#include <brasa/parallel/flat_tensors.h>
#include <brasa/parallel/join.h>

#include <map>
#include <ostream>
#include <sstream>

namespace brasa::nn::parallel {

namespace {

// Per parameter: dtype, dimensions, up to 6 sizes (more fold into the last).
constexpr int64_t kRow = 8;

std::string describe_row(const int64_t* row) {
  if (row[0] < 0) return "no such parameter";
  std::ostringstream os;
  os << "shape [";
  const int64_t shown = std::min<int64_t>(row[1], kRow - 2);
  for (int64_t d = 0; d < shown; ++d) os << (d ? ", " : "") << row[2 + d];
  if (row[1] > kRow - 2) os << ", ...";
  os << "] (" << toString(static_cast<ScalarType>(row[0])) << ")";
  return os.str();
}

}  // namespace

DistributedDataParallelBase::DistributedDataParallelBase(
    std::shared_ptr<Module> module, const DistributedDataParallelOptions& options)
    : Module("DistributedDataParallel"), module_(std::move(module)), options_(options) {
  BRASA_CHECK(module_, "DistributedDataParallel: the module is null");
  BRASA_CHECK(options_.bucket_cap_mb() >= 0 && options_.first_bucket_mb() >= 0,
              "DistributedDataParallel: bucket_cap_mb (", options_.bucket_cap_mb(),
              ") and first_bucket_mb (", options_.first_bucket_mb(), ") must not be negative");
  group_ = options_.process_group() ? options_.process_group() : distributed::default_group();
  // The wrapped module's registrations, under the same names.
  for (const auto& p : module_->named_parameters(false)) parameters_.insert(p.key(), p.value());
  for (const auto& b : module_->named_buffers(false)) buffers_.insert(b.key(), b.value());
  for (const auto& c : module_->named_children()) children_.insert(c.key(), c.value());
  Module::train(module_->is_training());

  for (const auto& p : module_->named_parameters()) {
    if (!p.value().requires_grad()) continue;
    params_.push_back(p.value());
    param_names_.push_back(p.key());
  }
  BRASA_CHECK(!params_.empty(),
              "DistributedDataParallel is not needed when a module doesn't have any parameter "
              "that requires a gradient.");
  for (size_t i = 0; i < params_.size(); ++i)
    for (size_t j = 0; j < i; ++j)
      BRASA_CHECK(!params_[i].is_same(params_[j]), "DistributedDataParallel: parameter '",
                  param_names_[i], "' is the same tensor as '", param_names_[j],
                  "'; register a shared parameter once");
  if (group_->size() > 1) {
    check_same_parameters_on_all_ranks();
    std::vector<Tensor> state = params_;
    for (const Tensor& b : module_->buffers()) state.push_back(b);
    broadcast_coalesced(state);
  }
  reducer_ = Reducer::create(params_, param_names_, group_, options_);
}

DistributedDataParallelBase::~DistributedDataParallelBase() = default;

void DistributedDataParallelBase::check_same_parameters_on_all_ranks() {
  const int world = group_->size();
  Tensor count = full({1}, static_cast<double>(params_.size()), TensorOptions().dtype(kLong));
  Tensor counts = zeros({world}, TensorOptions().dtype(kLong));
  group_->allgather_into_tensor(counts, count)->wait();
  const int64_t* c = counts.data_ptr<int64_t>();
  int64_t most = 0;
  for (int r = 0; r < world; ++r) most = std::max(most, c[r]);

  Tensor mine = full({most * kRow}, -1.0, TensorOptions().dtype(kLong));
  int64_t* m = mine.data_ptr<int64_t>();
  for (size_t p = 0; p < params_.size(); ++p) {
    int64_t* row = m + p * kRow;
    const Tensor& t = params_[p];
    row[0] = static_cast<int64_t>(t.scalar_type());
    row[1] = t.dim();
    for (int64_t d = 0; d < t.dim(); ++d) {
      if (d < kRow - 2)
        row[2 + d] = t.size(d);
      else
        row[kRow - 1] = row[kRow - 1] * 1000003 + t.size(d);
    }
    for (int64_t d = t.dim(); d < kRow - 2; ++d) row[2 + d] = 0;
  }
  Tensor all = zeros({world * most * kRow}, TensorOptions().dtype(kLong));
  group_->allgather_into_tensor(all, mine)->wait();
  const int64_t* a = all.data_ptr<int64_t>();
  auto row_of = [&](int r, int64_t p) { return a + (r * most + p) * kRow; };
  for (int64_t p = 0; p < most; ++p) {
    std::vector<int> differ;
    for (int r = 1; r < world; ++r)
      if (!std::equal(row_of(r, p), row_of(r, p) + kRow, row_of(0, p))) differ.push_back(r);
    if (differ.empty()) continue;
    std::ostringstream os;
    os << "DistributedDataParallel: DDP expects the same model across all ranks, but ";
    bool counts_differ = false;
    for (int r = 1; r < world; ++r) counts_differ |= c[r] != c[0];
    if (counts_differ) {
      os << "rank 0 has " << c[0] << " parameters that require grad, while";
      for (int r = 1; r < world; ++r)
        if (c[r] != c[0]) os << " rank " << r << " has " << c[r];
      os << ". ";
    }
    os << "The first differing parameter is number " << p;
    if (p < static_cast<int64_t>(param_names_.size()))
      os << ", '" << param_names_[p] << "' on rank " << group_->rank();
    os << ": rank 0 has " << describe_row(row_of(0, p));
    for (int r : differ) os << "; rank " << r << " has " << describe_row(row_of(r, p));
    os << ". Differing rank(s):";
    for (int r : differ) os << " " << r;
    BRASA_ERROR(os.str());
  }
}

void DistributedDataParallelBase::broadcast_coalesced(const std::vector<Tensor>& tensors,
                                                      int root) {
  NoGradGuard no_grad;
  std::map<std::pair<int, std::string>, std::vector<Tensor>> by_kind;
  for (const Tensor& t : tensors)
    if (t.defined() && t.numel() > 0)
      by_kind[{static_cast<int>(t.scalar_type()), t.device().str()}].push_back(t);
  for (auto& [kind, group] : by_kind) {
    std::vector<Tensor> flat{detail::flatten_all(group)};
    distributed::BroadcastOptions o;
    o.rootRank = root;
    group_->broadcast(flat, o)->wait();
    if (group_->rank() != root) detail::unflatten_into(flat[0], group);
  }
}

void DistributedDataParallelBase::pre_forward() {
  forward_start_ = std::chrono::steady_clock::now();
  int64_t active = group_->size();
  if (join_) active = join_notify_active();
  reducer_->prepare_for_forward();
  if (options_.broadcast_buffers() && group_->size() > 1 && active == group_->size()) {
    std::vector<Tensor> buffers = module_->buffers();
    if (!buffers.empty()) broadcast_coalesced(buffers);
  }
}

void DistributedDataParallelBase::post_forward(const std::vector<Tensor>& outputs) {
  reducer_->record_forward_time(
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - forward_start_)
          .count());
  if (!is_grad_enabled()) return;
  reducer_->prepare_for_backward(outputs, require_backward_grad_sync_);
}

DistributedDataParallelBase::NoSyncGuard::NoSyncGuard(DistributedDataParallelBase& ddp)
    : ddp_(&ddp), prev_(ddp.require_backward_grad_sync_) {
  ddp.require_backward_grad_sync_ = false;
}

DistributedDataParallelBase::NoSyncGuard::~NoSyncGuard() {
  if (ddp_) ddp_->require_backward_grad_sync_ = prev_;
}

void DistributedDataParallelBase::register_comm_hook(CommHook hook) {
  reducer_->register_comm_hook(std::move(hook));
}

DistributedDataParallelStats DistributedDataParallelBase::stats() const {
  return reducer_->stats();
}

void DistributedDataParallelBase::train(bool on) {
  module_->train(on);
  Module::train(on);
}

void DistributedDataParallelBase::to(ScalarType dtype) {
  BRASA_ERROR("DistributedDataParallel: to(", dtype,
              ") after wrapping; convert the module before wrapping it (the gradient buckets "
              "have the parameters' dtypes)");
}

void DistributedDataParallelBase::to(Device device, bool) {
  BRASA_ERROR("DistributedDataParallel: to(", device,
              ") after wrapping; move the module before wrapping it (the gradient buckets "
              "live on the parameters' devices)");
}

std::shared_ptr<Module> DistributedDataParallelBase::clone(const std::optional<Device>&) const {
  BRASA_ERROR("DistributedDataParallel cannot be cloned; clone the wrapped module (module())");
}

void DistributedDataParallelBase::pretty_print(std::ostream& os) const {
  os << "DistributedDataParallel(world_size=" << group_->size()
     << ", backend=" << group_->backend_name() << ", bucket_cap_mb=" << options_.bucket_cap_mb()
     << ")";
}

// ---- Join ----

int64_t DistributedDataParallelBase::join_notify_active() {
  Tensor active = ones({1}, TensorOptions().dtype(kLong));
  std::vector<Tensor> ts{active};
  group_->allreduce(ts)->wait();
  const int64_t n = active.data_ptr<int64_t>()[0];
  if (join_->options().throw_on_early_termination() && n < group_->size())
    BRASA_ERROR(Join::kEarlyTermination);
  reducer_->set_divisor(join_->options().divide_by_initial_world_size() ? 0 : n);
  return n;
}

void DistributedDataParallelBase::join_shadow_iteration() {
  if (reducer_->will_rebuild()) reducer_->shadow_rebuild();
  reducer_->shadow_backward();
}

void DistributedDataParallelBase::join_sync_final_model() {
  reducer_->set_divisor(0);
  const int64_t world = group_->size();
  Tensor key = full({1}, static_cast<double>(reducer_->stats().iterations * world + group_->rank()),
                    TensorOptions().dtype(kLong));
  std::vector<Tensor> ts{key};
  distributed::AllreduceOptions o;
  o.reduceOp = distributed::ReduceOp::MAX;
  group_->allreduce(ts, o)->wait();
  const int root = static_cast<int>(key.data_ptr<int64_t>()[0] % world);
  std::vector<Tensor> state = params_;
  for (const Tensor& b : module_->buffers()) state.push_back(b);
  broadcast_coalesced(state, root);
}

}  // namespace brasa::nn::parallel
