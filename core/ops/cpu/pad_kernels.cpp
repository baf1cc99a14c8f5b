// CPU kernels of padding by index tables (PadByIndexKernel and its adjoint):
// the tensor is seen as [B, D1, D2, D3] (the padded dims last, missing ones
// of size 1), each output row of D3' values gathered from one input row by
// the last dim's table, taken as runs of consecutive source positions (the
// interior is one run: a memcpy; a reflected border is runs of one).
#include <brasa/ops/cpu/register.h>
#include <brasa/ops/kernels/indexing.h>
#include <brasa/util/parallel.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

namespace brasa::cpu {
namespace {

// Output positions [to, to + len) read source positions [from, from + len).
struct Run {
  int64_t to, from, len;
};
std::vector<Run> runs_of(const std::vector<int64_t>& table) {
  std::vector<Run> runs;
  for (int64_t i = 0; i < static_cast<int64_t>(table.size()); ++i) {
    const int64_t from = table[static_cast<size_t>(i)];
    if (!runs.empty() && runs.back().from + runs.back().len == from &&
        runs.back().to + runs.back().len == i)
      ++runs.back().len;
    else
      runs.push_back({i, from, 1});
  }
  return runs;
}

// The problem as [B, D1, D2, D3] -> [B, E1, E2, E3], tables for the last three.
struct PadPlan {
  int64_t B = 1, D[3] = {1, 1, 1}, E[3] = {1, 1, 1};
  std::vector<int64_t> t1{0}, t2{0};
  std::vector<Run> runs;
  PadPlan(const Tensor& x, const PadTables& tables) {
    const size_t k = tables.size();
    const int64_t first = x.dim() - static_cast<int64_t>(k);
    for (int64_t d = 0; d < first; ++d) B *= x.size(d);
    for (size_t j = 0; j < k; ++j) {
      const size_t slot = 3 - k + j;
      D[slot] = x.size(first + static_cast<int64_t>(j));
      E[slot] = static_cast<int64_t>(tables[j].size());
      if (slot == 0) t1 = tables[j];
      if (slot == 1) t2 = tables[j];
    }
    runs = runs_of(k > 0 ? tables[k - 1] : std::vector<int64_t>{0});
  }
  int64_t rows() const { return B * E[0] * E[1]; }
  // The input row that output row r reads.
  int64_t source_row(int64_t r) const {
    const int64_t e2 = r % E[1], e1 = (r / E[1]) % E[0], b = r / (E[1] * E[0]);
    return (b * D[0] + t1[static_cast<size_t>(e1)]) * D[1] + t2[static_cast<size_t>(e2)];
  }
};

// Rows per task: about 32 KiB of output each.
int64_t grain_of(int64_t row_bytes) {
  return std::max<int64_t>(1, (32 << 10) / std::max<int64_t>(row_bytes, 1));
}

// Element copies of width sizeof(E) (the dtype's size: a plain unsigned
// type, or two 64-bit halves for complex double).
struct Bytes16 {
  uint64_t lo, hi;
};
template <class E>
void gather_rows(const PadPlan& p, const char* x, char* out) {
  const int64_t D3 = p.D[2], E3 = p.E[2];
  parallel_for(
      0, p.rows(), grain_of(E3 * static_cast<int64_t>(sizeof(E))), [&](int64_t r0, int64_t r1) {
        for (int64_t r = r0; r < r1; ++r) {
          const E* src = reinterpret_cast<const E*>(x) + p.source_row(r) * D3;
          E* dst = reinterpret_cast<E*>(out) + r * E3;
          for (const Run& run : p.runs) {
            if (run.len >= 16) {
              std::memcpy(dst + run.to, src + run.from, static_cast<size_t>(run.len) * sizeof(E));
              continue;
            }
            for (int64_t i = 0; i < run.len; ++i) dst[run.to + i] = src[run.from + i];
          }
        }
      });
}

void pad_forward_cpu(const Tensor& x, const PadTables& tables, const Tensor& out) {
  const PadPlan p(x, tables);
  const char* in = static_cast<const char*>(x.data_ptr());
  char* o = static_cast<char*>(out.data_ptr());
  switch (x.element_size()) {
    case 1:
      return gather_rows<uint8_t>(p, in, o);
    case 2:
      return gather_rows<uint16_t>(p, in, o);
    case 4:
      return gather_rows<uint32_t>(p, in, o);
    case 8:
      return gather_rows<uint64_t>(p, in, o);
    case 16:
      return gather_rows<Bytes16>(p, in, o);
    default:
      BRASA_ERROR("pad: unexpected element size ", x.element_size(), " of dtype ", x.dtype());
  }
}

// Each sample b of the flattened leading dims owns its input planes, so the
// tasks split by b and add without races; within one, in output order.
void pad_backward_cpu(const Tensor& grad_out, const PadTables& tables, const Tensor& grad_x) {
  const PadPlan p(grad_x, tables);
  const int64_t per_b = p.E[0] * p.E[1], D3 = p.D[2], E3 = p.E[2];
  BRASA_DISPATCH_FLOATING_TYPES(grad_x.scalar_type(), "pad backward", [&] {
    using T = scalar_t;
    const T* g = grad_out.data_ptr<T>();
    T* gx = grad_x.data_ptr<T>();
    parallel_for(0, p.B, grain_of(per_b * E3 * static_cast<int64_t>(sizeof(T))),
                 [&](int64_t b0, int64_t b1) {
                   for (int64_t r = b0 * per_b; r < b1 * per_b; ++r) {
                     T* dst = gx + p.source_row(r) * D3;
                     const T* src = g + r * E3;
                     for (const Run& run : p.runs)
                       for (int64_t i = 0; i < run.len; ++i)
                         dst[run.from + i] = T(dst[run.from + i] + src[run.to + i]);
                   }
                 });
  });
}

}  // namespace

void register_pad_kernels() {
  register_kernel<PadByIndexKernel>(kCPU, pad_forward_cpu);
  register_kernel<PadByIndexBackwardKernel>(kCPU, pad_backward_cpu);
}

}  // namespace brasa::cpu
