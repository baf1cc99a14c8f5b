#include <brasa/torch.h>

#include "bench.h"

// Brasa has no autograd yet: grad mode does not exist, so the guard is a no-op here.
namespace brasa {
struct NoGradGuard {};
}  // namespace brasa

#include "ops_bench.inc"

Side brasa_side() { return {"brasa", [](int n) { torch::set_num_threads(n); }, run_all}; }
