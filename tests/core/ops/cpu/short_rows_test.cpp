// Elementwise ops over rows of a few elements (an innermost dim narrower
// than a few vectors, broadcast against or sliced from a wider one). With
// AVX-512 they run through masked lanes, and same-dtype copies of such rows
// through masked moves (ops/cpu/loops.h, copy_kernels.cpp); elsewhere
// through the per-row loops. Each result is checked element by element
// against the op on the values read through the operands' own strides.
#include <cstdint>
#include <vector>

#include "../../test_util.h"

using namespace brasa;

namespace {

// The widths tried: around one, two and four vectors of floats, and past
// the rows the masked lanes take.
const std::vector<int64_t> kWidths = {1, 2, 3, 13, 15, 16, 17, 31, 33, 63, 64, 65, 70};

// Counts the elements of the [I, J, K] result `r` that differ from
// want(i, j, k), and reports the first.
template <class T, class Want>
int64_t mismatches(const Tensor& r, const Want& want) {
  EXPECT_EQ(r.dim(), 3);
  auto acc = r.accessor<T, 3>();
  int64_t bad = 0;
  for (int64_t i = 0; i < r.size(0); ++i)
    for (int64_t j = 0; j < r.size(1); ++j)
      for (int64_t k = 0; k < r.size(2); ++k)
        if (!(acc[i][j][k] == want(i, j, k)) && bad++ == 0)
          ADD_FAILURE() << "at [" << i << ", " << j << ", " << k << "] of " << r.sizes() << ": got "
                        << double(acc[i][j][k]) << ", want " << double(want(i, j, k));
  return bad;
}

TEST(ElementwiseShortRows, FloatBroadcastAgainstANarrowAxis) {
  for (int64_t n : kWidths) {
    SCOPED_TRACE("width " + std::to_string(n));
    Tensor u = rand({37, 5, 1}), left = rand({n}) + 0.5;
    auto ua = u.accessor<float, 3>();
    auto la = left.accessor<float, 1>();
    EXPECT_EQ(mismatches<float>(
                  u - left, [&](int64_t i, int64_t j, int64_t k) { return ua[i][j][0] - la[k]; }),
              0);
    Tensor c = rand({37, 5, n});
    auto ca = c.accessor<float, 3>();
    EXPECT_EQ(mismatches<float>(
                  c / left, [&](int64_t i, int64_t j, int64_t k) { return ca[i][j][k] / la[k]; }),
              0);
    EXPECT_EQ(mismatches<float>(
                  left * c, [&](int64_t i, int64_t j, int64_t k) { return la[k] * ca[i][j][k]; }),
              0);
  }
}

// A slice of a wider last dim: each row contiguous, the rows one element apart.
TEST(ElementwiseShortRows, SlicedRowsTimesContiguousRows) {
  for (int64_t n : kWidths) {
    SCOPED_TRACE("width " + std::to_string(n));
    Tensor b = rand({21, 6, n + 1}), c = rand({21, 6, n});
    Tensor lo = b.slice(-1, 0, n), hi = b.slice(-1, 1);
    auto ba = b.accessor<float, 3>();
    auto ca = c.accessor<float, 3>();
    EXPECT_EQ(mismatches<float>(c * lo, [&](int64_t i, int64_t j,
                                            int64_t k) { return ca[i][j][k] * ba[i][j][k]; }),
              0);
    EXPECT_EQ(mismatches<float>(lo - hi, [&](int64_t i, int64_t j,
                                             int64_t k) { return ba[i][j][k] - ba[i][j][k + 1]; }),
              0);
  }
}

// The lanes past a row's end hold copies of its first element: an integer
// division there by anything else (a zero past the end) would trap.
TEST(ElementwiseShortRows, IntegerDivisionSeesOnlyTheRow) {
  for (int64_t n : kWidths) {
    SCOPED_TRACE("width " + std::to_string(n));
    Tensor a = randint(-50, 50, {9, 7, n}).to(kInt);
    Tensor b = randint(1, 9, {n}).to(kInt);
    b = where(randint(0, 2, {n}).to(kBool), b, -b);  // divisors of both signs, never zero
    auto aa = a.accessor<int32_t, 3>();
    auto bb = b.accessor<int32_t, 1>();
    auto floor_div = [](int32_t x, int32_t y) {
      int32_t q = x / y;
      return (x % y != 0 && ((x < 0) != (y < 0))) ? q - 1 : q;
    };
    EXPECT_EQ(mismatches<int32_t>(
                  floor_divide(a, b),
                  [&](int64_t i, int64_t j, int64_t k) { return floor_div(aa[i][j][k], bb[k]); }),
              0);
    Tensor wide = b.to(kLong), al = a.to(kLong);
    auto wa = wide.accessor<int64_t, 1>();
    EXPECT_EQ(mismatches<int64_t>(floor_divide(al, wide),
                                  [&](int64_t i, int64_t j, int64_t k) {
                                    return int64_t(floor_div(aa[i][j][k], int32_t(wa[k])));
                                  }),
              0);
  }
}

// Compares give bool rows (a narrower output than the inputs), and bool
// rows combine 64 to a vector.
TEST(ElementwiseShortRows, ComparesAndLogicalOps) {
  for (int64_t n : kWidths) {
    SCOPED_TRACE("width " + std::to_string(n));
    Tensor u = rand({40, 3, 1}), left = rand({n}), right = left + 0.25;
    auto ua = u.accessor<float, 3>();
    auto la = left.accessor<float, 1>();
    auto ra = right.accessor<float, 1>();
    Tensor ge = u >= left;
    EXPECT_EQ(ge.dtype(), kBool);
    EXPECT_EQ(
        mismatches<bool>(ge, [&](int64_t i, int64_t j, int64_t k) { return ua[i][j][0] >= la[k]; }),
        0);
    Tensor inside = (u >= left) & (u < right);
    EXPECT_EQ(mismatches<bool>(inside,
                               [&](int64_t i, int64_t j, int64_t k) {
                                 return ua[i][j][0] >= la[k] && ua[i][j][0] < ra[k];
                               }),
              0);
  }
}

// Elements of 1, 2, 4 and 8 bytes: small integers, exact in every dtype.
TEST(ElementwiseShortRows, EveryElementSize) {
  for (ScalarType dtype : {kChar, kByte, kShort, kHalf, kBFloat16, kInt, kFloat, kLong, kDouble}) {
    for (int64_t n : {3, 13, 33, 70}) {
      SCOPED_TRACE(std::string(toString(dtype)) + " width " + std::to_string(n));
      Tensor a = remainder(arange(6 * 4 * n, kLong), 23).view({6, 4, n}).to(dtype);
      Tensor b = remainder(arange(n, kLong), 7).to(dtype);
      std::vector<double> av = brasa::testing::values(a), bv = brasa::testing::values(b);
      std::vector<double> want(av.size());
      for (size_t i = 0; i < av.size(); ++i) want[i] = av[i] + bv[i % n];
      EXPECT_VALUES(a + b, (want));
      Tensor one = ones({1, 1, 1}, dtype).expand({6, 4, n});  // stride 0 in every dim
      for (size_t i = 0; i < av.size(); ++i) want[i] = bv[i % n] + 1;
      EXPECT_VALUES(b + one, (want));
    }
  }
}

// An in-place op on a slice writes its rows and nothing between them.
TEST(ElementwiseShortRows, InPlaceIntoSlicedRows) {
  for (int64_t n : kWidths) {
    SCOPED_TRACE("width " + std::to_string(n));
    Tensor base = full({8, 6, n + 3}, -7.0);
    Tensor left = rand({n}), view = base.slice(-1, 1, n + 1);
    view.add_(left);
    auto la = left.accessor<float, 1>();
    EXPECT_EQ(mismatches<float>(base,
                                [&](int64_t, int64_t, int64_t k) {
                                  return k >= 1 && k <= n ? -7.0f + la[k - 1] : -7.0f;
                                }),
              0);
  }
}

// Rows in place in memory but not in order: outer dims transposed.
TEST(ElementwiseShortRows, RowsOutOfOrder) {
  for (int64_t n : kWidths) {
    SCOPED_TRACE("width " + std::to_string(n));
    Tensor a = rand({10, 7, n}).transpose(0, 1), b = rand({n}), c = rand({7, 1, n});
    auto aa = a.accessor<float, 3>();
    auto bb = b.accessor<float, 1>();
    auto cc = c.accessor<float, 3>();
    EXPECT_EQ(mismatches<float>(
                  a * b, [&](int64_t i, int64_t j, int64_t k) { return aa[i][j][k] * bb[k]; }),
              0);
    EXPECT_EQ(mismatches<float>(a - c, [&](int64_t i, int64_t j,
                                           int64_t k) { return aa[i][j][k] - cc[i][0][k]; }),
              0);
    Tensor out = empty({10, 7, n}).transpose(0, 1);
    sub_out(out, a, b);
    EXPECT_EQ(mismatches<float>(
                  out, [&](int64_t i, int64_t j, int64_t k) { return aa[i][j][k] - bb[k]; }),
              0);
  }
}

// Two threads split the elements into ranges that start and end mid-row.
TEST(ElementwiseShortRows, ParallelRangesStartMidRow) {
  const int before = get_num_threads();
  set_num_threads(2);
  Tensor u = rand({1500, 7, 1}), left = rand({13});
  auto ua = u.accessor<float, 3>();
  auto la = left.accessor<float, 1>();
  EXPECT_EQ(mismatches<float>(u * left,
                              [&](int64_t i, int64_t j, int64_t k) { return ua[i][j][0] * la[k]; }),
            0);
  Tensor b = rand({1500, 7, 14});
  auto ba = b.accessor<float, 3>();
  EXPECT_EQ(mismatches<float>(b.slice(-1, 1).contiguous(),
                              [&](int64_t i, int64_t j, int64_t k) { return ba[i][j][k + 1]; }),
            0);
  set_num_threads(before);
}

// Same-dtype copies of short rows (contiguous() of a slice), every element
// size, rows up to and past the 256 bytes moved by masks.
TEST(ElementwiseShortRows, CopiesOfSlicedRows) {
  for (ScalarType dtype : {kBool, kChar, kShort, kHalf, kInt, kFloat, kLong, kDouble}) {
    for (int64_t n : {1, 5, 13, 31, 40, 64, 65}) {
      SCOPED_TRACE(std::string(toString(dtype)) + " width " + std::to_string(n));
      Tensor b = remainder(arange(9 * 5 * (n + 2), kLong), 97).view({9, 5, n + 2}).to(dtype);
      std::vector<double> bv = brasa::testing::values(b), want;
      for (size_t i = 0; i < bv.size(); ++i)
        if (int64_t k = int64_t(i) % (n + 2); k >= 1 && k <= n) want.push_back(bv[i]);
      Tensor c = b.slice(-1, 1, n + 1).contiguous();
      EXPECT_TRUE(c.is_contiguous());
      // Read back through a conversion: values() of a same-dtype tensor
      // would itself copy through the path under test.
      std::vector<double> got = brasa::testing::values(c.to(dtype == kDouble ? kFloat : kDouble));
      EXPECT_EQ(got, want);
      Tensor into = zeros({9, 5, n + 2}, dtype);
      into.slice(-1, 0, n).copy_(b.slice(-1, 1, n + 1));
      std::vector<double> back =
          brasa::testing::values(into.to(dtype == kDouble ? kFloat : kDouble));
      for (size_t i = 0; i < back.size(); ++i) {
        const int64_t k = int64_t(i) % (n + 2);
        if (k >= n) {
          EXPECT_EQ(back[i], 0.0) << "copy_ wrote past its rows at " << i;
        }
      }
    }
  }
}

}  // namespace
