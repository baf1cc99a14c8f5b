#pragma once
// F::pad's reflect, replicate and circular modes as one gather by index
// tables over the padded dims, its gradient the matching scatter-add.
#include <brasa/tensor/tensor.h>

namespace brasa::detail {

enum class IndexPadMode { kReflect, kReplicate, kCircular };

// x padded on its last pad.size() / 2 dims (pad lists (low, high) pairs from
// the last dim backwards, as F::pad takes them). The caller checks the
// amounts against the sizes (F::pad's errors).
Tensor pad_by_index(const Tensor& x, IntArrayRef pad, IndexPadMode mode);

}  // namespace brasa::detail
