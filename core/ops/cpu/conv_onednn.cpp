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
void onednn_conv_backward_data(const float*, const float*, float*, const ConvGeometry&) {
  BRASA_ERROR("conv2d: this build of Brasa has no oneDNN");
}

#else

namespace {

using dnnl::memory;
enum class Kind { kForward, kForwardBias, kBackwardData };

// One primitive per (kind, geometry, batch slice size), made on first use.
struct Key {
  Kind kind;
  int64_t n, C, H, W, O, kh, kw, sh, sw, ph, pw, dh, dw, groups;
  bool operator==(const Key& o) const {
    return kind == o.kind && n == o.n && C == o.C && H == o.H && W == o.W && O == o.O &&
           kh == o.kh && kw == o.kw && sh == o.sh && sw == o.sw && ph == o.ph && pw == o.pw &&
           dh == o.dh && dw == o.dw && groups == o.groups;
  }
};
struct KeyHash {
  size_t operator()(const Key& k) const {
    size_t h = static_cast<size_t>(k.kind);
    for (int64_t v :
         {k.n, k.C, k.H, k.W, k.O, k.kh, k.kw, k.sh, k.sw, k.ph, k.pw, k.dh, k.dw, k.groups})
      h = h * 1000003u ^ static_cast<size_t>(v);
    return h;
  }
};
struct Prepared {
  dnnl::primitive primitive;
  memory::desc scratchpad;  // the caller provides it (scratchpad_mode::user)
};

const dnnl::engine& cpu_engine() {
  static dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

// oneDNN (built on OpenMP) gets one thread per call: our pool runs the batch
// slices, so no second thread team ever competes with it for the cores.
dnnl::stream& thread_stream() {
  thread_local bool single = (omp_set_num_threads(1), true);
  thread_local dnnl::stream stream(cpu_engine());
  (void)single;
  return stream;
}

Prepared prepare(const Key& k) {
  const auto f32 = memory::data_type::f32;
  const memory::desc src({k.n, k.C, k.H, k.W}, f32, memory::format_tag::nchw);
  const int64_t OH = (k.H + 2 * k.ph - k.dh * (k.kh - 1) - 1) / k.sh + 1;
  const int64_t OW = (k.W + 2 * k.pw - k.dw * (k.kw - 1) - 1) / k.sw + 1;
  const memory::desc dst({k.n, k.O, OH, OW}, f32, memory::format_tag::nchw);
  const memory::desc weights =
      k.groups == 1 ? memory::desc({k.O, k.C, k.kh, k.kw}, f32, memory::format_tag::oihw)
                    : memory::desc({k.groups, k.O / k.groups, k.C / k.groups, k.kh, k.kw}, f32,
                                   memory::format_tag::goihw);
  const memory::desc bias({k.O}, f32, memory::format_tag::x);
  const memory::dims strides{k.sh, k.sw}, dilates{k.dh - 1, k.dw - 1}, pad{k.ph, k.pw};
  const auto alg = dnnl::algorithm::convolution_direct;
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  const auto& eng = cpu_engine();
  const bool with_bias = k.kind == Kind::kForwardBias;
  auto fwd_desc =
      with_bias ? dnnl::convolution_forward::desc(dnnl::prop_kind::forward_training, alg, src,
                                                  weights, bias, dst, strides, dilates, pad, pad)
                : dnnl::convolution_forward::desc(dnnl::prop_kind::forward_training, alg, src,
                                                  weights, dst, strides, dilates, pad, pad);
  dnnl::convolution_forward::primitive_desc fwd(fwd_desc, attr, eng);
  switch (k.kind) {
    case Kind::kForward:
    case Kind::kForwardBias:
      return {dnnl::convolution_forward(fwd), fwd.scratchpad_desc()};
    case Kind::kBackwardData: {
      dnnl::convolution_backward_data::primitive_desc pd(
          dnnl::convolution_backward_data::desc(alg, src, weights, dst, strides, dilates, pad, pad),
          attr, eng, fwd);
      return {dnnl::convolution_backward_data(pd), pd.scratchpad_desc()};
    }
  }
  BRASA_ERROR("conv2d: unknown oneDNN primitive kind");
}

const Prepared& prepared(Kind kind, const ConvGeometry& g, int64_t n) {
  static std::mutex mu;
  static std::unordered_map<Key, std::unique_ptr<Prepared>, KeyHash> cache;
  const Key key{kind, n,    g.C,  g.H,  g.W,  g.O,  g.kh,    g.kw,
                g.sh, g.sw, g.ph, g.pw, g.dh, g.dw, g.groups};
  std::lock_guard<std::mutex> lock(mu);
  auto& slot = cache[key];
  if (!slot) {
    try {
      slot = std::make_unique<Prepared>(prepare(key));
    } catch (const dnnl::error& e) {
      cache.erase(key);
      BRASA_ERROR("conv2d: oneDNN could not create a convolution for input [", n, ", ", g.C, ", ",
                  g.H, ", ", g.W, "], weight [", g.O, ", ", g.C / g.groups, ", ", g.kh, ", ", g.kw,
                  "]: ", e.what());
    }
  }
  return *slot;
}

// Runs the primitive on memory wrapping our pointers (args: oneDNN argument id, desc, pointer).
void execute(const Prepared& p,
             std::vector<std::pair<int, std::pair<memory::desc, const float*> > > args) {
  const auto& eng = cpu_engine();
  std::unordered_map<int, memory> bound;
  for (auto& [id, dp] : args)
    bound.emplace(id, memory(dp.first, eng, const_cast<float*>(dp.second)));
  std::vector<char> scratch(p.scratchpad.get_size());
  if (!scratch.empty())
    bound.emplace(DNNL_ARG_SCRATCHPAD, memory(p.scratchpad, eng, scratch.data()));
  dnnl::stream& s = thread_stream();
  p.primitive.execute(s, bound);
  s.wait();
}

// Splits the batch into one slice per thread; fn(first sample, count).
template <class F>
void over_batch(const ConvGeometry& g, const F& fn) {
  const int64_t slices = in_parallel_region() ? 1 : std::min<int64_t>(g.N, get_num_threads());
  const int64_t per = (g.N + slices - 1) / slices;
  parallel_for(0, slices, 1, [&](int64_t b, int64_t e) {
    for (int64_t s = b; s < e; ++s) {
      const int64_t n0 = s * per, n = std::min(per, g.N - n0);
      if (n > 0) fn(n0, n);
    }
  });
}

memory::desc plain(int64_t n, int64_t c, int64_t h, int64_t w) {
  return memory::desc({n, c, h, w}, memory::data_type::f32, memory::format_tag::nchw);
}
memory::desc weights_desc(const ConvGeometry& g) {
  const auto f32 = memory::data_type::f32;
  return g.groups == 1 ? memory::desc({g.O, g.C, g.kh, g.kw}, f32, memory::format_tag::oihw)
                       : memory::desc({g.groups, g.O / g.groups, g.C / g.groups, g.kh, g.kw}, f32,
                                      memory::format_tag::goihw);
}

}  // namespace

void onednn_conv_forward(const float* x, const float* w, const float* b, float* y,
                         const ConvGeometry& g) {
  const int64_t in = g.C * g.H * g.W, out = g.O * g.OH * g.OW;
  over_batch(g, [&](int64_t n0, int64_t n) {
    const Prepared& p = prepared(b ? Kind::kForwardBias : Kind::kForward, g, n);
    std::vector<std::pair<int, std::pair<memory::desc, const float*> > > args{
        {DNNL_ARG_SRC, {plain(n, g.C, g.H, g.W), x + n0 * in}},
        {DNNL_ARG_WEIGHTS, {weights_desc(g), w}},
        {DNNL_ARG_DST, {plain(n, g.O, g.OH, g.OW), y + n0 * out}}};
    if (b)
      args.push_back(
          {DNNL_ARG_BIAS, {memory::desc({g.O}, memory::data_type::f32, memory::format_tag::x), b}});
    execute(p, std::move(args));
  });
}

void onednn_conv_backward_data(const float* gy, const float* w, float* gx, const ConvGeometry& g) {
  const int64_t in = g.C * g.H * g.W, out = g.O * g.OH * g.OW;
  over_batch(g, [&](int64_t n0, int64_t n) {
    execute(prepared(Kind::kBackwardData, g, n),
            {{DNNL_ARG_DIFF_DST, {plain(n, g.O, g.OH, g.OW), gy + n0 * out}},
             {DNNL_ARG_WEIGHTS, {weights_desc(g), w}},
             {DNNL_ARG_DIFF_SRC, {plain(n, g.C, g.H, g.W), gx + n0 * in}}});
  });
}

#endif  // BRASA_WITH_ONEDNN

}  // namespace detail
}  // namespace brasa
