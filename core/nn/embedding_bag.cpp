// nn::functional::embedding_bag: bags of a table's rows, summed, averaged
// or maxed. On a device with the fused kernels (ops/kernels/embedding_bag.h)
// every bag is reduced straight from the table; elsewhere, and for what those
// kernels leave out (max_norm, scale_grad_by_freq, other dtypes), the
// composite gathers the rows and adds them into their bags.
#include <brasa/autograd/grad_mode.h>
#include <brasa/autograd/record.h>
#include <brasa/nn/functional.h>
#include <brasa/ops/binary.h>
#include <brasa/ops/factory.h>
#include <brasa/ops/indexing.h>
#include <brasa/ops/kernel_table.h>
#include <brasa/ops/kernels/embedding_bag.h>
#include <brasa/ops/reduction.h>
#include <brasa/ops/scatter_reduce.h>
#include <brasa/ops/shape.h>

#include <algorithm>
#include <vector>

namespace brasa::nn::functional {
namespace {

// The ids as one int64 vector on the host and where each bag starts in it.
struct Bags {
  Tensor ids;  // [T], int64, contiguous, on the host
  std::vector<int64_t> starts;
};

Bags bags_of(const Tensor& input, const Tensor& offsets, bool include_last_offset) {
  Bags bags;
  bags.ids = input.reshape({-1}).to(Device(kCPU), kLong).contiguous();
  const int64_t total = bags.ids.numel();
  if (input.dim() == 2) {
    for (int64_t b = 0; b < input.size(0); ++b) bags.starts.push_back(b * input.size(1));
    return bags;
  }
  BRASA_CHECK(offsets.dim() == 1, "embedding_bag: offsets must be 1-D, got ", offsets.sizes());
  Tensor o = offsets.to(Device(kCPU), kLong).contiguous();
  std::vector<int64_t>& starts = bags.starts;
  starts.assign(o.data_ptr<int64_t>(), o.data_ptr<int64_t>() + o.numel());
  if (include_last_offset) {
    BRASA_CHECK(!starts.empty() && starts.back() == total,
                "embedding_bag: with include_last_offset the last ",
                "offset must be the input's length ", total);
    starts.pop_back();
  }
  for (size_t b = 0; b < starts.size(); ++b)
    BRASA_CHECK(starts[b] >= 0 && starts[b] <= total && (b == 0 || starts[b] >= starts[b - 1]),
                "embedding_bag: offsets must be non-decreasing within [0, ", total, "], got ",
                offsets.sizes());
  BRASA_CHECK(starts.empty() || starts[0] == 0, "embedding_bag: the first offset must be 0, got ",
              starts[0]);
  return bags;
}

int64_t end_of(const Bags& bags, size_t b) {
  return b + 1 < bags.starts.size() ? bags.starts[b + 1] : bags.ids.numel();
}

// The rows looked up (embedding's checks and options), gathered and added
// into their bags: one index_add (sum, mean) or one scatter_reduce (max).
Tensor embedding_bag_composite(const Bags& bags, const Tensor& weight, EmbeddingBagMode mode,
                               const Tensor& per_sample_weights, int64_t pad,
                               std::optional<double> max_norm, double norm_type,
                               bool scale_grad_by_freq) {
  const Tensor& flat = bags.ids;
  Tensor emb = embedding(flat.to(weight.device()), weight, std::nullopt, max_norm, norm_type,
                         scale_grad_by_freq);  // [T, D]
  if (per_sample_weights.defined()) emb = emb * per_sample_weights.reshape({-1, 1});
  const int64_t* ids = flat.data_ptr<int64_t>();
  const int64_t B = static_cast<int64_t>(bags.starts.size());
  // The kept rows (padding dropped) and the bag of each; a bag's count
  // divides its sum for the mean (empty bags stay zero).
  std::vector<int64_t> rows, bag_of_row;
  std::vector<double> count(static_cast<size_t>(B), 1.0);
  for (size_t b = 0; b < bags.starts.size(); ++b) {
    const size_t first = rows.size();
    for (int64_t i = bags.starts[b]; i < end_of(bags, b); ++i)
      if (ids[i] != pad) {
        rows.push_back(i);
        bag_of_row.push_back(static_cast<int64_t>(b));
      }
    if (rows.size() > first) count[b] = static_cast<double>(rows.size() - first);
  }
  const TensorOptions on = TensorOptions().dtype(kLong).device(emb.device());
  Tensor kept = static_cast<int64_t>(rows.size()) == flat.numel()
                    ? emb
                    : emb.index_select(0, tensor(rows, on));
  Tensor bag_index = tensor(bag_of_row, on);
  if (mode == EmbeddingBagMode::Max)
    return zeros({B, weight.size(1)}, emb.options())
        .scatter_reduce(0, bag_index.view({-1, 1}).expand(kept.sizes()), kept, "amax",
                        /*include_self=*/false);
  Tensor out = zeros({B, weight.size(1)}, emb.options()).index_add(0, bag_index, kept);
  if (mode == EmbeddingBagMode::Mean)
    out = out / tensor(count, TensorOptions().dtype(kDouble)).to(emb.options()).view({-1, 1});
  return out;
}

// The fused backward's values as differentiable ops, for a backward that is
// itself differentiated (create_graph).
std::vector<Tensor> backward_composite(const Tensor& grad, const Tensor& weight,
                                       const Tensor& per_sample_weights, const Bags& bags,
                                       EmbeddingBagMode mode, const Tensor& max_rows, int64_t pad,
                                       bool want_weight, bool want_psw) {
  const int64_t* ids = bags.ids.data_ptr<int64_t>();
  std::vector<int64_t> bag_of(static_cast<size_t>(bags.ids.numel()));
  std::vector<int64_t> kept_ids, kept_bags;
  std::vector<double> kept_scale, keep(bag_of.size(), 0.0);
  for (size_t b = 0; b < bags.starts.size(); ++b) {
    const size_t first = kept_ids.size();
    for (int64_t i = bags.starts[b]; i < end_of(bags, b); ++i) {
      bag_of[static_cast<size_t>(i)] = static_cast<int64_t>(b);
      if (ids[i] == pad) continue;
      keep[static_cast<size_t>(i)] = 1.0;
      kept_ids.push_back(ids[i]);
      kept_bags.push_back(static_cast<int64_t>(b));
    }
    const double n = static_cast<double>(kept_ids.size() - first);
    kept_scale.insert(kept_scale.end(), kept_ids.size() - first,
                      mode == EmbeddingBagMode::Mean ? 1.0 / n : 1.0);
  }
  const TensorOptions longs = TensorOptions().dtype(kLong);
  std::vector<Tensor> out(2);
  if (want_weight) {
    Tensor gw = zeros(weight.sizes(), grad.options());
    if (mode == EmbeddingBagMode::Max) {
      out[0] =
          gw.scatter_add(0, max_rows.clamp_min(0), grad * (max_rows >= 0).to(grad.scalar_type()));
    } else {
      Tensor rows = grad.index_select(0, tensor(kept_bags, longs));
      if (per_sample_weights.defined()) {
        std::vector<int64_t> kept_positions;
        for (size_t i = 0; i < keep.size(); ++i)
          if (keep[i] != 0) kept_positions.push_back(static_cast<int64_t>(i));
        rows =
            rows * per_sample_weights.index_select(0, tensor(kept_positions, longs)).view({-1, 1});
      } else {
        rows =
            rows *
            tensor(kept_scale, TensorOptions().dtype(kDouble)).to(grad.scalar_type()).view({-1, 1});
      }
      out[0] = gw.index_add(0, tensor(kept_ids, longs), rows);
    }
  }
  if (want_psw) {
    Tensor looked_up = weight.index_select(0, bags.ids.clamp(0, weight.size(0) - 1));
    out[1] = (grad.index_select(0, tensor(bag_of, longs)) * looked_up).sum(1) *
             tensor(keep, TensorOptions().dtype(kDouble)).to(grad.scalar_type());
  }
  return out;
}

const autograd::BackwardName kEmbeddingBagBackward("EmbeddingBagBackward0");

Tensor embedding_bag_fused(const Bags& bags, const Tensor& weight, EmbeddingBagMode mode,
                           const Tensor& per_sample_weights, int64_t pad) {
  const int64_t* ids = bags.ids.data_ptr<int64_t>();
  const int64_t rows = weight.size(0);
  for (int64_t i = 0; i < bags.ids.numel(); ++i)
    BRASA_CHECK(ids[i] >= 0 && ids[i] < rows,
                "embedding_bag: index out of range in self: indices must be in [0, ", rows,
                ") for a weight of ", weight.sizes(), ", got ", ids[i]);
  const auto reduction = static_cast<EmbeddingBagReduction>(mode.kind);
  Tensor starts = tensor(bags.starts, TensorOptions().dtype(kLong));
  autograd::Recorder r(kEmbeddingBagBackward, weight, per_sample_weights);
  Tensor w = weight.contiguous();
  Tensor psw =
      per_sample_weights.defined() ? per_sample_weights.reshape({-1}).contiguous() : Tensor();
  auto [out, max_rows] =
      kernel<EmbeddingBagKernel>(weight.device())(w, bags.ids, starts, reduction, psw, pad);
  if (r)
    r.save(weight, per_sample_weights)
        .finish(out, [bags, starts, mode, reduction, max_rows, pad,
                      psw_shape = per_sample_weights.defined()
                                      ? std::vector<int64_t>(per_sample_weights.sizes().begin(),
                                                             per_sample_weights.sizes().end())
                                      : std::vector<int64_t>()](autograd::FormulaNode& n,
                                                                const autograd::variable_list& g) {
          const bool has_psw = !psw_shape.empty();
          Tensor wt = n.saved(0), p = has_psw ? n.saved(1).reshape({-1}) : Tensor();
          const bool want_w = n.needs(0), want_p = has_psw && n.needs(1);
          std::vector<Tensor> grads;
          if (is_grad_enabled()) {
            grads = backward_composite(g[0], wt, p, bags, mode, max_rows, pad, want_w, want_p);
          } else {
            auto [gw, gp] = kernel<EmbeddingBagBackwardKernel>(wt.device())(
                g[0].contiguous(), wt.contiguous(), bags.ids, starts, reduction,
                has_psw ? p.contiguous() : Tensor(), max_rows, pad, want_w, want_p);
            grads = {gw, gp};
          }
          if (grads[1].defined()) grads[1] = grads[1].view(psw_shape);
          return autograd::variable_list{grads[0], grads[1]};
        });
  return out;
}

}  // namespace

Tensor embedding_bag(const Tensor& input, const Tensor& weight, const Tensor& offsets,
                     EmbeddingBagMode mode, const Tensor& per_sample_weights,
                     bool include_last_offset, std::optional<int64_t> padding_idx,
                     std::optional<double> max_norm, double norm_type, bool scale_grad_by_freq) {
  BRASA_CHECK(input.dim() == 1 || input.dim() == 2,
              "embedding_bag: expected a 1-D or 2-D input, got ", input.sizes());
  BRASA_CHECK(
      input.dim() == 1 || !offsets.defined(),
      "embedding_bag: offsets go with a 1-D input; a 2-D input [B, N] is B bags of N already");
  BRASA_CHECK(input.dim() == 2 || offsets.defined(), "embedding_bag: a 1-D input needs offsets");
  BRASA_CHECK(!per_sample_weights.defined() || mode == EmbeddingBagMode::Sum,
              "embedding_bag: per_sample_weights are only supported with mode kSum");
  BRASA_CHECK(!per_sample_weights.defined() || per_sample_weights.sizes() == input.sizes(),
              "embedding_bag: per_sample_weights must have the input's shape ", input.sizes(),
              ", got ", per_sample_weights.sizes());
  BRASA_CHECK(weight.dim() == 2, "embedding_bag: expected a 2-D weight [rows, width], got ",
              weight.sizes());
  const Bags bags = bags_of(input, offsets, include_last_offset);
  const int64_t pad = detail::wrap_padding_idx("embedding_bag", padding_idx, weight.size(0));
  const bool fused =
      (weight.scalar_type() == kFloat || weight.scalar_type() == kDouble) && !max_norm &&
      !scale_grad_by_freq &&
      (!per_sample_weights.defined() || (per_sample_weights.scalar_type() == weight.scalar_type() &&
                                         per_sample_weights.device() == weight.device())) &&
      has_kernel<EmbeddingBagKernel>(weight.device());
  if (fused) return embedding_bag_fused(bags, weight, mode, per_sample_weights, pad);
  return embedding_bag_composite(bags, weight, mode, per_sample_weights, pad, max_norm, norm_type,
                                 scale_grad_by_freq);
}

}  // namespace brasa::nn::functional
