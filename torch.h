#pragma once
// libtorch compatibility: a program written against <torch/torch.h> ports by
// including this header instead.
#include <brasa/brasa.h>

namespace torch = brasa;
namespace c10d = brasa::distributed;
