#include <brasa/ops/conv.h>
#include <brasa/ops/factory.h>
#include <brasa/ops/cpu/conv_onednn.h>
#include <brasa/ops/kernel_table.h>
#include <brasa/util/error.h>
#include <brasa/util/parallel.h>

#include <atomic>
#include <cstdlib>
#include <string>

#ifdef BRASA_WITH_ONEDNN
#include <algorithm>
#include <dnnl.hpp>
#include <memory>
#include <optional>
#include <mutex>
#include <numeric>
#include <unordered_map>
#include <utility>
#include <vector>

extern "C" void omp_set_num_threads(int);
#endif

namespace brasa {

namespace {
// BRASA_ONEDNN=0 in the environment starts with oneDNN disabled.
bool enabled_at_start() {
  const char* v = std::getenv("BRASA_ONEDNN");
  return !(v && std::string(v) == "0");
}
std::atomic<bool> g_onednn_enabled{enabled_at_start()};

// BRASA_CONV_TRAINING, read when the path is first asked for (not at load
// time, so that a bad value is an error from the op, not an abort).
ConvTrainingPath training_path_from_environment() {
  const char* v = std::getenv("BRASA_CONV_TRAINING");
  const std::string s = v ? v : "auto";
  BRASA_CHECK(s == "onednn" || s == "im2col" || s == "auto",
              "BRASA_CONV_TRAINING: expected onednn, im2col or auto, got '", s, "'");
  return s == "onednn"   ? ConvTrainingPath::kOneDNN
         : s == "im2col" ? ConvTrainingPath::kIm2col
                         : ConvTrainingPath::kAuto;
}
constexpr int kPathUnset = -1;
std::atomic<int> g_training_path{kPathUnset};

// BRASA_CONV_WINOGRAD=0 in the environment starts with Winograd off.
bool winograd_at_start() {
  const char* v = std::getenv("BRASA_CONV_WINOGRAD");
  return !(v && std::string(v) == "0");
}
std::atomic<bool> g_winograd_enabled{winograd_at_start()};
}  // namespace

void set_conv_winograd_enabled(bool enabled) { g_winograd_enabled.store(enabled); }
bool conv_winograd_enabled() { return g_winograd_enabled.load(); }

void set_conv_training_path(ConvTrainingPath path) {
  g_training_path.store(static_cast<int>(path));
}
ConvTrainingPath conv_training_path() {
  int path = g_training_path.load();
  if (path == kPathUnset) {
    path = static_cast<int>(training_path_from_environment());
    int unset = kPathUnset;
    if (!g_training_path.compare_exchange_strong(unset, path)) path = unset;  // set meanwhile
  }
  return static_cast<ConvTrainingPath>(path);
}

bool has_onednn() {
#ifdef BRASA_WITH_ONEDNN
  return true;
#else
  return false;
#endif
}

void set_onednn_enabled(bool enabled) { g_onednn_enabled.store(enabled); }
bool onednn_enabled() { return has_onednn() && g_onednn_enabled.load(); }

namespace detail {

bool onednn_conv_usable(ScalarType dtype) { return dtype == kFloat && onednn_enabled(); }

#ifndef BRASA_WITH_ONEDNN

void onednn_conv_forward(const float*, const float*, const float*, float*, const ConvGeometry&,
                         bool, bool) {
  BRASA_ERROR("conv2d: this build of Brasa has no oneDNN");
}

void onednn_conv_backward(const float*, const float*, const float*, float*, float*,
                          const ConvGeometry&, bool) {
  BRASA_ERROR("conv2d backward: this build of Brasa has no oneDNN");
}

void onednn_use_one_thread() {}

bool onednn_reads_channels_last(const ConvGeometry&, bool) { return false; }

bool onednn_conv_is_fast(const ConvGeometry&, bool, bool) { return false; }

bool onednn_conv_uses_winograd(const ConvGeometry&) { return false; }

#else

void onednn_use_one_thread() {
  thread_local bool single = (omp_set_num_threads(1), true);
  (void)single;
}

// The batch slice size of for_each_slice's first slice.
int64_t first_slice_size(int64_t N) {
  const int64_t slices = in_parallel_region() ? 1 : std::min<int64_t>(N, get_num_threads());
  return (N + slices - 1) / slices;
}

namespace {

using dnnl::memory;

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
struct Prepared {
  memory::desc src, weights, bias, dst, scratchpad;  // the caller provides the scratchpad
  dnnl::convolution_forward primitive;
  bool reference = false;  // oneDNN's reference loops, not a JIT kernel
};

// Whether a primitive oneDNN picked is its reference implementation (plain
// loops: on AVX2 for some layouts and shapes, e.g. the input gradient of a
// 16->3 9x9 layer on channels-last data, 40x slower than im2col there).
bool is_reference(const char* impl) { return std::string(impl).rfind("ref", 0) == 0; }
// Whether it is oneDNN's GEMM-based convolution (im2col inside), not a direct one.
bool is_gemm_based(const char* impl) { return std::string(impl).find("gemm") != std::string::npos; }

const dnnl::engine& cpu_engine() {
  static dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

dnnl::stream& thread_stream() {
  onednn_use_one_thread();
  thread_local dnnl::stream stream(cpu_engine());
  return stream;
}

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

const Prepared& prepared(const ConvGeometry& g, int64_t n, bool bias) {
  return cached<Prepared>("conv2d", g, n, bias, false, false, prepare);
}

// A move between our plain layout and the one a primitive prefers; none
// when they are the same. Moves between NCHW and NHWC (channels last, the
// layout of oneDNN's brgconv kernels) or channel blocks (nChw16c, nChw8c:
// NHWC within each block of channels) go through Brasa's blocked transposes
// (ops/cpu/copy_kernels.cpp) rather than a oneDNN reorder: 0.10-0.19 ms
// against 0.5-0.6 ms for [16, 64, 32, 32] to NHWC (Zen 5, 1 thread), six
// moves per convolution and training step.
struct Relayout {
  enum class Transpose { kNone, kToNhwc, kToNchw };
  memory::desc from, to;
  std::optional<dnnl::reorder> reorder;
  Transpose transpose = Transpose::kNone;
  int64_t block = 0;  // channels per transposed block (C for NHWC)
  Relayout() = default;
  Relayout(const memory::desc& f, const memory::desc& t) : from(f), to(t) {
    if (f == t) return;
    const memory::dims dims = f.dims();
    if (dims.size() == 4 && f.data_type() == memory::data_type::f32) {
      const auto f32 = memory::data_type::f32;
      const memory::desc nchw(dims, f32, memory::format_tag::nchw);
      const std::pair<int64_t, memory::desc> blocked[] = {
          {dims[1], memory::desc(dims, f32, memory::format_tag::nhwc)},
          {16, memory::desc(dims, f32, memory::format_tag::nChw16c)},
          {8, memory::desc(dims, f32, memory::format_tag::nChw8c)}};
      for (const auto& [channels, layout] : blocked) {
        if (channels == 0 || dims[1] % channels != 0) continue;  // (a partial block is padded)
        if (f == nchw && t == layout) transpose = Transpose::kToNhwc;
        if (f == layout && t == nchw) transpose = Transpose::kToNchw;
        if (transpose != Transpose::kNone) {
          block = channels;
          break;
        }
      }
    }
    if (transpose == Transpose::kNone)
      reorder = dnnl::reorder(dnnl::reorder::primitive_desc(cpu_engine(), f, cpu_engine(), t));
  }
  bool moves() const { return reorder || transpose != Transpose::kNone; }
};

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

// The gradients' primitives on the layouts oneDNN prefers for them
// (format_tag::any: blocked ones on AVX-512 and AVX2, where its JIT kernels
// run), with the moves of our NCHW/OIHW tensors in and out. The bias
// gradient is a sum the caller does.
struct PreparedBackward {
  dnnl::convolution_backward_data data;
  dnnl::convolution_backward_weights weights_grad;
  memory::desc data_scratchpad, weights_scratchpad;
  Relayout dy_for_data, w_for_data, dx_out;        // backward data
  Relayout x_for_weights, dy_for_weights, dw_out;  // backward weights
  bool weights_by_gemm = false;                    // oneDNN's weight gradient is its GEMM-based one
  bool reference = false;                          // either gradient is oneDNN's reference loops
};

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

// The forward on oneDNN's preferred layouts, for the shapes where its JIT
// kernels beat the plain-layout forward (the caller's rule).
struct PreparedBlockedForward {
  dnnl::convolution_forward primitive;
  bool reference = false;
  bool by_gemm = false;  // oneDNN's GEMM-based kernel (im2col inside), not a direct one
  memory::desc bias, scratchpad;
  Relayout x_in, w_in, y_out;
};

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
  auto desc = k.bias
                  ? dnnl::convolution_forward::desc(kind, alg, d.src_any, d.weights_any, d.bias,
                                                    d.dst_any, d.strides, d.dilates, d.pad, d.pad)
                  : dnnl::convolution_forward::desc(kind, alg, d.src_any, d.weights_any, d.dst_any,
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

bool use_winograd(const ConvGeometry& g) {
  return conv_winograd_enabled() && winograd_fits(g) &&
         first_slice_size(g.N) * g.OH * g.OW >= kWinogradMinOutputPixels &&
         cached<WinogradProbe>("conv2d", g, 1, false, true, false, probe_winograd).available;
}

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

// A buffer kept by a thread between calls, grown when asked for more, and
// aligned to 64 bytes: oneDNN's Winograd kernels store with aligned
// non-temporal moves, which fault on std::vector's 16-byte alignment.
class AlignedBuffer {
 public:
  char* reserve(size_t bytes) {
    if (bytes > size_) {
      data_.reset();
      data_.reset(static_cast<char*>(std::aligned_alloc(64, (bytes + 63) / 64 * 64)));
      BRASA_CHECK(data_ != nullptr, "conv2d: out of memory for a ", bytes, "-byte oneDNN buffer");
      size_ = bytes;
    }
    return data_.get();
  }

 private:
  struct Free {
    void operator()(char* p) const { std::free(p); }
  };
  std::unique_ptr<char, Free> data_;
  size_t size_ = 0;
};

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

// The batch split as the forward splits it: one slice per thread of our pool.
template <class F>
void for_each_slice(int64_t N, const F& f) {
  if (N <= 0) return;
  const int64_t slices = in_parallel_region() ? 1 : std::min<int64_t>(N, get_num_threads());
  const int64_t per = (N + slices - 1) / slices;
  parallel_for(0, slices, 1, [&](int64_t s0, int64_t s1) {
    for (int64_t s = s0; s < s1; ++s) {
      const int64_t n0 = s * per, n = std::min(per, N - n0);
      if (n > 0) f(s, n0, n);
    }
  });
}

memory::desc descs_bias(const ConvGeometry& g) {
  return memory::desc({g.O}, memory::data_type::f32, memory::format_tag::x);
}

// Memory of `r.to`'s layout holding `data` (of `r.from`'s): `data` itself
// when the layouts agree, else a copy moved into `buffer`.
memory moved_in(const Relayout& r, const float* data, AlignedBuffer& buffer) {
  memory user(r.from, cpu_engine(), const_cast<float*>(data));
  if (!r.moves()) return user;
  char* moved_data = buffer.reserve(r.to.get_size());
  memory moved(r.to, cpu_engine(), moved_data);
  if (r.reorder)
    r.reorder->execute(thread_stream(), user, moved);
  else
    transpose_move(r, data, reinterpret_cast<float*>(moved_data));
  return moved;
}

// Memory of `r.from`'s layout for a primitive to write into; call moved_out
// afterwards to land it in `out` (of `r.to`'s layout).
memory landing(const Relayout& r, float* out, AlignedBuffer& buffer) {
  if (!r.moves()) return memory(r.to, cpu_engine(), out);
  return memory(r.from, cpu_engine(), buffer.reserve(r.from.get_size()));
}
void moved_out(const Relayout& r, const memory& written, float* out) {
  if (!r.moves()) return;
  if (!r.reorder) {  // (execute() waited for the primitive that wrote it)
    transpose_move(r, static_cast<const float*>(written.get_data_handle()), out);
    return;
  }
  memory user(r.to, cpu_engine(), out);
  r.reorder->execute(thread_stream(), const_cast<memory&>(written), user);
  thread_stream().wait();
}

// The blocked-layout forward of `n` samples (x, y at their first), with the
// moves in and out.
void blocked_forward_slice(const ConvGeometry& g, int64_t n, const float* x, const float* w,
                           const float* b, float* y, bool winograd, bool x_nhwc) {
  const PreparedBlockedForward& p = prepared_blocked_forward(g, n, b != nullptr, winograd, x_nhwc);
  thread_local AlignedBuffer x_buf, w_buf, y_buf;
  std::unordered_map<int, memory> args;
  if (b) args.emplace(DNNL_ARG_BIAS, memory(descs_bias(g), cpu_engine(), const_cast<float*>(b)));
  args.emplace(DNNL_ARG_SRC, moved_in(p.x_in, x, x_buf));
  args.emplace(DNNL_ARG_WEIGHTS, moved_in(p.w_in, w, w_buf));
  memory dst = landing(p.y_out, y, y_buf);
  args.emplace(DNNL_ARG_DST, dst);
  execute(p.primitive, args, p.scratchpad);
  moved_out(p.y_out, dst, y);
}

// The weights' size over one batch slice's input and output: above 1 the
// work of moving weights (oneDNN's reorders, flipping them) outweighs that
// of moving activations.
double weights_per_activation(const ConvGeometry& g) {
  const int64_t activations = first_slice_size(g.N) * (g.C * g.H * g.W + g.O * g.OH * g.OW);
  return activations > 0 ? static_cast<double>(g.O * g.K()) / static_cast<double>(activations)
                         : 0.0;
}

// The input gradient of a stride-1 convolution is the forward convolution
// of grad_out with the weights flipped in space and with their two channel
// dims swapped, padded by dilation * (k - 1) - padding. Its blocked forward
// (brgconv) ran at 0.65x the time of oneDNN's backward-data kernel inside
// ResNet steps (64->64 3x3 at 32x32, AVX-512 Xeon: 5.3 against 8.2 ms). It
// loses where the weights outweigh the activations (flipping and moving
// them is then most of its work): 3x3 layers, input gradient by this trick
// against oneDNN's kernel, fwd+bwd, 2 threads, Emerald Rapids Xeon: 64->64
// at 32x32, batch 16: 10.5 against 13.1 ms; 256->256 at 7x7, batch 16: 9.8
// against 7.2 ms; 512->512 at 7x7, batch 1, 1 thread: 10.0 against 6.5 ms.
bool input_grad_as_forward(const ConvGeometry& g) {
  return weights_per_activation(g) < 0.5 && g.groups == 1 && g.sh == 1 && g.sw == 1 &&
         g.C % 16 == 0 && g.O % 16 == 0 && g.ph <= g.dh * (g.kh - 1) && g.pw <= g.dw * (g.kw - 1);
}

ConvGeometry input_grad_geometry(const ConvGeometry& g) {
  ConvGeometry t = g;
  t.C = g.O;
  t.H = g.OH;
  t.W = g.OW;
  t.O = g.C;
  t.OH = g.H;
  t.OW = g.W;
  t.ph = g.dh * (g.kh - 1) - g.ph;
  t.pw = g.dw * (g.kw - 1) - g.pw;
  return t;
}

// wt [C, O, kh, kw] <- w [O, C, kh, kw] flipped in both spatial dims.
void flip_swap_weights(const float* w, const ConvGeometry& g, std::vector<float>& wt) {
  const int64_t taps = g.kh * g.kw;
  wt.resize(static_cast<size_t>(g.O * g.C * taps));
  for (int64_t o = 0; o < g.O; ++o)
    for (int64_t c = 0; c < g.C; ++c) {
      const float* src = w + (o * g.C + c) * taps;
      float* dst = wt.data() + (c * g.O + o) * taps;
      for (int64_t t = 0; t < taps; ++t) dst[t] = src[taps - 1 - t];
    }
}

// The forward of `n` samples from x and y at their first, one primitive.
void forward_slice(const ConvGeometry& g, int64_t n, const float* x, const float* w, const float* b,
                   float* y, bool blocked, bool winograd, bool x_nhwc) {
  if (blocked || winograd) return blocked_forward_slice(g, n, x, w, b, y, winograd, x_nhwc);
  const auto& eng = cpu_engine();
  std::unordered_map<int, memory> args;
  if (b) args.emplace(DNNL_ARG_BIAS, memory(descs_bias(g), eng, const_cast<float*>(b)));
  const Prepared& p = prepared(g, n, b != nullptr);
  args.emplace(DNNL_ARG_SRC, memory(p.src, eng, const_cast<float*>(x)));
  args.emplace(DNNL_ARG_WEIGHTS, memory(p.weights, eng, const_cast<float*>(w)));
  args.emplace(DNNL_ARG_DST, memory(p.dst, eng, y));
  execute(p.primitive, args, p.scratchpad);
}

// Rows of `rows` floats from `n` samples `src_stride` apart to samples
// `dst_stride` apart (a channel part of NCHW tensors <-> a whole one).
void copy_rows(const float* src, int64_t src_stride, float* dst, int64_t dst_stride, int64_t n,
               int64_t rows) {
  for (int64_t i = 0; i < n; ++i) std::copy_n(src + i * src_stride, rows, dst + i * dst_stride);
}

// Channels per part (of `channels`, the output's or the input's) where the
// work is split into one part of the channels per thread, each over the
// whole batch, rather than into batch slices; 0 where it is not. Parts are
// whole blocks of 16 channels, so that they keep oneDNN's blocked kernels
// (and Winograd's, which want them). Two cases:
//  - A batch that does not fill the pool evenly. ResNet-18 inference ran its
//    convolutions on one thread of two at batch 1: 51-67 ms against
//    libtorch's 28-36 ms; at batch 3 slices of 2 and 1 left a thread idle.
//  - Weights larger than twice a slice's activations (deep layers on small
//    maps): every slice read and moved all of them, and two threads slowed
//    each other down. 3x3 layers at 7x7, both gradients (with the rule of
//    input_grad_as_forward): 512->512 at batch 8, 24.2 -> 13.9 ms (libtorch
//    13.5), at batch 16 35.5 -> 25.7 ms (libtorch 30.2); 256->256 at batch
//    16 8.4 -> 7.1 ms (libtorch 5.8).
// (Emerald Rapids Xeon, 2 threads.)
int64_t channels_per_part(const ConvGeometry& g, int64_t channels, bool winograd) {
  const int64_t threads = in_parallel_region() ? 1 : get_num_threads();
  if (g.groups != 1 || g.N <= 0 || threads == 1 || (winograd && channels % 16 != 0)) return 0;
  const bool uneven = g.N % threads != 0 && g.N < 2 * threads;
  if (!uneven && weights_per_activation(g) <= 2) return 0;
  const int64_t block = 16;
  const int64_t per = (channels + threads - 1) / threads;
  const int64_t rounded = (per + block - 1) / block * block;
  return rounded < channels ? rounded : 0;
}

// The gradients split along channels (see channels_per_part): the input
// gradient in parts of `per_c` input channels (each a convolution of its
// own, with that part of the weight), the weight gradient in parts of
// `per_o` output channels. A part's rows of grad_out and grad_x are gathered
// into (scattered from) dense buffers, as the primitives want them.
void backward_by_channel_parts(const float* grad_out, const float* x, const float* w, float* grad_x,
                               float* grad_w, const ConvGeometry& g, bool winograd, int64_t per_c,
                               int64_t per_o) {
  const int64_t in = g.C * g.H * g.W, out = g.O * g.OH * g.OW;
  const int64_t map_in = g.H * g.W, map_out = g.OH * g.OW, N = g.N;
  if (grad_x) {
    const ConvGeometry tg = input_grad_geometry(g);
    const bool as_forward = !winograd && input_grad_as_forward(g) &&
                            !prepared_blocked_forward(tg, N, false, false, false).by_gemm;
    std::vector<float> flipped;
    if (as_forward) flip_swap_weights(w, g, flipped);
    const int64_t parts = (g.C + per_c - 1) / per_c;
    parallel_for(0, parts, 1, [&](int64_t t0, int64_t t1) {
      thread_local AlignedBuffer dy_buf, w_buf, dx_buf;
      thread_local std::vector<float> w_part, dx_part;
      for (int64_t t = t0; t < t1; ++t) {
        const int64_t c0 = t * per_c, cn = std::min(per_c, g.C - c0);
        float* dx = parts == 1
                        ? grad_x
                        : (dx_part.resize(static_cast<size_t>(N * cn * map_in)), dx_part.data());
        if (as_forward) {  // (the flipped weights of channels c0.. are contiguous)
          ConvGeometry part = tg;
          part.O = cn;
          blocked_forward_slice(part, N, grad_out, flipped.data() + c0 * tg.K(), nullptr, dx, false,
                                false);
        } else {
          ConvGeometry part = g;
          part.C = cn;
          const int64_t taps = g.kh * g.kw;
          w_part.resize(static_cast<size_t>(g.O * cn * taps));
          copy_rows(w + c0 * taps, g.C * taps, w_part.data(), cn * taps, g.O, cn * taps);
          const PreparedBackward& p = prepared_backward(part, N, winograd, false);
          std::unordered_map<int, memory> args{
              {DNNL_ARG_DIFF_DST, moved_in(p.dy_for_data, grad_out, dy_buf)},
              {DNNL_ARG_WEIGHTS, moved_in(p.w_for_data, w_part.data(), w_buf)}};
          memory dx_data = landing(p.dx_out, dx, dx_buf);
          args.emplace(DNNL_ARG_DIFF_SRC, dx_data);
          execute(p.data, args, p.data_scratchpad);
          moved_out(p.dx_out, dx_data, dx);
        }
        if (parts > 1) copy_rows(dx, cn * map_in, grad_x + c0 * map_in, in, N, cn * map_in);
      }
    });
  }
  if (!grad_w) return;
  const int64_t parts = (g.O + per_o - 1) / per_o;
  parallel_for(0, parts, 1, [&](int64_t t0, int64_t t1) {
    thread_local AlignedBuffer x_buf, dy_buf, dw_buf;
    thread_local std::vector<float> dy_part;
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t o0 = t * per_o;
      ConvGeometry part = g;
      part.O = std::min(per_o, g.O - o0);
      const float* dy = grad_out;
      if (parts > 1) {
        dy_part.resize(static_cast<size_t>(N * part.O * map_out));
        copy_rows(grad_out + o0 * map_out, out, dy_part.data(), part.O * map_out, N,
                  part.O * map_out);
        dy = dy_part.data();
      }
      const PreparedBackward& p = prepared_backward(part, N, winograd, false);
      float* dw_user = grad_w + o0 * g.K();
      std::unordered_map<int, memory> args{
          {DNNL_ARG_SRC, moved_in(p.x_for_weights, x, x_buf)},
          {DNNL_ARG_DIFF_DST, moved_in(p.dy_for_weights, dy, dy_buf)}};
      memory dw = landing(p.dw_out, dw_user, dw_buf);
      args.emplace(DNNL_ARG_DIFF_WEIGHTS, dw);
      execute(p.weights_grad, args, p.weights_scratchpad);
      moved_out(p.dw_out, dw, dw_user);
    }
  });
}
}  // namespace

// Not where the layer takes Winograd's kernels (on oneDNN's blocked
// layouts): a channels-last ResNet layer (64->64 3x3 at 32x32, batch 16,
// fwd+bwd, 2 threads, AVX-512) took 12.1 ms read as it lies against 7.0 ms
// moved to NCHW for Winograd; without Winograd 12.4 against 12.8.
bool onednn_reads_channels_last(const ConvGeometry& g, bool gradients) {
  if (g.groups != 1 || g.N <= 0 || use_winograd(g)) return false;
  const NhwcProbe& p =
      cached<NhwcProbe>("conv2d", g, first_slice_size(g.N), false, false, true, probe_nhwc);
  return gradients ? p.gradients : p.forward;
}

bool onednn_conv_uses_winograd(const ConvGeometry& g) { return use_winograd(g); }

bool onednn_conv_is_fast(const ConvGeometry& g, bool blocked, bool gradients) {
  if (g.N <= 0) return true;  // (nothing runs)
  const int64_t n = first_slice_size(g.N);
  const bool winograd = use_winograd(g);
  const bool forward_reference =
      blocked || winograd ? prepared_blocked_forward(g, n, false, winograd, false).reference
                          : prepared(g, n, false).reference;
  return !forward_reference && !(gradients && prepared_backward(g, n, winograd, false).reference);
}

// Each slice's input gradient is its own; each slice's weight gradient is a
// partial sum, added up at the end (in slice order, so the result does not
// depend on scheduling).
void onednn_conv_backward(const float* grad_out, const float* x, const float* w, float* grad_x,
                          float* grad_w, const ConvGeometry& g, bool x_nhwc) {
  BRASA_CHECK(!x_nhwc || g.groups == 1, "conv2d backward: channels-last input with groups");
  if (!x_nhwc) {
    const bool winograd = use_winograd(g);
    const int64_t per_c = channels_per_part(g, g.C, winograd);
    const int64_t per_o = channels_per_part(g, g.O, winograd);
    if (per_c > 0 || per_o > 0)
      return backward_by_channel_parts(grad_out, x, w, grad_x, grad_w, g, winograd,
                                       per_c > 0 ? per_c : g.C, per_o > 0 ? per_o : g.O);
  }
  const int64_t in = g.C * g.H * g.W, out = g.O * g.OH * g.OW;
  const int64_t wsize = g.O * g.K();
  const int64_t slices =
      in_parallel_region() ? 1 : std::max<int64_t>(1, std::min<int64_t>(g.N, get_num_threads()));
  const bool winograd = !x_nhwc && use_winograd(g);
  // A depthwise weight gradient that oneDNN would do by GEMM is ours (see
  // cpu/depthwise_kernels.cpp), after the slices, over all channels at once.
  const bool own_depthwise =
      grad_w && g.groups == g.C && g.O == g.C &&
      has_kernel<DepthwiseWeightGradKernel>(Device(kCPU)) &&
      prepared_backward(g, (g.N + slices - 1) / slices, winograd, false).weights_by_gemm;
  float* const onednn_grad_w = own_depthwise ? nullptr : grad_w;
  std::vector<float> partial(onednn_grad_w && slices > 1 ? static_cast<size_t>((slices - 1) * wsize)
                                                         : 0);
  // (Winograd's own input gradient is faster than the forward trick.)
  // Nor where that forward is oneDNN's GEMM-based kernel (AVX2 with dilation
  // 3 or more): it convolves the whole padded grad_out.
  const ConvGeometry tg = input_grad_geometry(g);
  const bool as_forward =
      grad_x && !winograd && !x_nhwc && input_grad_as_forward(g) &&
      !prepared_blocked_forward(tg, (g.N + slices - 1) / slices, false, false, false).by_gemm;
  std::vector<float> flipped;
  if (as_forward) flip_swap_weights(w, g, flipped);
  for_each_slice(g.N, [&](int64_t s, int64_t n0, int64_t n) {
    const PreparedBackward& p = prepared_backward(g, n, winograd, x_nhwc);
    // This thread's buffers for the moved tensors, kept between calls.
    thread_local AlignedBuffer dy_buf, w_buf, dx_buf, x_buf, dy2_buf, dw_buf;
    const float* dy = grad_out + n0 * out;
    memory dy_data;
    if (as_forward) {
      blocked_forward_slice(tg, n, dy, flipped.data(), nullptr, grad_x + n0 * in, false, false);
    } else if (grad_x) {
      dy_data = moved_in(p.dy_for_data, dy, dy_buf);
      std::unordered_map<int, memory> args{{DNNL_ARG_DIFF_DST, dy_data},
                                           {DNNL_ARG_WEIGHTS, moved_in(p.w_for_data, w, w_buf)}};
      memory dx = landing(p.dx_out, grad_x + n0 * in, dx_buf);
      args.emplace(DNNL_ARG_DIFF_SRC, dx);
      execute(p.data, args, p.data_scratchpad);
      moved_out(p.dx_out, dx, grad_x + n0 * in);
    }
    if (onednn_grad_w) {
      float* dw_user = s == 0 ? grad_w : partial.data() + (s - 1) * wsize;
      // The data gradient's moved grad_out serves again when the layouts agree.
      const bool reuse = grad_x && !as_forward && p.dy_for_weights.to == p.dy_for_data.to;
      std::unordered_map<int, memory> args{
          {DNNL_ARG_SRC, moved_in(p.x_for_weights, x + n0 * in, x_buf)},
          {DNNL_ARG_DIFF_DST, reuse ? dy_data : moved_in(p.dy_for_weights, dy, dy2_buf)}};
      memory dw = landing(p.dw_out, dw_user, dw_buf);
      args.emplace(DNNL_ARG_DIFF_WEIGHTS, dw);
      execute(p.weights_grad, args, p.weights_scratchpad);
      moved_out(p.dw_out, dw, dw_user);
    }
  });
  if (own_depthwise) kernel<DepthwiseWeightGradKernel>(Device(kCPU))(grad_out, x, grad_w, g);
  for (int64_t s = 1; onednn_grad_w && s < slices; ++s) {  // (an empty slice's part stays 0)
    const float* part = partial.data() + (s - 1) * wsize;
    for (int64_t i = 0; i < wsize; ++i) grad_w[i] += part[i];
  }
}

// The batch is split into one slice per thread of our pool, or the output
// channels into one part per thread (see channels_per_part).
void onednn_conv_forward(const float* x, const float* w, const float* b, float* y,
                         const ConvGeometry& g, bool blocked, bool x_nhwc) {
  BRASA_CHECK(!x_nhwc || (blocked && g.groups == 1),
              "conv2d: channels-last input only on the blocked path without groups");
  const int64_t in = g.C * g.H * g.W, out = g.O * g.OH * g.OW;
  const bool winograd = !x_nhwc && use_winograd(g);
  const int64_t per = channels_per_part(g, g.O, winograd);
  if (per == 0) {
    for_each_slice(g.N, [&](int64_t, int64_t n0, int64_t n) {
      forward_slice(g, n, x + n0 * in, w, b, y + n0 * out, blocked, winograd, x_nhwc);
    });
    return;
  }
  // Each part's output channels over the whole batch, in a dense buffer
  // and then in place.
  const int64_t parts = (g.O + per - 1) / per, map = g.OH * g.OW;
  parallel_for(0, parts, 1, [&](int64_t t0, int64_t t1) {
    thread_local std::vector<float> y_part;
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t o0 = t * per;
      ConvGeometry part = g;
      part.O = std::min(per, g.O - o0);
      y_part.resize(static_cast<size_t>(g.N * part.O * map));
      forward_slice(part, g.N, x, w + o0 * g.K(), b ? b + o0 : nullptr, y_part.data(), blocked,
                    winograd, x_nhwc);
      copy_rows(y_part.data(), part.O * map, y + o0 * map, out, g.N, part.O * map);
    }
  });
}

#endif  // BRASA_WITH_ONEDNN

}  // namespace detail
}  // namespace brasa
