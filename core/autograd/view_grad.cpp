#include <brasa/autograd/engine.h>
#include <brasa/autograd/record.h>
#include <brasa/autograd/view_grad.h>
#include <brasa/ops/binary.h>
#include <brasa/ops/copy.h>
#include <brasa/ops/factory.h>
#include <brasa/ops/indexing.h>
#include <brasa/ops/shape.h>

#include <algorithm>
#include <numeric>

namespace brasa::autograd {
namespace {

const BackwardName kViewScatterBackward("ViewScatterBackward0");
const BackwardName kAsStridedBackward("AsStridedBackward0");
const BackwardName kCopySlices("CopySlices");

// May two positions of t share memory? (Conservative: true when unsure.)
bool maybe_overlapping(const Tensor& t) {
  std::vector<std::pair<int64_t, int64_t>> dims;  // (stride, size)
  for (int64_t d = 0; d < t.dim(); ++d)
    if (t.size(d) > 1) dims.push_back({t.stride(d), t.size(d)});
  std::sort(dims.begin(), dims.end());
  int64_t extent = 0;  // max offset reachable with the smaller-stride dims
  for (auto [stride, size] : dims) {
    if (stride <= extent) return true;
    extent += stride * (size - 1);
  }
  return false;
}

// region += grad where region's positions may share memory, on a device:
// the memory offset of every position (built from aranges on the device)
// indexes a flat view of region's memory, and index_put_ accumulates there.
void accumulate_by_offsets(const Tensor& region, const Tensor& grad) {
  if (region.numel() == 0) return;
  const auto longs = TensorOptions().dtype(kLong).device(region.device());
  Tensor offsets = zeros({}, longs);
  int64_t extent = 1;
  for (int64_t d = 0; d < region.dim(); ++d) {
    DimVector shape(region.dim(), 1);
    shape[d] = region.size(d);
    offsets = offsets + arange(region.size(d), longs).mul(region.stride(d)).view(shape);
    extent += region.stride(d) * (region.size(d) - 1);
  }
  Tensor flat = as_strided(region, {extent}, {1}, region.storage_offset());
  Tensor g = grad.expand(region.sizes()).to(region.dtype());
  index_put_(flat, {offsets.expand(region.sizes()).reshape({-1})}, g.reshape({-1}), true);
}

// region += grad one element at a time (region may alias itself).
void accumulate_serial(const Tensor& region, const Tensor& grad) {
  Tensor g = grad.expand(region.sizes()).contiguous().to(region.dtype());
  const int64_t n = region.numel(), nd = region.dim();
  if (n == 0) return;
  DimVector sizes(region.sizes().begin(), region.sizes().end());
  DimVector strides(region.strides().begin(), region.strides().end());
  BRASA_DISPATCH_FLOATING_TYPES(region.dtype(), "view backward", [&] {
    const scalar_t* src = g.data_ptr<scalar_t>();
    scalar_t* dst = region.data_ptr<scalar_t>();
    const int64_t inner = nd == 0 ? 1 : sizes[nd - 1], inner_stride = nd == 0 ? 0 : strides[nd - 1];
    DimVector idx(std::max<int64_t>(nd - 1, 0), 0);
    int64_t off = 0;
    for (int64_t i = 0; i < n; i += inner) {
      for (int64_t j = 0; j < inner; ++j) {
        scalar_t& d = dst[off + j * inner_stride];
        d = static_cast<scalar_t>(static_cast<double>(d) + static_cast<double>(src[i + j]));
      }
      for (int64_t d = nd - 2; d >= 0; --d) {
        if (++idx[d] < sizes[d]) {
          off += strides[d];
          break;
        }
        off -= strides[d] * (idx[d] - 1);
        idx[d] = 0;
      }
    }
  });
}

// region += grad where region's positions may share memory. When fixing
// one dim leaves slices that do not overlap themselves (unfold's window dim,
// a strided view with overlapping rows), the slices are added one after
// another with vectorized in-place adds; otherwise element by element.
void accumulate_overlapping(const Tensor& region, const Tensor& grad) {
  if (!region.is_cpu()) return accumulate_by_offsets(region, grad);
  int64_t best = -1;
  for (int64_t d = 0; d < region.dim(); ++d)
    if (region.size(d) > 1 && (best < 0 || region.size(d) < region.size(best)) &&
        !maybe_overlapping(region.select(d, 0)))
      best = d;
  if (best < 0) return accumulate_serial(region, grad);
  Tensor g = grad.expand(region.sizes()).to(region.dtype());
  for (int64_t i = 0; i < region.size(best); ++i) region.select(best, i).add_(g.select(best, i));
}

}  // namespace

const BackwardName& as_strided_backward_name() { return kAsStridedBackward; }

bool is_non_overlapping_and_dense(const Tensor& t) {
  std::vector<std::pair<int64_t, int64_t>> dims;
  for (int64_t d = 0; d < t.dim(); ++d)
    if (t.size(d) != 1) dims.push_back({t.stride(d), t.size(d)});
  std::sort(dims.begin(), dims.end());
  int64_t expected = 1;
  for (auto [stride, size] : dims) {
    if (size == 0) return true;
    if (stride != expected) return false;
    expected *= size;
  }
  return true;
}

bool has_internal_overlap(const Tensor& t) {
  for (int64_t d = 0; d < t.dim(); ++d)
    if (t.size(d) > 1 && t.stride(d) == 0) return true;
  return false;
}

DimVector dense_strides_like(const Tensor& t) {
  if (is_non_overlapping_and_dense(t)) return DimVector(t.strides().begin(), t.strides().end());
  return contiguous_strides(t.sizes());
}

Tensor view_scatter(const Tensor& grad, IntArrayRef sizes, IntArrayRef strides, const ViewFn& fn) {
  Recorder r(kViewScatterBackward, grad);
  Tensor out;
  {
    NoGradGuard g;
    out = empty_strided(sizes, strides, grad.options());
    out.zero_();
    Tensor region = fn(out);
    if (maybe_overlapping(region))
      accumulate_overlapping(region, grad);
    else
      copy_(region, grad);
  }
  if (r)
    r.finish(out, [fn](FormulaNode&, const variable_list& g) { return variable_list{fn(g[0])}; });
  return out;
}

void record_view(const BackwardName& name, const Tensor& input, const Tensor& out, ViewFn fn) {
  Recorder r(name, input);
  if (!r) return;
  DimVector sizes(input.sizes().begin(), input.sizes().end());
  DimVector strides = dense_strides_like(input);
  const bool contiguous = IntArrayRef(strides) == IntArrayRef(contiguous_strides(sizes));
  r.finish(out, [sizes, strides, contiguous, fn = std::move(fn)](FormulaNode& n,
                                                                 const variable_list& g) {
    // Without a graph of the backward, a dense gradient that the running
    // backward has already gathered for the input takes this one in place:
    // a scan that selects step t of a [B, L, ...] tensor for every t then
    // fills one gradient instead of L zero-filled ones that are summed
    // (memset was 8% of a Mamba step).
    if (contiguous)
      if (Tensor* pending = Engine::pending_gradient(n.next_edge(0), g[0], sizes)) {
        Tensor region = fn(*pending);
        if (!maybe_overlapping(region)) {
          region.add_(g[0]);
          return variable_list{Tensor()};
        }
      }
    return variable_list{view_scatter(g[0], sizes, strides, fn)};
  });
}

ViewFn as_strided_fn(IntArrayRef sizes, IntArrayRef strides, int64_t offset,
                     IntArrayRef layout_strides) {
  DimVector sz(sizes.begin(), sizes.end()), st(strides.begin(), strides.end());
  DimVector lay(layout_strides.begin(), layout_strides.end());
  return [sz, st, offset, lay](const Tensor& t) {
    Tensor laid = t;
    if (!(t.strides() == IntArrayRef(lay))) {
      // copy_ records its backward when t requires grad (create_graph), so
      // the re-layout stays differentiable.
      laid = empty_strided(t.sizes(), lay, t.options());
      copy_(laid, t);
    }
    return as_strided(laid, sz, st, laid.storage_offset() + offset);
  };
}

std::shared_ptr<Node> make_as_strided_view_node(const Tensor& base, const Tensor& view) {
  BRASA_CHECK(is_non_overlapping_and_dense(base),
              "autograd: a view of a base with overlapping or non-dense ", "memory (",
              type_description(base), ", strides ", base.strides(), ") was modified in place");
  auto node = std::make_shared<FormulaNode>(kAsStridedBackward.c_str());
  node->add_next_edge(gradient_edge(base));
  node->add_input_metadata(view);
  DimVector sizes(base.sizes().begin(), base.sizes().end()),
      strides(base.strides().begin(), base.strides().end());
  ViewFn fn = as_strided_fn(view.sizes(), view.strides(),
                            view.storage_offset() - base.storage_offset(), strides);
  node->formula = [sizes, strides, fn](FormulaNode&, const variable_list& g) {
    return variable_list{view_scatter(g[0], sizes, strides, fn)};
  };
  return node;
}

std::shared_ptr<Node> make_copy_slices_node(const Tensor& base, const Tensor& view,
                                            const Tensor& result) {
  BRASA_CHECK(is_non_overlapping_and_dense(base),
              "autograd: in-place write through a view of a base with ",
              "overlapping or non-dense memory (", type_description(base), ", strides ",
              base.strides(), ")");
  auto node = std::make_shared<FormulaNode>(kCopySlices.c_str());
  node->add_next_edge(gradient_edge(base));
  node->add_next_edge(gradient_edge(result));
  node->add_input_metadata(base);
  DimVector sizes(base.sizes().begin(), base.sizes().end()),
      strides(base.strides().begin(), base.strides().end());
  ViewFn fn = as_strided_fn(view.sizes(), view.strides(),
                            view.storage_offset() - base.storage_offset(), strides);
  node->formula = [sizes, strides, fn](FormulaNode& n, const variable_list& g) {
    variable_list out(2);
    Tensor region = fn(g[0]);
    if (n.needs(0)) out[0] = g[0] - view_scatter(region, sizes, strides, fn);
    if (n.needs(1)) out[1] = region;
    return out;
  };
  return node;
}

}  // namespace brasa::autograd
