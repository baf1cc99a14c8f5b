#include <brasa/autograd/grad_mode.h>
#include <brasa/nn/dropout_modules.h>
#include <brasa/ops/factory.h>
#include <brasa/ops/random.h>

#include <cmath>

namespace brasa {

namespace {
// A 0/1 keep mask shaped like x, or like x's [N, C] with ones elsewhere when
// whole channels are dropped (the first dim is the channel one when unbatched).
Tensor keep_mask(const Tensor& x, double keep, bool per_channel, bool batched) {
  NoGradGuard ng;
  std::vector<int64_t> shape(x.sizes().begin(), x.sizes().end());
  if (per_channel)
    for (size_t d = batched ? 2 : 1; d < shape.size(); ++d) shape[d] = 1;
  Tensor mask = empty(shape, x.options());
  brasa::detail::dropout_mask_(mask, keep);  // 1 / keep or 0
  return (mask > 0).to(x.scalar_type());
}
void check_p(const char* op, double p) {
  BRASA_CHECK(p >= 0 && p <= 1, op, ": dropout probability has to be between 0 and 1, but got ", p);
}
Tensor alpha_dropout_impl(const char* op, const Tensor& x, double p, bool training,
                          bool per_channel) {
  BRASA_CHECK(x.defined(), op, ": expected a defined tensor");
  check_p(op, p);
  if (!training || p == 0 || x.numel() == 0) return x;
  if (per_channel)
    BRASA_CHECK(x.dim() >= 2, op, ": expected at least a 2-D input [N, C, ...], got shape ",
                x.sizes());
  if (p == 1) return x * zeros_like(x);
  // SELU's negative saturation value, -scale * alpha.
  const double alpha_p = -1.7580993408473766;
  const double a = 1.0 / std::sqrt((alpha_p * alpha_p * p + 1) * (1 - p));
  const double b = -a * alpha_p * p;
  Tensor keep = keep_mask(x, 1 - p, per_channel, true);
  // kept: a * x + b; dropped: a * alpha_p + b
  return (x * keep + (1 - keep) * alpha_p) * a + b;
}
}  // namespace

Tensor alpha_dropout(const Tensor& input, double p, bool train) {
  return alpha_dropout_impl("alpha_dropout", input, p, train, false);
}
Tensor feature_alpha_dropout(const Tensor& input, double p, bool train) {
  return alpha_dropout_impl("feature_alpha_dropout", input, p, train, true);
}

namespace nn::functional {

Tensor dropout3d(const Tensor& x, double p, bool training) {
  BRASA_CHECK(x.defined(), "dropout3d: expected a defined tensor");
  check_p("dropout3d", p);
  BRASA_CHECK(x.dim() == 4 || x.dim() == 5,
              "dropout3d: expected a 4-D (unbatched) or 5-D (batched) input, got shape ",
              x.sizes());
  if (!training || p == 0) return x;
  if (p == 1) return x * zeros_like(x);
  return x * (keep_mask(x, 1 - p, true, x.dim() == 5) * (1.0 / (1 - p)));
}
Tensor dropout3d(const Tensor& x, const Dropout3dFuncOptions& o) {
  return detail::apply_inplace(x, dropout3d(x, o.p_, o.training_), o.inplace_);
}
Tensor alpha_dropout(const Tensor& x, double p, bool training) {
  return brasa::alpha_dropout(x, p, training);
}
Tensor alpha_dropout(const Tensor& x, const AlphaDropoutFuncOptions& o) {
  return detail::apply_inplace(x, brasa::alpha_dropout(x, o.p_, o.training_), o.inplace_);
}
Tensor feature_alpha_dropout(const Tensor& x, double p, bool training) {
  return brasa::feature_alpha_dropout(x, p, training);
}
Tensor feature_alpha_dropout(const Tensor& x, const FeatureAlphaDropoutFuncOptions& o) {
  return detail::apply_inplace(x, brasa::feature_alpha_dropout(x, o.p_, o.training_), o.inplace_);
}
Tensor dropout3d_module(const Tensor& x, const DropoutFuncOptions& o) { return dropout3d(x, o); }
Tensor alpha_dropout_module(const Tensor& x, const DropoutFuncOptions& o) {
  return alpha_dropout(x,
                       AlphaDropoutFuncOptions().p(o.p_).training(o.training_).inplace(o.inplace_));
}
Tensor feature_alpha_dropout_module(const Tensor& x, const DropoutFuncOptions& o) {
  return feature_alpha_dropout(
      x, FeatureAlphaDropoutFuncOptions().p(o.p_).training(o.training_).inplace(o.inplace_));
}

}  // namespace nn::functional
}  // namespace brasa
