#include <brasa/autograd/record.h>
#include <brasa/ops/conv.h>
#include <brasa/ops/copy.h>
#include <brasa/ops/kernel_table.h>
#include <brasa/ops/kernels/conv.h>
#include <brasa/ops/factory.h>
#include <brasa/ops/linalg.h>
#include <brasa/ops/reduction.h>
#include <brasa/ops/shape.h>

namespace brasa {
namespace {

using detail::ConvGeometry;

int64_t pick(IntArrayRef v, size_t i, const char* what) {
  BRASA_CHECK(v.size() == 1 || v.size() == 2, "conv2d: expected ", what,
              " to have 1 or 2 values, got ", v);
  return v.size() == 1 ? v[0] : v[i];
}

ConvGeometry geometry(const Tensor& x, const Tensor& w, const Tensor& b, IntArrayRef stride,
                      IntArrayRef padding, IntArrayRef dilation, int64_t groups) {
  BRASA_CHECK(x.dim() == 4, "conv2d: expected a 4-D input [N, C, H, W], got ", x.dim(),
              "-D of shape ", x.sizes());
  BRASA_CHECK(w.dim() == 4, "conv2d: expected a 4-D weight [out, in / groups, kh, kw], got shape ",
              w.sizes());
  BRASA_CHECK(x.dtype() == w.dtype(), "conv2d: input (", x.dtype(), ") and weight (", w.dtype(),
              ") must have the same dtype");
  BRASA_CHECK(x.device() == w.device() && (!b.defined() || b.device() == x.device()),
              "conv2d: expected the input (", x.device(), "), weight (", w.device(), ") and bias (",
              b.defined() ? b.device() : x.device(), ") on the same device");
  BRASA_CHECK(x.dtype() == kFloat || x.dtype() == kDouble ||
                  (x.is_cuda() && (x.dtype() == kHalf || x.dtype() == kBFloat16)),
              "conv2d: only float32 and float64 are supported (and float16 and bfloat16 on "
              "CUDA), got ",
              x.dtype(), " on ", x.device());
  BRASA_CHECK(groups > 0 && x.size(1) % groups == 0 && w.size(0) % groups == 0,
              "conv2d: groups=", groups, " must divide the input channels (", x.size(1),
              ") and the output channels (", w.size(0), ")");
  BRASA_CHECK(w.size(1) * groups == x.size(1), "conv2d: expected input ", x.sizes(), " to have ",
              w.size(1) * groups, " channels (weight ", w.sizes(), ", groups=", groups,
              "), but got ", x.size(1), " channels instead");
  if (b.defined())
    BRASA_CHECK(b.dim() == 1 && b.size(0) == w.size(0), "conv2d: expected bias of shape [",
                w.size(0), "], got ", b.sizes());
  ConvGeometry g{x.size(0),
                 x.size(1),
                 x.size(2),
                 x.size(3),
                 w.size(0),
                 w.size(2),
                 w.size(3),
                 pick(stride, 0, "stride"),
                 pick(stride, 1, "stride"),
                 pick(padding, 0, "padding"),
                 pick(padding, 1, "padding"),
                 pick(dilation, 0, "dilation"),
                 pick(dilation, 1, "dilation"),
                 0,
                 0,
                 groups};
  BRASA_CHECK(g.sh > 0 && g.sw > 0 && g.dh > 0 && g.dw > 0 && g.ph >= 0 && g.pw >= 0,
              "conv2d: stride and dilation must be positive and padding non-negative");
  g.OH = (g.H + 2 * g.ph - g.dh * (g.kh - 1) - 1) / g.sh + 1;
  g.OW = (g.W + 2 * g.pw - g.dw * (g.kw - 1) - 1) / g.sw + 1;
  BRASA_CHECK(g.OH > 0 && g.OW > 0, "conv2d: kernel (", g.kh, "x", g.kw, ", dilation ", g.dh, "x",
              g.dw, ") is larger than the padded input (", g.H + 2 * g.ph, "x", g.W + 2 * g.pw,
              ")");
  return g;
}

// All samples' columns in one matrix [C*kh*kw, N*L] (sample n at columns
// n*L ..), so that each product below is one large GEMM instead of N small ones.
Tensor columns(const Tensor& xc, const ConvGeometry& g) {
  const int64_t NL = g.N * g.L();
  Tensor cols = empty({g.C * g.kh * g.kw, NL}, xc.options());
  kernel<Im2ColKernel>(xc.device())(xc, cols, g);
  return cols;
}

// [O, N, L] <-> [N, O, L]: the GEMMs work channel-major, tensors are batch-major.
Tensor channel_major(const Tensor& t, const ConvGeometry& g) {
  return t.contiguous()
      .view({g.N, g.O, g.L()})
      .permute({1, 0, 2})
      .contiguous()
      .view({g.O, g.N * g.L()});
}

// `cols` receives the column matrix (the weight gradient reuses it).
Tensor conv_forward(const Tensor& x, const Tensor& w, const Tensor& b, const ConvGeometry& g,
                    Tensor& cols) {
  cols = columns(x.contiguous(), g);
  const int64_t og = g.O / g.groups, K = g.K();
  Tensor wmat = w.contiguous().view({g.groups, og, K});
  Tensor prod = empty({g.O, g.N * g.L()}, x.options());
  for (int64_t gr = 0; gr < g.groups; ++gr) {
    Tensor dst = prod.narrow(0, gr * og, og);
    mm_out(dst, wmat.select(0, gr), cols.narrow(0, gr * K, K));
  }
  if (b.defined()) prod.add_(b.view({g.O, 1}));
  return prod.view({g.O, g.N, g.L()}).permute({1, 0, 2}).contiguous().view({g.N, g.O, g.OH, g.OW});
}

// grad_input: W^T @ grad_out for all samples at once, folded back with
// col2im. gom is grad_out channel-major ([O, N L], channel_major), made once
// for both gradients.
Tensor conv_input_grad(const Tensor& gom, const Tensor& w, const ConvGeometry& g) {
  const int64_t og = g.O / g.groups, K = g.K(), NL = g.N * g.L();
  Tensor wt = w.contiguous().view({g.groups, og, K});
  Tensor cols = empty({g.groups * K, NL}, gom.options());
  for (int64_t gr = 0; gr < g.groups; ++gr) {
    Tensor dst = cols.narrow(0, gr * K, K);
    mm_out(dst, wt.select(0, gr).t(), gom.narrow(0, gr * og, og));
  }
  Tensor gx = empty({g.N, g.C, g.H, g.W}, gom.options());
  kernel<Col2ImKernel>(gx.device())(cols, gx, g);
  return gx;
}

// grad_weight: grad_out @ columns^T over the whole batch, one GEMM per
// group; gom as for conv_input_grad.
Tensor conv_weight_grad(const Tensor& gom, const Tensor& cols, const ConvGeometry& g,
                        IntArrayRef wshape) {
  const int64_t og = g.O / g.groups, K = g.K();
  Tensor gw = empty({g.groups, og, K}, gom.options());
  for (int64_t gr = 0; gr < g.groups; ++gr) {
    Tensor dst = gw.select(0, gr);
    mm_out(dst, gom.narrow(0, gr * og, og), cols.narrow(0, gr * K, K).t());
  }
  return gw.view(wshape);
}

// A device's direct forward (oneDNN on the CPU) serves inference and frozen
// layers always, and training where the device's rule picks its direct
// gradients too (on the CPU by shape: see conv_kernels.cpp). Otherwise
// training keeps the im2col forward, whose column matrix the weight gradient
// reuses.
bool trains_directly(const Tensor& x, const ConvGeometry& g) {
  if (!has_kernel<ConvBackwardKernel>(x.device())) return false;
  return !has_kernel<ConvDirectTrainingKernel>(x.device()) ||
         kernel<ConvDirectTrainingKernel>(x.device())(x, g);
}

// The weight gradient of the conv2d of geometry g from its input
// [N, C, H, W] and grad_out [N, O, OH, OW], as convolutions that autograd
// records (create_graph): per group, the input's channels convolved with
// grad_out's, the batch being the summed dim, stride and dilation swapped;
// the result's first kh x kw taps are the weight's.
Tensor weight_grad_by_conv(const Tensor& input, const Tensor& grad_out, const ConvGeometry& g) {
  const int64_t Cg = g.C / g.groups, Og = g.O / g.groups;
  std::vector<Tensor> per_group;
  for (int64_t gr = 0; gr < g.groups; ++gr) {
    Tensor x = input.narrow(1, gr * Cg, Cg).transpose(0, 1);
    Tensor dy = grad_out.narrow(1, gr * Og, Og).transpose(0, 1);
    Tensor taps = conv2d(x, dy, Tensor(), {g.dh, g.dw}, {g.ph, g.pw}, {g.sh, g.sw}, 1);
    per_group.push_back(taps.narrow(2, 0, g.kh).narrow(3, 0, g.kw).transpose(0, 1));
  }
  return g.groups == 1 ? per_group[0] : cat(per_group, 0);
}

// conv2d's gradients as recorded ops, for a backward that is itself
// differentiated (create_graph=true: gradient penalties, Hessian-vector
// products): the input's by conv_transpose2d, the weight's by convolutions.
autograd::variable_list conv2d_grads_recorded(const Tensor& grad_out, const Tensor& input,
                                              const Tensor& weight, const ConvGeometry& g,
                                              autograd::FormulaNode& n) {
  autograd::variable_list d(3);
  if (n.needs(0)) {
    const int64_t oph = g.H - ((g.OH - 1) * g.sh - 2 * g.ph + g.dh * (g.kh - 1) + 1),
                  opw = g.W - ((g.OW - 1) * g.sw - 2 * g.pw + g.dw * (g.kw - 1) + 1);
    d[0] = conv_transpose2d(grad_out, weight, Tensor(), {g.sh, g.sw}, {g.ph, g.pw}, {oph, opw},
                            g.groups, {g.dh, g.dw});
  }
  if (n.needs(1)) d[1] = weight_grad_by_conv(input, grad_out, g);
  if (n.needs(2)) d[2] = sum(grad_out, {0, 2, 3});
  return d;
}

const autograd::BackwardName kConvBackward("ConvolutionBackward0"),
    kConvTransposeBackward("ConvolutionBackward1");

// A 1x1 convolution of stride 1 without padding is, per sample, the
// product W [O, C] @ x[n] [C, H W] on NCHW as it lies: no column matrix
// (im2col's is x itself, but its GEMM runs channel-major and the output is
// permuted back) and no relayout to oneDNN's NHWC and back (18% of a
// PointNet step). On maps of at least this many pixels: below, the
// per-sample products become matrix-vector ones (a squeeze-and-excitation
// block's [N, C, 1, 1]). Zen 5, 1 thread, fwd+bwd against libtorch: a
// PointNet step 1.18 -> 0.82x, SqueezeNet's 1.05 -> 0.95x, 1x1 layers at
// 16x16 0.97 -> 0.66x and 512->10 at 6x6 0.83 -> 0.56x; at 3x3 pixels the
// two paths measured the same.
constexpr int64_t kPointwiseMinPixels = 32;

bool pointwise(const Tensor& x, const ConvGeometry& g) {
  // (A training path forced by set_conv_training_path or
  // BRASA_CONV_TRAINING is kept.)
  return x.is_cpu() && conv_training_path() == ConvTrainingPath::kAuto && g.groups == 1 &&
         g.kh == 1 && g.kw == 1 && g.sh == 1 && g.sw == 1 && g.ph == 0 && g.pw == 0 &&
         g.L() >= kPointwiseMinPixels;
}

Tensor pointwise_forward(const Tensor& x, const Tensor& w, const Tensor& b, const ConvGeometry& g) {
  Tensor xs = x.contiguous().view({g.N, g.C, g.L()}), wm = w.contiguous().view({g.O, g.C});
  Tensor out = empty({g.N, g.O, g.OH, g.OW}, x.options());
  Tensor ys = out.view({g.N, g.O, g.L()});
  for (int64_t n = 0; n < g.N; ++n) {
    Tensor dst = ys.select(0, n);
    mm_out(dst, wm, xs.select(0, n));
  }
  if (b.defined()) ys.add_(b.view({1, g.O, 1}));
  return out;
}

// The input's gradient W^T @ gy[n] per sample; the weight's the sum over
// samples of gy[n] @ x[n]^T, accumulated by the GEMMs themselves.
std::pair<Tensor, Tensor> pointwise_grads(const Tensor& grad_out, const Tensor& x, const Tensor& w,
                                          const ConvGeometry& g, bool want_input,
                                          bool want_weight) {
  Tensor gys = grad_out.contiguous().view({g.N, g.O, g.L()});
  Tensor wm = w.contiguous().view({g.O, g.C});
  Tensor gx, gw;
  if (want_input) {
    gx = empty({g.N, g.C, g.H, g.W}, grad_out.options());
    Tensor gxs = gx.view({g.N, g.C, g.L()});
    for (int64_t n = 0; n < g.N; ++n) {
      Tensor dst = gxs.select(0, n);
      mm_out(dst, wm.t(), gys.select(0, n));
    }
  }
  if (want_weight) {
    Tensor xs = x.contiguous().view({g.N, g.C, g.L()});
    gw = zeros({g.O, g.C}, grad_out.options());
    for (int64_t n = 0; n < g.N; ++n)
      detail::addmm_inplace(gw, gys.select(0, n), xs.select(0, n).t(), 1, 1);
    gw = gw.view({g.O, g.C, 1, 1});
  }
  return {gx, gw};
}

}  // namespace

Tensor conv2d(const Tensor& input, const Tensor& weight, const Tensor& bias, IntArrayRef stride,
              IntArrayRef padding, IntArrayRef dilation, int64_t groups) {
  ConvGeometry g = geometry(input, weight, bias, stride, padding, dilation, groups);
  autograd::Recorder r(kConvBackward, input, weight, bias);
  if (pointwise(input, g)) {
    Tensor out = pointwise_forward(input, weight, bias, g);
    if (r)
      r.save(weight, input)
          .finish(out, [g](autograd::FormulaNode& n, const autograd::variable_list& gr) {
            if (is_grad_enabled())
              return conv2d_grads_recorded(gr[0], n.saved(1), n.saved(0), g, n);
            autograd::variable_list d(3);
            if (n.needs(0) || n.needs(1)) {
              auto [gx, gw] =
                  pointwise_grads(gr[0], n.saved(1), n.saved(0), g, n.needs(0), n.needs(1));
              d[0] = gx;
              d[1] = gw;
            }
            if (n.needs(2)) d[2] = sum(gr[0], {0, 2, 3});
            return d;
          });
    return out;
  }
  // A device with direct gradients (cuDNN; oneDNN where its rule says so)
  // runs the forward directly too.
  const bool direct = trains_directly(input, g);
  Tensor cols, out;
  if (!(r && r.node().needs(1)) || direct)
    out = kernel<ConvForwardKernel>(input.device())(input, weight, bias, g);
  if (!out.defined()) out = conv_forward(input, weight, bias, g, cols);
  if (r) {
    DimVector wshape(weight.sizes().begin(), weight.sizes().end());
    const bool direct_grads = direct && !cols.defined();
    // The weight gradient needs the forward's column matrix (released with
    // the other saved tensors after backward), or the input for direct ones.
    // The input is kept for a create_graph backward too (read only there,
    // so an in-place change of it after the forward fails only there).
    r.save(weight, r.node().needs(1) ? (direct_grads ? input : cols) : Tensor(), input);
    r.finish(out, [g, wshape, direct_grads](autograd::FormulaNode& n,
                                            const autograd::variable_list& gr) {
      // The gradient kernels are not recorded: a backward that is itself
      // differentiated takes recorded ops.
      if (is_grad_enabled()) return conv2d_grads_recorded(gr[0], n.saved(2), n.saved(0), g, n);
      autograd::variable_list d(3);
      if (direct_grads && (n.needs(0) || n.needs(1))) {
        auto [gx, gw] = kernel<ConvBackwardKernel>(gr[0].device())(gr[0], n.saved(1), n.saved(0), g,
                                                                   n.needs(0), n.needs(1));
        d[0] = gx;
        d[1] = gw;
      } else {
        const Tensor gom = n.needs(0) || n.needs(1) ? channel_major(gr[0], g) : Tensor();
        if (n.needs(0)) d[0] = conv_input_grad(gom, n.saved(0), g);
        if (n.needs(1)) d[1] = conv_weight_grad(gom, n.saved(1), g, wshape);
      }
      if (n.needs(2)) d[2] = sum(gr[0], {0, 2, 3});
      return d;
    });
  }
  return out;
}

// conv_transpose2d(x) is conv2d's input gradient applied to x: the same
// three kernels run with the roles of the two spaces swapped.
Tensor conv_transpose2d(const Tensor& input, const Tensor& weight, const Tensor& bias,
                        IntArrayRef stride, IntArrayRef padding, IntArrayRef output_padding,
                        int64_t groups, IntArrayRef dilation) {
  BRASA_CHECK(input.dim() == 4 && weight.dim() == 4,
              "conv_transpose2d: expected 4-D input and weight, got ", input.sizes(), " and ",
              weight.sizes());
  BRASA_CHECK(groups > 0 && input.size(1) == weight.size(0) && weight.size(0) % groups == 0,
              "conv_transpose2d: input channels (", input.size(1), ") must equal weight.size(0) (",
              weight.size(0), ") and be divisible by groups (", groups, ")");
  const int64_t sh = pick(stride, 0, "stride"), sw = pick(stride, 1, "stride");
  const int64_t ph = pick(padding, 0, "padding"), pw = pick(padding, 1, "padding");
  const int64_t oph = pick(output_padding, 0, "output_padding"),
                opw = pick(output_padding, 1, "output_padding");
  const int64_t dh = pick(dilation, 0, "dilation"), dw = pick(dilation, 1, "dilation");
  BRASA_CHECK(
      oph < std::max(sh, dh) && opw < std::max(sw, dw),
      "conv_transpose2d: output_padding must be smaller than either stride or dilation, got ",
      output_padding);
  const int64_t kh = weight.size(2), kw = weight.size(3), Cout = weight.size(1) * groups;
  const int64_t OH = (input.size(2) - 1) * sh - 2 * ph + dh * (kh - 1) + oph + 1;
  const int64_t OW = (input.size(3) - 1) * sw - 2 * pw + dw * (kw - 1) + opw + 1;
  BRASA_CHECK(OH > 0 && OW > 0, "conv_transpose2d: output size ", OH, "x", OW, " is not positive");
  if (bias.defined())
    BRASA_CHECK(bias.dim() == 1 && bias.size(0) == Cout,
                "conv_transpose2d: expected bias of shape [", Cout, "], got ", bias.sizes());
  // The conv2d that maps the output space [N, Cout, OH, OW] back to the input.
  Tensor y_like = empty({input.size(0), Cout, OH, OW}, input.options());
  ConvGeometry g = geometry(y_like, weight, Tensor(), {sh, sw}, {ph, pw}, {dh, dw}, groups);
  BRASA_CHECK(g.OH == input.size(2) && g.OW == input.size(3),
              "conv_transpose2d: inconsistent geometry");
  autograd::Recorder r(kConvTransposeBackward, input, weight, bias);
  Tensor out = conv_input_grad(channel_major(input, g), weight, g);
  if (bias.defined()) out.add_(bias.view({1, Cout, 1, 1}));
  if (r) {
    DimVector wshape(weight.sizes().begin(), weight.sizes().end());
    r.save(input, weight)
        .finish(out, [g, wshape](autograd::FormulaNode& n, const autograd::variable_list& gr) {
          if (is_grad_enabled()) {  // create_graph: recorded ops (see conv2d_grads_recorded)
            autograd::variable_list d(3);
            if (n.needs(0))
              d[0] = conv2d(gr[0], n.saved(1), Tensor(), {g.sh, g.sw}, {g.ph, g.pw}, {g.dh, g.dw},
                            g.groups);
            // (g maps the output space back to the input's: gr[0] is its input)
            if (n.needs(1)) d[1] = weight_grad_by_conv(gr[0], n.saved(0), g);
            if (n.needs(2)) d[2] = sum(gr[0], {0, 2, 3});
            return d;
          }
          autograd::variable_list d(3);
          // Where conv2d of g trains directly (oneDNN's rule on the CPU), its
          // forward and weight-gradient kernels are this op's two gradients.
          if ((n.needs(0) || n.needs(1)) && gr[0].is_cpu() && trains_directly(gr[0], g)) {
            const Device device = gr[0].device();
            if (n.needs(0))
              d[0] = kernel<ConvForwardKernel>(device)(gr[0], n.saved(1), Tensor(), g);
            if (n.needs(1))
              d[1] =
                  kernel<ConvBackwardKernel>(device)(n.saved(0), gr[0], n.saved(1), g, false, true)
                      .second;
          }
          Tensor cols;
          if ((n.needs(0) && !d[0].defined()) || (n.needs(1) && !d[1].defined())) {
            Tensor gx = conv_forward(gr[0], n.saved(1), Tensor(), g, cols);
            if (n.needs(0) && !d[0].defined()) d[0] = gx;
          }
          if (n.needs(1) && !d[1].defined())
            d[1] = conv_weight_grad(channel_major(n.saved(0), g), cols, g, wshape);
          if (n.needs(2)) d[2] = sum(gr[0], {0, 2, 3});
          return d;
        });
  }
  return out;
}

Tensor conv1d(const Tensor& input, const Tensor& weight, const Tensor& bias, IntArrayRef stride,
              IntArrayRef padding, IntArrayRef dilation, int64_t groups) {
  BRASA_CHECK(input.dim() == 3, "conv1d: expected a 3-D input [N, C, L], got shape ",
              input.sizes());
  BRASA_CHECK(weight.dim() == 3, "conv1d: expected a 3-D weight [out, in / groups, k], got shape ",
              weight.sizes());
  BRASA_CHECK(stride.size() == 1 && padding.size() == 1 && dilation.size() == 1,
              "conv1d: stride, padding and dilation take one value each");
  Tensor out = conv2d(input.unsqueeze(2), weight.unsqueeze(2), bias, {1, stride[0]},
                      {0, padding[0]}, {1, dilation[0]}, groups);
  return out.squeeze(2);
}

Tensor conv_transpose1d(const Tensor& input, const Tensor& weight, const Tensor& bias,
                        IntArrayRef stride, IntArrayRef padding, IntArrayRef output_padding,
                        int64_t groups, IntArrayRef dilation) {
  BRASA_CHECK(input.dim() == 3, "conv_transpose1d: expected a 3-D input [N, C, L], got shape ",
              input.sizes());
  BRASA_CHECK(weight.dim() == 3,
              "conv_transpose1d: expected a 3-D weight [in, out / groups, k], got shape ",
              weight.sizes());
  BRASA_CHECK(stride.size() == 1 && padding.size() == 1 && output_padding.size() == 1 &&
                  dilation.size() == 1,
              "conv_transpose1d: stride, padding, output_padding and dilation take one value each");
  Tensor out = conv_transpose2d(input.unsqueeze(2), weight.unsqueeze(2), bias, {1, stride[0]},
                                {0, padding[0]}, {0, output_padding[0]}, groups, {1, dilation[0]});
  return out.squeeze(2);
}

namespace detail {

DepthTaps::Range DepthTaps::range(int64_t kd) const {
  const int64_t shift = kd * dilation - padding;  // input depth of od = 0
  const int64_t first = shift >= 0 ? 0 : (-shift + stride - 1) / stride;
  const int64_t top = D - 1 - shift;  // od * stride <= top
  const int64_t last = top < 0 ? -1 : std::min(OD - 1, top / stride);
  const int64_t count = std::max<int64_t>(0, last - first + 1);
  return {first, count, first * stride + shift};
}

static const autograd::BackwardName kDepthTapsBackward("DepthTapsBackward0"),
    kDepthTapsSumBackward("DepthTapsSumBackward0");

// One copy per tap; the planes that read padding are zeroed in place.
Tensor depth_taps(const Tensor& x, const DepthTaps& t) {
  autograd::Recorder r(kDepthTapsBackward, x);
  const int64_t N = x.size(0), C = x.size(1), H = x.size(3), W = x.size(4);
  Tensor planes = empty({N, t.OD, C, t.KD, H, W}, x.options());
  {
    NoGradGuard no_grad;
    for (int64_t kd = 0; kd < t.KD; ++kd) {
      const DepthTaps::Range g = t.range(kd);
      Tensor tap = planes.select(3, kd);  // [N, OD, C, H, W]
      if (g.count > 0)
        tap.narrow(1, g.first, g.count)
            .copy_(x.slice(2, g.from, g.from + (g.count - 1) * t.stride + 1, t.stride)
                       .transpose(1, 2));
      if (g.first > 0) tap.narrow(1, 0, g.first).zero_();
      if (g.first + g.count < t.OD)
        tap.narrow(1, g.first + g.count, t.OD - g.first - g.count).zero_();
    }
  }
  if (r)
    r.finish(planes, [t, shape = DimVector(x.sizes().begin(), x.sizes().end())](
                         autograd::FormulaNode&, const autograd::variable_list& g) {
      return autograd::variable_list{depth_taps_sum(g[0], t, shape)};
    });
  return planes;
}

// Each tap's planes added in place onto the depths it reads.
Tensor depth_taps_sum(const Tensor& planes, const DepthTaps& t, IntArrayRef input_shape) {
  autograd::Recorder r(kDepthTapsSumBackward, planes);
  Tensor x = zeros(input_shape, planes.options());
  {
    NoGradGuard no_grad;
    for (int64_t kd = 0; kd < t.KD; ++kd) {
      const DepthTaps::Range g = t.range(kd);
      if (g.count == 0) continue;
      x.slice(2, g.from, g.from + (g.count - 1) * t.stride + 1, t.stride)
          .add_(planes.select(3, kd).narrow(1, g.first, g.count).transpose(1, 2));
    }
  }
  if (r)
    r.finish(x, [t](autograd::FormulaNode&, const autograd::variable_list& g) {
      return autograd::variable_list{depth_taps(g[0], t)};
    });
  return x;
}

}  // namespace detail

// conv3d as one conv2d: output depth od reads input depths
// od * sd - pd + kd * dd for kd < KD. Those KD slices are stacked next to each
// channel ([N * OD, C * KD, H, W], channel c * KD + kd) by one gather
// (depth_taps; a stack of slice views, its permuted copy and a padding cat
// cost 1.25x libtorch's time on a strided layer), which matches the
// weight's memory order viewed as [O, C / groups * KD, KH, KW], groups
// included.
Tensor conv3d(const Tensor& input, const Tensor& weight, const Tensor& bias, IntArrayRef stride,
              IntArrayRef padding, IntArrayRef dilation, int64_t groups) {
  BRASA_CHECK(input.dim() == 5, "conv3d: expected a 5-D input [N, C, D, H, W], got shape ",
              input.sizes());
  BRASA_CHECK(weight.dim() == 5,
              "conv3d: expected a 5-D weight [out, in / groups, kd, kh, kw], got shape ",
              weight.sizes());
  auto three = [](IntArrayRef v, const char* what) {
    BRASA_CHECK(v.size() == 1 || v.size() == 3, "conv3d: expected ", what,
                " to have 1 or 3 values, got ", v);
    return v.size() == 1 ? DimVector{v[0], v[0], v[0]} : DimVector(v.begin(), v.end());
  };
  const DimVector s = three(stride, "stride"), p = three(padding, "padding"),
                  d = three(dilation, "dilation");
  BRASA_CHECK(s[0] > 0 && d[0] > 0 && p[0] >= 0,
              "conv3d: stride and dilation must be positive and padding non-negative");
  BRASA_CHECK(groups > 0 && weight.size(1) * groups == input.size(1), "conv3d: expected input ",
              input.sizes(), " to have ", weight.size(1) * groups, " channels (weight ",
              weight.sizes(), ", groups=", groups, "), but got ", input.size(1),
              " channels instead");
  const int64_t N = input.size(0), C = input.size(1), D = input.size(2), KD = weight.size(2),
                O = weight.size(0);
  const int64_t OD = (D + 2 * p[0] - d[0] * (KD - 1) - 1) / s[0] + 1;
  BRASA_CHECK(OD > 0, "conv3d: kernel depth ", KD, " (dilation ", d[0],
              ") is larger than the padded input depth ", D + 2 * p[0]);
  Tensor planes = detail::depth_taps(input, detail::DepthTaps{D, OD, KD, s[0], p[0], d[0]})
                      .view({N * OD, C * KD, input.size(3), input.size(4)});
  Tensor w2 = weight.reshape({O, weight.size(1) * KD, weight.size(3), weight.size(4)});
  Tensor y = conv2d(planes, w2, bias, {s[1], s[2]}, {p[1], p[2]}, {d[1], d[2]},
                    groups);  // [N * OD, O, OH, OW]
  return y.view({N, OD, O, y.size(2), y.size(3)}).permute({0, 2, 1, 3, 4}).contiguous();
}

// The padding of each spatial dim for "same" / "valid"; `extra` gets the
// element that an odd total leaves over (it goes at the end of the dim).
static void named_padding(const char* op, ConvPadding mode, IntArrayRef stride,
                          IntArrayRef dilation, const Tensor& weight, DimVector& pad,
                          DimVector& extra) {
  const int64_t dims = weight.dim() - 2;
  pad = DimVector(static_cast<size_t>(dims), 0);
  extra = DimVector(static_cast<size_t>(dims), 0);
  if (mode == ConvPadding::Valid) return;
  for (int64_t s : stride)
    BRASA_CHECK(s == 1, op, ": padding=\"same\" needs stride 1, got stride ", stride);
  for (int64_t d = 0; d < dims; ++d) {
    const int64_t dil = dilation.size() == 1 ? dilation[0] : dilation[static_cast<size_t>(d)];
    const int64_t total = dil * (weight.size(2 + d) - 1);
    pad[static_cast<size_t>(d)] = total / 2;
    extra[static_cast<size_t>(d)] = total % 2;
  }
}

// Appends `extra[d]` zeros at the end of each spatial dim d of x.
static Tensor pad_end(const Tensor& x, const DimVector& extra) {
  Tensor out = x;
  for (size_t d = 0; d < extra.size(); ++d) {
    if (!extra[d]) continue;
    DimVector shape(out.sizes().begin(), out.sizes().end());
    shape[2 + d] = extra[d];
    out = cat({out, zeros(shape, out.options())}, static_cast<int64_t>(2 + d));
  }
  return out;
}

// The named-padding form of a `dims`-d convolution: numeric padding plus the
// odd element of kSame appended at the end of the input.
using NumericConv = Tensor (*)(const Tensor&, const Tensor&, const Tensor&, IntArrayRef,
                               IntArrayRef, IntArrayRef, int64_t);
static Tensor conv_named_padding(const char* op, int64_t dims, NumericConv conv,
                                 const Tensor& input, const Tensor& weight, const Tensor& bias,
                                 IntArrayRef stride, ConvPadding padding, IntArrayRef dilation,
                                 int64_t groups) {
  BRASA_CHECK(weight.dim() == dims + 2, op, ": expected a ", dims + 2, "-D weight, got shape ",
              weight.sizes());
  DimVector pad, extra;
  named_padding(op, padding, stride, dilation, weight, pad, extra);
  return conv(pad_end(input, extra), weight, bias, stride, pad, dilation, groups);
}

Tensor conv1d(const Tensor& input, const Tensor& weight, const Tensor& bias, IntArrayRef stride,
              ConvPadding padding, IntArrayRef dilation, int64_t groups) {
  return conv_named_padding("conv1d", 1, conv1d, input, weight, bias, stride, padding, dilation,
                            groups);
}
Tensor conv2d(const Tensor& input, const Tensor& weight, const Tensor& bias, IntArrayRef stride,
              ConvPadding padding, IntArrayRef dilation, int64_t groups) {
  return conv_named_padding("conv2d", 2, conv2d, input, weight, bias, stride, padding, dilation,
                            groups);
}
Tensor conv3d(const Tensor& input, const Tensor& weight, const Tensor& bias, IntArrayRef stride,
              ConvPadding padding, IntArrayRef dilation, int64_t groups) {
  return conv_named_padding("conv3d", 3, conv3d, input, weight, bias, stride, padding, dilation,
                            groups);
}

}  // namespace brasa
