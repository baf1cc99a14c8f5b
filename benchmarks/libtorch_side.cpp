#include <torch/torch.h>

#include "bench.h"
#include "ops_bench.inc"

Side libtorch_side() {
  return {"libtorch", [](int n) { torch::set_num_threads(n); }, all_groups()};
}
