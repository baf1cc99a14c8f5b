#include <brasa/nn/init.h>
#include <brasa/nn/recurrent_cells.h>
#include <brasa/ops/factory.h>
#include <brasa/ops/shape.h>
#include <brasa/ops/unary.h>

#include <cmath>
#include <functional>

namespace brasa {

namespace {
void check_cell(const char* op, const Tensor& input, const Tensor& hx, const Tensor& w_ih,
                const Tensor& w_hh, int64_t gates) {
  BRASA_CHECK(input.defined() && hx.defined() && w_ih.defined() && w_hh.defined(), op,
              ": expected defined input, hidden state and weights");
  BRASA_CHECK(input.dim() == 2 && hx.dim() == 2 && input.size(0) == hx.size(0), op,
              ": expected input [N, input_size] and hidden state [N, hidden_size], got ",
              input.sizes(), " and ", hx.sizes());
  const int64_t H = hx.size(1);
  BRASA_CHECK(w_ih.dim() == 2 && w_ih.size(0) == gates * H && w_ih.size(1) == input.size(1) &&
                  w_hh.dim() == 2 && w_hh.size(0) == gates * H && w_hh.size(1) == H,
              op, ": expected w_ih [", gates * H, ", ", input.size(1), "] and w_hh [", gates * H,
              ", ", H, "], got ", w_ih.sizes(), " and ", w_hh.sizes());
}
Tensor simple_cell(const char* op, const Tensor& input, const Tensor& hx, const Tensor& w_ih,
                   const Tensor& w_hh, const Tensor& b_ih, const Tensor& b_hh, bool use_relu) {
  check_cell(op, input, hx, w_ih, w_hh, 1);
  Tensor pre = F::linear(input, w_ih, b_ih) + F::linear(hx, w_hh, b_hh);
  return use_relu ? relu(pre) : tanh(pre);
}
// The LSTM update of (h, c); the new h is projected by w_hr when it is given
// (LSTM's proj_size).
std::tuple<Tensor, Tensor> lstm_update(const Tensor& x, const Tensor& h, const Tensor& c,
                                       const Tensor& w_ih, const Tensor& w_hh, const Tensor& b_ih,
                                       const Tensor& b_hh, const Tensor& w_hr = {}) {
  auto g = (F::linear(x, w_ih, b_ih) + F::linear(h, w_hh, b_hh)).chunk(4, 1);
  // input, forget, cell and output gates
  Tensor c1 = sigmoid(g[1]) * c + sigmoid(g[0]) * tanh(g[2]);
  Tensor h1 = sigmoid(g[3]) * tanh(c1);
  if (w_hr.defined()) h1 = F::linear(h1, w_hr);
  return {h1, c1};
}
}  // namespace

std::tuple<Tensor, Tensor> lstm_cell(const Tensor& input, TensorList hx, const Tensor& w_ih,
                                     const Tensor& w_hh, const Tensor& b_ih, const Tensor& b_hh) {
  BRASA_CHECK(hx.size() == 2, "lstm_cell: expected hx to hold h and c, got ", hx.size(),
              " tensors");
  check_cell("lstm_cell", input, hx[0], w_ih, w_hh, 4);
  BRASA_CHECK(hx[1].defined() && hx[1].sizes() == hx[0].sizes(),
              "lstm_cell: expected c shaped like h ", hx[0].sizes());
  return lstm_update(input, hx[0], hx[1], w_ih, w_hh, b_ih, b_hh);
}
Tensor gru_cell(const Tensor& input, const Tensor& hx, const Tensor& w_ih, const Tensor& w_hh,
                const Tensor& b_ih, const Tensor& b_hh) {
  check_cell("gru_cell", input, hx, w_ih, w_hh, 3);
  auto gi = F::linear(input, w_ih, b_ih).chunk(3, 1);  // reset, update, new
  auto gh = F::linear(hx, w_hh, b_hh).chunk(3, 1);
  Tensor r = sigmoid(gi[0] + gh[0]), z = sigmoid(gi[1] + gh[1]);
  Tensor n = tanh(gi[2] + r * gh[2]);
  return (1 - z) * n + z * hx;
}
Tensor rnn_tanh_cell(const Tensor& input, const Tensor& hx, const Tensor& w_ih, const Tensor& w_hh,
                     const Tensor& b_ih, const Tensor& b_hh) {
  return simple_cell("rnn_tanh_cell", input, hx, w_ih, w_hh, b_ih, b_hh, false);
}
Tensor rnn_relu_cell(const Tensor& input, const Tensor& hx, const Tensor& w_ih, const Tensor& w_hh,
                     const Tensor& b_ih, const Tensor& b_hh) {
  return simple_cell("rnn_relu_cell", input, hx, w_ih, w_hh, b_ih, b_hh, true);
}

namespace {
// One step of a layer and direction: its weights, and the state (h, or h and c) updated.
using Step = std::function<Tensor(const Tensor& x, std::vector<Tensor>& state,
                                  const std::vector<Tensor>& weights)>;

// The layers over a sequence of steps. Step t has batch[t] rows: all N of
// a padded batch, or, for a packed one, the sequences still running (longest
// first, so rows [0, batch[t]) of each state step and the others keep their
// state). `steps` holds the input of all steps, step after step [sum of
// batch, in]; `initial` each state [L * D, N, H]. Each layer and direction
// has w_ih, w_hh, (b_ih, b_hh,) then `extra` more weights (LSTM's w_hr); the
// step gets them as w_ih, w_hh, b_ih, b_hh, extra... Returns the last
// layer's output step after step [sum of batch, D * H] and the final states.
std::pair<Tensor, std::vector<Tensor>> run_layers(const char* op, const Tensor& steps,
                                                  const std::vector<int64_t>& batch,
                                                  std::vector<Tensor> initial, TensorList params,
                                                  bool has_biases, int64_t num_layers,
                                                  double dropout, bool train, bool bidirectional,
                                                  const Step& step, int64_t extra) {
  const int64_t dirs = bidirectional ? 2 : 1, per = (has_biases ? 4 : 2) + extra;
  BRASA_CHECK(num_layers > 0, op, ": num_layers must be positive, got ", num_layers);
  BRASA_CHECK(static_cast<int64_t>(params.size()) == num_layers * dirs * per, op, ": expected ",
              num_layers * dirs * per, " parameter tensors (", num_layers, " layers, ", dirs,
              " directions, ", per, " each), got ", params.size());
  const int64_t T = static_cast<int64_t>(batch.size()), N = T > 0 ? batch[0] : 0;
  for (const Tensor& h : initial)
    BRASA_CHECK(h.defined() && h.dim() == 3 && h.size(0) == num_layers * dirs && h.size(1) == N, op,
                ": expected hidden states [", num_layers * dirs, ", ", N, ", hidden_size], got ",
                h.defined() ? h.sizes() : IntArrayRef{});
  std::vector<std::vector<Tensor>> finals(initial.size());
  Tensor layer_in = steps;
  for (int64_t l = 0; l < num_layers; ++l) {
    const std::vector<Tensor> inputs = split_with_sizes(layer_in, batch, 0);
    std::vector<std::vector<Tensor>> outputs(dirs, std::vector<Tensor>(T));
    for (int64_t d = 0; d < dirs; ++d) {
      const int64_t at = (l * dirs + d) * per;
      std::vector<Tensor> weights(params.begin() + at, params.begin() + at + per);
      if (!has_biases) weights.insert(weights.begin() + 2, {Tensor(), Tensor()});
      std::vector<Tensor> state;
      for (const Tensor& h : initial) state.push_back(h[l * dirs + d]);
      for (int64_t i = 0; i < T; ++i) {
        const int64_t t = d == 0 ? i : T - 1 - i, rows = batch[t];
        if (rows == N) {
          outputs[d][t] = step(inputs[t], state, weights);
          continue;
        }
        std::vector<Tensor> running;
        for (const Tensor& s : state) running.push_back(s.slice(0, 0, rows));
        outputs[d][t] = step(inputs[t], running, weights);
        for (size_t s = 0; s < state.size(); ++s)
          state[s] = cat({running[s], state[s].slice(0, rows)}, 0);
      }
      for (size_t s = 0; s < state.size(); ++s) finals[s].push_back(state[s]);
    }
    std::vector<Tensor> joined(T);
    for (int64_t t = 0; t < T; ++t)
      joined[t] = dirs == 1 ? outputs[0][t] : cat({outputs[0][t], outputs[1][t]}, 1);
    layer_in = cat(joined, 0);
    if (l + 1 < num_layers) layer_in = F::dropout(layer_in, dropout, train);
  }
  std::vector<Tensor> final_states;
  for (auto& f : finals) final_states.push_back(stack(f, 0));
  return {layer_in, final_states};
}

// run_layers on a padded batch [T, N, in] (or [N, T, in] with batch_first).
std::pair<Tensor, std::vector<Tensor>> run_sequence(const char* op, const Tensor& input,
                                                    std::vector<Tensor> initial, TensorList params,
                                                    bool has_biases, int64_t num_layers,
                                                    double dropout, bool train, bool bidirectional,
                                                    bool batch_first, const Step& step,
                                                    int64_t extra = 0) {
  BRASA_CHECK(input.defined() && input.dim() == 3, op, ": expected a 3-D input, got shape ",
              input.defined() ? input.sizes() : IntArrayRef{});
  Tensor x = batch_first ? input.transpose(0, 1) : input;  // [T, N, in]
  const int64_t T = x.size(0), N = x.size(1);
  auto [out, finals] =
      run_layers(op, x.reshape({T * N, x.size(2)}), std::vector<int64_t>(T, N), std::move(initial),
                 params, has_biases, num_layers, dropout, train, bidirectional, step, extra);
  out = out.view({T, N, out.size(1)});
  return {batch_first ? out.transpose(0, 1) : out, finals};
}

// run_layers on a packed batch: data [sum of batch_sizes, in], batch_sizes
// (int64, CPU) non-increasing.
std::pair<Tensor, std::vector<Tensor>> run_packed(const char* op, const Tensor& data,
                                                  const Tensor& batch_sizes,
                                                  std::vector<Tensor> initial, TensorList params,
                                                  bool has_biases, int64_t num_layers,
                                                  double dropout, bool train, bool bidirectional,
                                                  const Step& step, int64_t extra = 0) {
  BRASA_CHECK(data.defined() && data.dim() == 2, op,
              ": expected packed data [sum of lengths, input_size], got shape ",
              data.defined() ? data.sizes() : IntArrayRef{});
  BRASA_CHECK(batch_sizes.defined() && batch_sizes.dim() == 1 && batch_sizes.numel() > 0 &&
                  batch_sizes.is_cpu() && batch_sizes.dtype() == kLong,
              op, ": expected batch_sizes to be a non-empty 1-D int64 CPU tensor");
  const int64_t* bs = batch_sizes.data_ptr<int64_t>();
  std::vector<int64_t> batch(bs, bs + batch_sizes.numel());
  int64_t total = 0;
  for (size_t t = 0; t < batch.size(); ++t) {
    BRASA_CHECK(batch[t] > 0 && (t == 0 || batch[t] <= batch[t - 1]), op,
                ": expected positive, non-increasing batch_sizes, got ", batch_sizes.sizes(),
                " with ", batch[t], " at step ", t);
    total += batch[t];
  }
  BRASA_CHECK(total == data.size(0), op, ": the batch sizes add up to ", total,
              " steps but the data has ", data.size(0));
  return run_layers(op, data, batch, std::move(initial), params, has_biases, num_layers, dropout,
                    train, bidirectional, step, extra);
}

// The steps of each kind of layer.
Step simple_step(const char* op, bool use_relu) {
  return [op, use_relu](const Tensor& x, std::vector<Tensor>& state, const std::vector<Tensor>& w) {
    state[0] = simple_cell(op, x, state[0], w[0], w[1], w[2], w[3], use_relu);
    return state[0];
  };
}
Step gru_step() {
  return [](const Tensor& x, std::vector<Tensor>& state, const std::vector<Tensor>& w) {
    state[0] = gru_cell(x, state[0], w[0], w[1], w[2], w[3]);
    return state[0];
  };
}
Step lstm_step(bool projected) {
  return [projected](const Tensor& x, std::vector<Tensor>& state, const std::vector<Tensor>& w) {
    if (projected)
      std::tie(state[0], state[1]) =
          lstm_update(x, state[0], state[1], w[0], w[1], w[2], w[3], w[4]);
    else
      std::tie(state[0], state[1]) = lstm_cell(x, {state[0], state[1]}, w[0], w[1], w[2], w[3]);
    return state[0];
  };
}
// As libtorch: h0 narrower than c0 means projections, one w_hr per layer and direction.
bool lstm_projected(const char* op, TensorList hx) {
  BRASA_CHECK(hx.size() == 2, op, ": expected hx to hold h0 and c0, got ", hx.size(), " tensors");
  return hx[0].defined() && hx[1].defined() && hx[0].dim() == 3 && hx[1].dim() == 3 &&
         hx[0].size(2) != hx[1].size(2);
}
}  // namespace

std::tuple<Tensor, Tensor, Tensor> lstm(const Tensor& input, TensorList hx, TensorList params,
                                        bool has_biases, int64_t num_layers, double dropout,
                                        bool train, bool bidirectional, bool batch_first) {
  const bool projected = lstm_projected("lstm", hx);
  auto [out, fin] =
      run_sequence("lstm", input, {hx[0], hx[1]}, params, has_biases, num_layers, dropout, train,
                   bidirectional, batch_first, lstm_step(projected), projected ? 1 : 0);
  return {out, fin[0], fin[1]};
}
std::tuple<Tensor, Tensor, Tensor> lstm(const Tensor& data, const Tensor& batch_sizes,
                                        TensorList hx, TensorList params, bool has_biases,
                                        int64_t num_layers, double dropout, bool train,
                                        bool bidirectional) {
  const bool projected = lstm_projected("lstm", hx);
  auto [out, fin] =
      run_packed("lstm", data, batch_sizes, {hx[0], hx[1]}, params, has_biases, num_layers, dropout,
                 train, bidirectional, lstm_step(projected), projected ? 1 : 0);
  return {out, fin[0], fin[1]};
}
std::tuple<Tensor, Tensor> gru(const Tensor& input, const Tensor& hx, TensorList params,
                               bool has_biases, int64_t num_layers, double dropout, bool train,
                               bool bidirectional, bool batch_first) {
  auto [out, fin] = run_sequence("gru", input, {hx}, params, has_biases, num_layers, dropout, train,
                                 bidirectional, batch_first, gru_step());
  return {out, fin[0]};
}
std::tuple<Tensor, Tensor> gru(const Tensor& data, const Tensor& batch_sizes, const Tensor& hx,
                               TensorList params, bool has_biases, int64_t num_layers,
                               double dropout, bool train, bool bidirectional) {
  auto [out, fin] = run_packed("gru", data, batch_sizes, {hx}, params, has_biases, num_layers,
                               dropout, train, bidirectional, gru_step());
  return {out, fin[0]};
}
namespace {
// The Elman RNN (tanh or relu) on a padded or a packed batch.
std::tuple<Tensor, Tensor> simple_sequence(const char* op, bool use_relu, const Tensor& input,
                                           const Tensor& hx, TensorList params, bool has_biases,
                                           int64_t num_layers, double dropout, bool train,
                                           bool bidirectional, bool batch_first) {
  auto [out, fin] = run_sequence(op, input, {hx}, params, has_biases, num_layers, dropout, train,
                                 bidirectional, batch_first, simple_step(op, use_relu));
  return {out, fin[0]};
}
std::tuple<Tensor, Tensor> simple_packed(const char* op, bool use_relu, const Tensor& data,
                                         const Tensor& batch_sizes, const Tensor& hx,
                                         TensorList params, bool has_biases, int64_t num_layers,
                                         double dropout, bool train, bool bidirectional) {
  auto [out, fin] = run_packed(op, data, batch_sizes, {hx}, params, has_biases, num_layers, dropout,
                               train, bidirectional, simple_step(op, use_relu));
  return {out, fin[0]};
}
}  // namespace

std::tuple<Tensor, Tensor> rnn_tanh(const Tensor& input, const Tensor& hx, TensorList params,
                                    bool has_biases, int64_t num_layers, double dropout, bool train,
                                    bool bidirectional, bool batch_first) {
  return simple_sequence("rnn_tanh", false, input, hx, params, has_biases, num_layers, dropout,
                         train, bidirectional, batch_first);
}
std::tuple<Tensor, Tensor> rnn_tanh(const Tensor& data, const Tensor& batch_sizes, const Tensor& hx,
                                    TensorList params, bool has_biases, int64_t num_layers,
                                    double dropout, bool train, bool bidirectional) {
  return simple_packed("rnn_tanh", false, data, batch_sizes, hx, params, has_biases, num_layers,
                       dropout, train, bidirectional);
}
std::tuple<Tensor, Tensor> rnn_relu(const Tensor& input, const Tensor& hx, TensorList params,
                                    bool has_biases, int64_t num_layers, double dropout, bool train,
                                    bool bidirectional, bool batch_first) {
  return simple_sequence("rnn_relu", true, input, hx, params, has_biases, num_layers, dropout,
                         train, bidirectional, batch_first);
}
std::tuple<Tensor, Tensor> rnn_relu(const Tensor& data, const Tensor& batch_sizes, const Tensor& hx,
                                    TensorList params, bool has_biases, int64_t num_layers,
                                    double dropout, bool train, bool bidirectional) {
  return simple_packed("rnn_relu", true, data, batch_sizes, hx, params, has_biases, num_layers,
                       dropout, train, bidirectional);
}

namespace nn {

std::tuple<Tensor, Tensor> RNNImpl::forward(const Tensor& input, const Tensor& hx) {
  const auto& o = options;
  const Tensor h0 = initial_states(input, {hx})[0];
  return o.nonlinearity_ == kReLU
             ? rnn_relu(input, h0, flat_weights(), o.bias_, o.num_layers_, o.dropout_,
                        is_training(), o.bidirectional_, o.batch_first_)
             : rnn_tanh(input, h0, flat_weights(), o.bias_, o.num_layers_, o.dropout_,
                        is_training(), o.bidirectional_, o.batch_first_);
}

std::tuple<utils::rnn::PackedSequence, Tensor> RNNImpl::forward_with_packed_input(
    const utils::rnn::PackedSequence& packed, Tensor hx) {
  const auto& o = options;
  const Tensor h0 = initial_states(packed, {hx})[0];
  auto [out, h] = o.nonlinearity_ == kReLU
                      ? rnn_relu(packed.data(), packed.batch_sizes(), h0, flat_weights(), o.bias_,
                                 o.num_layers_, o.dropout_, is_training(), o.bidirectional_)
                      : rnn_tanh(packed.data(), packed.batch_sizes(), h0, flat_weights(), o.bias_,
                                 o.num_layers_, o.dropout_, is_training(), o.bidirectional_);
  return {utils::rnn::PackedSequence(out, packed.batch_sizes(), packed.sorted_indices(),
                                     packed.unsorted_indices()),
          in_original_order(h, packed)};
}

RNNCellBaseImpl::RNNCellBaseImpl(std::string name, int64_t in, int64_t H, bool bias, int64_t gates)
    : Module(std::move(name)),
      input_size(in),
      hidden_size(H),
      weight_ih(register_parameter("weight_ih", empty({gates * H, in}))),
      weight_hh(register_parameter("weight_hh", empty({gates * H, H}))),
      bias_ih(register_parameter("bias_ih", bias ? empty({gates * H}) : Tensor())),
      bias_hh(register_parameter("bias_hh", bias ? empty({gates * H}) : Tensor())) {
  BRASA_CHECK(in > 0 && H > 0, this->name(), ": input_size and hidden_size must be positive, got ",
              in, " and ", H);
  const double bound = 1.0 / std::sqrt(static_cast<double>(H));
  for (Tensor* t : {&weight_ih, &weight_hh, &bias_ih, &bias_hh})
    if (t->defined()) init::uniform_(*t, -bound, bound);
}

void RNNCellBaseImpl::pretty_print(std::ostream& os) const {
  os << "torch::nn::" << name() << "(" << input_size << ", " << hidden_size;
  if (!bias_ih.defined()) os << ", bias=false";
  os << extra_repr_ << ")";
}

Tensor RNNCellBaseImpl::batched_input(const Tensor& input, bool& unbatched) const {
  BRASA_CHECK(input.defined() && (input.dim() == 1 || input.dim() == 2), name(),
              ": Expected input to be 1D or 2D, got ", input.defined() ? input.dim() : int64_t(-1),
              "D instead");
  BRASA_CHECK(input.size(-1) == input_size, name(), ": input has inconsistent input_size: got ",
              input.size(-1), " expected ", input_size);
  unbatched = input.dim() == 1;
  return unbatched ? input.unsqueeze(0) : input;
}

Tensor RNNCellBaseImpl::initial_state(const Tensor& hx, const Tensor& input, bool unbatched) const {
  if (!hx.defined()) return zeros({input.size(0), hidden_size}, input.options());
  Tensor h = unbatched ? hx.unsqueeze(0) : hx;
  BRASA_CHECK(h.dim() == 2 && h.size(0) == input.size(0) && h.size(1) == hidden_size, name(),
              ": expected hidden state [", input.size(0), ", ", hidden_size, "]",
              unbatched ? " (unbatched: [" + std::to_string(hidden_size) + "])" : "", ", got ",
              hx.sizes());
  return h;
}

RNNCellImpl::RNNCellImpl(const RNNCellOptions& o)
    : Cloneable("RNNCell", o.input_size_, o.hidden_size_, o.bias_, 1), options(o) {
  BRASA_CHECK(o.nonlinearity_ != kGELU,
              "RNNCell: nonlinearity must be torch::kTanh or torch::kReLU");
  if (o.nonlinearity_ == kReLU) extra_repr_ = ", nonlinearity=kReLU";
}
Tensor RNNCellImpl::forward(const Tensor& input, const Tensor& hx) {
  bool unbatched = false;
  Tensor x = batched_input(input, unbatched);
  Tensor h = initial_state(hx, x, unbatched);
  Tensor out = options.nonlinearity_ == kReLU
                   ? rnn_relu_cell(x, h, weight_ih, weight_hh, bias_ih, bias_hh)
                   : rnn_tanh_cell(x, h, weight_ih, weight_hh, bias_ih, bias_hh);
  return unbatched ? out.squeeze(0) : out;
}

LSTMCellImpl::LSTMCellImpl(const LSTMCellOptions& o)
    : Cloneable("LSTMCell", o.input_size_, o.hidden_size_, o.bias_, 4), options(o) {}
std::tuple<Tensor, Tensor> LSTMCellImpl::forward(const Tensor& input,
                                                 std::optional<std::tuple<Tensor, Tensor>> hx) {
  bool unbatched = false;
  Tensor x = batched_input(input, unbatched);
  Tensor h = initial_state(hx ? std::get<0>(*hx) : Tensor(), x, unbatched);
  Tensor c = initial_state(hx ? std::get<1>(*hx) : Tensor(), x, unbatched);
  auto [h1, c1] = lstm_cell(x, {h, c}, weight_ih, weight_hh, bias_ih, bias_hh);
  if (unbatched) return {h1.squeeze(0), c1.squeeze(0)};
  return {h1, c1};
}

GRUCellImpl::GRUCellImpl(const GRUCellOptions& o)
    : Cloneable("GRUCell", o.input_size_, o.hidden_size_, o.bias_, 3), options(o) {}
Tensor GRUCellImpl::forward(const Tensor& input, const Tensor& hx) {
  bool unbatched = false;
  Tensor x = batched_input(input, unbatched);
  Tensor h = initial_state(hx, x, unbatched);
  Tensor out = gru_cell(x, h, weight_ih, weight_hh, bias_ih, bias_hh);
  return unbatched ? out.squeeze(0) : out;
}

}  // namespace nn
}  // namespace brasa
