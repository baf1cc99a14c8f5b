// Stream compaction (masked_select, nonzero) and row sorting on CUDA, over
// CUB's device-wide scan and segmented radix sort.
#include <brasa/ops/cuda/device_types.cuh>

#include <cub/device/device_scan.cuh>
#include <cub/device/device_segmented_radix_sort.cuh>

#include <algorithm>

namespace brasa::cuda::kernels {
namespace {

int grid_for(int64_t n) { return static_cast<int>(std::min<int64_t>((n + 255) / 256, 65536)); }

// The flags as 0/1 counts for the scan.
__global__ void flag_counts_kernel(const bool* flags, int64_t* counts, int64_t n) {
  const int64_t step = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step)
    counts[i] = flags[i] ? 1 : 0;
}

template <int ES>
__global__ void compact_kernel(const Bits<ES>* in, const bool* flags, const int64_t* pos,
                               Bits<ES>* out, int64_t n) {
  const int64_t step = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step)
    if (flags[i]) out[pos[i]] = in[i];
}

struct Shape {
  int ndim;
  int64_t sizes[kMaxDims];
};

__global__ void compact_coords_kernel(const bool* flags, const int64_t* pos, int64_t* out,
                                      int64_t n, const __grid_constant__ Shape shape) {
  const int64_t step = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) {
    if (!flags[i]) continue;
    int64_t* row = out + pos[i] * shape.ndim;
    int64_t rem = i;
    for (int d = shape.ndim - 1; d >= 0; --d) {
      const int64_t q = rem / shape.sizes[d];
      row[d] = rem - q * shape.sizes[d];
      rem = q;
    }
  }
}

// Sort keys: NaN made the positive quiet NaN and -0 made +0, so that the radix
// order (which follows the bits) matches the comparison order (NaN above
// everything, the two zeros equal and kept in input order).
template <class T>
__global__ void canonical_keys_kernel(const T* in, T* out, int64_t n) {
  const int64_t step = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) {
    const Acc<T> v = to_acc(in[i]);
    if constexpr (std::is_floating_point_v<Acc<T>>) {
      if (v != v)
        out[i] = from_acc<T>(Acc<T>(NAN));
      else if (v == Acc<T>(0))
        out[i] = from_acc<T>(Acc<T>(0));
      else
        out[i] = in[i];
    } else {
      out[i] = in[i];
    }
  }
}

// Segment offsets 0, R, 2R, ... K*R and each row's positions 0..R-1.
__global__ void sort_setup_kernel(int* offsets, int64_t* positions, int64_t K, int64_t R) {
  const int64_t n = K * R, step = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i <= n; i += step) {
    if (i < n) positions[i] = i % R;
    if (i % R == 0) offsets[i / R] = static_cast<int>(i);
  }
}

// vals/idx [K, k] <- the first k of each sorted row: values read back from
// the input rows (not the canonical keys), so -0 and NaN payloads survive.
template <class T>
__global__ void take_sorted_kernel(const T* rows, const int64_t* sorted_pos, T* vals, int64_t* idx,
                                   int64_t K, int64_t R, int64_t k) {
  const int64_t n = K * k, step = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) {
    const int64_t row = i / k, j = i - row * k;
    const int64_t p = sorted_pos[row * R + j];
    vals[i] = rows[row * R + p];
    idx[i] = p;
  }
}

// The storage type the radix sort sees (bool as its byte).
template <class T>
using SortKey = std::conditional_t<std::is_same_v<T, bool>, uint8_t, T>;

// Scratch layout of a sort: keys in/out, positions in/out, offsets, then CUB's.
struct SortScratch {
  size_t keys, positions, offsets, cub;
  size_t total() const { return 2 * keys + 2 * positions + offsets + cub; }
};

size_t round_up(size_t b) { return (b + 255) / 256 * 256; }

template <class T>
SortScratch sort_layout(int64_t K, int64_t R, bool descending) {
  using Key = SortKey<T>;
  SortScratch s{round_up(K * R * sizeof(Key)), round_up(K * R * sizeof(int64_t)),
                round_up((K + 1) * sizeof(int)), 0};
  const int n = static_cast<int>(K * R), segs = static_cast<int>(K);
  if (descending)
    cub::DeviceSegmentedRadixSort::SortPairsDescending<Key, int64_t>(
        nullptr, s.cub, nullptr, nullptr, nullptr, nullptr, n, segs, static_cast<int*>(nullptr),
        static_cast<int*>(nullptr));
  else
    cub::DeviceSegmentedRadixSort::SortPairs<Key, int64_t>(
        nullptr, s.cub, nullptr, nullptr, nullptr, nullptr, n, segs, static_cast<int*>(nullptr),
        static_cast<int*>(nullptr));
  s.cub = round_up(s.cub);
  return s;
}

}  // namespace

// Scratch: the counts, then CUB's.
size_t scan_scratch_bytes(int64_t n) {
  size_t bytes = 0;
  cub::DeviceScan::ExclusiveSum(nullptr, bytes, static_cast<const int64_t*>(nullptr),
                                static_cast<int64_t*>(nullptr), n);
  return round_up(n * sizeof(int64_t)) + bytes;
}

void launch_flag_scan(const bool* flags, int64_t* positions, int64_t n, void* scratch,
                      size_t scratch_bytes, cudaStream_t s) {
  int64_t* counts = static_cast<int64_t*>(scratch);
  const size_t counts_bytes = round_up(n * sizeof(int64_t));
  flag_counts_kernel<<<grid_for(n), 256, 0, s>>>(flags, counts, n);
  size_t cub_bytes = scratch_bytes - counts_bytes;
  cub::DeviceScan::ExclusiveSum(static_cast<char*>(scratch) + counts_bytes, cub_bytes,
                                static_cast<const int64_t*>(counts), positions, n, s);
}

void launch_compact(const void* in, const bool* flags, const int64_t* positions, void* out,
                    int64_t n, int elem_size, cudaStream_t s) {
  const int g = grid_for(n);
  switch (elem_size) {
    case 1:
      compact_kernel<1><<<g, 256, 0, s>>>(static_cast<const Bits<1>*>(in), flags, positions,
                                          static_cast<Bits<1>*>(out), n);
      break;
    case 2:
      compact_kernel<2><<<g, 256, 0, s>>>(static_cast<const Bits<2>*>(in), flags, positions,
                                          static_cast<Bits<2>*>(out), n);
      break;
    case 4:
      compact_kernel<4><<<g, 256, 0, s>>>(static_cast<const Bits<4>*>(in), flags, positions,
                                          static_cast<Bits<4>*>(out), n);
      break;
    default:
      compact_kernel<8><<<g, 256, 0, s>>>(static_cast<const Bits<8>*>(in), flags, positions,
                                          static_cast<Bits<8>*>(out), n);
  }
}

void launch_compact_coords(const bool* flags, const int64_t* positions, int64_t* out, int64_t n,
                           const int64_t* shape, int ndim, cudaStream_t s) {
  Shape sh{ndim, {}};
  for (int d = 0; d < ndim; ++d) sh.sizes[d] = shape[d];
  compact_coords_kernel<<<grid_for(n), 256, 0, s>>>(flags, positions, out, n, sh);
}

size_t sort_scratch_bytes(int64_t K, int64_t R, int dtype) {
  size_t bytes = 0;
  dispatch(dtype, [&](auto tag) {
    bytes = std::max(sort_layout<decltype(tag)>(K, R, false).total(),
                     sort_layout<decltype(tag)>(K, R, true).total());
  });
  return bytes;
}

void launch_sort_rows(const void* rows, void* vals, int64_t* idx, int64_t K, int64_t R, int64_t k,
                      bool descending, int dtype, void* scratch, size_t scratch_bytes,
                      cudaStream_t s) {
  dispatch(dtype, [&](auto tag) {
    using T = decltype(tag);
    using Key = SortKey<T>;
    const SortScratch layout = sort_layout<T>(K, R, descending);
    char* at = static_cast<char*>(scratch);
    Key* keys_in = reinterpret_cast<Key*>(at);
    Key* keys_out = reinterpret_cast<Key*>(at += layout.keys);
    int64_t* pos_in = reinterpret_cast<int64_t*>(at += layout.keys);
    int64_t* pos_out = reinterpret_cast<int64_t*>(at += layout.positions);
    int* offsets = reinterpret_cast<int*>(at += layout.positions);
    void* cub_scratch = at += layout.offsets;
    size_t cub_bytes = scratch_bytes - (at - static_cast<char*>(scratch));
    const int64_t n = K * R;
    canonical_keys_kernel<Key>
        <<<grid_for(n), 256, 0, s>>>(static_cast<const Key*>(rows), keys_in, n);
    sort_setup_kernel<<<grid_for(n + 1), 256, 0, s>>>(offsets, pos_in, K, R);
    if (descending)
      cub::DeviceSegmentedRadixSort::SortPairsDescending(
          cub_scratch, cub_bytes, keys_in, keys_out, pos_in, pos_out, static_cast<int>(n),
          static_cast<int>(K), offsets, offsets + 1, 0, int(sizeof(Key) * 8), s);
    else
      cub::DeviceSegmentedRadixSort::SortPairs(cub_scratch, cub_bytes, keys_in, keys_out, pos_in,
                                               pos_out, static_cast<int>(n), static_cast<int>(K),
                                               offsets, offsets + 1, 0, int(sizeof(Key) * 8), s);
    take_sorted_kernel<Key><<<grid_for(K * k), 256, 0, s>>>(static_cast<const Key*>(rows), pos_out,
                                                            static_cast<Key*>(vals), idx, K, R, k);
  });
}

}  // namespace brasa::cuda::kernels
