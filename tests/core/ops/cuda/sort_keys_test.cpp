// The unsigned keys of the CUDA row sort (ops/cuda/sort_keys.h), checked on
// the host: sorting the keys must give the order PyTorch's sort gives (NaN
// last, -0 equal to +0), for every half and bfloat16 value and for samples
// of the wider types.
#include <brasa/ops/cuda/sort_keys.h>
#include <brasa/tensor/half.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <random>
#include <vector>

namespace brasa::cuda::kernels {
namespace {

// Checks that `keys` order like `values` (NaN above everything, NaNs equal):
// sorted by value, the keys never decrease and change exactly where the value
// does; complemented, they order the other way.
template <class V, class U>
void expect_keys_order_like_values(const std::vector<V>& values, const std::vector<U>& keys) {
  ASSERT_EQ(values.size(), keys.size());
  auto is_nan = [](V v) { return v != v; };
  auto less = [&](V a, V b) { return is_nan(a) ? false : is_nan(b) ? true : a < b; };
  std::vector<size_t> order(values.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return less(values[a], values[b]); });
  for (size_t i = 1; i < order.size(); ++i) {
    const V a = values[order[i - 1]], b = values[order[i]];
    const U ka = keys[order[i - 1]], kb = keys[order[i]];
    const bool value_increases = less(a, b);
    ASSERT_EQ(value_increases, ka < kb)
        << "values " << +a << " then " << +b << ": keys " << +ka << " and " << +kb;
    ASSERT_EQ(!value_increases, ka == kb) << "values " << +a << " and " << +b;
    ASSERT_EQ(descending_sort_key(ka) > descending_sort_key(kb), value_increases);
  }
}

template <class Half16>
void check_every_16_bit_float(uint16_t exponent_mask) {
  std::vector<float> values;
  std::vector<uint16_t> keys;
  for (uint32_t b = 0; b <= 0xffff; ++b) {
    values.push_back(static_cast<float>(Half16::from_bits(static_cast<uint16_t>(b))));
    keys.push_back(float_sort_key<uint16_t>(static_cast<uint16_t>(b), exponent_mask));
  }
  expect_keys_order_like_values(values, keys);
}

TEST(CudaSortKeys, EveryHalfValueOrdersAsItsFloat) { check_every_16_bit_float<Half>(0x7c00); }

TEST(CudaSortKeys, EveryBFloat16ValueOrdersAsItsFloat) {
  check_every_16_bit_float<BFloat16>(0x7f80);
}

// Special values, the smallest and largest of each sign, and random bit
// patterns (NaNs with any payload and sign among them).
template <class F, class U>
void check_wide_float(U exponent_mask) {
  const F inf = std::numeric_limits<F>::infinity();
  std::vector<F> values = {F(0),
                           -F(0),
                           inf,
                           -inf,
                           std::numeric_limits<F>::quiet_NaN(),
                           -std::numeric_limits<F>::quiet_NaN(),
                           std::numeric_limits<F>::denorm_min(),
                           -std::numeric_limits<F>::denorm_min(),
                           std::numeric_limits<F>::min(),
                           -std::numeric_limits<F>::min(),
                           std::numeric_limits<F>::max(),
                           -std::numeric_limits<F>::max(),
                           F(1),
                           F(-1),
                           std::nextafter(F(1), F(2)),
                           std::nextafter(F(-1), F(-2))};
  std::mt19937_64 rng(7);
  for (int i = 0; i < 20000; ++i) values.push_back(std::bit_cast<F>(static_cast<U>(rng())));
  std::vector<U> keys;
  for (F v : values) keys.push_back(float_sort_key<U>(std::bit_cast<U>(v), exponent_mask));
  expect_keys_order_like_values(values, keys);
}

TEST(CudaSortKeys, FloatValuesOrderAsFloats) { check_wide_float<float, uint32_t>(0x7f800000u); }

TEST(CudaSortKeys, DoubleValuesOrderAsDoubles) {
  check_wide_float<double, uint64_t>(0x7ff0000000000000ull);
}

TEST(CudaSortKeys, EveryNaNIsOneKeyAboveInfinity) {
  const uint32_t inf_key = float_sort_key<uint32_t>(0x7f800000u, 0x7f800000u);
  for (uint32_t nan : {0x7fc00000u, 0xffc00000u, 0x7f800001u, 0xffffffffu}) {
    EXPECT_EQ(float_sort_key<uint32_t>(nan, 0x7f800000u), 0xffffffffu);
    EXPECT_GT(float_sort_key<uint32_t>(nan, 0x7f800000u), inf_key);
  }
  // Descending, NaN comes first: its complemented key is the smallest.
  EXPECT_EQ(descending_sort_key(float_sort_key<uint32_t>(0x7fc00000u, 0x7f800000u)), 0u);
}

template <class S>
void check_signed(std::vector<S> values) {
  using U = std::make_unsigned_t<S>;
  std::vector<U> keys;
  for (S v : values) keys.push_back(signed_sort_key<U>(static_cast<U>(v)));
  expect_keys_order_like_values(values, keys);
}

TEST(CudaSortKeys, SignedIntegersOrderAsSigned) {
  std::vector<int8_t> i8;
  for (int v = -128; v <= 127; ++v) i8.push_back(static_cast<int8_t>(v));
  check_signed(i8);
  std::vector<int16_t> i16;
  for (int v = -32768; v <= 32767; ++v) i16.push_back(static_cast<int16_t>(v));
  check_signed(i16);
  std::mt19937_64 rng(3);
  std::vector<int32_t> i32 = {0, -1, 1, std::numeric_limits<int32_t>::min(),
                              std::numeric_limits<int32_t>::max()};
  std::vector<int64_t> i64 = {0, -1, 1, std::numeric_limits<int64_t>::min(),
                              std::numeric_limits<int64_t>::max()};
  for (int i = 0; i < 5000; ++i) {
    i32.push_back(static_cast<int32_t>(rng()));
    i64.push_back(static_cast<int64_t>(rng()));
  }
  check_signed(i32);
  check_signed(i64);
}

}  // namespace
}  // namespace brasa::cuda::kernels
