#include <brasa/torch.h>

#include "bench.h"
#include "ops_bench.inc"

Side brasa_side() {
  return {"brasa", [](int n) { torch::set_num_threads(n); }, all_groups()};
}
