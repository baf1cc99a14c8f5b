#include <brasa/autograd/grad_mode.h>
#include <brasa/ops/binary.h>
#include <brasa/ops/linalg.h>
#include <brasa/ops/random.h>
#include <brasa/ops/shape.h>
#include <brasa/parallel/comm_hooks.h>
#include <brasa/parallel/flat_tensors.h>

#include <algorithm>
#include <cmath>

namespace brasa::nn::parallel {

namespace {

using detail::flatten_all;
using detail::unflatten_into;

distributed::GroupPtr resolve(const distributed::GroupPtr& group) {
  return group ? group : distributed::default_group();
}

void allreduce_in_place(const distributed::GroupPtr& group, Tensor& t) {
  std::vector<Tensor> ts{t};
  group->allreduce(ts)->wait();
}

std::shared_ptr<distributed::Work> compressed_allreduce(const distributed::GroupPtr& group,
                                                        GradBucket& bucket, ScalarType wire,
                                                        const char* name) {
  NoGradGuard no_grad;
  auto g = resolve(group);
  const Tensor& buffer = bucket.buffer();
  Tensor compressed = buffer.div(static_cast<double>(g->size())).to(wire);
  allreduce_in_place(g, compressed);
  return distributed::completed_work(name, {compressed.to(buffer.scalar_type())});
}

}  // namespace

namespace default_hooks {

std::shared_ptr<distributed::Work> allreduce_divided_by(const distributed::GroupPtr& group,
                                                        GradBucket& bucket, int64_t divisor) {
  NoGradGuard no_grad;
  auto g = resolve(group);
  Tensor& buffer = bucket.buffer();
  const int64_t d = divisor > 0 ? divisor : g->size();
  // The shm backend averages within its one pass over the ranks' buckets:
  // no separate pass to divide first.
  if (d == g->size() && g->backend_name() == "shm" && isFloatingType(buffer.scalar_type())) {
    distributed::AllreduceOptions avg;
    avg.reduceOp = distributed::ReduceOp::AVG;
    std::vector<Tensor> ts{buffer};
    g->allreduce(ts, avg)->wait();
  } else {
    buffer.div_(static_cast<double>(d));
    allreduce_in_place(g, buffer);
  }
  return distributed::completed_work("allreduce", {buffer});
}

std::shared_ptr<distributed::Work> allreduce_hook(const distributed::GroupPtr& group,
                                                  GradBucket& bucket) {
  return allreduce_divided_by(group, bucket, 0);
}

std::shared_ptr<distributed::Work> fp16_compress_hook(const distributed::GroupPtr& group,
                                                      GradBucket& bucket) {
  return compressed_allreduce(group, bucket, kHalf, "fp16_compress");
}

std::shared_ptr<distributed::Work> bf16_compress_hook(const distributed::GroupPtr& group,
                                                      GradBucket& bucket) {
  return compressed_allreduce(group, bucket, kBFloat16, "bf16_compress");
}

}  // namespace default_hooks

namespace powerSGD {

void orthogonalize(Tensor& m, double epsilon) {
  BRASA_CHECK(m.dim() == 2, "powerSGD::orthogonalize: expected a 2-D tensor, got shape ",
              m.sizes());
  const int64_t cols = m.size(1);
  for (int64_t i = 0; i < cols; ++i) {
    Tensor col = m.narrow(1, i, 1);
    const double norm = col.norm().item<double>();
    col.div_(epsilon > 0 ? norm + epsilon : (norm > 0 ? norm : 1.0));
    if (i + 1 < cols) {
      Tensor rest = m.narrow(1, i + 1, cols - i - 1);
      // rest -= col (col^T rest)
      rest.sub_(mm(col, mm(col.t(), rest)));
    }
  }
}

std::shared_ptr<distributed::Work> powerSGD_hook(PowerSGDState& state, GradBucket& bucket) {
  auto g = resolve(state.process_group);
  const bool last = bucket.is_last();
  if (state.iter < state.start_powerSGD_iter) {
    auto work = default_hooks::allreduce_hook(g, bucket);
    if (last) ++state.iter;
    return work;
  }
  NoGradGuard no_grad;
  Tensor& input = bucket.buffer();
  BRASA_CHECK(input.scalar_type() == kFloat || input.scalar_type() == kDouble,
              "powerSGD_hook: expected a Float or Double gradient bucket, got ",
              input.scalar_type());
  const size_t index = bucket.index();
  const double world = static_cast<double>(g->size());
  Tensor local;
  if (state.use_error_feedback) {
    auto it = state.error_dict.find(index);
    if (it != state.error_dict.end() && it->second.numel() == input.numel()) input.add_(it->second);
    local = input.clone();
  }

  // Matrices worth compressing, and the rest.
  std::vector<Tensor> matrices, rest;
  std::vector<int64_t> ranks;
  for (Tensor& t : bucket.gradients()) {
    if (t.dim() <= 1 || t.numel() == 0) {
      rest.push_back(t);
      continue;
    }
    const int64_t rows = t.size(0), cols = t.numel() / rows;
    const int64_t r = std::min<int64_t>({state.matrix_approximation_rank, rows, cols});
    if (static_cast<double>((rows + cols) * r) * state.min_compression_rate <
        static_cast<double>(rows * cols)) {
      matrices.push_back(t.view({rows, cols}));
      ranks.push_back(r);
      state.total_numel_before_compression += rows * cols;
      state.total_numel_after_compression += (rows + cols) * r;
    } else {
      rest.push_back(t);
      state.total_numel_before_compression += t.numel();
      state.total_numel_after_compression += t.numel();
    }
  }
  if (!rest.empty()) {
    Tensor flat = flatten_all(rest);
    allreduce_in_place(g, flat);
    flat.div_(world);
    unflatten_into(flat, rest);
  }
  if (!matrices.empty()) {
    // Q: carried over (warm start) or drawn afresh, identically on every rank.
    auto& qs = state.q_memory_dict[index];
    if (!state.warm_start || qs.size() != matrices.size()) {
      qs.clear();
      Generator gen(state.random_seed * 1000003ULL + index * 7919ULL +
                    (state.warm_start ? 0 : static_cast<uint64_t>(state.iter)));
      for (size_t i = 0; i < matrices.size(); ++i) {
        Tensor q = randn({matrices[i].size(1), ranks[i]}, &gen,
                         TensorOptions().dtype(input.scalar_type()));
        orthogonalize(q, state.orthogonalization_epsilon);
        qs.push_back(q);
      }
    }
    std::vector<Tensor> ps;
    for (size_t i = 0; i < matrices.size(); ++i) ps.push_back(mm(matrices[i], qs[i]));
    Tensor flat_p = flatten_all(ps);
    allreduce_in_place(g, flat_p);
    unflatten_into(flat_p, ps);
    for (Tensor& p : ps) orthogonalize(p, state.orthogonalization_epsilon);
    for (size_t i = 0; i < matrices.size(); ++i) qs[i] = mm(matrices[i].t(), ps[i]);
    Tensor flat_q = flatten_all(qs);
    allreduce_in_place(g, flat_q);
    unflatten_into(flat_q, qs);
    for (size_t i = 0; i < matrices.size(); ++i)
      matrices[i].copy_(mm(ps[i], qs[i].t()).div_(world));
  }
  if (state.use_error_feedback) state.error_dict[index] = local.sub(input);
  if (last) ++state.iter;
  return distributed::completed_work("powerSGD", {input});
}

}  // namespace powerSGD

}  // namespace brasa::nn::parallel
