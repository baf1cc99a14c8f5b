#include <brasa/nn/init.h>
#include <brasa/nn/recurrent_cells.h>
#include <brasa/ops/factory.h>
#include <brasa/ops/unary.h>

#include <cmath>

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
}  // namespace

std::tuple<Tensor, Tensor> lstm_cell(const Tensor& input, TensorList hx, const Tensor& w_ih,
                                     const Tensor& w_hh, const Tensor& b_ih, const Tensor& b_hh) {
  BRASA_CHECK(hx.size() == 2, "lstm_cell: expected hx to hold h and c, got ", hx.size(),
              " tensors");
  check_cell("lstm_cell", input, hx[0], w_ih, w_hh, 4);
  BRASA_CHECK(hx[1].defined() && hx[1].sizes() == hx[0].sizes(),
              "lstm_cell: expected c shaped like h ", hx[0].sizes());
  auto g = (F::linear(input, w_ih, b_ih) + F::linear(hx[0], w_hh, b_hh)).chunk(4, 1);
  // input, forget, cell and output gates
  Tensor c = sigmoid(g[1]) * hx[1] + sigmoid(g[0]) * tanh(g[2]);
  Tensor h = sigmoid(g[3]) * tanh(c);
  return {h, c};
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

namespace nn {

Tensor RNNImpl::cell(const Tensor& x, std::vector<Tensor>& state, int64_t l, int64_t d) {
  const bool use_relu = options.nonlinearity_ == kReLU;
  state[0] = simple_cell("RNN", x, state[0], param("weight_ih", l, d), param("weight_hh", l, d),
                         param("bias_ih", l, d), param("bias_hh", l, d), use_relu);
  return state[0];
}
std::tuple<Tensor, Tensor> RNNImpl::forward(const Tensor& input, const Tensor& hx) {
  std::vector<Tensor> fin;
  Tensor out = run(input, {hx}, fin, 1);
  return {out, fin[0]};
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
