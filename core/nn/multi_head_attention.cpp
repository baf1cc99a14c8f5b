#include <brasa/nn/functional.h>
#include <brasa/nn/multi_head_attention.h>
#include <brasa/ops/binary.h>
#include <brasa/ops/factory.h>
#include <brasa/ops/linalg.h>
#include <brasa/ops/shape.h>

#include <cmath>
#include <vector>

namespace brasa::nn::functional {

namespace {
// A mask with one more key column (never masked) for an appended key.
Tensor with_extra_key(const Tensor& mask) {
  if (!mask.defined()) return mask;
  std::vector<int64_t> column = mask.sizes().vec();
  column.back() = 1;
  return cat({mask, zeros(column, mask.options())}, -1);
}
}  // namespace

std::tuple<Tensor, Tensor> multi_head_attention_forward(
    const Tensor& query_in, const Tensor& key_in, const Tensor& value_in,
    const MultiheadAttentionForwardFuncOptions& o) {
  const char* op = "multi_head_attention_forward";
  BRASA_CHECK(query_in.defined() && key_in.defined() && value_in.defined(), op,
              ": expected defined query, key and value");
  const bool batched = query_in.dim() == 3;
  BRASA_CHECK((batched && key_in.dim() == 3 && value_in.dim() == 3) ||
                  (query_in.dim() == 2 && key_in.dim() == 2 && value_in.dim() == 2),
              op, ": expected query, key and value all 3-D [len, N, E] or all 2-D [len, E], got ",
              query_in.sizes(), ", ", key_in.sizes(), " and ", value_in.sizes());
  const Tensor query = batched ? query_in : query_in.unsqueeze(1);
  const Tensor key = batched ? key_in : key_in.unsqueeze(1);
  const Tensor value = batched ? value_in : value_in.unsqueeze(1);
  Tensor key_padding_mask = o.key_padding_mask_;
  if (!batched && key_padding_mask.defined()) key_padding_mask = key_padding_mask.unsqueeze(0);
  const int64_t L = query.size(0), N = query.size(1), E = query.size(2), H = o.num_heads_;
  BRASA_CHECK(E == o.embed_dim_to_check_, op, ": was expecting embedding dimension of ",
              o.embed_dim_to_check_, ", but got ", E);
  BRASA_CHECK(H > 0 && E % H == 0, op, ": embed_dim ", E, " not divisible by num_heads ", H);
  BRASA_CHECK(key.size(1) == N && value.size(1) == N && key.size(0) == value.size(0), op, ": key ",
              key.sizes(), " and value ", value.sizes(), " do not match query ", query.sizes());
  const int64_t D = E / H;
  auto bias_part = [&](int64_t part) {
    return o.in_proj_bias_.defined() ? o.in_proj_bias_.narrow(0, part * E, E) : Tensor();
  };
  auto weight_part = [&](int64_t part) {
    if (o.use_separate_proj_weight_) {
      const Tensor& w = part == 0   ? o.q_proj_weight_
                        : part == 1 ? o.k_proj_weight_
                                    : o.v_proj_weight_;
      BRASA_CHECK(w.defined(), op, ": use_separate_proj_weight is true but ",
                  part == 0   ? "q"
                  : part == 1 ? "k"
                              : "v",
                  "_proj_weight is undefined");
      return w;
    }
    BRASA_CHECK(o.in_proj_weight_.defined(), op,
                ": use_separate_proj_weight is false but in_proj_weight is undefined");
    return o.in_proj_weight_.narrow(0, part * E, E);
  };
  Tensor q = linear(query, weight_part(0), bias_part(0));
  Tensor k = linear(key, weight_part(1), bias_part(1));
  Tensor v = linear(value, weight_part(2), bias_part(2));
  Tensor attn_mask = o.attn_mask_;
  if (attn_mask.defined()) {
    BRASA_CHECK(
        (attn_mask.dim() == 2 && attn_mask.size(0) == L && attn_mask.size(1) == key.size(0)) ||
            (attn_mask.dim() == 3 && attn_mask.size(0) == N * H && attn_mask.size(1) == L &&
             attn_mask.size(2) == key.size(0)),
        op, ": attn_mask must be [", L, ", ", key.size(0), "] or [", N * H, ", ", L, ", ",
        key.size(0), "], got ", attn_mask.sizes());
    if (attn_mask.dim() == 2) attn_mask = attn_mask.unsqueeze(0);
  }
  if (o.bias_k_.defined() && o.bias_v_.defined()) {
    BRASA_CHECK(!o.static_k_.defined() && !o.static_v_.defined(), op,
                ": bias cannot be added to static key and value");
    k = cat({k, o.bias_k_.reshape({1, 1, E}).expand({1, N, E})}, 0);
    v = cat({v, o.bias_v_.reshape({1, 1, E}).expand({1, N, E})}, 0);
    attn_mask = with_extra_key(attn_mask);
    key_padding_mask = with_extra_key(key_padding_mask);
  } else {
    BRASA_CHECK(!o.bias_k_.defined() && !o.bias_v_.defined(), op,
                ": bias_k and bias_v go together");
  }
  // [len, N, E] -> [N * H, len, D]
  auto heads = [&](const Tensor& t) { return t.reshape({t.size(0), N * H, D}).transpose(0, 1); };
  q = heads(q) * (1.0 / std::sqrt(static_cast<double>(D)));
  k = o.static_k_.defined() ? o.static_k_ : heads(k);
  v = o.static_v_.defined() ? o.static_v_ : heads(v);
  if (o.add_zero_attn_) {
    k = cat({k, zeros({N * H, 1, D}, k.options())}, 1);
    v = cat({v, zeros({N * H, 1, D}, v.options())}, 1);
    attn_mask = with_extra_key(attn_mask);
    key_padding_mask = with_extra_key(key_padding_mask);
  }
  const int64_t S = k.size(1);
  Tensor scores = bmm(q, k.transpose(1, 2));  // [N * H, L, S]
  if (attn_mask.defined())
    scores = attn_mask.scalar_type() == kBool ? scores.masked_fill(attn_mask, -INFINITY)
                                              : scores + attn_mask;
  if (key_padding_mask.defined()) {
    BRASA_CHECK(key_padding_mask.dim() == 2 && key_padding_mask.size(0) == N &&
                    key_padding_mask.size(1) == S,
                op, ": key_padding_mask must be [", N, ", ", S, "], got ",
                key_padding_mask.sizes());
    Tensor m = key_padding_mask.to(kBool).view({N, 1, 1, S});
    scores = scores.view({N, H, L, S}).masked_fill(m, -INFINITY).view({N * H, L, S});
  }
  Tensor attn = softmax(scores, -1);
  Tensor dropped = dropout(attn, o.dropout_p_, o.training_);
  Tensor out = bmm(dropped, v).transpose(0, 1).reshape({L, N, E});
  out = linear(out, o.out_proj_weight_, o.out_proj_bias_);
  Tensor weights;
  if (o.need_weights_) {
    weights = attn.view({N, H, L, S});
    if (o.average_attn_weights_) weights = weights.mean({1});
    if (!batched) weights = weights.squeeze(0);
  }
  if (!batched) out = out.squeeze(1);
  return {out, weights};
}

}  // namespace brasa::nn::functional
