#pragma once
// The Elman RNN (tanh or relu) and the single-step cells RNNCell, LSTMCell
// and GRUCell, with libtorch's options and parameter names, and libtorch's
// top-level cell functions (torch::lstm_cell, torch::gru_cell,
// torch::rnn_tanh_cell, torch::rnn_relu_cell). LSTM and GRU are in
// <brasa/nn/sequence_modules.h>; the cells use the same gate math.
#include <brasa/nn/sequence_modules.h>

#include <tuple>
#include <vector>

namespace brasa {

// One step: the new h (and c for the LSTM) from input [N, in] (or [in]) and
// the previous state. hx of lstm_cell is {h, c}.
std::tuple<Tensor, Tensor> lstm_cell(const Tensor& input, TensorList hx, const Tensor& w_ih,
                                     const Tensor& w_hh, const Tensor& b_ih = {},
                                     const Tensor& b_hh = {});
Tensor gru_cell(const Tensor& input, const Tensor& hx, const Tensor& w_ih, const Tensor& w_hh,
                const Tensor& b_ih = {}, const Tensor& b_hh = {});
Tensor rnn_tanh_cell(const Tensor& input, const Tensor& hx, const Tensor& w_ih, const Tensor& w_hh,
                     const Tensor& b_ih = {}, const Tensor& b_hh = {});
Tensor rnn_relu_cell(const Tensor& input, const Tensor& hx, const Tensor& w_ih, const Tensor& w_hh,
                     const Tensor& b_ih = {}, const Tensor& b_hh = {});

// Whole sequences through all layers and directions, as libtorch's
// at::lstm / at::gru / at::rnn_tanh / at::rnn_relu: params hold, per layer
// and direction, w_ih, w_hh (and b_ih, b_hh with has_biases); hx the
// initial states [layers * directions, N, H] (h and c for the LSTM).
// Returns the output and the final states.
std::tuple<Tensor, Tensor, Tensor> lstm(const Tensor& input, TensorList hx, TensorList params,
                                        bool has_biases, int64_t num_layers, double dropout,
                                        bool train, bool bidirectional, bool batch_first);
std::tuple<Tensor, Tensor> gru(const Tensor& input, const Tensor& hx, TensorList params,
                               bool has_biases, int64_t num_layers, double dropout, bool train,
                               bool bidirectional, bool batch_first);
std::tuple<Tensor, Tensor> rnn_tanh(const Tensor& input, const Tensor& hx, TensorList params,
                                    bool has_biases, int64_t num_layers, double dropout, bool train,
                                    bool bidirectional, bool batch_first);
std::tuple<Tensor, Tensor> rnn_relu(const Tensor& input, const Tensor& hx, TensorList params,
                                    bool has_biases, int64_t num_layers, double dropout, bool train,
                                    bool bidirectional, bool batch_first);
// The same on packed sequences (nn::utils::rnn::PackedSequence's data and
// batch_sizes): each sequence steps only as far as its length, and its final
// states are those after its last step. Returns the packed output data.
std::tuple<Tensor, Tensor, Tensor> lstm(const Tensor& data, const Tensor& batch_sizes,
                                        TensorList hx, TensorList params, bool has_biases,
                                        int64_t num_layers, double dropout, bool train,
                                        bool bidirectional);
std::tuple<Tensor, Tensor> gru(const Tensor& data, const Tensor& batch_sizes, const Tensor& hx,
                               TensorList params, bool has_biases, int64_t num_layers,
                               double dropout, bool train, bool bidirectional);
std::tuple<Tensor, Tensor> rnn_tanh(const Tensor& data, const Tensor& batch_sizes, const Tensor& hx,
                                    TensorList params, bool has_biases, int64_t num_layers,
                                    double dropout, bool train, bool bidirectional);
std::tuple<Tensor, Tensor> rnn_relu(const Tensor& data, const Tensor& batch_sizes, const Tensor& hx,
                                    TensorList params, bool has_biases, int64_t num_layers,
                                    double dropout, bool train, bool bidirectional);

namespace nn {

// forward(input, h0) -> (output, h_n), h' = act(W_ih x + b_ih + W_hh h + b_hh).
class RNNImpl : public Cloneable<RNNImpl, RNNBaseImpl> {
 public:
  RNNImpl(int64_t input_size, int64_t hidden_size) : RNNImpl(RNNOptions(input_size, hidden_size)) {}
  explicit RNNImpl(const RNNOptions& o) : Cloneable("RNN", o, 1) {
    BRASA_CHECK(o.nonlinearity_ != kGELU, "RNN: nonlinearity must be torch::kTanh or torch::kReLU");
  }
  std::tuple<Tensor, Tensor> forward(const Tensor& input, const Tensor& hx = {});
  std::tuple<utils::rnn::PackedSequence, Tensor> forward_with_packed_input(
      const utils::rnn::PackedSequence& packed_input, Tensor hx = {});
  FORWARD_HAS_DEFAULT_ARGS({1, AnyValue(Tensor())})
};
BRASA_MODULE(RNN);

struct RNNCellOptions {
  RNNCellOptions(int64_t input_size, int64_t hidden_size)
      : input_size_(input_size), hidden_size_(hidden_size) {}
  BRASA_ARG(int64_t, input_size);
  BRASA_ARG(int64_t, hidden_size);
  BRASA_ARG(bool, bias, true);
  BRASA_ARG(ActivationKind, nonlinearity, kTanh);
};
struct LSTMCellOptions {
  LSTMCellOptions(int64_t input_size, int64_t hidden_size)
      : input_size_(input_size), hidden_size_(hidden_size) {}
  BRASA_ARG(int64_t, input_size);
  BRASA_ARG(int64_t, hidden_size);
  BRASA_ARG(bool, bias, true);
};
using GRUCellOptions = LSTMCellOptions;

// A cell's parameters weight_ih [gates * H, in], weight_hh [gates * H, H],
// bias_ih and bias_hh [gates * H], uniform in +-1/sqrt(H) as in PyTorch.
class RNNCellBaseImpl : public Module {
 public:
  RNNCellBaseImpl(std::string name, int64_t input_size, int64_t hidden_size, bool bias,
                  int64_t gates);
  void pretty_print(std::ostream& os) const override;
  int64_t input_size, hidden_size;
  Tensor& weight_ih;
  Tensor& weight_hh;
  Tensor& bias_ih;
  Tensor& bias_hh;

 protected:
  // The input as [N, in] and whether it was unbatched; the state checked (zeros when undefined).
  Tensor batched_input(const Tensor& input, bool& unbatched) const;
  Tensor initial_state(const Tensor& hx, const Tensor& input, bool unbatched) const;
  std::string extra_repr_;  // what pretty_print adds after the sizes
};

class RNNCellImpl : public Cloneable<RNNCellImpl, RNNCellBaseImpl> {
 public:
  RNNCellImpl(int64_t input_size, int64_t hidden_size)
      : RNNCellImpl(RNNCellOptions(input_size, hidden_size)) {}
  explicit RNNCellImpl(const RNNCellOptions& o);
  RNNCellImpl(const RNNCellImpl& o) : RNNCellImpl(o.options) {}
  Tensor forward(const Tensor& input, const Tensor& hx = {});
  FORWARD_HAS_DEFAULT_ARGS({1, AnyValue(Tensor())})
  RNNCellOptions options;
};
BRASA_MODULE(RNNCell);

class LSTMCellImpl : public Cloneable<LSTMCellImpl, RNNCellBaseImpl> {
 public:
  LSTMCellImpl(int64_t input_size, int64_t hidden_size)
      : LSTMCellImpl(LSTMCellOptions(input_size, hidden_size)) {}
  explicit LSTMCellImpl(const LSTMCellOptions& o);
  LSTMCellImpl(const LSTMCellImpl& o) : LSTMCellImpl(o.options) {}
  // (h', c') from input and (h, c) (zeros when not given).
  std::tuple<Tensor, Tensor> forward(const Tensor& input,
                                     std::optional<std::tuple<Tensor, Tensor>> hx = std::nullopt);
  FORWARD_HAS_DEFAULT_ARGS({1, AnyValue(std::optional<std::tuple<Tensor, Tensor>>())})
  LSTMCellOptions options;
};
BRASA_MODULE(LSTMCell);

class GRUCellImpl : public Cloneable<GRUCellImpl, RNNCellBaseImpl> {
 public:
  GRUCellImpl(int64_t input_size, int64_t hidden_size)
      : GRUCellImpl(GRUCellOptions(input_size, hidden_size)) {}
  explicit GRUCellImpl(const GRUCellOptions& o);
  GRUCellImpl(const GRUCellImpl& o) : GRUCellImpl(o.options) {}
  Tensor forward(const Tensor& input, const Tensor& hx = {});
  FORWARD_HAS_DEFAULT_ARGS({1, AnyValue(Tensor())})
  GRUCellOptions options;
};
BRASA_MODULE(GRUCell);

}  // namespace nn
}  // namespace brasa
