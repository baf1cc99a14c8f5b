#include <brasa/ops/conv.h>
#include <brasa/ops/factory.h>
#include <brasa/ops/cpu/conv_onednn.h>
#include <brasa/ops/cpu/conv_onednn_primitives.h>
#include <brasa/ops/kernel_table.h>
#include <brasa/util/error.h>
#include <brasa/util/parallel.h>

#include <atomic>
#include <cstdlib>
#include <string>

#ifdef BRASA_WITH_ONEDNN
#include <algorithm>
#include <numeric>
#include <unordered_map>
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

using namespace onednn_conv;
using dnnl::memory;

namespace {

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

// The input gradient of a prepared backward, dy and w and dx as the user
// has them, with the moves in and out. Returns dy as moved, which the weight
// gradient may take again (it stays valid until this thread's next call).
memory backward_data_slice(const PreparedBackward& p, const float* dy, const float* w, float* dx) {
  thread_local AlignedBuffer dy_buf, w_buf, dx_buf;
  memory dy_data = moved_in(p.dy_for_data, dy, dy_buf);
  std::unordered_map<int, memory> args{{DNNL_ARG_DIFF_DST, dy_data},
                                       {DNNL_ARG_WEIGHTS, moved_in(p.w_for_data, w, w_buf)}};
  memory dx_data = landing(p.dx_out, dx, dx_buf);
  args.emplace(DNNL_ARG_DIFF_SRC, dx_data);
  execute(p.data, args, p.data_scratchpad);
  moved_out(p.dx_out, dx_data, dx);
  return dy_data;
}

// The weight gradient of a prepared backward into dw; `dy_moved`, when
// given, is dy already in the layout the kernel wants.
void backward_weights_slice(const PreparedBackward& p, const float* x, const float* dy,
                            const memory* dy_moved, float* dw) {
  thread_local AlignedBuffer x_buf, dy_buf, dw_buf;
  std::unordered_map<int, memory> args{
      {DNNL_ARG_SRC, moved_in(p.x_for_weights, x, x_buf)},
      {DNNL_ARG_DIFF_DST, dy_moved ? *dy_moved : moved_in(p.dy_for_weights, dy, dy_buf)}};
  memory dw_data = landing(p.dw_out, dw, dw_buf);
  args.emplace(DNNL_ARG_DIFF_WEIGHTS, dw_data);
  execute(p.weights_grad, args, p.weights_scratchpad);
  moved_out(p.dw_out, dw_data, dw);
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
// gradient (when grad_x is given) in parts of `per_c` input channels, each
// a convolution of its own with that part of the weight; the weight
// gradient (when grad_w is given) in parts of `per_o` output channels. A
// part's rows of grad_out and grad_x are gathered into (scattered from)
// dense buffers, as the primitives want them.
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
      thread_local std::vector<float> w_part, dx_part;
      for (int64_t t = t0; t < t1; ++t) {
        const int64_t c0 = t * per_c, cn = std::min(per_c, g.C - c0);
        dx_part.resize(static_cast<size_t>(N * cn * map_in));
        float* dx = dx_part.data();
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
          backward_data_slice(prepared_backward(part, N, winograd, false), grad_out, w_part.data(),
                              dx);
        }
        copy_rows(dx, cn * map_in, grad_x + c0 * map_in, in, N, cn * map_in);
      }
    });
  }
  if (!grad_w) return;
  const int64_t parts = (g.O + per_o - 1) / per_o;
  parallel_for(0, parts, 1, [&](int64_t t0, int64_t t1) {
    thread_local std::vector<float> dy_part;
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t o0 = t * per_o;
      ConvGeometry part = g;
      part.O = std::min(per_o, g.O - o0);
      dy_part.resize(static_cast<size_t>(N * part.O * map_out));
      copy_rows(grad_out + o0 * map_out, out, dy_part.data(), part.O * map_out, N,
                part.O * map_out);
      backward_weights_slice(prepared_backward(part, N, winograd, false), x, dy_part.data(),
                             nullptr, grad_w + o0 * g.K());
    }
  });
}
}  // namespace

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
  const bool winograd = !x_nhwc && use_winograd(g);
  // Each gradient split along channels where that pays (the rest by slices).
  const int64_t per_c = grad_x && !x_nhwc ? channels_per_part(g, g.C, winograd) : 0;
  const int64_t per_o = grad_w && !x_nhwc ? channels_per_part(g, g.O, winograd) : 0;
  if (per_c > 0 || per_o > 0) {
    backward_by_channel_parts(grad_out, x, w, per_c > 0 ? grad_x : nullptr,
                              per_o > 0 ? grad_w : nullptr, g, winograd, per_c, per_o);
    if (per_c > 0) grad_x = nullptr;
    if (per_o > 0) grad_w = nullptr;
    if (!grad_x && !grad_w) return;
  }
  const int64_t in = g.C * g.H * g.W, out = g.O * g.OH * g.OW;
  const int64_t wsize = g.O * g.K();
  const int64_t slices =
      in_parallel_region() ? 1 : std::max<int64_t>(1, std::min<int64_t>(g.N, get_num_threads()));
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
    const float* dy = grad_out + n0 * out;
    memory dy_data;
    if (as_forward)
      blocked_forward_slice(tg, n, dy, flipped.data(), nullptr, grad_x + n0 * in, false, false);
    else if (grad_x)
      dy_data = backward_data_slice(p, dy, w, grad_x + n0 * in);
    if (onednn_grad_w) {
      // The data gradient's moved grad_out serves again when the layouts agree.
      const bool reuse = grad_x && !as_forward && p.dy_for_weights.to == p.dy_for_data.to;
      backward_weights_slice(p, x + n0 * in, dy, reuse ? &dy_data : nullptr,
                             s == 0 ? grad_w : partial.data() + (s - 1) * wsize);
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
