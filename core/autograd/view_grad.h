#pragma once
// Gradients of views. The backward of a view `fn(input)` scatters the
// gradient into zeros shaped like the input at the positions `fn` selects
// (summing where they overlap, as for expand/unfold); its own backward is
// `fn` again, so double backward works for every view.
#include <brasa/autograd/node.h>

namespace brasa::autograd {

using ViewFn = std::function<Tensor(const Tensor&)>;

// grad of fn(x) -> grad of x, for x of `sizes`/`strides` (a dense layout).
Tensor view_scatter(const Tensor& grad, IntArrayRef sizes, IntArrayRef strides, const ViewFn& fn);

// Records the backward of the view `out = fn(input)` under `name` (a
// registered BackwardName). Used by the view ops of core/ops/shape.cpp.
class BackwardName;
void record_view(const BackwardName& name, const Tensor& input, const Tensor& out, ViewFn fn);

// fn(t) = t.as_strided(sizes, strides, t.storage_offset() + offset), first
// laying t out with `layout_strides` if it is not already.
ViewFn as_strided_fn(IntArrayRef sizes, IntArrayRef strides, int64_t offset,
                     IntArrayRef layout_strides);

// Strides of a dense layout for t: its own when dense, else row-major.
DimVector dense_strides_like(const Tensor& t);
bool is_non_overlapping_and_dense(const Tensor& t);
// Definitely overlapping: some dim of size > 1 has stride 0.
bool has_internal_overlap(const Tensor& t);

const BackwardName& as_strided_backward_name();

// Nodes for views of a base whose history changed (see variable.cpp).
std::shared_ptr<Node> make_as_strided_view_node(const Tensor& base, const Tensor& view);
std::shared_ptr<Node> make_copy_slices_node(const Tensor& base, const Tensor& view,
                                            const Tensor& result);

}  // namespace brasa::autograd
