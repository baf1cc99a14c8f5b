// F::pad's reflect, replicate and circular modes (ops/padding.cpp): the
// one-pass gather and its scatter-add gradient (ops/cpu/pad_kernels.cpp)
// against PyTorch's values, against the same padding built from slices
// (flipped, repeated or wrapped around) and its gradient, and by gradcheck.
#include <brasa/ops/padding.h>

#include "../test_util.h"

namespace brasa {
namespace {

namespace F = nn::functional;
using detail::IndexPadMode;

// The padding built another way, by slices: per dim, the edge slices
// flipped (reflect), the edge element repeated (replicate) or the slices
// from the other end (circular), concatenated around x. Differentiable, so
// that its gradient checks the scatter-add too.
Tensor pad_by_slices(const Tensor& x, const std::vector<int64_t>& pad, IndexPadMode mode) {
  Tensor out = x;
  for (size_t k = 0; k < pad.size() / 2; ++k) {
    const int64_t d = x.dim() - 1 - static_cast<int64_t>(k), n = out.size(d);
    const int64_t lo = pad[2 * k], hi = pad[2 * k + 1];
    Tensor low, high;
    if (mode == IndexPadMode::kReflect) {
      low = out.narrow(d, 1, lo).flip({d});
      high = out.narrow(d, n - 1 - hi, hi).flip({d});
    } else if (mode == IndexPadMode::kReplicate) {
      // (lo + 1 copies of the edge less the one x keeps: never an empty list)
      low = cat(std::vector<Tensor>(static_cast<size_t>(lo + 1), out.narrow(d, 0, 1)), d)
                .narrow(d, 0, lo);
      high = cat(std::vector<Tensor>(static_cast<size_t>(hi + 1), out.narrow(d, n - 1, 1)), d)
                 .narrow(d, 0, hi);
    } else {
      low = out.narrow(d, n - lo, lo);
      high = out.narrow(d, 0, hi);
    }
    out = cat({low, out, high}, d);
  }
  return out;
}

struct Case {
  std::vector<int64_t> shape, pad;
};

const std::vector<Case> kCases{
    {{2, 3, 7}, {2, 3}},                    // 1-d
    {{3, 5}, {0, 4}},                       // 1-d, unbatched, one side
    {{2, 3, 5, 6}, {2, 1, 3, 2}},           // 2-d
    {{4, 2, 6, 40}, {5, 5}},                // 1-d over the last of 4 dims: long interior runs
    {{2, 4, 5, 6}, {1, 2, 0, 0}},           // 2-d with one dim unpadded
    {{1, 2, 4, 5, 6}, {1, 2, 3, 1, 2, 2}},  // 3-d
};
const IndexPadMode kModes[] = {IndexPadMode::kReflect, IndexPadMode::kReplicate,
                               IndexPadMode::kCircular};

TEST(PadByIndex, GivesPyTorchsValues) {
  // F.pad(torch.arange(3.).view(1, 1, 3), ..., mode) in PyTorch.
  Tensor x = arange(3, kFloat).view({1, 1, 3});
  EXPECT_VALUES(F::pad(x, F::PadFuncOptions({2, 2}).mode(kReflect)).flatten(),
                {2, 1, 0, 1, 2, 1, 0});
  EXPECT_VALUES(F::pad(x, F::PadFuncOptions({2, 1}).mode(kReplicate)).flatten(),
                {0, 0, 0, 1, 2, 2});
  EXPECT_VALUES(F::pad(x, F::PadFuncOptions({2, 1}).mode(kCircular)).flatten(), {1, 2, 0, 1, 2, 0});
  // 2-d reflect: F.pad(torch.arange(9.).view(1, 1, 3, 3), (1, 0, 0, 1), 'reflect').
  EXPECT_VALUES(
      F::pad(arange(9, kFloat).view({1, 1, 3, 3}), F::PadFuncOptions({1, 0, 0, 1}).mode(kReflect))
          .flatten(),
      {1, 0, 1, 2, 4, 3, 4, 5, 7, 6, 7, 8, 4, 3, 4, 5});
}

TEST(PadByIndex, AgreesWithSlicesForEveryDtypeAndLayout) {
  for (int threads : {1, 2}) {
    set_num_threads(threads);
    for (const Case& c : kCases)
      for (IndexPadMode mode : kModes)
        for (ScalarType t :
             {kFloat, kDouble, kHalf, kBFloat16, kLong, kByte, kBool, kComplexDouble}) {
          SCOPED_TRACE(::testing::Message()
                       << "threads " << threads << " shape " << IntArrayRef(c.shape) << " pad "
                       << IntArrayRef(c.pad) << " mode " << static_cast<int>(mode) << " dtype "
                       << t);
          manual_seed(3);
          Tensor x = (randn(c.shape) * 50).to(t);
          Tensor got = detail::pad_by_index(x, c.pad, mode);
          EXPECT_TRUE(got.equal(pad_by_slices(x, c.pad, mode)));
          // A non-contiguous input (its last two dims swapped in memory) pads the same.
          Tensor xt = x.transpose(-1, -2).contiguous().transpose(-1, -2);
          ASSERT_FALSE(xt.is_contiguous());
          EXPECT_TRUE(detail::pad_by_index(xt, c.pad, mode).equal(got));
        }
  }
  set_num_threads(2);
}

TEST(PadByIndex, GradientsAgreeWithSlicesAndGradcheck) {
  for (const Case& c : kCases)
    for (IndexPadMode mode : kModes) {
      SCOPED_TRACE(::testing::Message()
                   << "shape " << IntArrayRef(c.shape) << " pad " << IntArrayRef(c.pad) << " mode "
                   << static_cast<int>(mode));
      manual_seed(4);
      Tensor x0 = randn(c.shape, kDouble);
      Tensor x = x0.clone().requires_grad_(true), xr = x0.clone().requires_grad_(true);
      Tensor y = detail::pad_by_index(x, c.pad, mode);
      // A non-contiguous incoming gradient (a transposed one).
      Tensor gy = randn(y.sizes().vec(), kDouble).transpose(0, 1).contiguous().transpose(0, 1);
      y.backward(gy);
      pad_by_slices(xr, c.pad, mode).backward(gy);
      EXPECT_TRUE(allclose(x.grad(), xr.grad(), 1e-12, 1e-12));
      auto fn = [&](const autograd::variable_list& v) {
        return autograd::variable_list{detail::pad_by_index(v[0], c.pad, mode)};
      };
      EXPECT_TRUE(autograd::gradcheck(fn, {x0.clone().requires_grad_(true)}));
      EXPECT_TRUE(autograd::gradgradcheck(fn, {x0.clone().requires_grad_(true)}));
    }
}

TEST(PadByIndex, HalfPrecisionGradientsMatchFloat) {
  for (ScalarType t : {kHalf, kBFloat16}) {
    SCOPED_TRACE(::testing::Message() << t);
    Tensor x0 = randn({2, 3, 6, 5});
    Tensor x = x0.to(t).requires_grad_(true), xf = x0.to(t).to(kFloat).requires_grad_(true);
    Tensor gy = randn({2, 3, 9, 8});
    F::pad(x, F::PadFuncOptions({1, 2, 2, 1}).mode(kReplicate)).backward(gy.to(t));
    F::pad(xf, F::PadFuncOptions({1, 2, 2, 1}).mode(kReplicate)).backward(gy.to(t).to(kFloat));
    EXPECT_EQ(x.grad().scalar_type(), t);
    EXPECT_TRUE(allclose(x.grad().to(kFloat), xf.grad(), 2e-2, 5e-2));
  }
}

TEST(PadByIndex, NamesItsBackwardAsPyTorchAndKeepsEmptyBatches) {
  Tensor x = randn({2, 3, 4, 5}).requires_grad_(true);
  EXPECT_EQ(F::pad(x, F::PadFuncOptions({1, 1, 1, 1}).mode(kReflect)).grad_fn()->name(),
            "ReflectionPad2DBackward0");
  EXPECT_EQ(F::pad(x, F::PadFuncOptions({1, 1}).mode(kReplicate)).grad_fn()->name(),
            "ReplicationPad1DBackward0");
  // No padding at all: the input itself, as before.
  EXPECT_TRUE(F::pad(x, F::PadFuncOptions({0, 0}).mode(kReflect)).is_same(x));
  Tensor e = randn({0, 3, 4}).requires_grad_(true);
  Tensor y = F::pad(e, F::PadFuncOptions({2, 1}).mode(kCircular));
  EXPECT_EQ(y.sizes(), IntArrayRef({0, 3, 7}));
  y.sum().backward();
  EXPECT_EQ(e.grad().sizes(), IntArrayRef({0, 3, 4}));
  // The checks stay F::pad's.
  EXPECT_ERROR("reflect padding (4, 0) of dim 2 must be smaller than its size 4",
               F::pad(randn({1, 2, 4}), F::PadFuncOptions({4, 0}).mode(kReflect)));
}

}  // namespace
}  // namespace brasa
