#include <brasa/autograd/grad_mode.h>
#include <brasa/autograd/record.h>
#include <brasa/nn/window_modules.h>
#include <brasa/ops/factory.h>
#include <brasa/ops/indexing.h>
#include <brasa/ops/kernels/conv.h>
#include <brasa/ops/kernels/normalization.h>
#include <brasa/ops/kernel_table.h>
#include <brasa/ops/reduction.h>
#include <brasa/ops/shape.h>
#include <brasa/ops/unary.h>

#include <cmath>

namespace brasa::nn {

namespace {
// The values of an ExpandingArray (it converts to an IntArrayRef over its own storage).
IntArrayRef ints(const auto& expanding) { return expanding; }
void check_positive(const char* op, const char* what, IntArrayRef v) {
  for (int64_t x : v)
    BRASA_CHECK(x > 0, op, ": ", what, " should be greater than zero, but got ", what, ": ", v);
}
// The 0-based output size of a window of extent `span` sliding by `stride`
// over `size` (padding included); an error when it does not fit.
int64_t windows(const char* op, int64_t size, int64_t span, int64_t stride) {
  BRASA_CHECK(size >= span, op, ": the calculated shape of the array of sliding blocks is ",
              "non-positive (padded input size ", size, " < window extent ", span, ")");
  return (size - span) / stride + 1;
}
}  // namespace

namespace functional {

static const autograd::BackwardName kIm2ColBackward("Im2ColBackward0");

// unfold of [N, C, H, W] by the convolutions' im2col kernel ([C kh kw, N L]
// columns, moved batch-major); its gradient is col2im's sum (fold, the
// differentiable composite, under create_graph). The views-and-copy
// composite ran 2x libtorch's time fwd+bwd, its backward an overlapping
// scatter.
Tensor unfold_by_columns(const Tensor& x, const UnfoldFuncOptions& o, IntArrayRef k, IntArrayRef d,
                         IntArrayRef p, IntArrayRef s) {
  const int64_t N = x.size(0), C = x.size(1), H = x.size(2), W = x.size(3);
  const int64_t oh = windows("unfold", H + 2 * p[0], d[0] * (k[0] - 1) + 1, s[0]),
                ow = windows("unfold", W + 2 * p[1], d[1] * (k[1] - 1) + 1, s[1]);
  const brasa::detail::ConvGeometry g{N,    C,    H,    W,    0,    k[0], k[1], s[0],
                                      s[1], p[0], p[1], d[0], d[1], oh,   ow,   1};
  const int64_t K = g.K(), L = g.L();
  autograd::Recorder r(kIm2ColBackward, x);
  Tensor out;
  {
    NoGradGuard no_grad;
    Tensor cols = empty({K, N * L}, x.options());
    kernel<Im2ColKernel>(x.device())(x.contiguous(), cols, g);
    out = cols.view({K, N, L}).transpose(0, 1).contiguous();
  }
  if (r)
    r.finish(out, [g, o, H, W](autograd::FormulaNode&, const autograd::variable_list& grads) {
      if (is_grad_enabled())
        return autograd::variable_list{fold(grads[0], FoldFuncOptions({H, W}, o.kernel_size_)
                                                          .dilation(o.dilation_)
                                                          .padding(o.padding_)
                                                          .stride(o.stride_))};
      Tensor cols = grads[0].transpose(0, 1).contiguous().view({g.K(), g.N * g.L()});
      Tensor gx = zeros({g.N, g.C, g.H, g.W}, grads[0].options());
      kernel<Col2ImKernel>(gx.device())(cols, gx, g);
      return autograd::variable_list{gx};
    });
  return out;
}

Tensor unfold(const Tensor& input, const UnfoldFuncOptions& o) {
  BRASA_CHECK(input.defined() && (input.dim() == 3 || input.dim() == 4),
              "unfold: expected 3D or 4D (batch mode) tensor, got shape ",
              input.defined() ? input.sizes() : IntArrayRef{});
  IntArrayRef k = ints(o.kernel_size_), d = ints(o.dilation_), p = ints(o.padding_),
              s = ints(o.stride_);
  check_positive("unfold", "kernel_size", k);
  check_positive("unfold", "dilation", d);
  check_positive("unfold", "stride", s);
  const bool batched = input.dim() == 4;
  Tensor x = batched ? input : input.unsqueeze(0);
  const int64_t N = x.size(0), C = x.size(1);
  if ((x.dtype() == kFloat || x.dtype() == kDouble) && p[0] >= 0 && p[1] >= 0 &&
      has_kernel<Im2ColKernel>(x.device()) && has_kernel<Col2ImKernel>(x.device())) {
    Tensor out = unfold_by_columns(x, o, k, d, p, s);
    return batched ? out : out.squeeze(0);
  }
  Tensor padded = pad(x, {p[1], p[1], p[0], p[0]}, 0.0);
  const int64_t eh = d[0] * (k[0] - 1) + 1, ew = d[1] * (k[1] - 1) + 1;
  const int64_t oh = windows("unfold", padded.size(2), eh, s[0]),
                ow = windows("unfold", padded.size(3), ew, s[1]);
  // [N, C, oh, ow, eh, ew] windows, every dilation-th element: [N, C, oh, ow, kh, kw].
  Tensor w = padded.unfold(2, eh, s[0]).unfold(3, ew, s[1]);
  w = w.slice(4, 0, eh, d[0]).slice(5, 0, ew, d[1]);
  Tensor out = w.permute({0, 1, 4, 5, 2, 3}).reshape({N, C * k[0] * k[1], oh * ow});
  return batched ? out : out.squeeze(0);
}

Tensor fold(const Tensor& input, const FoldFuncOptions& o) {
  BRASA_CHECK(input.defined() && (input.dim() == 2 || input.dim() == 3),
              "fold: expected 2D or 3D (batch mode) input tensor, got shape ",
              input.defined() ? input.sizes() : IntArrayRef{});
  IntArrayRef out_size = ints(o.output_size_), k = ints(o.kernel_size_), d = ints(o.dilation_),
              p = ints(o.padding_), s = ints(o.stride_);
  check_positive("fold", "kernel_size", k);
  check_positive("fold", "dilation", d);
  check_positive("fold", "stride", s);
  const bool batched = input.dim() == 3;
  Tensor x = batched ? input : input.unsqueeze(0);
  const int64_t N = x.size(0), K = k[0] * k[1], L = x.size(2);
  BRASA_CHECK(x.size(1) % K == 0, "fold: expected size of input's dimension 1 to be divisible by ",
              "the product of kernel_size, but got input.size(1)=", x.size(1),
              " and kernel_size=", k);
  const int64_t C = x.size(1) / K, Hp = out_size[0] + 2 * p[0], Wp = out_size[1] + 2 * p[1];
  const int64_t oh = windows("fold", Hp, d[0] * (k[0] - 1) + 1, s[0]),
                ow = windows("fold", Wp, d[1] * (k[1] - 1) + 1, s[1]);
  BRASA_CHECK(L == oh * ow, "fold: expected input's dimension 2 to match the calculated number ",
              "of sliding blocks ", oh, " * ", ow, " = ", oh * ow, ", but got input.size(2)=", L);
  // Where each (kernel row, kernel column, block) value lands in a padded channel plane.
  std::vector<int64_t> target;
  target.reserve(K * L);
  for (int64_t ki = 0; ki < k[0]; ++ki)
    for (int64_t kj = 0; kj < k[1]; ++kj)
      for (int64_t l = 0; l < L; ++l)
        target.push_back((l / ow * s[0] + ki * d[0]) * Wp + (l % ow * s[1] + kj * d[1]));
  Tensor index = tensor(target).to(x.device());
  Tensor planes =
      index_add(zeros({N, C, Hp * Wp}, x.options()), 2, index, x.reshape({N, C, K * L}));
  Tensor out = planes.view({N, C, Hp, Wp})
                   .slice(2, p[0], p[0] + out_size[0])
                   .slice(3, p[1], p[1] + out_size[1]);
  return batched ? out : out.squeeze(0);
}

namespace {
// (sign(avg) * relu(|avg|) * window size)^(1/p) of the average of x^p per window.
Tensor lp_from_average(const Tensor& avg, double norm_type, int64_t window) {
  return (avg.sign() * avg.abs().relu() * static_cast<double>(window)).pow(1.0 / norm_type);
}
}  // namespace

Tensor lp_pool1d(const Tensor& input, const LPPool1dFuncOptions& o) {
  BRASA_CHECK(input.defined(), "lp_pool1d: expected a defined tensor");
  const int64_t k = (*o.kernel_size_)[0];
  Tensor avg = avg_pool1d(input.pow(o.norm_type_),
                          AvgPool1dFuncOptions(k).stride((*o.stride_)[0]).ceil_mode(o.ceil_mode_));
  return lp_from_average(avg, o.norm_type_, k);
}
Tensor lp_pool2d(const Tensor& input, const LPPool2dFuncOptions& o) {
  BRASA_CHECK(input.defined(), "lp_pool2d: expected a defined tensor");
  const auto& k = *o.kernel_size_;
  const auto& s = *o.stride_;
  Tensor avg =
      avg_pool2d(input.pow(o.norm_type_),
                 AvgPool2dFuncOptions({k[0], k[1]}).stride({s[0], s[1]}).ceil_mode(o.ceil_mode_));
  return lp_from_average(avg, o.norm_type_, k[0] * k[1]);
}

namespace {
template <size_t D>
Tensor max_unpool(const char* op, const Tensor& input, const Tensor& indices,
                  const MaxUnpoolFuncOptions<D>& o) {
  const int64_t dims = static_cast<int64_t>(D);
  BRASA_CHECK(
      input.defined() && indices.defined() && (input.dim() == dims + 1 || input.dim() == dims + 2),
      op, ": expected a ", dims + 1, "D or ", dims + 2, "D input, got shape ",
      input.defined() ? input.sizes() : IntArrayRef{});
  BRASA_CHECK(indices.scalar_type() == kLong && indices.sizes() == input.sizes(), op,
              ": expected int64 indices of the input's shape ", input.sizes(), ", got ",
              indices.scalar_type(), " of shape ", indices.sizes());
  const bool batched = input.dim() == dims + 2;
  Tensor x = batched ? input : input.unsqueeze(0), idx = batched ? indices : indices.unsqueeze(0);
  const int64_t N = x.size(0), C = x.size(1);
  std::vector<int64_t> out(D);
  if (o.output_size_) {
    std::vector<int64_t> given = *o.output_size_;
    if (given.size() == D + 2 || given.size() == D + 1)
      given.erase(given.begin(), given.end() - dims);
    BRASA_CHECK(given.size() == D, op, ": output_size must have ", D, " (or ", D + 2,
                ") elements, got ", given.size());
    out = given;
  } else {
    for (size_t i = 0; i < D; ++i)
      out[i] = (x.size(2 + i) - 1) * (*o.stride_)[i] - 2 * (*o.padding_)[i] + (*o.kernel_size_)[i];
  }
  int64_t plane = 1;
  for (int64_t v : out) plane *= v;
  Tensor flat_idx = idx.reshape({N, C, -1});
  if (flat_idx.numel() > 0) {
    const int64_t lo = flat_idx.min().item<int64_t>(), hi = flat_idx.max().item<int64_t>();
    BRASA_CHECK(lo >= 0 && hi < plane, op, ": found an invalid max index ", lo < 0 ? lo : hi,
                " (output volumes are of size ", IntArrayRef(out), ")");
  }
  Tensor y = scatter(zeros({N, C, plane}, x.options()), 2, flat_idx, x.reshape({N, C, -1}));
  std::vector<int64_t> shape{N, C};
  shape.insert(shape.end(), out.begin(), out.end());
  y = y.view(shape);
  return batched ? y : y.squeeze(0);
}
}  // namespace

Tensor max_unpool1d(const Tensor& input, const Tensor& indices, const MaxUnpool1dFuncOptions& o) {
  return max_unpool<1>("max_unpool1d", input, indices, o);
}
Tensor max_unpool2d(const Tensor& input, const Tensor& indices, const MaxUnpool2dFuncOptions& o) {
  return max_unpool<2>("max_unpool2d", input, indices, o);
}
Tensor max_unpool3d(const Tensor& input, const Tensor& indices, const MaxUnpool3dFuncOptions& o) {
  return max_unpool<3>("max_unpool3d", input, indices, o);
}

namespace {
// The sum of t over each channel's window along dim 1: from `lead` channels
// before it to `trail` after it, zeros past the ends (differentiable ops).
Tensor channel_window_sum(const Tensor& t, int64_t lead, int64_t trail) {
  std::vector<int64_t> before(t.sizes().begin(), t.sizes().end()), after = before;
  before[1] = lead;
  after[1] = trail;
  Tensor padded = cat({zeros(before, t.options()), t, zeros(after, t.options())}, 1);
  return padded.unfold(1, lead + trail + 1, 1).sum({-1});
}

// scale = k + alpha * (the mean of the squares over each window of `size`
// channels): the composite other devices and dtypes use.
Tensor lrn_scale(const Tensor& x, const LocalResponseNormFuncOptions& o) {
  return channel_window_sum(x * x, o.size_ / 2, (o.size_ - 1) / 2) * (o.alpha_ / o.size_) + o.k_;
}

// The gradient as differentiable ops (double backward): grad * scale^-beta
// - 2 alpha beta / size * x * (grad * y / scale summed over the windows
// holding each channel).
Tensor lrn_backward_composite(const Tensor& grad, const Tensor& x,
                              const LocalResponseNormFuncOptions& o) {
  Tensor scale = lrn_scale(x, o);
  Tensor inv = scale.pow(-o.beta_);
  Tensor t = grad * x * inv / scale;
  Tensor spread = channel_window_sum(t, (o.size_ - 1) / 2, o.size_ / 2);
  return grad * inv - x * spread * (2 * o.alpha_ * o.beta_ / o.size_);
}

const autograd::BackwardName kLocalResponseNormBackward("LocalResponseNormBackward0");
}  // namespace

// A fused kernel on devices that have one (the CPU: one pass forward, two
// backward; 6x the composite's speed on AlexNet's layers), the composite
// elsewhere.
Tensor local_response_norm(const Tensor& input, const LocalResponseNormFuncOptions& o) {
  BRASA_CHECK(input.defined() && input.dim() >= 3,
              "Expected 3D or higher dimensionality input (got ", input.defined() ? input.dim() : 0,
              " dimensions)");
  BRASA_CHECK(o.size_ > 0, "local_response_norm: size must be positive, got ", o.size_);
  if (input.numel() == 0) return input;
  const bool fused = (input.dtype() == kFloat || input.dtype() == kDouble) &&
                     has_kernel<LocalResponseNormKernel>(input.device()) &&
                     has_kernel<LocalResponseNormBackwardKernel>(input.device());
  if (!fused) return input / lrn_scale(input, o).pow(o.beta_);
  const int64_t N = input.size(0), C = input.size(1), S = input.numel() / (N * C);
  autograd::Recorder r(kLocalResponseNormBackward, input);
  Tensor x, y, scale, power;
  {
    NoGradGuard ng;
    x = input.contiguous();
    y = empty(x.sizes(), x.options());
    scale = empty(x.sizes(), x.options());
    power = empty(x.sizes(), x.options());
    kernel<LocalResponseNormKernel>(x.device())(x, y, scale, power, N, C, S, o.size_, o.alpha_,
                                                o.beta_, o.k_);
  }
  if (r)
    r.save(x, scale, power)
        .finish(y, [o, N, C, S](autograd::FormulaNode& n, const autograd::variable_list& g) {
          Tensor xs = n.saved(0);
          if (is_grad_enabled())  // create_graph: a backward that is itself differentiable
            return autograd::variable_list{lrn_backward_composite(g[0], xs, o)};
          Tensor gx = empty(xs.sizes(), xs.options());
          kernel<LocalResponseNormBackwardKernel>(xs.device())(g[0].contiguous(), xs, n.saved(1),
                                                               n.saved(2), gx, N, C, S, o.size_,
                                                               o.alpha_, o.beta_);
          return autograd::variable_list{gx};
        });
  return y;
}

}  // namespace functional

namespace {
const char* boolean(bool b) { return b ? "true" : "false"; }
}  // namespace

void UnfoldImpl::pretty_print(std::ostream& os) const {
  os << "torch::nn::Unfold(kernel_size=" << ints(options.kernel_size_)
     << ", dilation=" << ints(options.dilation_) << ", padding=" << ints(options.padding_)
     << ", stride=" << ints(options.stride_) << ")";
}
void FoldImpl::pretty_print(std::ostream& os) const {
  os << "torch::nn::Fold(output_size=" << ints(options.output_size_)
     << ", kernel_size=" << ints(options.kernel_size_) << ", dilation=" << ints(options.dilation_)
     << ", padding=" << ints(options.padding_) << ", stride=" << ints(options.stride_) << ")";
}
void LPPool1dImpl::pretty_print(std::ostream& os) const {
  os << "torch::nn::LPPool1d(norm_type=" << options.norm_type_
     << ", kernel_size=" << ints(options.kernel_size_) << ", stride=" << ints(options.stride_)
     << ", ceil_mode=" << boolean(options.ceil_mode_) << ")";
}
void LPPool2dImpl::pretty_print(std::ostream& os) const {
  os << "torch::nn::LPPool2d(norm_type=" << options.norm_type_
     << ", kernel_size=" << ints(options.kernel_size_) << ", stride=" << ints(options.stride_)
     << ", ceil_mode=" << boolean(options.ceil_mode_) << ")";
}
void LocalResponseNormImpl::pretty_print(std::ostream& os) const {
  os << "torch::nn::LocalResponseNorm(" << options.size_ << ", alpha=" << options.alpha_
     << ", beta=" << options.beta_ << ", k=" << options.k_ << ")";
}
void CrossMapLRN2dImpl::pretty_print(std::ostream& os) const {
  os << "torch::nn::CrossMapLRN2d(" << options.size_ << ", alpha=" << options.alpha_
     << ", beta=" << options.beta_ << ", k=" << options.k_ << ")";
}
#define BRASA_PRINT_UNPOOL(D)                                                                    \
  void MaxUnpool##D##dImpl::pretty_print(std::ostream& os) const {                               \
    os << "torch::nn::MaxUnpool" #D "d(kernel_size=" << ints(options.kernel_size_)               \
       << ", stride=" << ints(options.stride_) << ", padding=" << ints(options.padding_) << ")"; \
  }
BRASA_PRINT_UNPOOL(1)
BRASA_PRINT_UNPOOL(2)
BRASA_PRINT_UNPOOL(3)
#undef BRASA_PRINT_UNPOOL

}  // namespace brasa::nn
