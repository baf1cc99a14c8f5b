#include <brasa/ops/conv.h>
#include <brasa/ops/cpu/conv_onednn.h>
#include <brasa/util/error.h>
#include <brasa/util/parallel.h>

#include <atomic>
#include <cstdlib>
#include <string>

#ifdef BRASA_WITH_ONEDNN
#include <algorithm>
#include <dnnl.hpp>
#include <memory>
#include <mutex>
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
}  // namespace

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

void onednn_conv_forward(const float*, const float*, const float*, float*, const ConvGeometry&) {
  BRASA_ERROR("conv2d: this build of Brasa has no oneDNN");
}

void onednn_use_one_thread() {}

#else

void onednn_use_one_thread() {
  thread_local bool single = (omp_set_num_threads(1), true);
  (void)single;
}

namespace {

using dnnl::memory;

// One primitive per geometry, batch slice size and bias presence, made on
// first use, with the descriptors its arguments are wrapped in.
struct Key {
  int64_t n, C, H, W, O, kh, kw, sh, sw, ph, pw, dh, dw, groups;
  bool bias;
  bool operator==(const Key& o) const {
    return n == o.n && C == o.C && H == o.H && W == o.W && O == o.O && kh == o.kh && kw == o.kw &&
           sh == o.sh && sw == o.sw && ph == o.ph && pw == o.pw && dh == o.dh && dw == o.dw &&
           groups == o.groups && bias == o.bias;
  }
};
struct KeyHash {
  size_t operator()(const Key& k) const {
    size_t h = k.bias;
    for (int64_t v :
         {k.n, k.C, k.H, k.W, k.O, k.kh, k.kw, k.sh, k.sw, k.ph, k.pw, k.dh, k.dw, k.groups})
      h = h * 1000003u ^ static_cast<size_t>(v);
    return h;
  }
};
struct Prepared {
  memory::desc src, weights, bias, dst, scratchpad;  // the caller provides the scratchpad
  dnnl::convolution_forward primitive;
};

const dnnl::engine& cpu_engine() {
  static dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

dnnl::stream& thread_stream() {
  onednn_use_one_thread();
  thread_local dnnl::stream stream(cpu_engine());
  return stream;
}

std::unique_ptr<Prepared> prepare(const Key& k, int64_t OH, int64_t OW) {
  const auto f32 = memory::data_type::f32;
  auto p = std::make_unique<Prepared>();
  p->src = memory::desc({k.n, k.C, k.H, k.W}, f32, memory::format_tag::nchw);
  p->dst = memory::desc({k.n, k.O, OH, OW}, f32, memory::format_tag::nchw);
  p->weights = k.groups == 1 ? memory::desc({k.O, k.C, k.kh, k.kw}, f32, memory::format_tag::oihw)
                             : memory::desc({k.groups, k.O / k.groups, k.C / k.groups, k.kh, k.kw},
                                            f32, memory::format_tag::goihw);
  p->bias = memory::desc({k.O}, f32, memory::format_tag::x);
  // oneDNN counts dilation from 0 (no gaps), PyTorch from 1.
  const memory::dims strides{k.sh, k.sw}, dilates{k.dh - 1, k.dw - 1}, pad{k.ph, k.pw};
  const auto inference = dnnl::prop_kind::forward_inference;
  const auto alg = dnnl::algorithm::convolution_direct;
  auto desc = k.bias ? dnnl::convolution_forward::desc(inference, alg, p->src, p->weights, p->bias,
                                                       p->dst, strides, dilates, pad, pad)
                     : dnnl::convolution_forward::desc(inference, alg, p->src, p->weights, p->dst,
                                                       strides, dilates, pad, pad);
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  dnnl::convolution_forward::primitive_desc pd(desc, attr, cpu_engine());
  p->scratchpad = pd.scratchpad_desc();
  p->primitive = dnnl::convolution_forward(pd);
  return p;
}

const Prepared& prepared(const ConvGeometry& g, int64_t n, bool bias) {
  static std::mutex mu;
  static std::unordered_map<Key, std::unique_ptr<Prepared>, KeyHash> cache;
  const Key key{n,    g.C,  g.H,  g.W,  g.O,  g.kh,     g.kw, g.sh,
                g.sw, g.ph, g.pw, g.dh, g.dw, g.groups, bias};
  std::lock_guard<std::mutex> lock(mu);
  auto& slot = cache[key];
  if (!slot) {
    try {
      slot = prepare(key, g.OH, g.OW);
    } catch (const dnnl::error& e) {
      cache.erase(key);
      BRASA_ERROR("conv2d: oneDNN could not create a convolution for input [", n, ", ", g.C, ", ",
                  g.H, ", ", g.W, "], weight [", g.O, ", ", g.C / g.groups, ", ", g.kh, ", ", g.kw,
                  "]: ", e.what());
    }
  }
  return *slot;
}

}  // namespace

// The batch is split into one slice per thread of our pool.
void onednn_conv_forward(const float* x, const float* w, const float* b, float* y,
                         const ConvGeometry& g) {
  const int64_t in = g.C * g.H * g.W, out = g.O * g.OH * g.OW;
  const int64_t slices = in_parallel_region() ? 1 : std::min<int64_t>(g.N, get_num_threads());
  const int64_t per = (g.N + slices - 1) / slices;
  parallel_for(0, slices, 1, [&](int64_t s0, int64_t s1) {
    for (int64_t s = s0; s < s1; ++s) {
      const int64_t n0 = s * per, n = std::min(per, g.N - n0);
      if (n <= 0) continue;
      const Prepared& p = prepared(g, n, b != nullptr);
      const auto& eng = cpu_engine();
      std::unordered_map<int, memory> args{
          {DNNL_ARG_SRC, memory(p.src, eng, const_cast<float*>(x + n0 * in))},
          {DNNL_ARG_WEIGHTS, memory(p.weights, eng, const_cast<float*>(w))},
          {DNNL_ARG_DST, memory(p.dst, eng, y + n0 * out)}};
      if (b) args.emplace(DNNL_ARG_BIAS, memory(p.bias, eng, const_cast<float*>(b)));
      std::vector<char> scratch(p.scratchpad.get_size());
      if (!scratch.empty())
        args.emplace(DNNL_ARG_SCRATCHPAD, memory(p.scratchpad, eng, scratch.data()));
      dnnl::stream& stream = thread_stream();
      p.primitive.execute(stream, args);
      stream.wait();
    }
  });
}

#endif  // BRASA_WITH_ONEDNN

}  // namespace detail
}  // namespace brasa
