#pragma once
// Sequence layers: multi-head attention, the transformer encoder layer, LSTM
// and GRU. Reached through <brasa/nn/modules.h> as well, whose layers
// (Linear, Dropout, LayerNorm) they use.
#include <brasa/nn/any_module.h>
#include <brasa/nn/modules.h>
#include <brasa/nn/packed_sequence.h>

#include <functional>
#include <optional>
#include <string>
#include <tuple>
#include <variant>
#include <vector>

namespace brasa {
// libtorch's activation enum values, as the recurrent and transformer options
// take them: RNNOptions().nonlinearity(torch::kReLU) (kTanh or kReLU),
// TransformerEncoderLayerOptions(512, 8).activation(torch::kGELU) (kReLU or kGELU).
enum class ActivationKind { Tanh, ReLU, GELU };
inline constexpr ActivationKind kTanh = ActivationKind::Tanh;
inline constexpr ActivationKind kReLU = ActivationKind::ReLU;
inline constexpr ActivationKind kGELU = ActivationKind::GELU;
namespace nn {
// The transformer layers' feed-forward activation, as libtorch's
// activation_t: torch::kReLU, torch::kGELU or any unary callable
// (.activation([](const Tensor& x) { return x * torch::sigmoid(x); })).
using activation_t = std::variant<ActivationKind, std::function<Tensor(const Tensor&)>>;
namespace detail {
// An error naming the layer unless `a` is kReLU, kGELU or a callable.
void check_activation(const char* layer, const activation_t& a);
Tensor apply_activation(const activation_t& a, const Tensor& x);
}  // namespace detail
}  // namespace nn
}  // namespace brasa

namespace brasa::nn {

// Multi-head attention (sequence-first [L, N, E], as PyTorch's default).
// forward returns the output [L, N, E] and the attention weights averaged
// over heads [N, L, S]. key_padding_mask: bool [N, S], true = ignore;
// attn_mask: bool (true = masked) or float (added) [L, S].
// With kdim or vdim other than embed_dim, the projections are separate
// (q_proj_weight [E, E], k_proj_weight [E, kdim], v_proj_weight [E, vdim])
// and in_proj_weight is undefined, as in libtorch.
class MultiheadAttentionImpl : public Cloneable<MultiheadAttentionImpl> {
 public:
  MultiheadAttentionImpl(int64_t embed_dim, int64_t num_heads, double dropout = 0.0,
                         bool bias = true)
      : MultiheadAttentionImpl(
            MultiheadAttentionOptions(embed_dim, num_heads).dropout(dropout).bias(bias)) {}
  explicit MultiheadAttentionImpl(const MultiheadAttentionOptions& o);
  MultiheadAttentionImpl(const MultiheadAttentionImpl& o) : MultiheadAttentionImpl(o.options) {}
  std::tuple<Tensor, Tensor> forward(const Tensor& query, const Tensor& key, const Tensor& value,
                                     const Tensor& key_padding_mask = {}, bool need_weights = true,
                                     const Tensor& attn_mask = {},
                                     bool average_attn_weights = true);
  FORWARD_HAS_DEFAULT_ARGS({3, AnyValue(Tensor())}, {4, AnyValue(true)}, {5, AnyValue(Tensor())},
                           {6, AnyValue(true)})
  MultiheadAttentionOptions options;
  int64_t embed_dim, num_heads, head_dim;
  double dropout;
  bool _qkv_same_embed_dim;
  // Registered slots (see LinearImpl), in PyTorch's parameter order.
  Tensor& q_proj_weight;
  Tensor& k_proj_weight;
  Tensor& v_proj_weight;
  Tensor& in_proj_weight;  // [3E, E]
  Tensor& in_proj_bias;    // [3E]
  Tensor& bias_k;          // [1, 1, E] with add_bias_kv
  Tensor& bias_v;
  std::shared_ptr<LinearImpl> out_proj;
};
BRASA_MODULE(MultiheadAttention);

struct TransformerEncoderLayerOptions {
  // Getters, as libtorch's options have: options.name().
  const auto& d_model() const noexcept { return d_model_; }
  const auto& nhead() const noexcept { return nhead_; }
  const auto& dim_feedforward() const noexcept { return dim_feedforward_; }
  const auto& dropout() const noexcept { return dropout_; }
  const auto& activation() const noexcept { return activation_; }
  const auto& norm_first() const noexcept { return norm_first_; }
  TransformerEncoderLayerOptions(int64_t d_model, int64_t nhead)
      : d_model_(d_model), nhead_(nhead) {}
  TransformerEncoderLayerOptions& d_model(int64_t v) {
    d_model_ = v;
    return *this;
  }
  TransformerEncoderLayerOptions& nhead(int64_t v) {
    nhead_ = v;
    return *this;
  }
  TransformerEncoderLayerOptions& dim_feedforward(int64_t v) {
    dim_feedforward_ = v;
    return *this;
  }
  TransformerEncoderLayerOptions& dropout(double v) {
    dropout_ = v;
    return *this;
  }
  TransformerEncoderLayerOptions& activation(activation_t a) {
    activation_ = std::move(a);
    return *this;
  }
  // Python's spelling: "relu" or "gelu" (anything else is an error when the
  // layer is built).
  TransformerEncoderLayerOptions& activation(const std::string& name);
  TransformerEncoderLayerOptions& norm_first(bool v) {
    norm_first_ = v;
    return *this;
  }
  int64_t d_model_, nhead_, dim_feedforward_ = 2048;
  double dropout_ = 0.1;
  activation_t activation_ = kReLU;
  std::string unknown_activation_;  // a name given that is neither relu nor gelu
  bool norm_first_ = false;
};
// Self-attention and a feed-forward block, each with a residual and LayerNorm.
class TransformerEncoderLayerImpl : public Cloneable<TransformerEncoderLayerImpl> {
 public:
  explicit TransformerEncoderLayerImpl(const TransformerEncoderLayerOptions& o);
  TransformerEncoderLayerImpl(const TransformerEncoderLayerImpl& o)
      : TransformerEncoderLayerImpl(o.options) {}
  TransformerEncoderLayerImpl(int64_t d_model, int64_t nhead)
      : TransformerEncoderLayerImpl(TransformerEncoderLayerOptions(d_model, nhead)) {}
  Tensor forward(const Tensor& src, const Tensor& src_mask = {},
                 const Tensor& src_key_padding_mask = {});
  void pretty_print(std::ostream& os) const override;
  FORWARD_HAS_DEFAULT_ARGS({1, AnyValue(Tensor())}, {2, AnyValue(Tensor())})
  TransformerEncoderLayerOptions options;
  MultiheadAttention self_attn{nullptr};
  Linear linear1{nullptr}, linear2{nullptr};
  LayerNorm norm1{nullptr}, norm2{nullptr};
  Dropout dropout{nullptr}, dropout1{nullptr}, dropout2{nullptr};
};
BRASA_MODULE(TransformerEncoderLayer);

struct RNNOptions {
  // Getters, as libtorch's options have: options.name().
  const auto& input_size() const noexcept { return input_size_; }
  const auto& hidden_size() const noexcept { return hidden_size_; }
  const auto& num_layers() const noexcept { return num_layers_; }
  const auto& bias() const noexcept { return bias_; }
  const auto& batch_first() const noexcept { return batch_first_; }
  const auto& dropout() const noexcept { return dropout_; }
  const auto& bidirectional() const noexcept { return bidirectional_; }
  const auto& nonlinearity() const noexcept { return nonlinearity_; }
  RNNOptions(int64_t input_size, int64_t hidden_size)
      : input_size_(input_size), hidden_size_(hidden_size) {}
  RNNOptions& input_size(int64_t v) {
    input_size_ = v;
    return *this;
  }
  RNNOptions& hidden_size(int64_t v) {
    hidden_size_ = v;
    return *this;
  }
  RNNOptions& num_layers(int64_t v) {
    num_layers_ = v;
    return *this;
  }
  RNNOptions& bias(bool v) {
    bias_ = v;
    return *this;
  }
  RNNOptions& batch_first(bool v) {
    batch_first_ = v;
    return *this;
  }
  RNNOptions& dropout(double v) {
    dropout_ = v;
    return *this;
  }
  RNNOptions& bidirectional(bool v) {
    bidirectional_ = v;
    return *this;
  }
  RNNOptions& nonlinearity(ActivationKind v) {  // RNN only
    nonlinearity_ = v;
    return *this;
  }
  // LSTM only: h is projected to this size by weight_hr_l{k} [proj_size, hidden_size].
  RNNOptions& proj_size(int64_t v) {
    proj_size_ = v;
    return *this;
  }
  const auto& proj_size() const noexcept { return proj_size_; }
  int64_t input_size_, hidden_size_, num_layers_ = 1;
  bool bias_ = true, batch_first_ = false;
  double dropout_ = 0.0;
  bool bidirectional_ = false;
  ActivationKind nonlinearity_ = kTanh;
  int64_t proj_size_ = 0;
};
using LSTMOptions = RNNOptions;
using GRUOptions = RNNOptions;

// Shared by LSTM and GRU: parameters weight_ih_l{k}[_reverse], weight_hh_..,
// bias_ih_.., bias_hh_.. (and LSTM's weight_hr_.. with proj_size; PyTorch's
// names and layout), layers and directions.
class RNNBaseImpl : public Module {
 public:
  RNNBaseImpl(std::string name, const RNNOptions& o, int64_t gates);
  RNNBaseImpl(const RNNBaseImpl& o) : RNNBaseImpl(o.name(), o.options, o.gates_) {}
  void pretty_print(std::ostream& os) const override;
  RNNOptions options;

 protected:
  // The input checked and the initial states (zeros [layers * dirs, N, H]
  // when not given, else checked), in the order libtorch's functions take.
  std::vector<Tensor> initial_states(const Tensor& input, std::vector<Tensor> given) const;
  // The same for a packed batch; the given states are in the batch's
  // original order and come back in the packed order.
  std::vector<Tensor> initial_states(const utils::rnn::PackedSequence& input,
                                     std::vector<Tensor> given) const;
  // Final states [L * D, N, H] of a packed batch back in its original order.
  static Tensor in_original_order(const Tensor& state, const utils::rnn::PackedSequence& packed);
  // The parameters in libtorch's flat order: per layer and direction, w_ih,
  // w_hh (and b_ih, b_hh).
  std::vector<Tensor> flat_weights() const;

 private:
  int64_t gates_;
};

// forward(input, (h0, c0)) -> (output, (h_n, c_n))
class LSTMImpl : public Cloneable<LSTMImpl, RNNBaseImpl> {
 public:
  LSTMImpl(int64_t input_size, int64_t hidden_size)
      : LSTMImpl(RNNOptions(input_size, hidden_size)) {}
  explicit LSTMImpl(const RNNOptions& o) : Cloneable("LSTM", o, 4) {}
  std::tuple<Tensor, std::tuple<Tensor, Tensor>> forward(
      const Tensor& input, std::optional<std::tuple<Tensor, Tensor>> hx = std::nullopt);
  // A packed batch (nn::utils::rnn): output packed alike, final states in
  // the batch's original order.
  std::tuple<utils::rnn::PackedSequence, std::tuple<Tensor, Tensor>> forward_with_packed_input(
      const utils::rnn::PackedSequence& packed_input,
      std::optional<std::tuple<Tensor, Tensor>> hx_opt = std::nullopt);
  FORWARD_HAS_DEFAULT_ARGS({1, AnyValue(std::optional<std::tuple<Tensor, Tensor>>())})
};
BRASA_MODULE(LSTM);

// forward(input, h0) -> (output, h_n)
class GRUImpl : public Cloneable<GRUImpl, RNNBaseImpl> {
 public:
  GRUImpl(int64_t input_size, int64_t hidden_size) : GRUImpl(RNNOptions(input_size, hidden_size)) {}
  explicit GRUImpl(const RNNOptions& o) : Cloneable("GRU", o, 3) {}
  std::tuple<Tensor, Tensor> forward(const Tensor& input, const Tensor& hx = {});
  std::tuple<utils::rnn::PackedSequence, Tensor> forward_with_packed_input(
      const utils::rnn::PackedSequence& packed_input, Tensor hx = {});
  FORWARD_HAS_DEFAULT_ARGS({1, AnyValue(Tensor())})
};
BRASA_MODULE(GRU);

}  // namespace brasa::nn
