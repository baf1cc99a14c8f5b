#pragma once
// Op codes of pooling (ops/pooling.cpp), shared with the devices' kernels
// (ops/cpu/pooling_kernels.cpp).
#include <brasa/tensor/tensor.h>

#include <cstdint>

namespace brasa {

// Windows over `planes` planes of H x W: kernel, stride, padding, dilation,
// and the pooled size OH x OW.
struct PoolGeometry {
  int64_t planes, H, W, kh, kw, sh, sw, ph, pw, dh, dw, OH, OW;
};

// out (and, when defined, the int64 flat argmax within each plane in idx) <-
// the max of every window of x; x, out and idx contiguous. NaN wins.
struct MaxPool2dKernel {
  static constexpr const char* name = "max_pool2d";
  using Fn = void (*)(const Tensor& x, const Tensor& out, const Tensor& idx, const PoolGeometry& g);
};

// 3-d windows over `plane.planes` volumes of D x H x W: `plane` holds the
// windows of each depth slice, kd/sd/pd/dd those along the depth, OD the
// pooled depth.
struct Pool3dGeometry {
  PoolGeometry plane;
  int64_t D, kd, sd, pd, dd, OD;
};

// max_pool3d: out [volumes, OD, OH, OW] (and idx, when defined: the flat
// argmax d * H * W + h * W + w within each volume, the first in window
// order) <- the max of every window of the contiguous x; NaN wins.
struct MaxPool3dKernel {
  static constexpr const char* name = "max_pool3d";
  using Fn = void (*)(const Tensor& x, const Tensor& out, const Tensor& idx,
                      const Pool3dGeometry& g);
};

// The gradient of max pooling (2-d and 3-d: a plane is a whole volume): grad_x [planes, H * W]
// (zeroed) += g at the argmax positions idx, plane by plane; g and idx contiguous [planes, OH *
// OW]. Optional: a device without it scatters instead.
struct MaxPool2dBackwardKernel {
  static constexpr const char* name = "max_pool2d_backward";
  using Fn = void (*)(const Tensor& grad_x, const Tensor& g, const Tensor& idx);
};

// Adaptive max pooling of contiguous [planes, H, W] into [planes, OH, OW]:
// window (oh, ow) covers rows [oh H / OH, ceil((oh + 1) H / OH)) and the
// columns likewise; idx gets each maximum's flat position in its plane
// (the first in window order; NaN wins).
struct AdaptiveMaxPool2dKernel {
  static constexpr const char* name = "adaptive_max_pool2d";
  using Fn = void (*)(const Tensor& x, const Tensor& out, const Tensor& idx, int64_t H, int64_t W,
                      int64_t OH, int64_t OW);
};

}  // namespace brasa
