#include <brasa/device/device_runtime.h>
#include <brasa/ops/copy.h>
#include <brasa/ops/factory.h>

#include <cmath>
#include <cstring>

namespace brasa {
namespace {

void check_sizes(const char* op, IntArrayRef size) {
  for (size_t i = 0; i < size.size(); ++i)
    BRASA_CHECK(size[i] >= 0, op, ": negative dimension ", size[i], " in size ", size);
}

Tensor finish(Tensor t, const TensorOptions& o) {
  if (o.requires_grad()) t.requires_grad_(true);
  return t;
}

// Factories that compute their values on the host write them into a CPU
// tensor and move it to the requested device (a no-op for the CPU).
TensorOptions on_host(const TensorOptions& o) {
  return o.requires_grad(false).device(Device(kCPU));
}
Tensor finish_on(Tensor host, const TensorOptions& o) {
  if (o.has_device() && !o.device().is_cpu()) host = host.to(o.device());
  return finish(host, o);
}

struct BlobContext {
  void* data;
  std::function<void(void*)> deleter;
};
void delete_blob(void* ctx) {
  auto* b = static_cast<BlobContext*>(ctx);
  if (b->deleter) b->deleter(b->data);
  delete b;
}

}  // namespace

Tensor empty(IntArrayRef size, const TensorOptions& options) {
  check_sizes("empty", size);
  check_device_available("empty", options.device());
  ScalarType t = options.dtype();
  auto storage = Storage::allocate(compute_nbytes("empty", size, t), options.device());
  return finish(
      Tensor(make_intrusive<TensorImpl>(std::move(storage), t, size, contiguous_strides(size), 0)),
      options);
}

Tensor empty_strided(IntArrayRef size, IntArrayRef stride, const TensorOptions& options) {
  check_sizes("empty_strided", size);
  BRASA_CHECK(size.size() == stride.size(), "empty_strided: size ", size, " and stride ", stride,
              " must have the same length");
  int64_t extent = 1;
  for (size_t i = 0; i < size.size(); ++i) {
    BRASA_CHECK(stride[i] >= 0, "empty_strided: negative stride ", stride[i]);
    if (size[i] == 0) extent = 0;
  }
  bool overflow = false;
  if (extent != 0)
    for (size_t i = 0; i < size.size(); ++i) {
      int64_t step = 0;
      overflow |= __builtin_mul_overflow(size[i] - 1, stride[i], &step);
      overflow |= __builtin_add_overflow(extent, step, &extent);
    }
  check_device_available("empty_strided", options.device());
  ScalarType t = options.dtype();
  int64_t bytes = 0;
  overflow |= __builtin_mul_overflow(extent, static_cast<int64_t>(elementSize(t)), &bytes);
  BRASA_CHECK(!overflow, "empty_strided: size ", size, " with stride ", stride,
              " spans more bytes than int64 can count");
  auto storage = Storage::allocate(bytes, options.device());
  return finish(Tensor(make_intrusive<TensorImpl>(std::move(storage), t, size, stride, 0)),
                options);
}

Tensor zeros(IntArrayRef size, const TensorOptions& options) {
  check_sizes("zeros", size);
  Tensor t = empty(size, options.requires_grad(false));
  if (t.numel()) detail::fill_kernel(t, 0);
  return finish(t, options);
}

Tensor ones(IntArrayRef size, const TensorOptions& options) {
  return full(size, 1, options.has_dtype() ? options : options.dtype(get_default_dtype()));
}

Tensor full(IntArrayRef size, const Scalar& value, const TensorOptions& options) {
  // Without a dtype, full() takes the number's own type (int -> int64, bool -> bool).
  TensorOptions o = options.requires_grad(false);
  if (!options.has_dtype() && !value.isFloatingPoint()) o = o.dtype(value.type());
  Tensor t = empty(size, o);
  detail::fill_kernel(t, value);
  return finish(t, options);
}

Tensor scalar_tensor(const Scalar& value, const TensorOptions& options) {
  TensorOptions o = on_host(options);
  if (!options.has_dtype() && !value.isFloatingPoint()) o = o.dtype(value.type());
  Tensor t = empty({}, o);
  if (t.is_complex())
    detail::fill_kernel(t, value);
  else
    BRASA_DISPATCH_ALL_TYPES_AND_BOOL(t.dtype(), "scalar_tensor",
                                      [&] { *t.data_ptr<scalar_t>() = value.to<scalar_t>(); });
  return finish_on(t, options);
}

static TensorOptions like_options(const Tensor& t, const TensorOptions& o) {
  TensorOptions r = o;
  if (!o.has_dtype()) r = r.dtype(t.dtype());
  if (!o.has_device()) r = r.device(t.device());
  return r;
}

Tensor empty_like(const Tensor& t, const TensorOptions& o) {
  return empty(t.sizes(), like_options(t, o));
}
Tensor zeros_like(const Tensor& t, const TensorOptions& o) {
  return zeros(t.sizes(), like_options(t, o));
}
Tensor ones_like(const Tensor& t, const TensorOptions& o) {
  return ones(t.sizes(), like_options(t, o));
}
Tensor full_like(const Tensor& t, const Scalar& v, const TensorOptions& o) {
  return full(t.sizes(), v, like_options(t, o));
}

Tensor arange(const Scalar& end, const TensorOptions& options) {
  return arange(0, end, 1, options);
}
Tensor arange(const Scalar& start, const Scalar& end, const TensorOptions& options) {
  return arange(start, end, 1, options);
}
Tensor arange(const Scalar& start, const Scalar& end, const Scalar& step,
              const TensorOptions& options) {
  double s = start.toDouble(), e = end.toDouble(), st = step.toDouble();
  BRASA_CHECK(st != 0, "arange: step must be nonzero");
  BRASA_CHECK(std::isfinite(s) && std::isfinite(e), "arange: unsupported range: ", s, " -> ", e);
  BRASA_CHECK((st > 0 && e >= s) || (st < 0 && e <= s),
              "arange: upper bound and larger bound inconsistent with step sign (start=", s,
              ", end=", e, ", step=", st, ")");
  bool integral = start.isIntegral(true) && end.isIntegral(true) && step.isIntegral(true);
  TensorOptions o = on_host(options);
  if (!options.has_dtype()) o = o.dtype(integral ? kLong : get_default_dtype());
  int64_t n =
      integral ? (end.toLong() - start.toLong() + step.toLong() + (st > 0 ? -1 : 1)) / step.toLong()
               : static_cast<int64_t>(std::ceil((e - s) / st));
  Tensor t = empty({std::max<int64_t>(n, 0)}, o);
  BRASA_DISPATCH_ALL_TYPES(t.dtype(), "arange", [&] {
    auto* p = t.data_ptr<scalar_t>();
    if (integral) {
      int64_t a = start.toLong(), b = step.toLong();
      for (int64_t i = 0; i < n; ++i) p[i] = static_cast<scalar_t>(a + i * b);
    } else {
      for (int64_t i = 0; i < n; ++i) p[i] = static_cast<scalar_t>(s + i * st);
    }
  });
  return finish_on(t, options);
}

Tensor linspace(const Scalar& start, const Scalar& end, int64_t steps,
                const TensorOptions& options) {
  BRASA_CHECK(steps >= 0, "linspace: number of steps must be non-negative, got ", steps);
  Tensor t = empty({steps}, on_host(options));
  double s = start.toDouble(), e = end.toDouble();
  double step = steps > 1 ? (e - s) / (steps - 1) : 0;
  BRASA_DISPATCH_ALL_TYPES(t.dtype(), "linspace", [&] {
    auto* p = t.data_ptr<scalar_t>();
    // Fill from both ends so that the last value is exactly `end`, as PyTorch does.
    int64_t half = steps / 2;
    for (int64_t i = 0; i < steps; ++i)
      p[i] = static_cast<scalar_t>(i < half ? s + step * i : e - step * (steps - 1 - i));
  });
  return finish_on(t, options);
}

Tensor logspace(const Scalar& start, const Scalar& end, int64_t steps, double base,
                const TensorOptions& options) {
  Tensor exps = linspace(start, end, steps, TensorOptions().dtype(kDouble));
  Tensor t = empty({steps}, on_host(options));
  const double* e = exps.data_ptr<double>();
  BRASA_DISPATCH_ALL_TYPES(t.dtype(), "logspace", [&] {
    auto* p = t.data_ptr<scalar_t>();
    for (int64_t i = 0; i < steps; ++i) p[i] = static_cast<scalar_t>(std::pow(base, e[i]));
  });
  return finish_on(t, options);
}

Tensor eye(int64_t n, const TensorOptions& options) { return eye(n, n, options); }
Tensor eye(int64_t n, int64_t m, const TensorOptions& options) {
  BRASA_CHECK(n >= 0 && m >= 0, "eye: n and m must be non-negative, got n=", n, ", m=", m);
  Tensor t = zeros({n, m}, on_host(options));
  BRASA_DISPATCH_ALL_TYPES_AND_BOOL(t.dtype(), "eye", [&] {
    auto* p = t.data_ptr<scalar_t>();
    for (int64_t i = 0; i < std::min(n, m); ++i) p[i * m + i] = static_cast<scalar_t>(1);
  });
  return finish_on(t, options);
}

Tensor from_blob(void* data, IntArrayRef sizes, const TensorOptions& options) {
  return from_blob(data, sizes, contiguous_strides(sizes), nullptr, options);
}
Tensor from_blob(void* data, IntArrayRef sizes, IntArrayRef strides, const TensorOptions& options) {
  return from_blob(data, sizes, strides, nullptr, options);
}
Tensor from_blob(void* data, IntArrayRef sizes, const std::function<void(void*)>& deleter,
                 const TensorOptions& options) {
  return from_blob(data, sizes, contiguous_strides(sizes), deleter, options);
}
Tensor from_blob(void* data, IntArrayRef sizes, IntArrayRef strides,
                 const std::function<void(void*)>& deleter, const TensorOptions& options) {
  check_sizes("from_blob", sizes);
  BRASA_CHECK(sizes.size() == strides.size(), "from_blob: sizes ", sizes, " and strides ", strides,
              " must have the same length");
  int64_t numel = compute_numel(sizes);
  BRASA_CHECK(data != nullptr || numel == 0,
              "from_blob: data pointer is null for a tensor of size ", sizes);
  int64_t extent = numel == 0 ? 0 : 1;
  for (size_t i = 0; i < sizes.size() && numel; ++i) extent += (sizes[i] - 1) * strides[i];
  ScalarType t = options.dtype();
  check_device_available("from_blob", options.device());
  DataPtr dp(data, new BlobContext{data, deleter}, delete_blob, options.device(),
             AllocationKind::External);
  auto storage =
      Storage(make_intrusive<StorageImpl>(extent * elementSize(t), std::move(dp), nullptr, false));
  return finish(Tensor(make_intrusive<TensorImpl>(std::move(storage), t, sizes, strides, 0)),
                options);
}

// ---- tensor({...}) ----
namespace {
void infer_shape(const NestedList& l, size_t depth, DimVector& shape, bool& any_float,
                 bool& all_bool) {
  if (l.is_scalar()) {
    BRASA_CHECK(depth == shape.size(), "tensor: nested list is ragged (a number at depth ", depth,
                " where lists of depth ", shape.size(), " were seen)");
    any_float |= l.scalar().isFloatingPoint();
    all_bool &= l.scalar().isBoolean();
    return;
  }
  int64_t n = static_cast<int64_t>(l.items().size());
  if (depth == shape.size()) {
    shape.push_back(n);
  } else {
    BRASA_CHECK(shape[depth] == n, "tensor: nested list is ragged: expected a list of length ",
                shape[depth], " at depth ", depth, " but got length ", n);
  }
  for (const auto& it : l.items()) infer_shape(it, depth + 1, shape, any_float, all_bool);
}
void flatten_into(const NestedList& l, std::vector<Scalar>& out) {
  if (l.is_scalar()) return out.push_back(l.scalar());
  for (const auto& it : l.items()) flatten_into(it, out);
}
}  // namespace

Tensor tensor(const NestedList& values, const TensorOptions& options) {
  DimVector shape;
  bool any_float = false, all_bool = true;
  // The first pass fixes the depth by following first elements.
  const NestedList* cur = &values;
  while (!cur->is_scalar()) {
    shape.push_back(static_cast<int64_t>(cur->items().size()));
    if (cur->items().empty()) break;
    cur = &cur->items()[0];
  }
  DimVector checked;
  if (!(shape.size() && shape.back() == 0))
    infer_shape(values, 0, checked, any_float, all_bool);
  else
    checked = shape, all_bool = false;
  std::vector<Scalar> flat;
  flatten_into(values, flat);
  if (flat.empty()) all_bool = false;
  TensorOptions o = on_host(options);
  if (!options.has_dtype()) o = o.dtype(any_float ? get_default_dtype() : all_bool ? kBool : kLong);
  Tensor t = empty(checked, o);
  BRASA_DISPATCH_ALL_TYPES_AND_BOOL(t.dtype(), "tensor", [&] {
    auto* p = t.data_ptr<scalar_t>();
    for (size_t i = 0; i < flat.size(); ++i) p[i] = flat[i].to<scalar_t>();
  });
  return finish_on(t, options);
}

Tensor detail::tensor_from_values(const void* data, int64_t n, ScalarType type,
                                  const TensorOptions& options) {
  Tensor raw = empty({n}, TensorOptions().dtype(type));
  if (n > 0) std::memcpy(raw.data_ptr(), data, static_cast<size_t>(n) * elementSize(type));
  const ScalarType natural = isFloatingType(type) ? get_default_dtype() : type;
  const ScalarType target = options.has_dtype() ? options.dtype() : natural;
  return finish_on(target == type ? raw : raw.to(target), options);
}

Tensor tensor(std::initializer_list<NestedList> values, const TensorOptions& options) {
  return tensor(NestedList(values), options);
}

}  // namespace brasa
