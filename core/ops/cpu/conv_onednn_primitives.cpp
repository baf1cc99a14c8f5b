// The oneDNN primitives of 2-D convolutions, their caches and the layout
// moves (see conv_onednn_primitives.h).
#include <brasa/ops/conv.h>
#include <brasa/ops/cpu/conv_onednn.h>
#include <brasa/ops/cpu/conv_onednn_primitives.h>
#include <brasa/ops/factory.h>
#include <brasa/util/parallel.h>

#ifdef BRASA_WITH_ONEDNN
#include <algorithm>
#include <mutex>
#include <string>
#include <vector>

namespace brasa::detail {

// The batch slice size of for_each_slice's first slice.
int64_t first_slice_size(int64_t N) {
  const int64_t slices = in_parallel_region() ? 1 : std::min<int64_t>(N, get_num_threads());
  return (N + slices - 1) / slices;
}

namespace onednn_conv {
namespace {

// One primitive per geometry, batch slice size, bias presence, algorithm
// (Winograd or direct) and input layout (NCHW, or NHWC: x_nhwc), made on
// first use, with the descriptors its arguments are wrapped in.
struct Key {
  int64_t n, C, H, W, O, kh, kw, sh, sw, ph, pw, dh, dw, groups;
  bool bias, winograd, x_nhwc;
  bool operator==(const Key& o) const {
    return n == o.n && C == o.C && H == o.H && W == o.W && O == o.O && kh == o.kh && kw == o.kw &&
           sh == o.sh && sw == o.sw && ph == o.ph && pw == o.pw && dh == o.dh && dw == o.dw &&
           groups == o.groups && bias == o.bias && winograd == o.winograd && x_nhwc == o.x_nhwc;
  }
};
struct KeyHash {
  size_t operator()(const Key& k) const {
    size_t h = k.bias + 2 * k.winograd + 4 * k.x_nhwc;
    for (int64_t v :
         {k.n, k.C, k.H, k.W, k.O, k.kh, k.kw, k.sh, k.sw, k.ph, k.pw, k.dh, k.dw, k.groups})
      h = h * 1000003u ^ static_cast<size_t>(v);
    return h;
  }
};

// Whether a primitive oneDNN picked is its reference implementation (plain
// loops: on AVX2 for some layouts and shapes, e.g. the input gradient of a
// 16->3 9x9 layer on channels-last data, 40x slower than im2col there).
bool is_reference(const char* impl) { return std::string(impl).rfind("ref", 0) == 0; }
// Whether it is oneDNN's GEMM-based convolution (im2col inside), not a direct one.
bool is_gemm_based(const char* impl) { return std::string(impl).find("gemm") != std::string::npos; }

// The descriptors of one convolution: our plain layouts (the input's and its
// gradient's NHWC where the input is channels last), and "any" for oneDNN to
// choose its own (the input's fixed at NHWC too then: its data is taken as
// it lies).
struct Descs {
  dnnl::algorithm alg;
  memory::desc src, dst, weights, bias, src_any, dst_any, weights_any;
  memory::dims strides, dilates, pad;
};

Descs descs_of(const Key& k, int64_t OH, int64_t OW) {
  const auto f32 = memory::data_type::f32;
  const auto any = memory::format_tag::any;
  const memory::dims src{k.n, k.C, k.H, k.W}, dst{k.n, k.O, OH, OW};
  const memory::dims w = k.groups == 1
                             ? memory::dims{k.O, k.C, k.kh, k.kw}
                             : memory::dims{k.groups, k.O / k.groups, k.C / k.groups, k.kh, k.kw};
  // oneDNN counts dilation from 0 (no gaps), PyTorch from 1.
  const auto src_layout = k.x_nhwc ? memory::format_tag::nhwc : memory::format_tag::nchw;
  return {
      k.winograd ? dnnl::algorithm::convolution_winograd : dnnl::algorithm::convolution_direct,
      memory::desc(src, f32, src_layout),
      memory::desc(dst, f32, memory::format_tag::nchw),
      memory::desc(w, f32, k.groups == 1 ? memory::format_tag::oihw : memory::format_tag::goihw),
      memory::desc({k.O}, f32, memory::format_tag::x),
      memory::desc(src, f32, k.x_nhwc ? src_layout : any),
      memory::desc(dst, f32, any),
      memory::desc(w, f32, any),
      {k.sh, k.sw},
      {k.dh - 1, k.dw - 1},
      {k.ph, k.pw}};
}

dnnl::primitive_attr user_scratchpad() {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return attr;
}

// The two gradients' primitive descriptors for data of the layouts `src`
// and `dst` (format_tag::any for oneDNN's choice), with the forward's as
// their hint; throws dnnl::error where oneDNN has no kernel for them.
struct BackwardPds {
  dnnl::convolution_backward_data::primitive_desc data;
  dnnl::convolution_backward_weights::primitive_desc weights;
};
BackwardPds backward_pds(const Descs& d, const memory::desc& src, const memory::desc& dst,
                         const dnnl::primitive_attr& attr) {
  dnnl::convolution_forward::primitive_desc hint(
      dnnl::convolution_forward::desc(dnnl::prop_kind::forward_training, d.alg, src, d.weights_any,
                                      dst, d.strides, d.dilates, d.pad, d.pad),
      attr, cpu_engine());
  return {dnnl::convolution_backward_data::primitive_desc(
              dnnl::convolution_backward_data::desc(d.alg, src, d.weights_any, dst, d.strides,
                                                    d.dilates, d.pad, d.pad),
              attr, cpu_engine(), hint),
          dnnl::convolution_backward_weights::primitive_desc(
              dnnl::convolution_backward_weights::desc(d.alg, src, d.weights_any, dst, d.strides,
                                                       d.dilates, d.pad, d.pad),
              attr, cpu_engine(), hint)};
}

std::unique_ptr<Prepared> prepare(const Key& k, int64_t OH, int64_t OW) {
  auto p = std::make_unique<Prepared>();
  const Descs d = descs_of(k, OH, OW);
  p->src = d.src;
  p->dst = d.dst;
  p->weights = d.weights;
  p->bias = d.bias;
  const auto inference = dnnl::prop_kind::forward_inference;
  const auto alg = dnnl::algorithm::convolution_direct;
  auto desc = k.bias ? dnnl::convolution_forward::desc(inference, alg, d.src, d.weights, d.bias,
                                                       d.dst, d.strides, d.dilates, d.pad, d.pad)
                     : dnnl::convolution_forward::desc(inference, alg, d.src, d.weights, d.dst,
                                                       d.strides, d.dilates, d.pad, d.pad);
  dnnl::convolution_forward::primitive_desc pd(desc, user_scratchpad(), cpu_engine());
  p->scratchpad = pd.scratchpad_desc();
  p->primitive = dnnl::convolution_forward(pd);
  p->reference = is_reference(pd.impl_info_str());
  return p;
}

// The primitives of type P for a geometry, batch slice size and bias
// presence, made by `make` on first use and kept.
template <class P>
const P& cached(const char* op, const ConvGeometry& g, int64_t n, bool bias, bool winograd,
                bool x_nhwc, std::unique_ptr<P> (*make)(const Key&, int64_t, int64_t)) {
  static std::mutex mu;
  static std::unordered_map<Key, std::unique_ptr<P>, KeyHash> cache;
  const Key key{n,    g.C,  g.H,  g.W,  g.O,      g.kh, g.kw,     g.sh,  g.sw,
                g.ph, g.pw, g.dh, g.dw, g.groups, bias, winograd, x_nhwc};
  // Before any primitive is made: oneDNN fixes a primitive's thread count
  // when it creates it (from the creating thread's OpenMP setting), so one
  // made before this call ran every later execution, on any thread, with
  // one OpenMP thread per core beside our pool's threads.
  onednn_use_one_thread();
  std::lock_guard<std::mutex> lock(mu);
  auto& slot = cache[key];
  if (!slot) {
    try {
      slot = make(key, g.OH, g.OW);
    } catch (const dnnl::error& e) {
      cache.erase(key);
      BRASA_ERROR(op, ": oneDNN could not create a convolution for input [", n, ", ", g.C, ", ",
                  g.H, ", ", g.W, "], weight [", g.O, ", ", g.C / g.groups, ", ", g.kh, ", ", g.kw,
                  "]: ", e.what());
    }
  }
  return *slot;
}

// Whether the gradients run on channels-last data rather than on the layout
// oneDNN picks (channel blocks of 16). With channels that are not multiples
// of 16 the blocks are padded: channels-last took 0.52x the weight
// gradient's time and 0.65x the input gradient's (MNIST example's 10->20
// 5x5 at batch 64, AVX-512 Xeon, 1 thread; the blocked weight gradient even
// falls back to an AVX2 kernel there). With multiples of 16 the blocks won
// inside whole training steps (ResNet's 64->64 3x3: 8.9 against 9.4 ms per
// weight gradient, 8.3 against 9.5 per input gradient).
bool channels_last_gradients(const Key& k) { return k.C % 16 != 0 || k.O % 16 != 0; }

std::unique_ptr<PreparedBackward> prepare_backward(const Key& k, int64_t OH, int64_t OW) {
  auto p = std::make_unique<PreparedBackward>();
  const Descs d = descs_of(k, OH, OW);
  memory::desc src = d.src_any, dst = d.dst_any;
  if (k.groups == 1 && (k.x_nhwc || channels_last_gradients(k))) {
    src = memory::desc(d.src.dims(), memory::data_type::f32, memory::format_tag::nhwc);
    dst = memory::desc(d.dst.dims(), memory::data_type::f32, memory::format_tag::nhwc);
  }
  BackwardPds pds = backward_pds(d, src, dst, user_scratchpad());
  // Channels last where oneDNN has only reference loops for it (AVX2: the
  // input gradient of a 16->3 9x9 layer): its own layouts then.
  if (!k.x_nhwc && src != d.src_any &&
      (is_reference(pds.data.impl_info_str()) || is_reference(pds.weights.impl_info_str())))
    pds = backward_pds(d, d.src_any, d.dst_any, user_scratchpad());
  const auto& data_pd = pds.data;
  const auto& weights_pd = pds.weights;
  p->data_scratchpad = data_pd.scratchpad_desc();
  p->weights_scratchpad = weights_pd.scratchpad_desc();
  p->data = dnnl::convolution_backward_data(data_pd);
  p->weights_grad = dnnl::convolution_backward_weights(weights_pd);
  p->dy_for_data = Relayout(d.dst, data_pd.diff_dst_desc());
  p->w_for_data = Relayout(d.weights, data_pd.weights_desc());
  p->dx_out = Relayout(data_pd.diff_src_desc(), d.src);
  p->x_for_weights = Relayout(d.src, weights_pd.src_desc());
  p->dy_for_weights = Relayout(d.dst, weights_pd.diff_dst_desc());
  p->dw_out = Relayout(weights_pd.diff_weights_desc(), d.weights);
  p->weights_by_gemm = is_gemm_based(weights_pd.impl_info_str());
  p->reference = is_reference(data_pd.impl_info_str()) || is_reference(weights_pd.impl_info_str());
  return p;
}

// A depthwise forward on blocks of 16 channels (jit_dw) rather than on the
// layout oneDNN picks itself (channels last, brdgmm_dw): best of 4 runs,
// inference, 2 threads, batch 16 unless given: 7x7 on 4x256x28x28 840 ->
// 602 us (libtorch 725), 7x7 on 96x14x14 275 -> 214 (210), 5x5/2 on
// 144x16x16 282 -> 165 (211), 3x3 on 64x32x32 1509 -> 529 (3549), 3x3 on
// 1x96x112x112 1926 -> 1025 (4064); Emerald Rapids Xeon.
bool depthwise_on_channel_blocks(const Key& k) {
  return k.groups > 1 && k.groups == k.C && k.C % 16 == 0 && k.O % 16 == 0 && !k.x_nhwc;
}

std::unique_ptr<PreparedBlockedForward> prepare_blocked_forward(const Key& k, int64_t OH,
                                                                int64_t OW) {
  auto p = std::make_unique<PreparedBlockedForward>();
  const Descs d = descs_of(k, OH, OW);
  // Winograd's inference kernel wants its weights pre-transformed, and
  // oneDNN's reorder into that format took 1 ms per call on 64->64 weights
  // (a third of the convolution); its training kernel transforms them itself.
  const auto kind =
      k.winograd ? dnnl::prop_kind::forward_training : dnnl::prop_kind::forward_inference;
  const auto alg = d.alg;
  memory::desc src = d.src_any, dst = d.dst_any;
  if (depthwise_on_channel_blocks(k)) {
    src = memory::desc(d.src.dims(), memory::data_type::f32, memory::format_tag::nChw16c);
    dst = memory::desc(d.dst.dims(), memory::data_type::f32, memory::format_tag::nChw16c);
  }
  auto desc = k.bias ? dnnl::convolution_forward::desc(kind, alg, src, d.weights_any, d.bias, dst,
                                                       d.strides, d.dilates, d.pad, d.pad)
                     : dnnl::convolution_forward::desc(kind, alg, src, d.weights_any, dst,
                                                       d.strides, d.dilates, d.pad, d.pad);
  dnnl::convolution_forward::primitive_desc pd(desc, user_scratchpad(), cpu_engine());
  p->primitive = dnnl::convolution_forward(pd);
  p->reference = is_reference(pd.impl_info_str());
  p->by_gemm = is_gemm_based(pd.impl_info_str());
  p->bias = d.bias;
  p->scratchpad = pd.scratchpad_desc();
  p->x_in = Relayout(d.src, pd.src_desc());
  p->w_in = Relayout(d.weights, pd.weights_desc());
  p->y_out = Relayout(pd.dst_desc(), d.dst);
  return p;
}

// The shapes where oneDNN's Winograd kernels (F(4x4, 3x3), AVX-512 only in
// oneDNN 2.x) beat its direct ones in all three directions. Timed one by one
// (Zen 5, 1 thread, batch 16; Winograd/direct time for forward, input and
// weight gradient): 64->64 at 32x32 0.57/0.52/0.80, at 56x56 0.55/0.55/0.94;
// 128->128 at 16x16 0.62/0.60/0.56, at 28x28 0.54/0.53/0.84; 256->256 at
// 14x14 0.49/0.49/0.61; 512->512 at 7x7 0.51/0.90/0.63; 16->32 at 28x28
// 0.66/0.71/0.58. It lost with 16->16 channels (1.29/1.47/0.97), on 4x4
// outputs (512->512: 3.5/2.1/1.2) and with 3 input channels.
bool winograd_fits(const ConvGeometry& g) {
  return g.groups == 1 && g.kh == 3 && g.kw == 3 && g.sh == 1 && g.sw == 1 && g.dh == 1 &&
         g.dw == 1 && g.ph <= 1 && g.pw <= 1 && g.C % 16 == 0 && g.O % 16 == 0 &&
         std::max(g.C, g.O) >= 32 && g.OH * g.OW >= 49;
}

// Whether oneDNN has Winograd kernels for a geometry on this CPU (asked once
// per geometry: primitive descriptors for the three directions).
struct WinogradProbe {
  bool available = false;
};
std::unique_ptr<WinogradProbe> probe_winograd(const Key& k, int64_t OH, int64_t OW) {
  auto p = std::make_unique<WinogradProbe>();
  const Descs d = descs_of(k, OH, OW);
  try {
    backward_pds(d, d.src_any, d.dst_any, dnnl::primitive_attr());
    p->available = true;
  } catch (const dnnl::error&) {
    // unimplemented here (no AVX-512, or a shape its kernels refuse)
  }
  return p;
}

// Winograd's kernels transform the weights on every call, which costs as
// much as convolving a few hundred output pixels directly: with fewer output
// pixels per call (per batch slice) they lose. 3x3 layers at 1 thread, Winograd's
// time over the direct kernels', inference (fwd+bwd alike): 512->512 at 7x7
// 4.5 (2.4) for one sample, 1.25 (1.0) for 8; 256->256 at 14x14 2.0 (1.7)
// for one, 0.92 (0.77) for 4; 128->128 at 28x28 1.03 (0.94) for one; 64->64
// at 32x32 0.73 (0.64) for one (Emerald Rapids Xeon). ResNet-18 at batch 1
// (224x224) took 53-58 ms with them and 34 ms without.
constexpr int64_t kWinogradMinOutputPixels = 784;

// Whether oneDNN has JIT kernels for a geometry with its input channels
// last, forward and (both) gradients apart (asked once per geometry and batch
// slice size): on AVX2 its forward for some shapes (a text CNN's 1-d layers)
// is only the reference one, far slower than moving the input to NCHW, while
// its gradients there are JIT kernels.
struct NhwcProbe {
  bool forward = false, gradients = false;
};
std::unique_ptr<NhwcProbe> probe_nhwc(const Key& k, int64_t OH, int64_t OW) {
  auto p = std::make_unique<NhwcProbe>();
  const Descs d = descs_of(k, OH, OW);  // (k.x_nhwc: src_any is NHWC)
  try {
    dnnl::convolution_forward::primitive_desc forward(
        dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference, d.alg, d.src_any,
                                        d.weights_any, d.dst_any, d.strides, d.dilates, d.pad,
                                        d.pad),
        cpu_engine());
    p->forward = !is_reference(forward.impl_info_str());
  } catch (const dnnl::error&) {
    // no kernel for it at all: NCHW then
  }
  try {
    const memory::desc dst(d.dst.dims(), memory::data_type::f32, memory::format_tag::nhwc);
    const BackwardPds backward = backward_pds(d, d.src_any, dst, dnnl::primitive_attr());
    p->gradients = !is_reference(backward.data.impl_info_str()) &&
                   !is_reference(backward.weights.impl_info_str());
  } catch (const dnnl::error&) {
  }
  return p;
}

}  // namespace

const dnnl::engine& cpu_engine() {
  static dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

dnnl::stream& thread_stream() {
  onednn_use_one_thread();
  thread_local dnnl::stream stream(cpu_engine());
  return stream;
}

// dst (r.to's layout) <- src (r.from's) for an NCHW <-> NHWC or channel-block
// move: each block of channels is an NCHW <-> NHWC transpose of its own.
void transpose_move(const Relayout& r, const float* src, float* dst) {
  const memory::dims d = r.from.dims();
  const int64_t C = r.block, N = d[0] * (d[1] / C), H = d[2], W = d[3];
  const std::vector<int64_t> sizes{N, C, H, W}, nchw{C * H * W, H * W, W, 1},
      nhwc{H * W * C, 1, W * C, C};
  const bool to_nhwc = r.transpose == Relayout::Transpose::kToNhwc;
  const TensorOptions f32 = TensorOptions().dtype(kFloat);
  Tensor in = from_blob(const_cast<float*>(src), sizes, to_nhwc ? nchw : nhwc, f32);
  Tensor out = from_blob(dst, sizes, to_nhwc ? nhwc : nchw, f32);
  out.copy_(in);
}

// Runs `primitive` with `args` and a scratchpad of `desc`'s size on this
// thread's stream. (The scratchpad is this thread's, reused: allocating
// and zeroing a fresh one, 6-9 MB for the Winograd kernels, cost more than
// a tenth of their time.)
void execute(const dnnl::primitive& primitive, std::unordered_map<int, memory>& args,
             const memory::desc& scratchpad) {
  thread_local AlignedBuffer scratch;
  if (scratchpad.get_size() > 0)
    args.emplace(DNNL_ARG_SCRATCHPAD,
                 memory(scratchpad, cpu_engine(), scratch.reserve(scratchpad.get_size())));
  dnnl::stream& stream = thread_stream();
  primitive.execute(stream, args);
  stream.wait();
}

const Prepared& prepared(const ConvGeometry& g, int64_t n, bool bias) {
  return cached<Prepared>("conv2d", g, n, bias, false, false, prepare);
}

const PreparedBackward& prepared_backward(const ConvGeometry& g, int64_t n, bool winograd,
                                          bool x_nhwc) {
  return cached<PreparedBackward>("conv2d backward", g, n, false, winograd, x_nhwc,
                                  prepare_backward);
}
const PreparedBlockedForward& prepared_blocked_forward(const ConvGeometry& g, int64_t n, bool bias,
                                                       bool winograd, bool x_nhwc) {
  return cached<PreparedBlockedForward>("conv2d", g, n, bias, winograd, x_nhwc,
                                        prepare_blocked_forward);
}

bool use_winograd(const ConvGeometry& g) {
  return conv_winograd_enabled() && winograd_fits(g) &&
         first_slice_size(g.N) * g.OH * g.OW >= kWinogradMinOutputPixels &&
         cached<WinogradProbe>("conv2d", g, 1, false, true, false, probe_winograd).available;
}

}  // namespace onednn_conv

// Not where the layer takes Winograd's kernels (on oneDNN's blocked
// layouts): a channels-last ResNet layer (64->64 3x3 at 32x32, batch 16,
// fwd+bwd, 2 threads, AVX-512) took 12.1 ms read as it lies against 7.0 ms
// moved to NCHW for Winograd; without Winograd 12.4 against 12.8.
bool onednn_reads_channels_last(const ConvGeometry& g, bool gradients) {
  if (g.groups != 1 || g.N <= 0 || onednn_conv::use_winograd(g)) return false;
  const onednn_conv::NhwcProbe& p = onednn_conv::cached<onednn_conv::NhwcProbe>(
      "conv2d", g, first_slice_size(g.N), false, false, true, onednn_conv::probe_nhwc);
  return gradients ? p.gradients : p.forward;
}

}  // namespace brasa::detail
#endif  // BRASA_WITH_ONEDNN
