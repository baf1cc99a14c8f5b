// Random numbers drawn on the device: Philox4x32 with 10 rounds (Salmon et
// al., "Parallel random numbers: as easy as 1, 2, 3", SC 2011), a
// counter-based generator, so every thread computes its own block of four
// 32-bit numbers from (seed, counter) with no state in device memory.
#include <brasa/ops/cuda/device_types.cuh>

namespace brasa::cuda::kernels {
namespace {

struct Block4 {
  uint32_t v[4];
};

__device__ __forceinline__ Block4 philox(uint64_t seed, uint64_t counter) {
  uint32_t c0 = static_cast<uint32_t>(counter), c1 = static_cast<uint32_t>(counter >> 32), c2 = 0,
           c3 = 0;
  uint32_t k0 = static_cast<uint32_t>(seed), k1 = static_cast<uint32_t>(seed >> 32);
  constexpr uint32_t kMul0 = 0xD2511F53u, kMul1 = 0xCD9E8D57u;
  constexpr uint32_t kWeyl0 = 0x9E3779B9u, kWeyl1 = 0xBB67AE85u;
#pragma unroll
  for (int round = 0; round < 10; ++round) {
    const uint32_t hi0 = __umulhi(kMul0, c0), lo0 = kMul0 * c0;
    const uint32_t hi1 = __umulhi(kMul1, c2), lo1 = kMul1 * c2;
    const uint32_t n0 = hi1 ^ c1 ^ k0, n2 = hi0 ^ c3 ^ k1;
    c0 = n0;
    c1 = lo1;
    c2 = n2;
    c3 = lo0;
    k0 += kWeyl0;
    k1 += kWeyl1;
  }
  return Block4{{c0, c1, c2, c3}};
}

// Uniform in [0, 1) with 24 or 53 random bits, and in (0, 1] for logarithms.
__device__ __forceinline__ float unit_float(uint32_t r) { return (r >> 8) * 0x1.0p-24f; }
__device__ __forceinline__ double unit_double(uint32_t hi, uint32_t lo) {
  return ((static_cast<uint64_t>(hi) << 32 | lo) >> 11) * 0x1.0p-53;
}

template <class T>
struct Draw {
  int kind;
  double a, b;
  uint64_t range;

  // The values of one counter's block: `per` of them, written to v.
  __device__ void operator()(const Block4& r, Acc<T>* v, int per) const {
    using A = Acc<T>;
    if (kind == kRandomInt) {
      for (int j = 0; j < per; ++j) {
        const uint64_t bits = static_cast<uint64_t>(r.v[2 * j]) << 32 | r.v[2 * j + 1];
        v[j] = static_cast<A>(static_cast<int64_t>(a) + static_cast<int64_t>(bits % range));
      }
    } else if (kind == kBernoulli) {
      for (int j = 0; j < per; ++j) v[j] = static_cast<A>(r.v[j] * 0x1.0p-32 < a ? b : 0);
    } else if constexpr (std::is_same_v<A, double>) {
      const double u0 = unit_double(r.v[0], r.v[1]), u1 = unit_double(r.v[2], r.v[3]);
      if (kind == kUniform) {
        v[0] = a + (b - a) * u0;
        v[1] = a + (b - a) * u1;
      } else {  // Box-Muller: one pair of uniforms gives two normals
        const double rad = sqrt(-2.0 * log(1.0 - u0)), th = 2.0 * M_PI * u1;
        v[0] = a + b * rad * cos(th);
        v[1] = a + b * rad * sin(th);
      }
    } else if constexpr (std::is_same_v<A, float>) {
      for (int j = 0; j < 4; j += 2) {
        const float u0 = unit_float(r.v[j]), u1 = unit_float(r.v[j + 1]);
        if (kind == kUniform) {
          v[j] = static_cast<float>(a + (b - a) * u0);
          v[j + 1] = static_cast<float>(a + (b - a) * u1);
        } else {
          const float rad = sqrtf(-2.0f * logf(1.0f - u0)), th = 2.0f * float(M_PI) * u1;
          float sn, cs;
          sincosf(th, &sn, &cs);
          v[j] = static_cast<float>(a + b * rad * cs);
          v[j + 1] = static_cast<float>(a + b * rad * sn);
        }
      }
    }
  }
};

// One counter's values stored with a single access of PER * sizeof(T) bytes
// (out + g * PER must be aligned to it), or one by one at the tail.
template <class T, int PER>
__device__ __forceinline__ void store_block(T* out, int64_t g, int64_t n, const Acc<T>* v,
                                            bool aligned) {
  constexpr int kBytes = PER * int(sizeof(T));
  if (aligned && (g + 1) * PER <= n && (kBytes == 4 || kBytes == 8 || kBytes == 16)) {
    using Vec =
        std::conditional_t<kBytes == 16, uint4, std::conditional_t<kBytes == 8, uint2, uint32_t>>;
    union {
      T t[PER];
      Vec vec;
    } u;
#pragma unroll
    for (int j = 0; j < PER; ++j) u.t[j] = from_acc<T>(v[j]);
    *reinterpret_cast<Vec*>(out + g * PER) = u.vec;
    return;
  }
  for (int j = 0; j < PER && g * PER + j < n; ++j) out[g * PER + j] = from_acc<T>(v[j]);
}

template <class T, int PER>
__global__ void random_kernel(T* out, int64_t n, const Draw<T> draw, uint64_t seed, uint64_t offset,
                              bool aligned) {
  const int64_t blocks = (n + PER - 1) / PER, step = int64_t(gridDim.x) * blockDim.x;
  for (int64_t g = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; g < blocks; g += step) {
    Acc<T> v[4];
    draw(philox(seed, offset + static_cast<uint64_t>(g)), v, PER);
    store_block<T, PER>(out, g, n, v, aligned);
  }
}

}  // namespace

int per_counter(int kind, int dtype) {
  if (kind == kRandomInt) return 2;  // 64 bits each
  if (kind == kBernoulli) return 4;
  return dtype == kF64 ? 2 : 4;
}

void launch_random(void* out, int64_t n, int dtype, int kind, double a, double b, uint64_t range,
                   uint64_t seed, uint64_t offset, cudaStream_t s) {
  const int per = per_counter(kind, dtype);
  const int64_t blocks = (n + per - 1) / per;
  const unsigned grid = grid_for(blocks, 256);
  const bool aligned = reinterpret_cast<uintptr_t>(out) % 16 == 0;
  dispatch(dtype, [&](auto tag) {
    using T = decltype(tag);
    const Draw<T> draw{kind, a, b, range};
    if (per == 4)
      random_kernel<T, 4>
          <<<grid, 256, 0, s>>>(static_cast<T*>(out), n, draw, seed, offset, aligned);
    else
      random_kernel<T, 2>
          <<<grid, 256, 0, s>>>(static_cast<T*>(out), n, draw, seed, offset, aligned);
  });
}

}  // namespace brasa::cuda::kernels
