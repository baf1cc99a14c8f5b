#pragma once
// libtorch compatibility: a program written against <torch/torch.h> ports by
// including this header instead.
#include <brasa/brasa.h>

namespace torch = brasa;
// libtorch programs also spell some names through ATen's and c10's
// namespaces (at::Tensor, at::Reduction::Sum, c10::optional).
namespace at = brasa;
namespace c10 = brasa;
namespace c10d = brasa::distributed;
