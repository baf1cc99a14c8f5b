#include <brasa/ops/cuda/conv_cudnn_graph.h>
#include <brasa/ops/cuda/cudnn_handle.h>
#include <brasa/util/error.h>

#include <array>
#include <cstdint>
#include <map>
#include <mutex>
#include <tuple>
#include <vector>

// The operation graph and the plan are bound to a handle by these
// attributes; cuDNN 9 deprecates them in favour of device-property
// descriptors, which older cuDNN 9 releases lack.
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

namespace brasa::cuda::graph {
namespace {

constexpr const char* kOp = "conv2d (cuDNN graph)";
constexpr int64_t kAlignment = 16;
// The unique ids of the three operands in every plan's variant pack.
constexpr int64_t kX = 'x', kW = 'w', kY = 'y';

// One backend descriptor, destroyed with this object.
class Desc {
 public:
  explicit Desc(cudnnBackendDescriptorType_t type) {
    BRASA_CUDNN(kOp, cudnnBackendCreateDescriptor(type, &d_));
  }
  ~Desc() {
    if (d_) cudnnBackendDestroyDescriptor(d_);
  }
  Desc(const Desc&) = delete;
  Desc& operator=(const Desc&) = delete;
  Desc(Desc&& o) noexcept : d_(o.d_) { o.d_ = nullptr; }
  Desc& operator=(Desc&& o) noexcept {
    if (this != &o) {
      if (d_) cudnnBackendDestroyDescriptor(d_);
      d_ = o.d_;
      o.d_ = nullptr;
    }
    return *this;
  }

  Desc& set(cudnnBackendAttributeName_t name, cudnnBackendAttributeType_t type, int64_t count,
            const void* values) {
    BRASA_CUDNN(kOp, cudnnBackendSetAttribute(d_, name, type, count, values));
    return *this;
  }
  Desc& set(cudnnBackendAttributeName_t name, const Desc& other) {
    return set(name, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &other.d_);
  }
  void finalize() { BRASA_CUDNN(kOp, cudnnBackendFinalize(d_)); }
  cudnnStatus_t try_finalize() { return cudnnBackendFinalize(d_); }
  cudnnBackendDescriptor_t get() const { return d_; }

 private:
  cudnnBackendDescriptor_t d_ = nullptr;
};

// A contiguous NCHW tensor of `dims`.
Desc tensor(int64_t uid, cudnnDataType_t type, std::array<int64_t, 4> dims) {
  const std::array<int64_t, 4> strides{dims[1] * dims[2] * dims[3], dims[2] * dims[3], dims[3], 1};
  Desc t(CUDNN_BACKEND_TENSOR_DESCRIPTOR);
  t.set(CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &type)
      .set(CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, 4, dims.data())
      .set(CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, 4, strides.data())
      .set(CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &uid)
      .set(CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 1, &kAlignment)
      .finalize();
  return t;
}

Desc convolution(const detail::ConvGeometry& g, cudnnDataType_t compute) {
  const int64_t spatial = 2;
  const cudnnConvolutionMode_t mode = CUDNN_CROSS_CORRELATION;
  const int64_t pad[2] = {g.ph, g.pw}, stride[2] = {g.sh, g.sw}, dilation[2] = {g.dh, g.dw};
  Desc c(CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR);
  c.set(CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, CUDNN_TYPE_INT64, 1, &spatial)
      .set(CUDNN_ATTR_CONVOLUTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &compute)
      .set(CUDNN_ATTR_CONVOLUTION_CONV_MODE, CUDNN_TYPE_CONVOLUTION_MODE, 1, &mode)
      .set(CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, CUDNN_TYPE_INT64, 2, pad)
      .set(CUDNN_ATTR_CONVOLUTION_POST_PADDINGS, CUDNN_TYPE_INT64, 2, pad)
      .set(CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, CUDNN_TYPE_INT64, 2, stride)
      .set(CUDNN_ATTR_CONVOLUTION_DILATIONS, CUDNN_TYPE_INT64, 2, dilation)
      .finalize();
  return c;
}

// The convolution as a one-operation graph, with the descriptors it was
// made of (kept alive as long as the graph).
struct Graph {
  Desc x, w, y, conv, op, graph;
};

Graph operation(ConvDirection dir, const detail::ConvGeometry& g, ScalarType t,
                cudnnHandle_t handle) {
  const cudnnDataType_t type = cudnn_type(t, kOp);
  const cudnnDataType_t compute = t == kDouble ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT;
  Desc x = tensor(kX, type, {g.N, g.C, g.H, g.W});
  Desc w = tensor(kW, type, {g.O, g.C, g.kh, g.kw});
  Desc y = tensor(kY, type, {g.N, g.O, g.OH, g.OW});
  Desc conv = convolution(g, compute);
  // alpha 1, beta 0, in double for double data and float otherwise.
  const double one_d = 1, zero_d = 0;
  const float one_f = 1, zero_f = 0;
  const bool dbl = t == kDouble;
  const cudnnBackendAttributeType_t scale = dbl ? CUDNN_TYPE_DOUBLE : CUDNN_TYPE_FLOAT;
  const void* one = dbl ? static_cast<const void*>(&one_d) : &one_f;
  const void* zero = dbl ? static_cast<const void*>(&zero_d) : &zero_f;
  // The operation of each direction and its attributes: the forward's input
  // (or dx), weight (or dw) and output (or dy), the convolution, alpha, beta.
  struct Attrs {
    cudnnBackendDescriptorType_t type;
    cudnnBackendAttributeName_t x, w, y, conv, alpha, beta;
  };
  const Attrs a = dir == ConvDirection::kForward
                      ? Attrs{CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR,
                              CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X,
                              CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W,
                              CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y,
                              CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC,
                              CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA,
                              CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA}
                  : dir == ConvDirection::kBackwardData
                      ? Attrs{CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR,
                              CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DX,
                              CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_W,
                              CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DY,
                              CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_CONV_DESC,
                              CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_ALPHA,
                              CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_BETA}
                      : Attrs{CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_FILTER_DESCRIPTOR,
                              CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_X,
                              CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DW,
                              CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DY,
                              CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_CONV_DESC,
                              CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_ALPHA,
                              CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_BETA};
  Desc op(a.type);
  op.set(a.x, x).set(a.w, w).set(a.y, y).set(a.conv, conv);
  op.set(a.alpha, scale, 1, one).set(a.beta, scale, 1, zero);
  op.finalize();
  Desc graph(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
  graph.set(CUDNN_ATTR_OPERATIONGRAPH_OPS, op)
      .set(CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, 1, &handle)
      .finalize();
  return Graph{std::move(x),    std::move(w),  std::move(y),
               std::move(conv), std::move(op), std::move(graph)};
}

// Whether an engine config may be used: its numerical notes against the
// switches (float without TF32 stays off tensor cores; nothing converts
// float or double inputs down; deterministic mode keeps deterministic engines).
bool allowed(cudnnBackendDescriptor_t config, ScalarType t, bool allow_tf32, bool deterministic) {
  Desc engine(CUDNN_BACKEND_ENGINE_DESCRIPTOR);
  cudnnBackendDescriptor_t e = engine.get();
  int64_t n = 0;
  if (cudnnBackendGetAttribute(config, CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_TYPE_BACKEND_DESCRIPTOR,
                               1, &n, &e) != CUDNN_STATUS_SUCCESS)
    return false;
  std::array<cudnnBackendNumericalNote_t, CUDNN_NUMERICAL_NOTE_TYPE_COUNT> notes{};
  int64_t count = 0;
  if (cudnnBackendGetAttribute(e, CUDNN_ATTR_ENGINE_NUMERICAL_NOTE, CUDNN_TYPE_NUMERICAL_NOTE,
                               int64_t(notes.size()), &count, notes.data()) != CUDNN_STATUS_SUCCESS)
    return false;
  const bool full_precision = t == kFloat || t == kDouble;
  for (int64_t i = 0; i < count; ++i) {
    if (notes[i] == CUDNN_NUMERICAL_NOTE_TENSOR_CORE && t == kFloat && !allow_tf32) return false;
    if (notes[i] == CUDNN_NUMERICAL_NOTE_DOWN_CONVERT_INPUTS && full_precision) return false;
    if (notes[i] == CUDNN_NUMERICAL_NOTE_NONDETERMINISTIC && deterministic) return false;
  }
  return true;
}

}  // namespace

// The plan, and what it was built from (the graph, the heuristics and their
// engine configs), which lives as long as it.
struct ConvPlan {
  Graph graph;
  Desc heuristics;
  std::vector<Desc> configs;
  Desc plan{CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR};
  int64_t workspace = 0;
};

namespace {

// The first engine config, in cuDNN's heuristic order, that is allowed and
// finalizes into a plan; null when none does.
std::shared_ptr<ConvPlan> build(ConvDirection dir, ScalarType t, const detail::ConvGeometry& g,
                                bool allow_tf32, bool deterministic, cudnnHandle_t handle) {
  auto p = std::make_shared<ConvPlan>(
      ConvPlan{operation(dir, g, t, handle), Desc(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR), {}});
  const cudnnBackendHeurMode_t mode = CUDNN_HEUR_MODE_A;
  p->heuristics.set(CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, p->graph.graph)
      .set(CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &mode)
      .finalize();
  int64_t available = 0;
  BRASA_CUDNN(kOp, cudnnBackendGetAttribute(p->heuristics.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                            CUDNN_TYPE_BACKEND_DESCRIPTOR, 0, &available, nullptr));
  std::vector<cudnnBackendDescriptor_t> raw;
  for (int64_t i = 0; i < available; ++i) {
    p->configs.emplace_back(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR);
    raw.push_back(p->configs.back().get());
  }
  int64_t got = 0;
  BRASA_CUDNN(kOp,
              cudnnBackendGetAttribute(p->heuristics.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                       CUDNN_TYPE_BACKEND_DESCRIPTOR, available, &got, raw.data()));
  for (int64_t i = 0; i < got; ++i) {
    if (!allowed(raw[i], t, allow_tf32, deterministic)) continue;
    Desc plan(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR);
    plan.set(CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, 1, &handle)
        .set(CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &raw[i]);
    if (plan.try_finalize() != CUDNN_STATUS_SUCCESS) continue;
    int64_t n = 0;
    BRASA_CUDNN(kOp, cudnnBackendGetAttribute(plan.get(), CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE,
                                              CUDNN_TYPE_INT64, 1, &n, &p->workspace));
    p->plan = std::move(plan);
    return p;
  }
  return nullptr;
}

using PlanKey = std::tuple<int, int, int, bool, bool, std::array<int64_t, 16>>;

}  // namespace

std::shared_ptr<ConvPlan> conv_plan(ConvDirection dir, DeviceIndex device, ScalarType dtype,
                                    const detail::ConvGeometry& g, bool allow_tf32,
                                    bool deterministic, cudnnHandle_t handle) {
  if (g.groups != 1) return nullptr;
  static std::mutex mu;
  // null: none could be built. Never destroyed: a plan may hold device code,
  // which must not be freed after CUDA has gone at exit.
  static auto* cache = new std::map<PlanKey, std::shared_ptr<ConvPlan>>;
  const PlanKey key{int(dir),
                    int(device),
                    int(dtype),
                    allow_tf32,
                    deterministic,
                    {g.N, g.C, g.H, g.W, g.O, g.kh, g.kw, g.sh, g.sw, g.ph, g.pw, g.dh, g.dw, g.OH,
                     g.OW, g.groups}};
  std::lock_guard<std::mutex> lock(mu);
  auto it = cache->find(key);
  if (it != cache->end()) return it->second;
  std::shared_ptr<ConvPlan> p;
  try {
    p = build(dir, dtype, g, allow_tf32, deterministic, handle);
  } catch (const Error&) {
    p = nullptr;  // this cuDNN cannot express it: the legacy API will
  }
  cache->emplace(key, p);
  return p;
}

int64_t workspace_size(const ConvPlan& plan) { return plan.workspace; }

bool aligned(const void* p) { return reinterpret_cast<uintptr_t>(p) % kAlignment == 0; }

void execute(const ConvPlan& plan, cudnnHandle_t handle, void* x, void* w, void* y,
             void* workspace) {
  const int64_t uids[3] = {kX, kW, kY};
  void* pointers[3] = {x, w, y};
  Desc pack(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR);
  pack.set(CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, 3, uids)
      .set(CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, 3, pointers)
      .set(CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1, &workspace)
      .finalize();
  BRASA_CUDNN(kOp, cudnnBackendExecute(handle, plan.plan.get(), pack.get()));
}

}  // namespace brasa::cuda::graph
