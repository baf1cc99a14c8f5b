// Stream compaction (masked_select, nonzero) and row sorting on CUDA, over
// CUB's DeviceSelect, DeviceRadixSort (one long row at a time) and
// DeviceSegmentedSort (many rows).
#include <brasa/ops/cuda/device_types.cuh>
#include <brasa/ops/cuda/sort_keys.h>

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_reduce.cuh>
#include <cub/device/device_segmented_sort.cuh>
#include <cub/device/device_select.cuh>
#include <thrust/iterator/counting_iterator.h>

#include <algorithm>
#include <cstring>

namespace brasa::cuda::kernels {
namespace {

size_t round_up(size_t b) { return (b + 255) / 256 * 256; }

struct Shape {
  int ndim;
  int64_t sizes[kMaxDims];
};

// out[j, :] = the coordinates of the flat index linear[j].
__global__ void coords_kernel(const int64_t* linear, int64_t* out, int64_t count,
                              const __grid_constant__ Shape shape) {
  const int64_t step = int64_t(gridDim.x) * blockDim.x;
  for (int64_t j = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; j < count; j += step) {
    int64_t* row = out + j * shape.ndim;
    int64_t rem = linear[j];
    for (int d = shape.ndim - 1; d >= 0; --d) {
      const int64_t q = rem / shape.sizes[d];
      row[d] = rem - q * shape.sizes[d];
      rem = q;
    }
  }
}

// The unsigned key of each element (sort_keys.h), complemented for a
// descending sort.
template <class T>
__device__ __forceinline__ Bits<sizeof(T)> sort_key(T v) {
  using U = Bits<sizeof(T)>;
  U bits;
  memcpy(&bits, &v, sizeof(T));
  if constexpr (std::is_same_v<T, __half>)
    return float_sort_key<U>(bits, 0x7c00u);
  else if constexpr (std::is_same_v<T, __nv_bfloat16>)
    return float_sort_key<U>(bits, 0x7f80u);
  else if constexpr (std::is_same_v<T, float>)
    return float_sort_key<U>(bits, 0x7f800000u);
  else if constexpr (std::is_same_v<T, double>)
    return float_sort_key<U>(bits, 0x7ff0000000000000ull);
  else if constexpr (std::is_signed_v<T>)
    return signed_sort_key<U>(bits);
  else
    return bits;  // unsigned and bool
}

template <class T>
__global__ void sort_keys_kernel(const T* in, Bits<sizeof(T)>* out, int64_t n, bool descending) {
  const int64_t step = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) {
    const Bits<sizeof(T)> key = sort_key(in[i]);
    out[i] = descending ? descending_sort_key(key) : key;
  }
}

// Segment offsets 0, R, 2R, ... K*R and each row's positions 0..R-1.
__global__ void sort_setup_kernel(int64_t* offsets, int64_t* positions, int64_t K, int64_t R) {
  const int64_t n = K * R, step = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i <= n; i += step) {
    if (i < n) positions[i] = i % R;
    if (i % R == 0) offsets[i / R] = i;
  }
}

// vals/idx [K, k] <- the first k of each sorted row: values read back from
// the input rows (not the keys), so -0 and NaN payloads survive. E: the
// element's bits.
template <class E>
__global__ void take_sorted_kernel(const E* rows, const int64_t* sorted_pos, E* vals, int64_t* idx,
                                   int64_t K, int64_t R, int64_t k) {
  const int64_t n = K * k, step = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) {
    const int64_t row = i / k, j = i - row * k;
    const int64_t p = sorted_pos[row * R + j];
    vals[i] = rows[row * R + p];
    idx[i] = p;
  }
}

// Long rows are sorted one at a time by the device-wide radix sort, which
// uses the whole GPU; many shorter rows in one segmented sort.
bool row_by_row(int64_t K, int64_t R) { return K == 1 || R >= (int64_t{1} << 16); }

// Scratch layout of a sort: keys in/out, positions in/out, offsets, then CUB's.
struct SortScratch {
  size_t keys, positions, offsets, cub;
  size_t total() const { return 2 * keys + 2 * positions + offsets + cub; }
};

template <class Key>
size_t cub_sort_bytes(int64_t K, int64_t R) {
  size_t bytes = 0;
  const Key* k = nullptr;
  const int64_t* v = nullptr;
  const int64_t* o = nullptr;
  if (row_by_row(K, R))
    cub::DeviceRadixSort::SortPairs(nullptr, bytes, k, const_cast<Key*>(k), v,
                                    const_cast<int64_t*>(v), R);
  else
    cub::DeviceSegmentedSort::StableSortPairs(nullptr, bytes, k, const_cast<Key*>(k), v,
                                              const_cast<int64_t*>(v), K * R, K, o, o + 1);
  return bytes;
}

template <class Key>
SortScratch sort_layout(int64_t K, int64_t R) {
  return SortScratch{round_up(K * R * sizeof(Key)), round_up(K * R * sizeof(int64_t)),
                     round_up((K + 1) * sizeof(int64_t)), round_up(cub_sort_bytes<Key>(K, R))};
}

// Sorts the keys of K rows of R (their positions along) with CUB; a template
// of the key alone, so every dtype of one width shares one instantiation.
template <class Key>
void sort_unsigned_keys(const Key* keys_in, Key* keys_out, const int64_t* pos_in, int64_t* pos_out,
                        const int64_t* offsets, int64_t K, int64_t R, void* cub_scratch,
                        size_t cub_bytes, cudaStream_t s) {
  if (row_by_row(K, R)) {
    for (int64_t r = 0; r < K; ++r) {
      const int64_t o = r * R;
      cub::DeviceRadixSort::SortPairs(cub_scratch, cub_bytes, keys_in + o, keys_out + o, pos_in + o,
                                      pos_out + o, R, 0, int(sizeof(Key) * 8), s);
    }
  } else {
    cub::DeviceSegmentedSort::StableSortPairs(cub_scratch, cub_bytes, keys_in, keys_out, pos_in,
                                              pos_out, K * R, K, offsets, offsets + 1, s);
  }
}

}  // namespace

// The flags read as bytes and summed in int64 (the init value's type).
size_t count_scratch_bytes(int64_t n) {
  size_t bytes = 0;
  cub::DeviceReduce::Reduce(nullptr, bytes, static_cast<const uint8_t*>(nullptr),
                            static_cast<int64_t*>(nullptr), n, ::cuda::std::plus<>{}, int64_t{0});
  return bytes;
}

void launch_count_flags(const bool* flags, int64_t n, int64_t* count, void* scratch,
                        size_t scratch_bytes, cudaStream_t s) {
  cub::DeviceReduce::Reduce(scratch, scratch_bytes, reinterpret_cast<const uint8_t*>(flags), count,
                            n, ::cuda::std::plus<>{}, int64_t{0}, s);
}

// Scratch: CUB's, the selected count, and nonzero's flat indices.
size_t compact_scratch_bytes(int64_t n, int64_t count, int elem_size) {
  size_t select = 0, indices = 0;
  dispatch_bits(elem_size, [&](auto tag) {
    using E = decltype(tag);
    cub::DeviceSelect::Flagged(nullptr, select, static_cast<const E*>(nullptr),
                               static_cast<const bool*>(nullptr), static_cast<E*>(nullptr),
                               static_cast<int64_t*>(nullptr), n);
  });
  cub::DeviceSelect::Flagged(nullptr, indices, thrust::counting_iterator<int64_t>(0),
                             static_cast<const bool*>(nullptr), static_cast<int64_t*>(nullptr),
                             static_cast<int64_t*>(nullptr), n);
  return round_up(std::max(select, indices)) + 256 + round_up(count * sizeof(int64_t));
}

void launch_masked_select(const void* in, const bool* flags, void* out, int64_t n, int elem_size,
                          void* scratch, size_t scratch_bytes, cudaStream_t s) {
  char* cub_scratch = static_cast<char*>(scratch);
  size_t cub_bytes = scratch_bytes - 256;  // the count's slot at the end
  int64_t* selected = reinterpret_cast<int64_t*>(cub_scratch + cub_bytes);
  dispatch_bits(elem_size, [&](auto tag) {
    using E = decltype(tag);
    cub::DeviceSelect::Flagged(cub_scratch, cub_bytes, static_cast<const E*>(in), flags,
                               static_cast<E*>(out), selected, n, s);
  });
}

void launch_nonzero(const bool* flags, int64_t count, int64_t* out, int64_t n, const int64_t* shape,
                    int ndim, void* scratch, size_t scratch_bytes, cudaStream_t s) {
  // Layout: CUB's scratch, the count, then the flat indices (unless 1-D,
  // where they are the output itself).
  const size_t flat_bytes = round_up(count * sizeof(int64_t));
  char* base = static_cast<char*>(scratch);
  size_t cub_bytes = scratch_bytes - flat_bytes - 256;
  int64_t* selected = reinterpret_cast<int64_t*>(base + cub_bytes);
  int64_t* linear = ndim == 1 ? out : reinterpret_cast<int64_t*>(base + cub_bytes + 256);
  cub::DeviceSelect::Flagged(base, cub_bytes, thrust::counting_iterator<int64_t>(0), flags, linear,
                             selected, n, s);
  if (ndim == 1) return;
  Shape sh{ndim, {}};
  for (int d = 0; d < ndim; ++d) sh.sizes[d] = shape[d];
  coords_kernel<<<grid_for(count, 256), 256, 0, s>>>(linear, out, count, sh);
}

size_t sort_scratch_bytes(int64_t K, int64_t R, int dtype) {
  size_t bytes = 0;
  dispatch(dtype, [&](auto tag) { bytes = sort_layout<Bits<sizeof(tag)>>(K, R).total(); });
  return bytes;
}

// Keys per dtype (a small kernel each), then CUB and the gather per key
// width (Bits<size>), ascending.
void launch_sort_rows(const void* rows, void* vals, int64_t* idx, int64_t K, int64_t R, int64_t k,
                      bool descending, int dtype, void* scratch, size_t scratch_bytes,
                      cudaStream_t s) {
  dispatch(dtype, [&](auto tag) {
    using T = decltype(tag);
    using Key = Bits<sizeof(T)>;
    const SortScratch layout = sort_layout<Key>(K, R);
    char* at = static_cast<char*>(scratch);
    Key* keys_in = reinterpret_cast<Key*>(at);
    Key* keys_out = reinterpret_cast<Key*>(at += layout.keys);
    int64_t* pos_in = reinterpret_cast<int64_t*>(at += layout.keys);
    int64_t* pos_out = reinterpret_cast<int64_t*>(at += layout.positions);
    int64_t* offsets = reinterpret_cast<int64_t*>(at += layout.positions);
    void* cub_scratch = at += layout.offsets;
    size_t cub_bytes = scratch_bytes - (at - static_cast<char*>(scratch));
    const int64_t n = K * R;
    sort_keys_kernel<T>
        <<<grid_for(n, 256), 256, 0, s>>>(static_cast<const T*>(rows), keys_in, n, descending);
    sort_setup_kernel<<<grid_for(n + 1, 256), 256, 0, s>>>(offsets, pos_in, K, R);
    sort_unsigned_keys<Key>(keys_in, keys_out, pos_in, pos_out, offsets, K, R, cub_scratch,
                            cub_bytes, s);
    take_sorted_kernel<Key><<<grid_for(K * k, 256), 256, 0, s>>>(
        static_cast<const Key*>(rows), pos_out, static_cast<Key*>(vals), idx, K, R, k);
  });
}

}  // namespace brasa::cuda::kernels
