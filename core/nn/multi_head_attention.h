#pragma once
// F::multi_head_attention_forward: the attention of nn::MultiheadAttention
// as a function of its weights, with libtorch's options — extra key/value
// bias rows (bias_k, bias_v), a zero attention row (add_zero_attn), separate
// q/k/v projection weights, precomputed keys and values (static_k,
// static_v), 2-D or 3-D attention masks (bool: masked out; float: added) and
// per-head or averaged attention weights.
#include <brasa/nn/module_options.h>
#include <brasa/tensor/tensor.h>

#include <tuple>

namespace brasa::nn::functional {

struct MultiheadAttentionForwardFuncOptions {
  MultiheadAttentionForwardFuncOptions(int64_t embed_dim_to_check, int64_t num_heads,
                                       Tensor in_proj_weight, Tensor in_proj_bias, Tensor bias_k,
                                       Tensor bias_v, bool add_zero_attn, double dropout_p,
                                       Tensor out_proj_weight, Tensor out_proj_bias)
      : embed_dim_to_check_(embed_dim_to_check),
        num_heads_(num_heads),
        in_proj_weight_(std::move(in_proj_weight)),
        in_proj_bias_(std::move(in_proj_bias)),
        bias_k_(std::move(bias_k)),
        bias_v_(std::move(bias_v)),
        add_zero_attn_(add_zero_attn),
        dropout_p_(dropout_p),
        out_proj_weight_(std::move(out_proj_weight)),
        out_proj_bias_(std::move(out_proj_bias)) {}
  BRASA_ARG(int64_t, embed_dim_to_check);
  BRASA_ARG(int64_t, num_heads);
  BRASA_ARG(Tensor, in_proj_weight);  // [3E, E], or undefined with separate weights
  BRASA_ARG(Tensor, in_proj_bias);    // [3E] or undefined
  BRASA_ARG(Tensor, bias_k);          // [1, 1, E] or undefined
  BRASA_ARG(Tensor, bias_v);
  BRASA_ARG(bool, add_zero_attn);
  BRASA_ARG(double, dropout_p);
  BRASA_ARG(Tensor, out_proj_weight);
  BRASA_ARG(Tensor, out_proj_bias);
  BRASA_ARG(bool, training, true);
  BRASA_ARG(Tensor, key_padding_mask);  // [N, S]: true (or non-zero) keys are ignored
  BRASA_ARG(bool, need_weights, true);
  BRASA_ARG(Tensor, attn_mask);  // [L, S] or [N * H, L, S]
  BRASA_ARG(bool, use_separate_proj_weight, false);
  BRASA_ARG(Tensor, q_proj_weight);
  BRASA_ARG(Tensor, k_proj_weight);
  BRASA_ARG(Tensor, v_proj_weight);
  BRASA_ARG(Tensor, static_k);  // [N * H, S, E / H]
  BRASA_ARG(Tensor, static_v);
  BRASA_ARG(bool, average_attn_weights, true);
};

// query [L, N, E], key and value [S, N, E] (or unbatched [L, E], [S, E]):
// (output [L, N, E], weights [N, L, S] averaged over heads or [N, H, L, S];
// undefined without need_weights).
std::tuple<Tensor, Tensor> multi_head_attention_forward(
    const Tensor& query, const Tensor& key, const Tensor& value,
    const MultiheadAttentionForwardFuncOptions& options);

}  // namespace brasa::nn::functional
