// conv2d on CUDA through cuDNN: the forward and both gradients, NCHW, for
// float32, float64, float16 and bfloat16 (the latter two accumulate in
// float). The algorithm of each (direction, geometry, dtype, math mode) is
// chosen once and cached: cuDNN's heuristic pick, or with
// set_cudnn_benchmark(true) the fastest of a timed trial; deterministic mode
// keeps only deterministic algorithms. Workspaces come from the caching
// allocator, so a steady training loop makes no cudaMalloc.
#include <brasa/cuda/cuda_check.h>
#include <brasa/cuda/cudnn.h>
#include <brasa/cuda/stream.h>
#include <brasa/ops/cuda/conv_cudnn_graph.h>
#include <brasa/ops/cuda/cudnn_handle.h>
#include <brasa/ops/cuda/register.h>
#include <brasa/ops/factory.h>
#include <brasa/ops/kernel_table.h>
#include <brasa/ops/kernels/conv.h>

#include <array>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <optional>
#include <tuple>

namespace brasa::cuda {

void check_cudnn(const char* op, const char* call, cudnnStatus_t status) {
  BRASA_CHECK(status == CUDNN_STATUS_SUCCESS, op, ": cuDNN error: ", cudnnGetErrorString(status),
              " (", call, ")");
}

cudnnHandle_t cudnn_handle(DeviceIndex d) {
  struct Handles {
    std::array<cudnnHandle_t, 64> h{};
    ~Handles() {
      for (cudnnHandle_t x : h)
        if (x) cudnnDestroy(x);
    }
  };
  thread_local Handles handles;
  cudnnHandle_t& h = handles.h[d];
  if (!h) BRASA_CUDNN("cuDNN", cudnnCreate(&h));
  BRASA_CUDNN("cuDNN", cudnnSetStream(h, getCurrentCUDAStream(d).stream()));
  return h;
}

cudnnDataType_t cudnn_type(ScalarType t, const char* op) {
  switch (t) {
    case kFloat:
      return CUDNN_DATA_FLOAT;
    case kDouble:
      return CUDNN_DATA_DOUBLE;
    case kHalf:
      return CUDNN_DATA_HALF;
    case kBFloat16:
      return CUDNN_DATA_BFLOAT16;
    default:
      BRASA_ERROR(op, ": cuDNN does not take '", t, "' tensors");
  }
}

namespace {

std::atomic<bool> g_benchmark{false}, g_deterministic{false}, g_allow_tf32{true};

// The descriptors of one convolution; freed with it.
struct Descriptors {
  cudnnTensorDescriptor_t x = nullptr, y = nullptr;
  cudnnFilterDescriptor_t w = nullptr;
  cudnnConvolutionDescriptor_t conv = nullptr;

  Descriptors(const detail::ConvGeometry& g, ScalarType t) {
    const cudnnDataType_t type = cudnn_type(t, "conv2d");
    BRASA_CUDNN("conv2d", cudnnCreateTensorDescriptor(&x));
    BRASA_CUDNN("conv2d", cudnnCreateTensorDescriptor(&y));
    BRASA_CUDNN("conv2d", cudnnCreateFilterDescriptor(&w));
    BRASA_CUDNN("conv2d", cudnnCreateConvolutionDescriptor(&conv));
    BRASA_CUDNN("conv2d", cudnnSetTensor4dDescriptor(x, CUDNN_TENSOR_NCHW, type, int(g.N), int(g.C),
                                                     int(g.H), int(g.W)));
    BRASA_CUDNN("conv2d", cudnnSetTensor4dDescriptor(y, CUDNN_TENSOR_NCHW, type, int(g.N), int(g.O),
                                                     int(g.OH), int(g.OW)));
    BRASA_CUDNN("conv2d", cudnnSetFilter4dDescriptor(w, type, CUDNN_TENSOR_NCHW, int(g.O),
                                                     int(g.C / g.groups), int(g.kh), int(g.kw)));
    const cudnnDataType_t compute = t == kDouble ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT;
    BRASA_CUDNN("conv2d", cudnnSetConvolution2dDescriptor(conv, int(g.ph), int(g.pw), int(g.sh),
                                                          int(g.sw), int(g.dh), int(g.dw),
                                                          CUDNN_CROSS_CORRELATION, compute));
    BRASA_CUDNN("conv2d", cudnnSetConvolutionGroupCount(conv, int(g.groups)));
    // Tensor cores for half and bfloat16; for float32 only with allow_tf32.
    const cudnnMathType_t math = t == kFloat && !g_allow_tf32.load() ? CUDNN_FMA_MATH
                                 : t == kDouble                      ? CUDNN_DEFAULT_MATH
                                                                     : CUDNN_TENSOR_OP_MATH;
    BRASA_CUDNN("conv2d", cudnnSetConvolutionMathType(conv, math));
  }
  ~Descriptors() {
    cudnnDestroyConvolutionDescriptor(conv);
    cudnnDestroyFilterDescriptor(w);
    cudnnDestroyTensorDescriptor(y);
    cudnnDestroyTensorDescriptor(x);
  }
  Descriptors(const Descriptors&) = delete;
  Descriptors& operator=(const Descriptors&) = delete;
};

enum class Direction { kForward, kBackwardData, kBackwardFilter };

// What an algorithm choice depends on.
using AlgoKey = std::tuple<int, int, int, bool, bool, std::array<int64_t, 16>>;

AlgoKey key_of(Direction dir, DeviceIndex d, ScalarType t, const detail::ConvGeometry& g) {
  return {int(dir),
          int(d),
          int(t),
          g_allow_tf32.load(),
          g_deterministic.load(),
          {g.N, g.C, g.H, g.W, g.O, g.kh, g.kw, g.sh, g.sw, g.ph, g.pw, g.dh, g.dw, g.OH, g.OW,
           g.groups}};
}

struct Choice {
  int algo;
  size_t workspace;
};

std::mutex g_cache_mu;
std::map<AlgoKey, Choice> g_cache;

// The first usable entry of a perf list (sorted fastest first): successful,
// and deterministic when that is asked for.
template <class Perf>
Choice pick(const Perf* perfs, int n, const char* op) {
  for (int i = 0; i < n; ++i) {
    if (perfs[i].status != CUDNN_STATUS_SUCCESS) continue;
    if (g_deterministic.load() && perfs[i].determinism != CUDNN_DETERMINISTIC) continue;
    return {int(perfs[i].algo), perfs[i].memory};
  }
  BRASA_ERROR(op, ": cuDNN found no algorithm for this convolution",
              g_deterministic.load() ? " that is deterministic" : "");
}

// Algorithm and workspace for one direction: found once, then cached.
template <class Find>
Choice choose(Direction dir, DeviceIndex d, ScalarType t, const detail::ConvGeometry& g,
              Find find) {
  const AlgoKey key = key_of(dir, d, t, g);
  {
    std::lock_guard<std::mutex> lock(g_cache_mu);
    auto it = g_cache.find(key);
    if (it != g_cache.end()) return it->second;
  }
  const Choice c = find();
  std::lock_guard<std::mutex> lock(g_cache_mu);
  g_cache.emplace(key, c);
  return c;
}

Tensor workspace(size_t bytes, Device d) {
  return empty({static_cast<int64_t>(bytes)}, TensorOptions().dtype(kByte).device(d));
}

// cuDNN's scaling factors are float for float/half/bfloat16 data, double for double.
struct Scale {
  float f;
  double d;
  const void* of(ScalarType t) const { return t == kDouble ? static_cast<const void*>(&d) : &f; }
};
constexpr Scale kOne{1.f, 1.0}, kZero{0.f, 0.0};

constexpr int kMaxAlgos = 16;

// The graph API's plan for a convolution (conv_cudnn_graph.h), unless
// benchmark mode asks for timed algorithms (the legacy Find) or
// BRASA_CUDNN_LEGACY=1 turns it off; null: use the legacy API.
std::shared_ptr<graph::ConvPlan> graph_plan(graph::ConvDirection dir, DeviceIndex d, ScalarType t,
                                            const detail::ConvGeometry& g, cudnnHandle_t h) {
  static const bool legacy = [] {
    const char* v = std::getenv("BRASA_CUDNN_LEGACY");
    return v && std::strcmp(v, "1") == 0;
  }();
  if (legacy || g_benchmark.load()) return nullptr;
  return graph::conv_plan(dir, d, t, g, g_allow_tf32.load(), g_deterministic.load(), h);
}

// Runs a direction through its graph plan when there is one and the
// operands meet its alignment; false: the caller uses the legacy API.
bool run_graph(graph::ConvDirection dir, const Tensor& x, const Tensor& w, const Tensor& y,
               const detail::ConvGeometry& g, cudnnHandle_t h) {
  const Device dev = y.device();
  auto plan = graph_plan(dir, dev.index(), y.dtype(), g, h);
  if (!plan || !graph::aligned(x.data_ptr()) || !graph::aligned(w.data_ptr()) ||
      !graph::aligned(y.data_ptr()))
    return false;
  Tensor ws = workspace(static_cast<size_t>(graph::workspace_size(*plan)), dev);
  graph::execute(*plan, h, x.data_ptr(), w.data_ptr(), y.data_ptr(), ws.data_ptr());
  return true;
}

Tensor forward_cudnn(const Tensor& input, const Tensor& weight, const Tensor& bias,
                     const detail::ConvGeometry& g) {
  const char* op = "conv2d";
  const ScalarType t = input.dtype();
  const Device dev = input.device();
  const DeviceIndex d = dev.index();
  CUDAGuard guard(d);
  Tensor x = input.contiguous(), w = weight.contiguous();
  Tensor y = empty({g.N, g.O, g.OH, g.OW}, input.options());
  if (y.numel() == 0) return y;
  cudnnHandle_t h = cudnn_handle(d);
  if (run_graph(graph::ConvDirection::kForward, x, w, y, g, h)) {
    if (bias.defined()) y.add_(bias.view({1, g.O, 1, 1}));
    return y;
  }
  Descriptors desc(g, t);
  const Choice c = choose(Direction::kForward, d, t, g, [&] {
    cudnnConvolutionFwdAlgoPerf_t perfs[kMaxAlgos];
    int n = 0;
    if (g_benchmark.load()) {
      BRASA_CUDNN(op, cudnnFindConvolutionForwardAlgorithm(h, desc.x, desc.w, desc.conv, desc.y,
                                                           kMaxAlgos, &n, perfs));
    } else {
      BRASA_CUDNN(op, cudnnGetConvolutionForwardAlgorithm_v7(h, desc.x, desc.w, desc.conv, desc.y,
                                                             kMaxAlgos, &n, perfs));
    }
    return pick(perfs, n, op);
  });
  Tensor ws = workspace(c.workspace, dev);
  BRASA_CUDNN(op,
              cudnnConvolutionForward(h, kOne.of(t), desc.x, x.data_ptr(), desc.w, w.data_ptr(),
                                      desc.conv, cudnnConvolutionFwdAlgo_t(c.algo), ws.data_ptr(),
                                      c.workspace, kZero.of(t), desc.y, y.data_ptr()));
  if (bias.defined()) y.add_(bias.view({1, g.O, 1, 1}));
  return y;
}

std::pair<Tensor, Tensor> backward_cudnn(const Tensor& grad_out, const Tensor& input,
                                         const Tensor& weight, const detail::ConvGeometry& g,
                                         bool want_input, bool want_weight) {
  const char* op = "conv2d backward";
  const ScalarType t = grad_out.dtype();
  const Device dev = grad_out.device();
  const DeviceIndex d = dev.index();
  CUDAGuard guard(d);
  Tensor dy = grad_out.contiguous(), w = weight.contiguous();
  cudnnHandle_t h = cudnn_handle(d);
  std::optional<Descriptors> legacy;  // made when a direction needs the legacy API
  Tensor dx, dw;
  if (want_input) {
    dx = empty({g.N, g.C, g.H, g.W}, grad_out.options());
  }
  if (want_input && !run_graph(graph::ConvDirection::kBackwardData, dx, w, dy, g, h)) {
    Descriptors& desc = legacy ? *legacy : legacy.emplace(g, t);
    const Choice c = choose(Direction::kBackwardData, d, t, g, [&] {
      cudnnConvolutionBwdDataAlgoPerf_t perfs[kMaxAlgos];
      int n = 0;
      if (g_benchmark.load()) {
        BRASA_CUDNN(op, cudnnFindConvolutionBackwardDataAlgorithm(h, desc.w, desc.y, desc.conv,
                                                                  desc.x, kMaxAlgos, &n, perfs));
      } else {
        BRASA_CUDNN(op, cudnnGetConvolutionBackwardDataAlgorithm_v7(h, desc.w, desc.y, desc.conv,
                                                                    desc.x, kMaxAlgos, &n, perfs));
      }
      return pick(perfs, n, op);
    });
    Tensor ws = workspace(c.workspace, dev);
    BRASA_CUDNN(op, cudnnConvolutionBackwardData(
                        h, kOne.of(t), desc.w, w.data_ptr(), desc.y, dy.data_ptr(), desc.conv,
                        cudnnConvolutionBwdDataAlgo_t(c.algo), ws.data_ptr(), c.workspace,
                        kZero.of(t), desc.x, dx.data_ptr()));
  }
  Tensor x;
  if (want_weight) {
    x = input.contiguous();
    dw = empty({g.O, g.C / g.groups, g.kh, g.kw}, grad_out.options());
  }
  if (want_weight && !run_graph(graph::ConvDirection::kBackwardFilter, x, dw, dy, g, h)) {
    Descriptors& desc = legacy ? *legacy : legacy.emplace(g, t);
    const Choice c = choose(Direction::kBackwardFilter, d, t, g, [&] {
      cudnnConvolutionBwdFilterAlgoPerf_t perfs[kMaxAlgos];
      int n = 0;
      if (g_benchmark.load()) {
        BRASA_CUDNN(op, cudnnFindConvolutionBackwardFilterAlgorithm(h, desc.x, desc.y, desc.conv,
                                                                    desc.w, kMaxAlgos, &n, perfs));
      } else {
        BRASA_CUDNN(op, cudnnGetConvolutionBackwardFilterAlgorithm_v7(
                            h, desc.x, desc.y, desc.conv, desc.w, kMaxAlgos, &n, perfs));
      }
      return pick(perfs, n, op);
    });
    Tensor ws = workspace(c.workspace, dev);
    BRASA_CUDNN(op, cudnnConvolutionBackwardFilter(
                        h, kOne.of(t), desc.x, x.data_ptr(), desc.y, dy.data_ptr(), desc.conv,
                        cudnnConvolutionBwdFilterAlgo_t(c.algo), ws.data_ptr(), c.workspace,
                        kZero.of(t), desc.w, dw.data_ptr()));
  }
  return {dx, dw};
}

}  // namespace

bool cudnn_benchmark() { return g_benchmark.load(); }
void set_cudnn_benchmark(bool on) { g_benchmark.store(on); }
bool cudnn_deterministic() { return g_deterministic.load(); }
void set_cudnn_deterministic(bool on) { g_deterministic.store(on); }
bool cudnn_allow_tf32() { return g_allow_tf32.load(); }
void set_cudnn_allow_tf32(bool on) { g_allow_tf32.store(on); }

void register_cudnn_conv_kernels() {
  register_kernel<ConvForwardKernel>(kCUDA, forward_cudnn);
  register_kernel<ConvBackwardKernel>(kCUDA, backward_cudnn);
}

}  // namespace brasa::cuda
