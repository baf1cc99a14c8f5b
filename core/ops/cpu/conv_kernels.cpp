// CPU kernels of 2-D convolution: im2col and its adjoint col2im (the GEMMs
// go through mm), and oneDNN's float32 forward where this build has it.
#include <brasa/ops/conv.h>
#include <brasa/ops/cpu/conv_onednn.h>
#include <brasa/ops/cpu/register.h>
#include <brasa/ops/factory.h>
#include <brasa/ops/kernels/conv.h>
#include <brasa/util/parallel.h>

#include <algorithm>

namespace brasa::cpu {
namespace {

using detail::ConvGeometry;

// Output columns ow whose input column ow*sw - pw + j*dw lies inside [0, W).
inline void valid_range(int64_t j, const ConvGeometry& g, int64_t& lo, int64_t& hi) {
  const int64_t off = j * g.dw - g.pw;  // iw = ow * sw + off
  lo = off >= 0 ? 0 : std::min<int64_t>(g.OW, (-off + g.sw - 1) / g.sw);
  hi = g.W - off <= 0 ? 0 : std::min<int64_t>(g.OW, (g.W - off + g.sw - 1) / g.sw);
  if (hi < lo) hi = lo;
}

// col[c*kh*kw + i*kw + j][oh*OW + ow] = x[c][oh*sh - ph + i*dh][ow*sw - pw + j*dw] (0 outside),
// for channels c in [c0, c1). Rows of `col` are `row_stride` apart (N*L when
// all samples share one matrix).
template <class T>
void im2col(const T* x, T* col, const ConvGeometry& g, int64_t row_stride, int64_t c0, int64_t c1) {
  const int64_t L = row_stride;
  for (int64_t c = c0; c < c1; ++c)
    for (int64_t i = 0; i < g.kh; ++i)
      for (int64_t j = 0; j < g.kw; ++j) {
        T* row = col + ((c * g.kh + i) * g.kw + j) * L;
        const T* plane = x + c * g.H * g.W;
        int64_t lo, hi;
        valid_range(j, g, lo, hi);
        const int64_t off = j * g.dw - g.pw;
        for (int64_t oh = 0; oh < g.OH; ++oh) {
          const int64_t ih = oh * g.sh - g.ph + i * g.dh;
          T* out = row + oh * g.OW;
          if (ih < 0 || ih >= g.H) {
            std::fill(out, out + g.OW, T(0));
            continue;
          }
          const T* in = plane + ih * g.W + off;
          std::fill(out, out + lo, T(0));
          // Rows are short (OW values): a plain loop beats a memmove call.
          if (g.sw == 1)
            for (int64_t ow = lo; ow < hi; ++ow) out[ow] = in[ow];
          else
            for (int64_t ow = lo; ow < hi; ++ow) out[ow] = in[ow * g.sw];
          std::fill(out + hi, out + g.OW, T(0));
        }
      }
}

// The adjoint of im2col: adds every column entry back into its input
// position, for the planes of channels [c0, c1) (which it clears first).
template <class T>
void col2im(const T* col, T* x, const ConvGeometry& g, int64_t row_stride, int64_t c0, int64_t c1) {
  const int64_t L = row_stride;
  std::fill(x + c0 * g.H * g.W, x + c1 * g.H * g.W, T(0));
  for (int64_t c = c0; c < c1; ++c)
    for (int64_t i = 0; i < g.kh; ++i)
      for (int64_t j = 0; j < g.kw; ++j) {
        const T* row = col + ((c * g.kh + i) * g.kw + j) * L;
        T* plane = x + c * g.H * g.W;
        int64_t lo, hi;
        valid_range(j, g, lo, hi);
        const int64_t off = j * g.dw - g.pw;
        for (int64_t oh = 0; oh < g.OH; ++oh) {
          const int64_t ih = oh * g.sh - g.ph + i * g.dh;
          if (ih < 0 || ih >= g.H) continue;
          const T* in = row + oh * g.OW;
          T* out = plane + ih * g.W + off;
          if (g.sw == 1)
            for (int64_t ow = lo; ow < hi; ++ow) out[ow] += in[ow];
          else
            for (int64_t ow = lo; ow < hi; ++ow) out[ow * g.sw] += in[ow];
        }
      }
}

// f(n, c0, c1) over every sample n and run of its channels [c0, c1), in
// parallel by (sample, channel) with about 16K values a task: a batch of
// one (the weight gradient of a create_graph backward convolves with the
// batch as channels) still spreads over the threads.
template <class F>
void for_each_sample_channels(const ConvGeometry& g, const F& f) {
  const int64_t per_channel = std::max<int64_t>(1, g.kh * g.kw * g.L());
  const int64_t grain = std::max<int64_t>(1, 16384 / per_channel);
  parallel_for(0, g.N * g.C, grain, [&](int64_t b, int64_t e) {
    while (b < e) {
      const int64_t n = b / g.C, c0 = b % g.C, c1 = std::min(g.C, c0 + (e - b));
      f(n, c0, c1);
      b += c1 - c0;
    }
  });
}

// Calls f(T{}) with T = float or double (the dtypes geometry() accepts).
template <class F>
void float_or_double(ScalarType t, F&& f) {
  if (t == kFloat)
    f(float{});
  else
    f(double{});
}

void im2col_cpu(const Tensor& xc, const Tensor& cols, const ConvGeometry& g) {
  const int64_t NL = g.N * g.L();
  float_or_double(xc.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* x = xc.data_ptr<T>();
    T* c = cols.data_ptr<T>();
    const int64_t in_stride = g.C * g.H * g.W;
    for_each_sample_channels(g, [&](int64_t n, int64_t c0, int64_t c1) {
      im2col(x + n * in_stride, c + n * g.L(), g, NL, c0, c1);
    });
  });
}

void col2im_cpu(const Tensor& cols, const Tensor& gx, const ConvGeometry& g) {
  const int64_t NL = g.N * g.L();
  float_or_double(gx.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* c = cols.data_ptr<T>();
    T* out = gx.data_ptr<T>();
    for_each_sample_channels(g, [&](int64_t n, int64_t c0, int64_t c1) {
      col2im(c + n * g.L(), out + n * g.C * g.H * g.W, g, NL, c0, c1);
    });
  });
}

// The rule, from fwd+bwd of each layer of ops_bench's models timed on both
// paths (Intel Xeon with AVX-512, 1 and 2 threads; `ops_bench --only
// conv_layers` with BRASA_CONV_TRAINING=onednn|im2col): oneDNN took
// 0.60-0.87x im2col's time with 3 or more input channels and outputs of 7x7
// or more (ResNet 64->64 3x3 at 32x32, DCGAN 64->128 4x4/2 from 14x14 to
// 7x7, MNIST 10->20 5x5 at 12x12, 3->16 and 16->32 3x3), and 1.2-2.3x with
// one input channel (first layers: 1->10 5x5, 1->64 4x4/2) or tiny outputs
// (DCGAN's 3x3 and 1x1 ones). Grouped and depthwise convolutions follow the
// same rule: oneDNN's kernels for them (jit_dw, brdgmm_dw) took 0.24-0.31x
// im2col's time per group (forward and both gradients, Zen 5, 1 thread:
// depthwise 3x3 on 16x64x32x32 3.2 against 13.3 ms, stride 2 on
// 16x128x16x16 0.41 against 1.9 ms, 4 groups of 16 channels 6.0 against
// 19.6 ms). The forward of those shapes also runs on the blocked
// layouts: there oneDNN's plain-layout forward is its GEMM-based one (13 ms
// against 9 ms for the JIT kernel on the ResNet layer, per DNNL_VERBOSE).
// Grouped convolutions take oneDNN's blocked kernels at any output size: on
// maps under 7x7 its plain-layout forward of them is a GEMM per group (0.41
// ms for a depthwise 3x3 on [16, 96, 3, 3], against 0.013 ms for the JIT
// kernel's input gradient; Zen 5, 1 thread), and im2col is one per group too.
// Outputs of 6x6 joined the blocked side later: SqueezeNet's fire expand
// (64->256 3x3 on [16, 64, 6, 6]) took 1.28-1.37x libtorch's time by im2col
// and 0.99-1.00x by oneDNN's blocked kernels, fwd+bwd, 1 and 2 threads,
// while 3x3 outputs (DCGAN's 128->256 4x4/2) stayed faster by im2col (0.89
// against 1.05 at 2 threads; Emerald Rapids Xeon, `ops_bench --only
// conv_layers`).
// Small outputs whose column matrix is 8x or more the input (3x3 kernels at
// stride 1: 9x; 7x7/2 from 7x7 to 4x4: 16x) joined the blocked side too: a
// random shape sweep found them far behind libtorch by im2col (inference,
// 2 threads, against libtorch: 256->16 7x7/2 at 7x7 5.25 ms against 0.59,
// now 0.54; 128->128 3x3 at 2x2 1.20 ms against 0.17, now 0.10; 256->256
// 3x3 at 3x3 3.35 ms against 0.72, now 1.54; fwd+bwd 1.2-6x faster than
// before, all at or under libtorch's time; Emerald Rapids Xeon).
bool blocked_layouts_pay(const ConvGeometry& g) {
  const bool columns_blow_up = g.kh * g.kw * g.OH * g.OW >= 8 * g.H * g.W;
  return g.groups > 1 || (g.C >= 3 && (g.OH * g.OW >= 36 || columns_blow_up));
}

// Whether oneDNN reads x as it lies, channels last ([N, H, W, C] in memory):
// a text CNN's embeddings transposed to [N, C, 1, L], or a tensor made
// channels last by the user: in the forward and in the gradients each where
// oneDNN has JIT kernels for that layout (on AVX2 some shapes' forward has
// none, while their gradients do). Copying such an input to NCHW and then to
// the kernels' own layout was two transposes of it per convolution in the
// forward and two more in the weight gradient (plus one of the input
// gradient back); its input gradient now comes back channels last, as
// PyTorch's does for channels-last inputs. Kim's text CNN, fwd+bwd against
// libtorch: 0.99 -> 0.87x at 2 threads, 0.98 -> 0.88x at 1 (Emerald Rapids
// Xeon, `ops_bench --only text_cnn`).
bool reads_channels_last(const Tensor& x, const ConvGeometry& g, bool gradients) {
  return g.groups == 1 && blocked_layouts_pay(g) && !x.is_contiguous() &&
         x.is_contiguous(MemoryFormat::ChannelsLast) &&
         detail::onednn_reads_channels_last(g, gradients);
}

// The forward through oneDNN (float32; see onednn_conv_usable).
Tensor direct_forward_cpu(const Tensor& x, const Tensor& w, const Tensor& b,
                          const ConvGeometry& g) {
  if (!detail::onednn_conv_usable(x.dtype())) return Tensor();
  const bool x_nhwc = reads_channels_last(x, g, false);
  // (im2col where oneDNN has only its reference loops for this shape)
  if (!x_nhwc && !detail::onednn_conv_is_fast(g, blocked_layouts_pay(g), false)) return Tensor();
  Tensor xc = x_nhwc ? x : x.contiguous(), wc = w.contiguous();
  Tensor bc = b.defined() ? b.contiguous() : Tensor();
  Tensor y = empty({g.N, g.O, g.OH, g.OW}, x.options());
  detail::onednn_conv_forward(xc.data_ptr<float>(), wc.data_ptr<float>(),
                              bc.defined() ? bc.data_ptr<float>() : nullptr, y.data_ptr<float>(), g,
                              blocked_layouts_pay(g), x_nhwc);
  return y;
}

// Both gradients through oneDNN (float32; chosen by direct_training_cpu).
std::pair<Tensor, Tensor> direct_backward_cpu(const Tensor& grad_out, const Tensor& x,
                                              const Tensor& w, const ConvGeometry& g,
                                              bool want_input, bool want_weight) {
  // x is undefined when no weight gradient was wanted in the forward (then it
  // was not saved; the input gradient then comes back NCHW).
  Tensor go = grad_out.contiguous(), wc = w.contiguous();
  const bool x_nhwc = x.defined() && reads_channels_last(x, g, true);
  Tensor xc = want_weight ? (x_nhwc ? x : x.contiguous()) : Tensor();
  Tensor gx;
  if (want_input && x_nhwc)
    gx = empty_strided({g.N, g.C, g.H, g.W}, {g.H * g.W * g.C, 1, g.W * g.C, g.C},
                       grad_out.options());
  else if (want_input)
    gx = empty({g.N, g.C, g.H, g.W}, grad_out.options());
  Tensor gw = want_weight ? empty(w.sizes(), w.options()) : Tensor();
  if (g.N == 0) {  // an empty batch: no input gradient to fill, a zero weight gradient
    if (want_weight) gw.zero_();
    return {gx, gw};
  }
  detail::onednn_conv_backward(go.data_ptr<float>(), want_weight ? xc.data_ptr<float>() : nullptr,
                               wc.data_ptr<float>(), want_input ? gx.data_ptr<float>() : nullptr,
                               want_weight ? gw.data_ptr<float>() : nullptr, g, x_nhwc);
  return {gx, gw};
}

// Training with few output channels (a classifier's 1x1 head) also goes to
// oneDNN on small maps: each of im2col's GEMMs per sample then has a
// dimension of O (the input gradient's inner one), which OpenBLAS runs far
// below its pace. 512->10 1x1 at 6x6, fwd+bwd: 1.36x libtorch's time by
// im2col, 0.82x by oneDNN (Zen 5, 1 thread); with 96 or 256 outputs at 3x3
// im2col stayed ahead (0.76 against 0.96, 0.87 against 1.07).
bool few_output_channels(const ConvGeometry& g) { return g.groups == 1 && g.C >= 3 && g.O < 16; }

bool direct_training_cpu(const Tensor& x, const ConvGeometry& g) {
  if (!detail::onednn_conv_usable(x.dtype())) return false;
  if (conv_training_path() != ConvTrainingPath::kAuto)
    return conv_training_path() == ConvTrainingPath::kOneDNN;
  // (One rule for both layouts: the NCHW kernels are asked about for a
  // channels-last input too. Their layouts are oneDNN's own choice, which
  // has JIT kernels for every shape seen so far.)
  return (blocked_layouts_pay(g) || few_output_channels(g)) &&
         detail::onednn_conv_is_fast(g, blocked_layouts_pay(g), true);
}

}  // namespace

void register_conv_kernels() {
  register_kernel<Im2ColKernel>(kCPU, im2col_cpu);
  register_kernel<Col2ImKernel>(kCPU, col2im_cpu);
  register_kernel<ConvForwardKernel>(kCPU, direct_forward_cpu);
  if (has_onednn()) {
    register_kernel<ConvBackwardKernel>(kCPU, direct_backward_cpu);
    register_kernel<ConvDirectTrainingKernel>(kCPU, direct_training_cpu);
  }
}

}  // namespace brasa::cpu
